// Redaction never corrupts evidence: header values are redacted by their header's name (a line never
// swallows the next header's name), a JSON body keeps its text and stays the same valid JSON with only
// the secret-carrying string tokens re-encoded, and a check record stays readable whatever its detail
// holds. Each test pairs the intact result with the secret being gone.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redact, redactBody, redactHeader, redactValue, registerSecret, REDACTED } from '../record/redact.ts';
import { decodeCheckAnnotation, decodeEvidence, encodeCheckAnnotation, evidenceOf, type Exchange } from '../record/record.ts';
import { writeReports } from '../reports/write.ts';
import { check, context, outcomes } from './helpers/report-data.ts';

const KEY = 'ck_live_struct_5e6f7a8b9c0d1e2f';
// A secret that needs escaping in JSON: quotes and backslashes (a naive pattern over the escaped text
// would leave `\"` or a lone `\` behind and break the JSON).
const QUOTED = 'pw"with\\back\\"slash_77';
const DATE = 'Sun, 22 Nov 2026 10:00:00 GMT';

test.beforeAll(() => {
  registerSecret(KEY);
  registerSecret(QUOTED);
});

/** A 401 as the reference answers it: `www-authenticate: Bearer` then `date:`. */
function unauthorized(): Exchange {
  return {
    request: { method: 'GET', target: '/external/v1/encounters', headers: { host: '127.0.0.1:1', authorization: `Bearer ${KEY}`, accept: 'application/json' } },
    response: {
      status: 401,
      headers: { 'www-authenticate': 'Bearer', date: DATE, 'content-type': 'application/json' },
      body: '{"error":"api_key_unauthorized","reason_code":"invalid_key","message":"Invalid API key","field":null}',
      bodyBytes: 97,
      durationMs: 2,
    },
  };
}

