// Receiver variant meta-test: the dual of the broken receivers. The example receiver (reference-receiver/) with
// each variant of reference-receiver/variants.ts on (one legitimate choice the spec allows each)
// passes every receiver check with zero `fail`, and the variant's marker shows it really was on.
// Writes <out>/receiver-variants.json `{ total, passed, failing }` for the reports.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { startReceiverSandbox } from './helpers/receiver-sandbox.ts';
import type { ReceiverSandbox } from './helpers/receiver-sandbox.ts';
import { RECEIVER_CASES } from '../checks/receiver/cases.ts';
import { runReceiverSuite } from '../engine/receiver-run.ts';
import type { ReceiverCheckResult } from '../engine/receiver-run.ts';
import { RECEIVER_VARIANTS, RECEIVER_VARIANT_NAMES } from '../reference-receiver/variants.ts';
import { CATALOG_PATH } from '../fixtures/paths.ts';
import type { ReceiverVariant, ReceiverVariantSpec } from '../reference-receiver/variants.ts';

const SECRET = 'whsec_receiver_variants_3c4d5e6f';
const root = path.resolve(import.meta.dirname, '..');
const outDir = process.env.CONFORMANCE_OUT ?? path.join(root, 'reports/out');

// One embedded PostgreSQL and counting API for the file; the variants run in order in one worker.
test.describe.configure({ mode: 'default' });

let sandbox: ReceiverSandbox;
/** Per variant: the checks that failed (empty = passed). */
const failing: Partial<Record<ReceiverVariant, string[]>> = {};

test.beforeAll(async () => {
  test.setTimeout(60_000);
  sandbox = await startReceiverSandbox(SECRET);
});

test.afterAll(async () => {
  await sandbox?.close();
  const ran = Object.keys(failing) as ReceiverVariant[];
  // Only a complete run is written: a filtered run (-g) must not replace the full score.
  if (ran.length !== RECEIVER_VARIANT_NAMES.length) return;
  const failed = Object.fromEntries(ran.filter((v) => failing[v]!.length > 0).map((v) => [v, failing[v]]));
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'receiver-variants.json'), `${JSON.stringify({ total: ran.length, passed: ran.length - Object.keys(failed).length, failing: failed }, null, 2)}\n`);
});

const MUST = new Set((JSON.parse(fs.readFileSync(CATALOG_PATH, 'utf8')) as { requirements: { id: string; level: string }[] }).requirements
  .filter((r) => r.level === 'must').map((r) => r.id));
/** Must requirements of the receiver suite that no passing (or warning) check verifies (each would make the receiver's verdict INCOMPLETE). */
function unverifiedMusts(results: ReceiverCheckResult[]): string[] {
  const cited = new Set(RECEIVER_CASES.flatMap((c) => c.requirements).filter((id) => MUST.has(id)));
  const byId = new Map(RECEIVER_CASES.map((c) => [c.id, c.requirements]));
  // As the report model counts them: a pass, or a warning (the must held, a should did not).
  const verified = new Set(results.filter((r) => r.outcome === 'pass' || r.outcome === 'warning').flatMap((r) => byId.get(r.id) ?? []));
  return [...cited].filter((id) => !verified.has(id)).sort();
}

function summary(results: ReceiverCheckResult[]): string {
  return results.filter((r) => r.outcome !== 'pass').map((r) => `${r.outcome} ${r.id}: ${r.detail ?? ''}`).join('\n');
}

/** Statuses the receiver answered in a check's evidence. */
function statuses(r: ReceiverCheckResult): number[] {
  return r.evidence.map((e) => e.response?.status).filter((s): s is number => typeof s === 'number');
}

test('every variant names its clause, a justification and a marker check that exists', () => {
  expect(RECEIVER_VARIANT_NAMES.length).toBeGreaterThanOrEqual(5);
  const ids = new Set(RECEIVER_CASES.map((c) => c.id));
  for (const [name, v] of Object.entries(RECEIVER_VARIANTS) as [string, ReceiverVariantSpec][]) {
    expect(v.clause.length, name).toBeGreaterThan(5);
    expect(v.justification.length, name).toBeGreaterThan(20);
    expect(ids.has(v.marker.check), `${name}: marker ${v.marker.check}`).toBe(true);
    expect(v.marker.outcome !== undefined || v.marker.status !== undefined, name).toBe(true);
  }
});

test('the verdict-parity rule names a must requirement left only to informational checks', () => {
  const all = RECEIVER_CASES.map((c) => ({ id: c.id, outcome: 'pass' })) as unknown as ReceiverCheckResult[];
  expect(unverifiedMusts(all)).toEqual([]);
  const must = RECEIVER_CASES.flatMap((c) => c.requirements).find((id) => MUST.has(id))!;
  const citing = new Set(RECEIVER_CASES.filter((c) => c.requirements.includes(must)).map((c) => c.id));
  const downgraded = all.map((r) => (citing.has(r.id) ? { ...r, outcome: 'informational' } : r)) as ReceiverCheckResult[];
  expect(unverifiedMusts(downgraded)).toContain(must);
});

for (const name of RECEIVER_VARIANT_NAMES) {
  const spec: ReceiverVariantSpec = RECEIVER_VARIANTS[name];
  test(`receiver variant ${name} (${spec.clause}) passes every receiver check`, async () => {
    test.setTimeout(120_000);
    const receiver = await sandbox.startReceiver({ variants: [name] });
    const results = await runReceiverSuite({ url: receiver.url, secret: SECRET, followUpProbe: () => sandbox.api.count(), followUpSettleMs: 60 });
    failing[name] = results.filter((r) => r.outcome === 'fail').map((r) => r.id);
    expect(results).toHaveLength(RECEIVER_CASES.length);
    expect(failing[name], summary(results)).toEqual([]);
    expect(results.filter((r) => r.outcome === 'not_verified'), summary(results)).toEqual([]);
    // A legitimate choice must not cost the receiver its verdict: every must the suite cites is still verified
    // by some passing check (none left only to informational ones).
    expect(unverifiedMusts(results), summary(results)).toEqual([]);
    // The variant was on: its marker check shows the choice.
    const marker = results.find((r) => r.id === spec.marker.check)!;
    if (spec.marker.outcome) expect(marker.outcome, `${marker.id}: ${marker.detail ?? ''}`).toBe(spec.marker.outcome);
    if (spec.marker.status) expect(statuses(marker), JSON.stringify(marker.evidence)).toContain(spec.marker.status);
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });
}
