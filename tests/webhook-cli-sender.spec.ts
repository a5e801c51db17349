// Unit pairs for the sender judges (checks/sender/cases.ts: a bad delivery fires with its title,
// a good one stays quiet) and the `conformance webhook` command (cli/webhook.ts): usage errors
// exit 2 with one line, the sender mode judges scripted deliveries and retries, and no secret reaches the
// output. The receiver mode is tested in tests/webhook-cli-receiver.spec.ts.
import http from 'node:http';
import { test, expect } from '@playwright/test';
import { webhookCommand } from '../cli/webhook.ts';
import type { WebhookIo } from '../cli/webhook.ts';
import { DELIVERY_JUDGES, judgeRetryIds } from '../checks/sender/cases.ts';
import type { CapturedDelivery } from '../observe/capture.ts';
import { buildDelivery, WEBHOOK_HEADERS as H } from '../judge/signature.ts';
import { sampleEvent } from '../checks/receiver/adversarial.ts';

const SECRET = 'whsec_cli_sender_test_9a8b7c6d';

function captured(overrides: { headers?: Record<string, string | undefined>; body?: string; method?: string; at?: number } = {}): CapturedDelivery {
  const d = buildDelivery(sampleEvent(), SECRET, Math.floor(Date.now() / 1000));
  const headers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries({ ...d.headers, ...overrides.headers })) if (v !== undefined) headers[k.toLowerCase()] = [v];
  return { seq: 1, path: '/r', method: overrides.method ?? 'POST', headers, body: overrides.body === undefined ? d.body : Buffer.from(overrides.body), receivedAtMs: overrides.at ?? Date.now(), answered: 204 };
}

const judge = (id: string) => DELIVERY_JUDGES.find((j) => j.id === id)!.judge;

test('a correct delivery passes every delivery judge', () => {
  for (const j of DELIVERY_JUDGES) expect(() => j.judge(captured(), SECRET), j.id).not.toThrow();
});

const BAD: [string, () => CapturedDelivery, RegExp][] = [
  ['webhook-sender-post-json', () => captured({ method: 'PUT' }), /not sent with POST/],
  ['webhook-sender-post-json', () => captured({ headers: { 'Content-Type': 'text/plain' } }), /Content-Type/],
  ['webhook-sender-required-headers-present', () => captured({ headers: { [H.deliveryId]: undefined } }), /Service-Delivery-Id missing/],
  ['webhook-sender-timestamp-current', () => captured({ at: Date.now() + 301_000 }), /outside the 300-second tolerance/],
  ['webhook-sender-timestamp-current', () => captured({ headers: { [H.timestamp]: `0${Math.floor(Date.now() / 1000)}` } }), /not canonical/],
  ['webhook-sender-signature-valid', () => captured({ body: JSON.stringify(sampleEvent(), null, 2) }), /does not match the HMAC/],
  ['webhook-sender-signature-valid', () => captured({ headers: { [H.signature]: 'v1=ABC' } }), /not v1= followed by 64/],
  ['webhook-sender-payload-schema', () => captured({ body: JSON.stringify({ ...sampleEvent(), extra: 1 }) }), /closed RecordingTranscriptReadyWebhookEvent/],
  ['webhook-sender-payload-thin', () => captured({ body: JSON.stringify({ ...sampleEvent(), resources: { encounter_id: 'https://x.example/e', document_id: 'd' } }) }), /looks like a URL/],
  ['webhook-sender-payload-thin', () => captured({ body: JSON.stringify({ ...sampleEvent(), organization_id: 'org 10.0.0.12' }) }), /IP address/],
  ['webhook-sender-payload-thin', () => captured({ body: JSON.stringify({ ...sampleEvent(), organization_id: 'fe80::1' }) }), /IP address/],
  ['webhook-sender-payload-thin', () => captured({ body: JSON.stringify({ ...sampleEvent(), note: SECRET }) }), /signing secret/],
  ['webhook-sender-event-id-header-matches', () => captured({ headers: { [H.eventId]: 'evt_other' } }), /differs from body id/],
  ['webhook-sender-version-header-matches', () => captured({ headers: { [H.version]: '2026-06-01' } }), /differs from body api_version/],
  ['webhook-sender-no-api-key', () => captured({ headers: { Authorization: 'Bearer cek_dummy' } }), /carries an API key/],
  ['webhook-sender-no-api-key', () => captured({ headers: { 'X-Api-Key': 'cek_dummy' } }), /carries an API key/],
];

for (const [n, [id, make, title]] of BAD.entries()) {
  test(`${id} › fires on bad delivery ${n + 1} (${title.source})`, () => {
    expect(() => judge(id)(make(), SECRET)).toThrow(title);
  });
}

