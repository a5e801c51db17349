// Nothing unobservable counts as verified, for any subject. The requirements no run can observe (reviewed, with
// their reason, in fixtures/requirements/not-tested.json: deployment statuses, a receiver's constant-time digest
// comparison) are listed apart as `not observable`: never `pass`, never in "verified N of M", and no check of any
// subject may name them (a check that can pass would claim what no run can show). The report rule is proven on a
// fabricated catalog first; then the real catalog is walked against every check table; then a receiver comparing
// digests with `===` is judged end to end and reads CONFORMANT with the constant-time row listed as not observable.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { verify, WEBHOOK_HEADERS } from '../judge/signature.ts';
import type { WebhookEvent } from '../judge/signature.ts';
import { freePort } from '../platform/embedded-cluster.ts';
import { webhookCommand } from '../cli/webhook.ts';
import { loadCatalog } from '../reports/context.ts';
import { readNotTested } from '../reports/coverage.ts';
import { allDeclaredChecks } from '../engine/declared-checks.ts';
import { SUBJECTS } from '../engine/registry.ts';
import { buildReport, subjectsOf, type Catalog, type ConformanceReport } from '../reports/model.ts';
import { NOT_TESTED_PATH } from '../fixtures/paths.ts';
import { check, context, outcomes } from './helpers/report-data.ts';

type Def = { id: string; requirements: readonly string[]; breachOnly?: boolean };

/** `<requirement> ← <check> (<table>)` for every check that names a requirement no run can observe. */
export function checksNamingUnobservable(notObservable: Record<string, string>, tables: Record<string, readonly Def[]>): string[] {
  const out: string[] = [];
  for (const [table, defs] of Object.entries(tables)) {
    // A check that can only show a breach (breachOnly: storage of an audio URL is not seen, sending it back is) names
    // one on purpose: its pass verifies nothing.
    for (const d of defs) if (!d.breachOnly) for (const r of d.requirements) if (r in notObservable) out.push(`${r} ← ${d.id} (${table})`);
  }
  return out.sort();
}

/** Every check the project declares (engine/registry.ts), by subject. */
async function allCheckTables(): Promise<Record<string, readonly Def[]>> {
  const all = await allDeclaredChecks();
  return Object.fromEntries(SUBJECTS.map((s) => [s, all.filter((d) => d.subject === s)]));
}

const FAB: Catalog = {
  spec: 'x',
  requirements: [
    { id: 'R-SEEN', section: '6.3', area: 'webhook', statement: 'seen', level: 'must', subjects: ['receiver'] },
    { id: 'R-UNSEEN', section: '6.3', area: 'webhook', statement: 'compare in constant time', level: 'must', subjects: ['receiver'] },
  ],
};