test('www-authenticate: Bearer then date: comes out intact in evidence, JSON report and HTML', () => {
  const evidence = decodeEvidence(evidenceOf([unauthorized()])) as Exchange[];
  expect(evidence[0].response!.headers).toEqual({ 'www-authenticate': 'Bearer', date: DATE, 'content-type': 'application/json' });
  expect(evidence[0].request.headers.authorization).toBe(`Bearer ${REDACTED}`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-redact-shape-'));
  try {
    const run = outcomes([check('auth-invalid-key-list', 'fail', ['AUTH-401-INVALID-KEY'], { detail: 'expected 200', evidence })]);
    writeReports(dir, run, context());
    const html = fs.readFileSync(path.join(dir, 'conformance.html'), 'utf8');
    expect(html).toContain(`www-authenticate: Bearer\ndate: ${DATE}\ncontent-type: application/json\n`);
    expect(html).not.toContain(`Bearer ${REDACTED}: ${DATE.slice(0, 3)}`);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
    expect(report.checks[0].evidence[0].response.headers).toEqual({ 'www-authenticate': 'Bearer', date: DATE, 'content-type': 'application/json' });
    for (const f of fs.readdirSync(dir)) expect(fs.readFileSync(path.join(dir, f), 'utf8'), f).not.toContain(KEY);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('free text: a value never runs over a line break, a token on the same line still goes', () => {
  expect(redact(`www-authenticate: Bearer\ndate: ${DATE}`)).toBe(`www-authenticate: Bearer\ndate: ${DATE}`);
  expect(redact('authorization:\ndate: x')).toBe('authorization:\ndate: x');
  expect(redact('service-signature:\ndate: x')).toBe('service-signature:\ndate: x');
  expect(redact('sent Bearer abc.def-1 and more')).toBe(`sent Bearer ${REDACTED} and more`);
  expect(redact(`authorization: Bearer ${KEY}\ndate: x`)).toBe(`authorization: Bearer ${REDACTED}\ndate: x`);
});

test('a rendered page: an Authorization value never swallows the markup after it; a placeholder is no credential', () => {
  const html = '<td><code>Authorization: Bearer &lt;token&gt;</code></div></td><td class="status"><span>pass</span></td>';
  expect(redact(html)).toBe(html);
  expect(redact('<code>Authorization: Bearer abc.def</code></td><td class="status">')).toBe(`<code>Authorization: Bearer ${REDACTED}</code></td><td class="status">`);
  expect(redact('send Authorization: Bearer <token> and Authorization: Basic <credentials>')).toBe('send Authorization: Bearer <token> and Authorization: Basic <credentials>');
});

test('headers by name: credentials go, the scheme and every other header stay readable', () => {
  expect(redactHeader('Authorization', 'Bearer abc.def')).toBe(`Bearer ${REDACTED}`);
  expect(redactHeader('authorization', 'Bearer')).toBe('Bearer');
  expect(redactHeader('authorization', 'k_live_unregistered_token_1')).toBe(REDACTED);
  expect(redactHeader('service-signature', `t=1700000000,v1=${'ab'.repeat(32)}`)).toBe(`t=1700000000,v1=${REDACTED}`);
  expect(redactHeader('cookie', 'session=abc123; api_key=xyz789')).toBe(`session=${REDACTED}; api_key=${REDACTED}`);
  expect(redactHeader('set-cookie', 'sid=abc123; Path=/; HttpOnly')).toBe(`sid=${REDACTED}; Path=/; HttpOnly`);
  expect(redactHeader('x-switchboard-token', 'anything-at-all')).toBe(REDACTED);
  expect(redactHeader('x-api-key', 'abcdef')).toBe(REDACTED);
  // Not credentials: kept as they are, whatever they look like.
  expect(redactHeader('www-authenticate', 'Bearer realm="api", error="invalid_token"')).toBe('Bearer realm="api", error="invalid_token"');
  expect(redactHeader('date', DATE)).toBe(DATE);
  expect(redact('www-authenticate: Bearer realm=&quot;api&quot;, error=invalid_token')).toBe('www-authenticate: Bearer realm=&quot;api&quot;, error=invalid_token');
  // A bearer credential echoed in any header still goes.
  expect(redactHeader('x-echo', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(`Bearer ${REDACTED}`);
  // A registered secret or a signed URL is removed from any header.
  expect(redactHeader('x-echo', `key ${KEY}`)).toBe(`key ${REDACTED}`);
  expect(redactHeader('location', 'https://s.test/a.m4a?expires=1&sig=abcdef')).toBe(REDACTED);
});

test('a secret inside a JSON string with quotes and backslashes: the body stays valid JSON, the secret is gone', () => {
  const body = `{"message":"key \\"${KEY}\\" refused","echo":${JSON.stringify(`a ${QUOTED} b`)},"path":"C:\\\\tmp\\\\x","n":1}`;
  expect(JSON.parse(body).echo).toBe(`a ${QUOTED} b`); // the fixture itself is JSON
  const out = redactBody(body);
  const parsed = JSON.parse(out) as Record<string, unknown>;
  expect(parsed).toEqual({ message: `key "${REDACTED}" refused`, echo: `a ${REDACTED} b`, path: 'C:\\tmp\\x', n: 1 });
  expect(out).not.toContain(KEY);
  expect(out).not.toContain(JSON.stringify(QUOTED).slice(1, -1));
  // Text without a secret keeps its bytes (spacing, key order, escapes).
  expect(out).toContain('"path":"C:\\\\tmp\\\\x","n":1}');
  const spaced = '{ "a" : "x\\u0041" ,\n  "b":[1, 2] }';
  expect(redactBody(spaced)).toBe(spaced);
  // audio_url by member name, wherever it sits.
  expect(JSON.parse(redactBody('{"doc":{"audio_url":"https://s.test/unsigned.m4a"}}'))).toEqual({ doc: { audio_url: REDACTED } });
});

test('the same body inside evidence and a check record: both stay readable JSON', () => {
  const body = JSON.stringify({ message: `bad ${QUOTED}`, auth: `Bearer ${KEY}` });
  const ex: Exchange = { request: { method: 'GET', target: '/x', headers: {} }, response: { status: 400, headers: {}, body, bodyBytes: body.length, durationMs: 1 } };
  const evidence = decodeEvidence(evidenceOf([ex])) as Exchange[];
  expect(JSON.parse(evidence[0].response!.body)).toEqual({ message: `bad ${REDACTED}`, auth: `Bearer ${REDACTED}` });

  const a = encodeCheckAnnotation({ id: 'c', requirements: ['R'], title: 't', outcome: 'fail', detail: `got ${body} with "${QUOTED}" \\ end` });
  const d = decodeCheckAnnotation(a);
  expect(d && d.ok).toBe(true);
  const detail = d && d.ok ? d.record.detail ?? '' : '';
  expect(detail).not.toContain(KEY);
  expect(detail).not.toContain(QUOTED);
  expect(detail).toContain('\\ end');
});

test('redactValue is idempotent: redacting redacted evidence changes nothing', () => {
  const once = redactValue(JSON.parse(evidenceOf([unauthorized()])));
  expect(redactValue(once)).toEqual(once);
});
