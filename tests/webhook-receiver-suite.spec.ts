// Proof of the receiver suite (checks/receiver/cases.ts): the example receiver (reference-receiver/)
// passes every check (informational only where the spec leaves the outcome open), and each broken
// receiver of tests/webhook-broken-receivers.ts makes the checks named for it FAIL. This is where the
// `webhook-receiver-*` conformance checks are shown able to fail (the service mutants cannot reach them).
import { test, expect } from '@playwright/test';
import { fabricateRejections } from '../checks/receiver/adversarial.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import { startReceiverSandbox } from './helpers/receiver-sandbox.ts';
import { BODY_HANDLING, COVERED_ADVERSARIAL_CASES, RECEIVER_CASES, RECEIVER_OPEN_CASE_IDS, SIGNING_INPUT } from '../checks/receiver/cases.ts';
import { runReceiverSuite } from '../engine/receiver-run.ts';
import type { ReceiverCheckResult } from '../engine/receiver-run.ts';
import { BROKEN_RECEIVERS, startBrokenReceiver } from './webhook-broken-receivers.ts';
import type { BrokenKind } from './webhook-broken-receivers.ts';

const SECRET = 'whsec_receiver_suite_proof_5e6f7a8b';

function summary(results: ReceiverCheckResult[]): string {
  return results.filter((r) => r.outcome !== 'pass').map((r) => `${r.outcome} ${r.id}: ${r.detail ?? ''}`).join('\n');
}