test.describe('the report rule (fabricated catalog)', () => {
  const ctx = (notTested: Record<string, string>) => context({ catalog: FAB, subject: 'receiver', notTested });
  const both = () => outcomes([check('seen', 'pass', ['R-SEEN']), check('unseen', 'pass', ['R-UNSEEN'])]);

  test('a requirement no run can observe is never pass and never counted, even when a passing check names it; a warning names the check', () => {
    // Control: without the reviewed reason, the passing check would count it as verified.
    expect(buildReport(both(), ctx({})).verdictReason).toBe('verified 2 of 2 must requirements in scope');
    const r = buildReport(both(), ctx({ 'R-UNSEEN': 'timing is not observable over a network' }));
    const row = r.requirements.find((x) => x.id === 'R-UNSEEN')!;
    expect(row.status).toBe('not_observable');
    expect(row.notObservable).toBe('timing is not observable over a network');
    expect(r.coverage).toMatchObject({ mustInScope: 1, mustVerified: 1, notObservable: [{ id: 'R-UNSEEN', reason: 'timing is not observable over a network' }] });
    expect(r.verdict).toBe('conformant');
    expect(r.verdictReason).toBe('verified 1 of 1 must requirements in scope (1 not observable by any run, listed apart)');
    expect(r.warnings).toContain('requirement R-UNSEEN is observable by no run (fixtures/requirements/not-tested.json), yet check unseen names it: their outcomes are not counted for it');
  });

  test('the HTML lists it once: under "Not observable by any run" with its reason, never again under "Without a check" (issue 40)', async () => {
    const { toHtml } = await import('../reports/html.ts');
    const r = buildReport(outcomes([check('seen', 'pass', ['R-SEEN'])]), ctx({ 'R-UNSEEN': 'why' }));
    expect(r.coverage.uncovered).toContain('R-UNSEEN');
    const coverage = /<div id="coverage">([\s\S]*?)<\/div>\n/.exec(toHtml(r))![1];
    expect(coverage).toContain('Not observable by any run (1)');
    expect(coverage).not.toContain('Without a check');
    expect(coverage.match(/<code>R-UNSEEN<\/code>/g)).toHaveLength(1);
  });

  test('without any check it is listed the same way, and a failure of a check naming it still fails the run', () => {
    const r = buildReport(outcomes([check('seen', 'pass', ['R-SEEN'])]), ctx({ 'R-UNSEEN': 'why' }));
    expect(r.requirements.find((x) => x.id === 'R-UNSEEN')!.status).toBe('not_observable');
    expect(r.coverage.notObservable).toEqual([{ id: 'R-UNSEEN', reason: 'why' }]);
    expect(r.verdict).toBe('conformant');
    const failing = buildReport(outcomes([check('seen', 'pass', ['R-SEEN']), check('unseen', 'fail', ['R-UNSEEN'])]), ctx({ 'R-UNSEEN': 'why' }));
    expect(failing.verdict).toBe('not_conformant');
  });

  test('the walk finds a check naming an unobservable requirement (the gate below can fail); a breach-only check names it on purpose', () => {
    expect(checksNamingUnobservable({ 'R-UNSEEN': 'why' }, { receiver: [{ id: 'a', requirements: ['R-SEEN'] }, { id: 'b', requirements: ['R-SEEN', 'R-UNSEEN'] }, { id: 'c', requirements: ['R-UNSEEN'], breachOnly: true }] }))
      .toEqual(['R-UNSEEN ← b (receiver)']);
  });
});

test('the catalog: every requirement no run can observe is a catalog row with a reason, and no check of any subject names it', async () => {
  const catalog = loadCatalog()!;
  const notObservable = readNotTested(NOT_TESTED_PATH);
  const ids = new Set(catalog.requirements.map((r) => r.id));
  expect(Object.keys(notObservable).filter((id) => !ids.has(id))).toEqual([]);
  for (const [id, reason] of Object.entries(notObservable)) expect(reason.trim().length, id).toBeGreaterThan(20);
  // The receiver's constant-time comparison (§6.3 step 7) is one of them.
  expect(notObservable['WEBHOOK-SIG-CONSTANT-TIME']).toMatch(/not observable over the network/);
  const tables = await allCheckTables();
  expect(checksNamingUnobservable(notObservable, tables)).toEqual([]);
  // Every subject's checks are really there (an empty walk proves nothing).
  for (const [name, defs] of Object.entries(tables)) expect(defs.length, name).toBeGreaterThan(0);
});

const SECRET = 'whsec_not_observable_test_7a8b9c';

/**
 * A receiver that verifies every step of §6.3 except that it compares the digest with `===` (a timing leak no
 * delivery can show). It dedupes by event id and fetches the encounter and the document from `apiBase`.
 */
