// Proof of the receiver suite (harness/webhook/receiver-suite.ts): the harness's reference receiver
// passes every check (informational only where the spec leaves the outcome open), and each broken
// receiver of tests/webhook-broken-receivers.ts makes the checks named for it FAIL. This is where the
// `webhook-receiver-*` conformance checks are shown able to fail (the service mutants cannot reach them).
import { test, expect } from '@playwright/test';
import { fabricateRejections } from '../harness/webhook/adversarial.ts';
import { startCountingApi } from '../harness/webhook/counting-api.ts';
import { startReceiverSandbox } from '../harness/webhook/receiver-sandbox.ts';
import { COVERED_ADVERSARIAL_CASES, RECEIVER_CASES, RECEIVER_OPEN_CASE_IDS, runReceiverSuite } from '../harness/webhook/receiver-suite.ts';
import type { ReceiverCheckResult } from '../harness/webhook/receiver-suite.ts';
import { BROKEN_RECEIVERS, startBrokenReceiver } from './webhook-broken-receivers.ts';
import type { BrokenKind } from './webhook-broken-receivers.ts';

const SECRET = 'whsec_receiver_suite_proof_5e6f7a8b';

function summary(results: ReceiverCheckResult[]): string {
  return results.filter((r) => r.outcome !== 'pass').map((r) => `${r.outcome} ${r.id}: ${r.detail ?? ''}`).join('\n');
}

test('the receiver case table covers every adversarial delivery that can go over HTTP, with unique ids', () => {
  const overHttp = fabricateRejections({ secret: SECRET, nowSeconds: 1_800_000_000 }).filter((c) => c.overHttp).map((c) => c.name);
  expect([...COVERED_ADVERSARIAL_CASES].sort()).toEqual([...overHttp].sort());
  const ids = RECEIVER_CASES.map((c) => c.def.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^webhook-receiver-[a-z0-9-]+$/);
  // The brief's battery is present.
  for (const name of ['timestamp-299-s-old', 'timestamp-300-s-ahead']) expect(ids).toContain(`webhook-receiver-accepts-${name}`);
  for (const name of ['timestamp-301-s-old', 'timestamp-one-day-ahead', 'timestamp-exponent', 'timestamp-plus-sign', 'timestamp-fraction', 'timestamp-hex', 'timestamp-empty',
    'service-timestamp-repeated', 'signature-version-v0', 'signature-version-v2', 'signature-no-prefix', 'signature-truncated', 'signature-over-long', 'signature-non-hex',
    'signature-base64', 'signature-other-secret', 'signature-over-reserialised-body', 'body-one-bit-flipped', 'event-id-header-differs', 'version-header-differs',
    'service-event-id-absent', 'service-delivery-id-absent', 'service-timestamp-absent', 'service-signature-absent', 'service-webhook-version-absent']) {
    expect(ids).toContain(`webhook-receiver-rejects-${name}`);
  }
});

test('the reference receiver passes every receiver check; the secret appears in no record or evidence', async () => {
  test.setTimeout(90_000);
  const sandbox = await startReceiverSandbox(SECRET);
  try {
    const results = await runReceiverSuite({ url: sandbox.url, secret: SECRET, followUpProbe: () => sandbox.api.count(), followUpSettleMs: 25 });
    expect(results).toHaveLength(RECEIVER_CASES.length);
    const bad = results.filter((r) => r.outcome === 'fail' || r.outcome === 'not_verified' || (r.outcome === 'informational' && !RECEIVER_OPEN_CASE_IDS.includes(r.id)));
    expect(bad, summary(results)).toEqual([]);
    // Valid deliveries did lead to follow-ups, with the API key, so "no follow-up" is not vacuous.
    expect(sandbox.api.count()).toBeGreaterThan(0);
    expect(sandbox.api.calls.every((c) => c.authorized)).toBe(true);
    const text = JSON.stringify(results);
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
  } finally {
    await sandbox.close();
  }
});

test('without a follow-up probe the sweep is not_verified and the status checks still pass', async () => {
  test.setTimeout(60_000);
  const api = await startCountingApi();
  const good = await startBrokenReceiver('answers-500-to-invalid-signature', SECRET, api); // only differs on invalid signatures
  try {
    const results = await runReceiverSuite({ url: good.url, secret: SECRET });
    const sweep = results.find((r) => r.id === 'webhook-receiver-no-followup-after-invalid-deliveries')!;
    expect(sweep.outcome).toBe('not_verified');
    expect(results.find((r) => r.id === 'webhook-receiver-accepts-valid-delivery')!.outcome).toBe('pass');
    expect(results.find((r) => r.id === 'webhook-receiver-rejects-timestamp-301-s-old')!.outcome).toBe('pass');
    expect(results.find((r) => r.id === 'webhook-receiver-rejects-signature-other-secret')!.outcome).toBe('fail');
  } finally {
    await good.close();
    await api.close();
  }
});

for (const [kind, { description, mustFail }] of Object.entries(BROKEN_RECEIVERS) as [BrokenKind, (typeof BROKEN_RECEIVERS)[BrokenKind]][]) {
  test(`broken receiver ${kind} (${description}) fails the checks named for it`, async () => {
    test.setTimeout(90_000);
    const api = await startCountingApi();
    const broken = await startBrokenReceiver(kind, SECRET, api);
    try {
      const results = await runReceiverSuite({
        url: broken.url, secret: SECRET, followUpProbe: () => api.count(), followUpSettleMs: 25,
        timeoutMs: kind === 'hangs-on-invalid-signature' ? 300 : 5_000,
      });
      const byId = new Map(results.map((r) => [r.id, r]));
      for (const id of mustFail) {
        expect(byId.get(id)?.outcome, `${id} against ${kind}\n${summary(results)}`).toBe('fail');
      }
      // The defect is specific: a correct delivery is still acknowledged.
      expect(byId.get('webhook-receiver-accepts-valid-delivery')?.outcome).toBe('pass');
      expect(JSON.stringify(results)).not.toContain(SECRET);
    } finally {
      await broken.close();
      await api.close();
    }
  });
}
