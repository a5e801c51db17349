// `conformance webhook vectors` and `conformance webhook send` (cli/webhook.ts, checks/receiver/vectors.ts).
// The vectors file round-trips: read back from disk, every vector's raw bytes, header lines, test-only secret and
// clock given to the harness's own verifier (judge/signature.ts) AND to the example receiver's verifier
// (reference-receiver/verify.ts, written apart from the harness) give exactly the expected outcome. `send`
// re-sends one named delivery, freshly signed, and says whether the answer is what that delivery should get.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { webhookCommand } from '../cli/webhook.ts';
import type { WebhookIo } from '../cli/webhook.ts';
import { verify } from '../judge/signature.ts';
import { RECEIVER_CASES } from '../checks/receiver/cases.ts';
import { TEST_ONLY_SECRET, VECTORS_FILE, type ReceiverVectors } from '../checks/receiver/vectors.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import { verifyDelivery } from '../reference-receiver/verify.ts';
import { startBrokenReceiver } from './webhook-broken-receivers.ts';

const SECRET = 'whsec_send_command_test_1a2b3c4d';

function io(env: NodeJS.ProcessEnv = { CONFORMANCE_WEBHOOK_SECRET: SECRET }): WebhookIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, env, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

/** Header lines as Node's `headersDistinct` gives them: lowercase names, every line of a name kept. */
function distinct(lines: [string, string][]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of lines) (out[name.toLowerCase()] ??= []).push(value);
  return out;
}

test('webhook vectors --out writes the battery; both verifiers, fed each vector from the file, agree with every expected outcome', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-vectors-'));
  try {
    const o = io({});
    expect(await webhookCommand(['vectors', '--out', dir], o), o.err.join('\n')).toBe(0);
    expect(o.out[0]).toMatch(/^conformance webhook vectors: [0-9]+ vectors \([0-9]+ accept, [0-9]+ reject; [0-9]+ where the spec leaves the outcome open\) in /);
    const file = JSON.parse(fs.readFileSync(path.join(dir, VECTORS_FILE), 'utf8')) as ReceiverVectors;
    expect(file.secret).toMatchObject({ utf8: TEST_ONLY_SECRET, testOnly: true });
    expect(file.secret.note).toMatch(/TEST-ONLY/);
    // Every single-delivery check of the suite is a vector, with both outcomes present.
    const single = RECEIVER_CASES.filter((c) => c.wire).map((c) => c.id);
    expect(file.vectors.map((v) => v.check)).toEqual(single);
    expect(single.length).toBeGreaterThan(50);
    expect(file.vectors.filter((v) => v.expected === 'accept').length).toBeGreaterThanOrEqual(4);
    expect(new Set(file.vectors.map((v) => v.name)).size).toBe(file.vectors.length);

    const disagreements: string[] = [];
    for (const v of file.vectors) {
      const rawBody = Buffer.from(v.body.base64, 'base64');
      expect(rawBody.length, v.name).toBe(v.body.length);
      if (v.body.utf8 !== null) expect(Buffer.from(v.body.utf8, 'utf8').equals(rawBody), `${v.name}: utf8 view`).toBe(true);
      const headers = distinct(v.headers);
      const harness = verify({ headers, rawBody, secret: file.secret.utf8, nowMs: v.receiverClock.unixMs });
      const example = verifyDelivery({ headers, rawBody, secret: file.secret.utf8, nowMs: v.receiverClock.unixMs });
      if (harness.ok !== (v.expected === 'accept')) disagreements.push(`${v.name}: harness verifier ${harness.ok ? 'accepts' : `rejects (${harness.reason})`}, expected ${v.expected}`);
      if (example.ok !== (v.expected === 'accept')) disagreements.push(`${v.name}: example receiver's verifier ${example.ok ? 'accepts' : `rejects (${example.reason})`}, expected ${v.expected}`);
      // The signing input is the timestamp header's text, a dot and the raw bytes.
      if (v.signingInput.timestamp !== null) expect(Buffer.from(v.signingInput.base64, 'base64').equals(Buffer.concat([Buffer.from(`${v.signingInput.timestamp}.`), rawBody])), v.name).toBe(true);
    }
    expect(disagreements).toEqual([]);

    // The round trip can fail: the same vectors under another secret or clock no longer hold.
    const valid = file.vectors.find((v) => v.name === 'accepts-valid-delivery')!;
    const rawBody = Buffer.from(valid.body.base64, 'base64');
    expect(verify({ headers: distinct(valid.headers), rawBody, secret: 'another-secret-entirely', nowMs: valid.receiverClock.unixMs }).ok).toBe(false);
    expect(verifyDelivery({ headers: distinct(valid.headers), rawBody, secret: file.secret.utf8, nowMs: valid.receiverClock.unixMs + 301_000 }).ok).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('webhook send re-sends one named delivery, freshly signed, and says whether the answer is the expected one', async () => {
  test.setTimeout(60_000);
  const api = await startCountingApi();
  const careful = await startBrokenReceiver('dedupes-by-delivery-id', SECRET, api); // verifies every delivery correctly
  const careless = await startBrokenReceiver('verifies-nothing', SECRET, api);
  try {
    let o = io();
    expect(await webhookCommand(['send', '--list'], o)).toBe(0);
    expect(o.out.length).toBe(RECEIVER_CASES.filter((c) => c.wire).length);
    expect(o.out.some((l) => /^rejects-signature-other-secret +reject {2}a signature made with another secret is rejected$/.test(l))).toBe(true);

    o = io();
    const before = Math.floor(Date.now() / 1000);
    expect(await webhookCommand(['send', '--url', careful.url, '--name', 'accepts-valid-delivery'], o), o.out.join('\n') + o.err.join('\n')).toBe(0);
    let text = o.out.join('\n');
    const ts = Number(/^Service-Timestamp: ([0-9]+)$/m.exec(text)![1]);
    expect(Math.abs(ts - before)).toBeLessThanOrEqual(2); // freshly signed, not a stale replay
    expect(text).toMatch(/^Service-Signature: \[REDACTED\]$/m);
    expect(text).toMatch(/^signing input: "[0-9]{10}" \+ "\." \+ raw body \([0-9]+ bytes\): \{"id":"evt_conf_/m);
    expect(text).toMatch(/^→ answered 204; a correctly signed delivery is acknowledged with 2xx: expected a 2xx: as expected$/m);
    expect(text).not.toContain(SECRET);

    o = io();
    expect(await webhookCommand(['send', '--url', careful.url, '--name', 'rejects-signature-other-secret'], o)).toBe(0);
    expect(o.out.join('\n')).toMatch(/^→ answered 401; .*expected a non-2xx answer: as expected$/m);

    o = io();
    expect(await webhookCommand(['send', '--url', careless.url, '--name', 'rejects-signature-other-secret'], o)).toBe(1);
    text = o.out.join('\n');
    expect(text).toMatch(/^→ answered 204; .*: NOT as expected$/m);

    o = io();
    expect(await webhookCommand(['send', '--url', careful.url, '--name', 'no-such-delivery'], o)).toBe(2);
    expect(o.err).toEqual(['conformance: no delivery named "no-such-delivery" (conformance webhook send --list prints the names)']);
  } finally {
    await careful.close();
    await careless.close();
    await api.close();
  }
});