async function startEqualsReceiver(apiBase: string): Promise<{ url: string; close(): Promise<void> }> {
  const done = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const v = verify({ headers: req.headersDistinct, rawBody: raw, secret: SECRET });
        if (!v.ok && v.reason !== 'signature_mismatch') return void res.writeHead(401).end();
        const ts = req.headersDistinct[WEBHOOK_HEADERS.timestamp.toLowerCase()]?.[0] ?? '';
        const received = req.headersDistinct[WEBHOOK_HEADERS.signature.toLowerCase()]?.[0] ?? '';
        const computed = `v1=${crypto.createHmac('sha256', SECRET).update(`${ts}.`).update(raw).digest('hex')}`;
        if (received !== computed || !v.ok) return void res.writeHead(401).end();
        const event: WebhookEvent = v.event;
        if (!done.has(event.id)) {
          done.add(event.id);
          const enc = `${apiBase}/external/v1/encounters/${encodeURIComponent(event.resources.encounter_id)}`;
          const headers = { authorization: 'Bearer cek_live_equals_receiver_0001' };
          await (await fetch(enc, { headers })).arrayBuffer();
          await (await fetch(`${enc}/documents/${encodeURIComponent(event.resources.document_id)}`, { headers })).arrayBuffer();
        }
        res.writeHead(204).end();
      })().catch(() => {
        if (!res.headersSent) res.writeHead(503).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

test('a receiver comparing digests with === reads CONFORMANT, its constant-time row listed as not observable, never verified', async () => {
  test.setTimeout(90_000);
  const port = await freePort();
  const receiver = await startEqualsReceiver(`http://127.0.0.1:${port}`);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-not-observable-'));
  try {
    const lines: string[] = [];
    const code = await webhookCommand(['receiver', '--url', receiver.url, '--follow-up-port', String(port), '--out', out], {
      env: { CONFORMANCE_WEBHOOK_SECRET: SECRET }, stdout: (l) => lines.push(l), stderr: (l) => lines.push(l),
    });
    const text = lines.join('\n');
    expect(code, text).toBe(0);
    const catalog = loadCatalog()!;
    const notObservable = readNotTested(NOT_TESTED_PATH);
    const receiverMust = catalog.requirements.filter((r) => r.level === 'must' && subjectsOf(r).includes('receiver'));
    const observable = receiverMust.filter((r) => !(r.id in notObservable)).length;
    expect(observable).toBeLessThan(receiverMust.length);
    expect(text).toMatch(new RegExp(`^conformance: CONFORMANT — receiver: verified ${observable} of ${observable} must requirements in scope \\(1 not observable by any run, listed apart\\)$`, 'm'));
    expect(text).toMatch(/^not observable by any run \(listed apart, never counted as verified\): WEBHOOK-SIG-CONSTANT-TIME: Whether a receiver compares digests in constant time/m);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as ConformanceReport;
    const row = report.requirements.find((r) => r.id === 'WEBHOOK-SIG-CONSTANT-TIME')!;
    expect(row.status).toBe('not_observable');
    expect(row.checks).toEqual([]);
    expect(report.coverage.mustNotVerified).not.toContain('WEBHOOK-SIG-CONSTANT-TIME');
    expect(report.coverage.notObservable.map((n) => n.id)).toEqual(['WEBHOOK-SIG-CONSTANT-TIME']);
    expect(fs.readFileSync(path.join(out, 'conformance.html'), 'utf8')).toMatch(/id="not-observable"><summary>Not observable by any run \(1\)/);
  } finally {
    await receiver.close();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('the client\'s rows no traffic can show are listed apart: every client must row has a check that can verify it or a reviewed reason; the audio URL\'s storage is one, its only check breach-only', async () => {
  const { CLIENT_CHECKS } = await import('../checks/client/checks.ts');
  const catalog = loadCatalog()!;
  const notObservable = readNotTested(NOT_TESTED_PATH);
  // Every client row is either judged by a check that can verify it, or listed as not observable with a reason.
  const verifying = new Set(CLIENT_CHECKS.filter((c) => !c.breachOnly).flatMap((c) => c.requirements));
  const clientRows = catalog.requirements.filter((r) => r.level === 'must' && (r.subjects ?? []).includes('client'));
  expect(clientRows.filter((r) => !verifying.has(r.id) && !notObservable[r.id]).map((r) => r.id)).toEqual([]);
  expect(notObservable['AUDIO-URL-NOT-DURABLE']).toMatch(/not seen in its traffic/);
  const breachOnly = CLIENT_CHECKS.filter((c) => c.breachOnly).map((c) => c.id);
  expect(breachOnly).toEqual(['client-audio-url-not-sent-to-api']);
});
