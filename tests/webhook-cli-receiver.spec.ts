// `conformance webhook receiver` (cli/webhook.ts) like `run`: an unreachable receiver is one line
// and exit 2; results are grouped by cause with the §6.3 step and one example delivery (secret redacted);
// a hint when every correctly signed delivery is refused; the verdict and exit code come from the same
// report model as `run` (INCOMPLETE without a follow-up probe, --allow-incomplete, --strict); --out writes
// conformance.json, junit.xml, conformance.html and outcomes.json.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { webhookCommand } from '../cli/webhook.ts';
import type { WebhookIo } from '../cli/webhook.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import { freePort } from '../platform/embedded-cluster.ts';
import { startReceiverSandbox } from './helpers/receiver-sandbox.ts';
import { startBrokenReceiver } from './webhook-broken-receivers.ts';

const SECRET = 'whsec_cli_receiver_test_4f5e6d7c';

function io(env: NodeJS.ProcessEnv = { CONFORMANCE_WEBHOOK_SECRET: SECRET }): WebhookIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, env, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

test('an unreachable receiver URL is one line on stderr and exit 2, nothing judged', async () => {
  const port = await freePort();
  const o = io();
  expect(await webhookCommand(['receiver', '--url', `http://127.0.0.1:${port}/hooks`], o)).toBe(2);
  expect(o.err).toHaveLength(1);
  expect(o.err[0]).toMatch(/^conformance: the webhook receiver at http:\/\/127\.0\.0\.1:[0-9]+ is unreachable: connection refused/);
  expect(o.out).toEqual([]);
});

