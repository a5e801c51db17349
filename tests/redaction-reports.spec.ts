// No report leaks a secret: outcomes whose details, titles, evidence and problems carry a registered API
// key, a signing secret, a signed audio URL and a bearer header, each in plain, percent-encoded and
// base64 form, are written in every format (outcomes.json, conformance.json, junit.xml,
// conformance.html) to a temporary folder; every file is scanned for every form.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerSecret } from '../record/redact.ts';
import { htmlEscape } from '../reports/html.ts';
import { xmlEscape } from '../reports/junit.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';
import { check, context, outcomes } from './helpers/report-data.ts';

const API_KEY = 'ck_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SIGNING_SECRET = 'whsec_Zq8yXw7vUt6sRq5pOn4mLk3j';
// Not registered anywhere: the layer must recognise it by its shape (a URL with a signature query).
const AUDIO_URL = 'https://h/storage/audio/x?expires=1&sig=abc123def456abc123def456';
// A bearer token that is not a registered key either (a token of another system, a typo'd key).
const BEARER_TOKEN = 'tok_unregistered_55aa66bb77cc88dd';
const BEARER_HEADER = `Authorization: Bearer ${BEARER_TOKEN}`;

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Each secret with the substrings that must never appear in any written file. */
const NEEDLES: Record<string, string[]> = {
  'api key': [API_KEY, encodeURIComponent(API_KEY), b64(API_KEY), b64(API_KEY).replace(/=+$/, '')],
  'signing secret': [SIGNING_SECRET, encodeURIComponent(SIGNING_SECRET), b64(SIGNING_SECRET).replace(/=+$/, '')],
  'audio url': ['sig=abc123def456', 'abc123def456abc123def456', encodeURIComponent(AUDIO_URL), b64(AUDIO_URL).replace(/=+$/, '').slice(0, 40)],
  'bearer header': [BEARER_TOKEN, encodeURIComponent(BEARER_TOKEN), b64(BEARER_HEADER).replace(/=+$/, '').slice(0, 40), b64(`Bearer ${BEARER_TOKEN}`).replace(/=+$/, '').slice(0, 30)],
};

function carriers(): string[] {
  // Every secret in every form, as free text.
  const plain = [API_KEY, SIGNING_SECRET, AUDIO_URL, BEARER_HEADER];
  return plain.flatMap((s) => [s, encodeURIComponent(s), b64(s)]);
}

test('no report format contains a secret in any form', () => {
  registerSecret(API_KEY);
  registerSecret(SIGNING_SECRET);
  const all = carriers();
  const evidence = [
    {
      request: {
        method: 'GET',
        target: `/external/v1/encounters?next=${encodeURIComponent(AUDIO_URL)}&k=${encodeURIComponent(API_KEY)}`,
        headers: { authorization: `Bearer ${API_KEY}`, 'x-forwarded-authorization': b64(BEARER_HEADER), 'x-debug': encodeURIComponent(BEARER_HEADER) },
      },
      response: {
        status: 200,
        headers: { 'content-type': 'application/json', 'service-signature': `t=1,v1=${'ab'.repeat(32)}`, 'x-echo': b64(SIGNING_SECRET) },
        body: JSON.stringify({ audio_url: AUDIO_URL, expires_at: '2026-01-01T00:00:00Z', echoes: all }),
        bodyBytes: 999, durationMs: 3,
      },
    },
  ];
  const checks = [
    check('leaky-check', 'fail', ['LIST-LIMIT-CANONICAL'], { title: `title with ${API_KEY}`, detail: `detail: ${all.join(' | ')}`, evidence }),
    check('leaky-informational', 'informational', ['LIST-ORDER-TIES'], { detail: `observed ${AUDIO_URL} and ${b64(AUDIO_URL)}`, evidence: all.join('\n') }),
    check('leaky-not-verified', 'not_verified', ['AUTH-401-INVALID-KEY'], { detail: `profile lacks ${encodeURIComponent(SIGNING_SECRET)}` }),
  ];
  const run = outcomes(checks, {
    testFailures: [{ project: 'properties', file: 'p.spec.ts', test: `prop ${API_KEY}`, error: `boom ${b64(BEARER_HEADER)} ${encodeURIComponent(AUDIO_URL)}` }],
    runErrors: [`global ${SIGNING_SECRET}`],
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-redact-'));
  writeOutcomes(dir, run);
  writeReports(dir, run, context({ warnings: [`warning ${b64(API_KEY)}`] }));

  const files = fs.readdirSync(dir);
  expect(files.sort()).toEqual(['conformance.html', 'conformance.json', 'junit.xml', 'outcomes.json']);
  const leaks: string[] = [];
  for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const [what, needles] of Object.entries(NEEDLES)) {
      for (const n of needles) {
        // Look for the raw form and for the form as each format escapes it.
        for (const form of new Set([n, htmlEscape(n), xmlEscape(n), JSON.stringify(n).slice(1, -1)])) {
          if (text.includes(form)) leaks.push(`${f}: ${what} as ${JSON.stringify(form)}`);
        }
      }
    }
  }
  expect(leaks).toEqual([]);
  // The reports are still useful: ids, outcomes and harmless text survive.
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
  expect(report.checks.map((c: { id: string }) => c.id)).toEqual(['leaky-check', 'leaky-informational', 'leaky-not-verified']);
  expect(JSON.stringify(report.checks[0].evidence)).toContain('/external/v1/encounters?next=');
  expect(fs.readFileSync(path.join(dir, 'conformance.html'), 'utf8')).toContain('[REDACTED]');
});

test('harmless percent-encoded and base64-looking text is kept', () => {
  const run = outcomes([check('kept', 'fail', ['LIST-LIMIT-CANONICAL'], { detail: 'limit=%2B1 and id enc_main_0001 and aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=' })]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-redact-'));
  const report = writeReports(dir, run, context());
  expect(report.checks[0].detail).toBe('limit=%2B1 and id enc_main_0001 and aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=');
});

test('evidence keeps only the exchange fields: a raw Buffer body (bytes as numbers) never reaches a report', () => {
  const bytes = [...Buffer.from(JSON.stringify({ audio_url: AUDIO_URL }))];
  const evidence = [{
    request: { method: 'GET', target: '/external/v1/x', headers: {} },
    raw: { status: 200, body: { type: 'Buffer', data: bytes } },
    response: { status: 200, headers: {}, body: '{"audio_url":"[REDACTED]"}', bodyBytes: bytes.length, durationMs: 1 },
  }];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-redact-'));
  const run = outcomes([check('raw-evidence', 'fail', ['LIST-LIMIT-CANONICAL'], { evidence })]);
  writeOutcomes(dir, run);
  const report = writeReports(dir, run, context());
  expect(Object.keys((report.checks[0].evidence as object[])[0])).toEqual(['request', 'response']);
  const byteRun = bytes.slice(0, 12).join(',');
  for (const f of fs.readdirSync(dir)) expect(fs.readFileSync(path.join(dir, f), 'utf8').replace(/\s/g, ''), f).not.toContain(byteRun);
});