test('the receiver case table covers every adversarial delivery that can go over HTTP, with unique ids', () => {
  const overHttp = fabricateRejections({ secret: SECRET, nowSeconds: 1_800_000_000 }).filter((c) => c.overHttp).map((c) => c.name);
  expect([...COVERED_ADVERSARIAL_CASES].sort()).toEqual([...overHttp].sort());
  const ids = RECEIVER_CASES.map((c) => c.id);
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

test('every receiver check is named by a broken receiver that must fail it (no receiver check that cannot fail)', () => {
  const named = new Set(Object.values(BROKEN_RECEIVERS).flatMap((b) => b.mustFail));
  expect(RECEIVER_CASES.map((c) => c.id).filter((id) => !named.has(id))).toEqual([]);
  const known = new Set(RECEIVER_CASES.map((c) => c.id));
  expect([...named].filter((id) => !known.has(id)), 'broken receivers name checks that do not exist').toEqual([]);
});

test('the reference receiver passes every receiver check; the secret appears in no record or evidence', async () => {
  test.setTimeout(90_000);
  const sandbox = await startReceiverSandbox(SECRET);
  try {
    const results = await runReceiverSuite({ url: sandbox.url, secret: SECRET, followUpProbe: () => sandbox.api.count(), followUpSettleMs: 25 });
    expect(results).toHaveLength(RECEIVER_CASES.length);
    const bad = results.filter((r) => r.outcome === 'fail' || r.outcome === 'not_verified' || r.outcome === 'warning' || (r.outcome === 'informational' && !RECEIVER_OPEN_CASE_IDS.includes(r.id)));
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

test('without a follow-up probe the sweep is not_verified, statuses are still judged, and a 2xx to forged junk is never green', async () => {
  test.setTimeout(90_000);
  const api = await startCountingApi();
  const good = await startBrokenReceiver('answers-500-to-invalid-signature', SECRET, api); // only differs on invalid signatures
  const nothing = await startBrokenReceiver('verifies-nothing', SECRET, api);
  try {
    const results = await runReceiverSuite({ url: good.url, secret: SECRET });
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get('webhook-receiver-no-followup-after-invalid-deliveries')!.outcome).toBe('not_verified');
    expect(byId.get('webhook-receiver-processes-concurrent-duplicates-once')!.outcome).toBe('not_verified');
    expect(byId.get('webhook-receiver-accepts-valid-delivery')!.outcome).toBe('pass');
    expect(byId.get('webhook-receiver-rejects-timestamp-301-s-old')!.outcome).toBe('pass');
    expect(byId.get('webhook-receiver-rejects-signature-other-secret')!.outcome).toBe('warning');
    expect(results.filter((r) => r.outcome === 'fail'), summary(results)).toEqual([]);

    // Without a probe nothing shows whether a 2xx to an invalid delivery was acted on: not_verified, not a pass.
    const blind = await runReceiverSuite({ url: nothing.url, secret: SECRET });
    const other = blind.find((r) => r.id === 'webhook-receiver-rejects-signature-other-secret')!;
    expect(other.outcome).toBe('not_verified');
    expect(other.detail).toMatch(/answered 204 to an invalid delivery/);
    // Only "ignore" an unsupported event type with a 2xx is allowed (§6.4); no other rejection check is green.
    expect(blind.filter((r) => r.id.startsWith('webhook-receiver-rejects-') && r.outcome === 'pass').map((r) => r.id)).toEqual(['webhook-receiver-rejects-payload-other-event-type']);
  } finally {
    await good.close();
    await nothing.close();
    await api.close();
  }
});

for (const [kind, { description, mustFail, mustWarn = [] }] of Object.entries(BROKEN_RECEIVERS) as [BrokenKind, (typeof BROKEN_RECEIVERS)[BrokenKind]][]) {
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
      expect(mustFail.length + mustWarn.length).toBeGreaterThan(0);
      for (const id of mustFail) {
        expect(byId.get(id)?.outcome, `${id} against ${kind}\n${summary(results)}`).toBe('fail');
      }
      // A should not met is a warning, never a failure (never stricter than the spec).
      for (const id of mustWarn) {
        expect(byId.get(id)?.outcome, `${id} against ${kind}\n${summary(results)}`).toBe('warning');
      }
      if (mustFail.length === 0) expect(results.filter((r) => r.outcome === 'fail'), summary(results)).toEqual([]);
      // The defect is specific: a correct delivery is still acknowledged.
      if (![...mustFail, ...mustWarn].includes('webhook-receiver-accepts-valid-delivery')) expect(byId.get('webhook-receiver-accepts-valid-delivery')?.outcome).toBe('pass');
      expect(JSON.stringify(results)).not.toContain(SECRET);
    } finally {
      await broken.close();
      await api.close();
    }
  });
}

test('a valid delivery answered 5xx is never a failure: not_verified naming the follow-up without a probe, a warning when the stand-in answered', async () => {
  test.setTimeout(90_000);
  const api = await startCountingApi();
  const r = await startBrokenReceiver('answers-503-after-follow-up', SECRET, api);
  try {
    const blind = await runReceiverSuite({ url: r.url, secret: SECRET });
    expect(blind.filter((x) => x.outcome === 'fail'), summary(blind)).toEqual([]);
    const valid = blind.find((x) => x.id === 'webhook-receiver-accepts-valid-delivery')!;
    expect(valid.outcome).toBe('not_verified');
    expect(valid.detail).toMatch(/answered 503, a retryable failure under §6\.4 .*--follow-up-port N/);
    // The open boundary answered 503: a rejection or a processing failure; without the probe nothing tells which.
    expect(blind.find((x) => x.id === 'webhook-receiver-accepts-timestamp-300-s-old')!.outcome).toBe('not_verified');

    const seen = await runReceiverSuite({ url: r.url, secret: SECRET, followUpProbe: () => api.count(), followUpSettleMs: 25 });
    expect(seen.filter((x) => x.outcome === 'fail'), summary(seen)).toEqual([]);
    const warned = seen.find((x) => x.id === 'webhook-receiver-accepts-valid-delivery')!;
    expect(warned.outcome).toBe('warning');
    expect(warned.detail).toMatch(/the follow-up stand-in answered the receiver's fetches, yet it did not acknowledge the delivery/);
    // Scenarios built on an acknowledged first delivery are not judged, never failed.
    expect(seen.find((x) => x.id === 'webhook-receiver-accepts-exact-replay')!.outcome).toBe('not_verified');
  } finally {
    await r.close();
    await api.close();
  }
});

test('a refused valid delivery names the receiver\'s body handling when a re-serialised signature is accepted, and shows the exact signing input', async () => {
  test.setTimeout(90_000);
  const api = await startCountingApi();
  const py = await startBrokenReceiver('verifies-python-json-dumps', SECRET, api);
  const js = await startBrokenReceiver('verifies-reserialised-body', SECRET, api);
  const wrong = await startBrokenReceiver('hmac-without-timestamp', SECRET, api);
  try {
    const pyResults = await runReceiverSuite({ url: py.url, secret: SECRET });
    const valid = pyResults.find((x) => x.id === 'webhook-receiver-accepts-valid-delivery')!;
    expect(valid.outcome).toBe('fail');
    expect(valid.detail).toContain(`${BODY_HANDLING} the receiver refused the delivery as signed`);
    expect(valid.detail).toContain("Python's json.dumps(request.json) default");
    // The signing input: timestamp text, a dot, the raw body with its length, escaped; never the secret or a digest.
    expect(valid.detail).toMatch(new RegExp(`${SIGNING_INPUT} "[0-9]{10}" \\+ "\\." \\+ raw body \\([0-9]+ bytes\\): \\{"id":"evt_conf_`));
    expect(valid.detail).not.toContain(SECRET);
    expect(valid.detail).not.toMatch(/v1=[0-9a-f]{64}/);

    // The reverse: compact deliveries pass (they re-serialise to themselves), the indented one is refused.
    const jsResults = await runReceiverSuite({ url: js.url, secret: SECRET });
    expect(jsResults.find((x) => x.id === 'webhook-receiver-accepts-valid-delivery')!.outcome).toBe('pass');
    const laidOut = jsResults.find((x) => x.id === 'webhook-receiver-accepts-valid-delivery-laid-out-json')!;
    expect(laidOut.outcome).toBe('fail');
    expect(laidOut.detail).toContain(`${BODY_HANDLING} the receiver refused the delivery as signed`);
    expect(laidOut.detail).toContain('compact JSON (JSON.stringify(JSON.parse(body))');
    expect(laidOut.detail).toMatch(/raw body \([0-9]+ bytes\): \{\\n  "id": "evt_conf_/);

    // A receiver whose HMAC input is wrong in another way gets no body-handling sentence.
    const other = (await runReceiverSuite({ url: wrong.url, secret: SECRET })).find((x) => x.id === 'webhook-receiver-accepts-valid-delivery')!;
    expect(other.outcome).toBe('fail');
    expect(other.detail).not.toContain(BODY_HANDLING);
    expect(other.detail).toContain(SIGNING_INPUT);
  } finally {
    await py.close();
    await js.close();
    await wrong.close();
    await api.close();
  }
});