test('a receiver that accepts connections but never answers ends at once: one line, exit 2', async () => {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket); // reads nothing, answers nothing
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  try {
    const o = io();
    const started = Date.now();
    expect(await webhookCommand(['receiver', '--url', `http://127.0.0.1:${port}/hooks`, '--timeout-ms', '500'], o)).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(o.err).toEqual(['conformance: the webhook receiver accepted the connection but did not answer a correct delivery within 500 ms (a slow receiver: raise --timeout-ms)']);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('the example receiver: INCOMPLETE (no follow-up probe by URL), exit 1, exit 0 with --allow-incomplete; --out writes the reports; a wrong secret gets the hint', async () => {
  test.setTimeout(120_000);
  const sandbox = await startReceiverSandbox(SECRET);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-webhook-cli-'));
  try {
    let o = io();
    expect(await webhookCommand(['receiver', '--url', sandbox.url, '--out', outDir, '--allow-incomplete'], o)).toBe(0);
    let text = o.out.join('\n');
    expect(text).toMatch(/^conformance: [0-9]+ passed, 0 failed, 0 warnings, 2 not verified, 0 informational$/m);
    expect(text).toMatch(/^conformance: INCOMPLETE — receiver: verified [0-9]+ of [0-9]+ must requirements in scope; nothing failed$/m);
    expect(text).toMatch(/^NOT VERIFIED ×2: no view of the receiver's follow-up fetches/m);
    expect(text).toMatch(/^to verify "no follow-up after an invalid delivery" \(WEBHOOK-SIG-FAIL-NO-FOLLOWUP, a must\): rerun with --follow-up-port N/m);
    expect(text).not.toMatch(/^hint:/m);
    for (const f of ['conformance.json', 'junit.xml', 'conformance.html', 'outcomes.json']) expect(fs.existsSync(path.join(outDir, f)), f).toBe(true);
    const report = JSON.parse(fs.readFileSync(path.join(outDir, 'conformance.json'), 'utf8')) as { verdict: string; checks: { id: string; evidence: unknown }[]; run: { target: { baseUrl: string } }; requirements: { id: string }[] };
    expect(report.verdict).toBe('incomplete');
    expect(report.run.target.baseUrl).toBe(sandbox.url);
    expect(report.checks.find((c) => c.id === 'webhook-receiver-accepts-valid-delivery')?.evidence).toBeTruthy();
    // The report's scope is the receiver's requirements, not the whole service contract.
    expect(report.requirements.every((r) => r.id.startsWith('WEBHOOK-') || r.id.startsWith('LIMIT-'))).toBe(true);
    const junit = fs.readFileSync(path.join(outDir, 'junit.xml'), 'utf8');
    expect(junit).toContain('webhook-receiver-accepts-valid-delivery');
    for (const f of fs.readdirSync(outDir)) {
      const p = path.join(outDir, f);
      if (fs.statSync(p).isFile()) expect(fs.readFileSync(p, 'utf8'), f).not.toContain(SECRET);
    }

    o = io();
    expect(await webhookCommand(['receiver', '--url', sandbox.url], o)).toBe(1);
    expect(o.out.join('\n')).toMatch(/^conformance: INCOMPLETE/m);

    // Another secret: every correct delivery is refused with 401; one hint names the likely cause.
    o = io({ OTHER: 'whsec_not_the_receivers_secret_0000' });
    expect(await webhookCommand(['receiver', '--url', sandbox.url, '--secret-env', 'OTHER'], o)).toBe(1);
    text = o.out.join('\n');
    expect(text).toMatch(/^FAIL ×[0-9]+: Valid delivery not acknowledged with 2xx \(last delivery answered 401\)$/m);
    expect(text).toMatch(/^hint: every correctly signed delivery was refused \(answered 401\), and none of the same event signed over a re-serialised body was accepted either: the receiver most likely holds another signing secret than \$OTHER/m);
    expect(text).not.toMatch(/^hint:.*follow-up/m);
    expect(text).toMatch(/^conformance: NOT CONFORMANT — receiver: [0-9]+ checks failed$/m);
    expect(text).not.toContain('whsec_not_the_receivers_secret_0000');
  } finally {
    await sandbox.close();
    fs.rmSync(outDir, { recursive: true, force: true });
  }
});

test('a receiver that verifies nothing: one group per cause with the §6.3 steps and one example delivery, secret redacted', async () => {
  test.setTimeout(60_000);
  const api = await startCountingApi();
  const r = await startBrokenReceiver('verifies-nothing', SECRET, api);
  try {
    const o = io();
    expect(await webhookCommand(['receiver', '--url', r.url], o)).toBe(1);
    const text = o.out.join('\n');
    const group = o.out.filter((l) => /^NOT VERIFIED ×[0-9]+: invalid deliveries answered 204: /.test(l));
    expect(group, text).toHaveLength(1);
    expect(Number(/×([0-9]+)/.exec(group[0])![1])).toBeGreaterThanOrEqual(30);
    expect(text).toMatch(/^ {4}§6\.3 step 3: timestamp more than 300 s from the receiver clock: .*rejects-timestamp-301-s-old/m);
    expect(text).toMatch(/^ {4}§6\.3 steps 4, 5, 7: .*rejects-signature-other-secret/m);
    expect(text).toMatch(/^ {6}Service-Signature: /m);
    expect(text).toMatch(/^ {6}body: \{"id":"evt_conf_/m);
    expect(text).toMatch(/^ {6}→ answered 204$/m);
    // No per-check line for each invalid delivery (the old output: one line per check).
    expect(o.out.filter((l) => /webhook-receiver-rejects-/.test(l) && /^(PASS|FAIL|NOT_VERIFIED)/.test(l))).toEqual([]);
    expect(o.out.length).toBeLessThan(60);
    expect(text).toMatch(/^conformance: INCOMPLETE/m);
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
  } finally {
    await r.close();
    await api.close();
  }
});

test('a receiver answering 500 to forged deliveries gets warnings, not failures; --strict makes them fail the run', async () => {
  test.setTimeout(60_000);
  const api = await startCountingApi();
  const r = await startBrokenReceiver('answers-500-to-invalid-signature', SECRET, api);
  try {
    let o = io();
    expect(await webhookCommand(['receiver', '--url', r.url, '--allow-incomplete'], o)).toBe(0);
    let text = o.out.join('\n');
    expect(text).toMatch(/^WARNING ×[0-9]+: invalid deliveries answered 500: non-2xx or no answer, but retryable under §6\.4/m);
    expect(text).toMatch(/^conformance: [0-9]+ passed, 0 failed, [1-9][0-9]* warnings/m);
    o = io();
    expect(await webhookCommand(['receiver', '--url', r.url, '--allow-incomplete', '--strict', '--verbose'], o)).toBe(1);
    text = o.out.join('\n');
    expect(text).toMatch(/^WARNING\s+webhook-receiver-rejects-signature-other-secret: /m);
    expect(text).toMatch(/^conformance: NOT CONFORMANT — receiver: --strict: [0-9]+ warnings/m);
    expect(text).not.toContain(SECRET);
  } finally {
    await r.close();
    await api.close();
  }
});

test('with --follow-up-port the example receiver is CONFORMANT (exit 0), and a receiver that acts on forged deliveries FAILS', async () => {
  test.setTimeout(120_000);
  const sandbox = await startReceiverSandbox(SECRET);
  try {
    // The example receiver's REST base URL is the probe the command will serve on this port.
    let port = await freePort();
    const receiver = await sandbox.startReceiver({ apiBaseUrl: `http://127.0.0.1:${port}` });
    let o = io();
    expect(await webhookCommand(['receiver', '--url', receiver.url, '--follow-up-port', String(port)], o), o.out.join('\n')).toBe(0);
    let text = o.out.join('\n');
    expect(text).toMatch(/^follow-up probe: counting the receiver's REST fetches at http:\/\/127\.0\.0\.1:[0-9]+ /m);
    expect(text).toMatch(/^conformance: [0-9]+ passed, 0 failed, 0 warnings, 0 not verified, 0 informational$/m);
    expect(text).toMatch(/^conformance: CONFORMANT — receiver: verified ([0-9]+) of \1 must requirements in scope \(1 not observable by any run, listed apart\)$/m);
    expect(text).toMatch(/^not observable by any run \(listed apart, never counted as verified\): WEBHOOK-SIG-CONSTANT-TIME: /m);

    // The same probe sees a receiver that verifies nothing fetch what forged deliveries name.
    port = await freePort();
    const broken = await startBrokenReceiver('verifies-nothing', SECRET, { baseUrl: `http://127.0.0.1:${port}`, apiKey: 'cek_live_probe_test_0001' });
    try {
      o = io();
      expect(await webhookCommand(['receiver', '--url', broken.url, '--follow-up-port', String(port)], o)).toBe(1);
      text = o.out.join('\n');
      expect(text).toMatch(/^FAIL ×[0-9]+: invalid deliveries led to follow-up REST fetches \(§6\.3: must not fetch follow-up resources or do clinical work\)$/m);
      expect(text).toMatch(/^conformance: NOT CONFORMANT/m);
    } finally {
      await broken.close();
    }

    // A probe the receiver never calls is named.
    port = await freePort();
    o = io();
    expect(await webhookCommand(['receiver', '--url', sandbox.url, '--follow-up-port', String(port)], o)).toBe(1);
    expect(o.out.join('\n')).toMatch(/^follow-up probe: the receiver made no request to it/m);
  } finally {
    await sandbox.close();
  }
});

test('the example receiver whose follow-up fetches cannot connect (503 to valid deliveries) is never NOT CONFORMANT: INCOMPLETE, a hint naming the follow-up', async () => {
  test.setTimeout(120_000);
  const sandbox = await startReceiverSandbox(SECRET);
  try {
    const unreachable = await sandbox.startReceiver({ apiBaseUrl: `http://127.0.0.1:${await freePort()}`, fetchTimeoutMs: 1_000 });
    let o = io();
    expect(await webhookCommand(['receiver', '--url', unreachable.url], o)).toBe(1);
    let text = o.out.join('\n');
    expect(text).toMatch(/^conformance: [0-9]+ passed, 0 failed, 0 warnings, [0-9]+ not verified, [0-9]+ informational$/m);
    expect(text).toMatch(/^conformance: INCOMPLETE — receiver: /m);
    expect(text).not.toMatch(/^FAIL/m);
    expect(text).not.toMatch(/another signing secret/);
    expect(text).toMatch(/^NOT VERIFIED ×[0-9]+: valid deliveries answered 503: a retryable failure under §6\.4 \(the service re-sends them\), not a §6\.3 failure; nothing shows why: a follow-up fetch that cannot connect is the usual cause \(--follow-up-port N\)$/m);
    expect(text).toMatch(/^hint: every correctly signed delivery got a retryable answer \(answered 503\), not a refusal: .*--follow-up-port N/m);
    o = io();
    expect(await webhookCommand(['receiver', '--url', unreachable.url, '--allow-incomplete'], o)).toBe(0);
  } finally {
    await sandbox.close();
  }
});

test('a receiver that verifies over json.dumps(request.json): the hint names its body handling, the example shows the signing input', async () => {
  test.setTimeout(60_000);
  const api = await startCountingApi();
  const r = await startBrokenReceiver('verifies-python-json-dumps', SECRET, api);
  try {
    const o = io();
    expect(await webhookCommand(['receiver', '--url', r.url], o)).toBe(1);
    const text = o.out.join('\n');
    expect(text).toMatch(/^hint: the receiver refused the delivery as signed \(over the raw body it received\) but answered 204 to the same body signed over its JSON with ", " and ": " separators \(Python's json\.dumps\(request\.json\) default\): it computes the HMAC over a re-serialisation/m);
    expect(text).toMatch(/^ {6}signing input: "[0-9]{10}" \+ "\." \+ raw body \([0-9]+ bytes\): \{"id":"evt_conf_/m);
    expect(text).not.toMatch(/another signing secret/);
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
  } finally {
    await r.close();
    await api.close();
  }
});