test('the no-api-key judge finds a profile key in any header, and names no value', () => {
  const d = captured({ headers: { 'X-Trace': 'ctx=cek_live_abc123' } });
  expect(() => judge('webhook-sender-no-api-key')(d, SECRET)).not.toThrow();
  expect(() => judge('webhook-sender-no-api-key')(d, SECRET, { apiKeys: ['cek_live_abc123'] })).toThrow(/header x-trace carries an API key of the profile/);
  try {
    judge('webhook-sender-no-api-key')(d, SECRET, { apiKeys: ['cek_live_abc123'] });
  } catch (e) {
    expect((e as Error).message).not.toContain('cek_live_abc123');
  }
});

test('the thin judge does not take an ISO date-time for an IPv6 address', () => {
  expect(() => judge('webhook-sender-payload-thin')(captured({ body: JSON.stringify(sampleEvent({ occurred_at: '2026-05-01T12:00:00.000Z' })) }), SECRET)).not.toThrow();
});

test('judgeRetryIds requires the same event id and delivery id', () => {
  const a = captured();
  expect(() => judgeRetryIds(a, captured())).not.toThrow();
  expect(() => judgeRetryIds(a, captured({ headers: { [H.deliveryId]: 'dlv_new' } }))).toThrow(/new delivery id/);
});

function io(env: NodeJS.ProcessEnv = {}, interrupted?: Promise<void>): WebhookIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, env, interrupted, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

test('usage errors exit 2 with one line on stderr', async () => {
  for (const [argv, env, re] of [
    [[], {}, /needs a command/],
    [['nope'], {}, /unknown webhook command/],
    [['receiver'], { CONFORMANCE_WEBHOOK_SECRET: SECRET }, /needs --url/],
    [['receiver', '--url', 'http://127.0.0.1:9/x'], {}, /CONFORMANCE_WEBHOOK_SECRET .* is not set/],
    [['receiver', '--url', 'ftp://x'], { CONFORMANCE_WEBHOOK_SECRET: SECRET }, /http\(s\)/],
    [['sender', '--port', '0', '--secret-env', 'S', '--script', '503,abc'], { S: SECRET }, /--script step/],
    [['sender', '--secret-env', 'S'], { S: SECRET }, /needs --port/],
    [['sender', '--port', '0', '--bogus'], { S: SECRET }, /bogus/],
  ] as [string[], NodeJS.ProcessEnv, RegExp][]) {
    const o = io(env);
    expect(await webhookCommand(argv, o), argv.join(' ')).toBe(2);
    expect(o.err).toHaveLength(1);
    expect(o.err[0]).toMatch(/^conformance: /);
    expect(o.err[0]).toMatch(re);
  }
});

function post(url: string, d: { headers: Record<string, string>; body: Buffer }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: d.headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(d.body);
  });
}

async function listening(o: { out: string[] }): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const line = o.out.find((l) => l.includes('listening on'));
    if (line) return /listening on (http:\/\/[^ ]+?)\/ /.exec(line)![1];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('sender mode did not start');
}

test('webhook sender judges scripted deliveries: a retry with the same ids passes, a new delivery id fails', async () => {
  test.setTimeout(30_000);
  const now = Math.floor(Date.now() / 1000);
  // Good: 503 then the same delivery again → exit 0.
  let o = io({ S: SECRET });
  let run = webhookCommand(['sender', '--port', '0', '--secret-env', 'S', '--script', '503,200', '--events', '1', '--observe-ms', '100', '--duration', '20'], o);
  let url = await listening(o);
  const event = sampleEvent({ id: 'evt_cli_good' });
  expect(await post(`${url}/hook`, buildDelivery(event, SECRET, now))).toBe(503);
  expect(await post(`${url}/hook`, buildDelivery(event, SECRET, now + 1))).toBe(200);
  expect(await run).toBe(0);
  expect(o.out.join('\n')).toMatch(/retries: 2 as expected, 0 wrong, 0 retryable answers never retried/);

  // Bad: the retry carries a new delivery id, and one delivery is signed with another secret → exit 1.
  o = io({ S: SECRET });
  run = webhookCommand(['sender', '--port', '0', '--secret-env', 'S', '--script', '429,200', '--events', '1', '--observe-ms', '100', '--duration', '20'], o);
  url = await listening(o);
  const bad = sampleEvent({ id: 'evt_cli_bad' });
  expect(await post(`${url}/hook`, buildDelivery(bad, 'another-secret-123', now))).toBe(429);
  expect(await post(`${url}/hook`, buildDelivery(bad, SECRET, now, { deliveryId: 'dlv_other' }))).toBe(200);
  expect(await run).toBe(1);
  const text = o.out.join('\n');
  expect(text).toMatch(/FAIL webhook-sender-signature-valid: Service-Signature does not match/);
  expect(text).toMatch(/FAIL webhook-sender-retries-429-with-same-ids: .*new delivery id/);
  expect(text).not.toContain(SECRET);
});
