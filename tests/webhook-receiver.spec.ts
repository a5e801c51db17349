// Tests of the example webhook receiver (reference-receiver/) against a real PostgreSQL (embedded, one per file) with the
// REST API intercepted by nock: no follow-up after any rejection, exactly one follow-up per event id
// under duplicates and concurrent retries, and deduplication by event id, never by delivery id.
import { startCluster, type Cluster } from '../platform/embedded-cluster.ts';
import http from 'node:http';
import { test, expect } from '@playwright/test';
import nock from 'nock';
import pg from 'pg';
import { buildDelivery } from '../judge/signature.ts';
import type { Delivery, HeaderBag, WebhookEvent } from '../judge/signature.ts';
import { fabricateRejections, sampleEvent } from '../checks/receiver/adversarial.ts';
import { startReferenceReceiver } from '../reference-receiver/receiver.ts';
import type { ReceiverLogEntry, ReferenceReceiverOptions, RunningReceiver } from '../reference-receiver/receiver.ts';

const SECRET = 'whsec_receiver_test_8c2d4e6f';
const API_KEY = 'cek_live_receiver_test_1a2b3c4d';
const API = 'http://api.example.test';
const NOW = 1_778_000_000;

// One embedded PostgreSQL for the whole file: run its tests in order in one worker even when the
// config is fullyParallel (each test still starts from an empty processed_events table).
test.describe.configure({ mode: 'default' });

let cluster: Cluster;
let pool: pg.Pool;
let receiver: RunningReceiver;
const logs: ReceiverLogEntry[] = [];

function receiverOptions(overrides: Partial<ReferenceReceiverOptions> = {}): ReferenceReceiverOptions {
  return { secret: SECRET, pool, apiBaseUrl: API, apiKey: API_KEY, clock: () => NOW * 1000, log: e => logs.push(e), ...overrides };
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  cluster = await startCluster({ name: 'webhook-receiver-pg', throwaway: true });
  pool = new pg.Pool({ connectionString: cluster.url, max: 12 });
  pool.on('error', () => undefined); // idle clients are cut when the server stops at teardown
  // Only the API host is intercepted; the receiver on 127.0.0.1 and PostgreSQL stay reachable.
  if (!nock.isActive()) nock.activate();
  nock.disableNetConnect();
  nock.enableNetConnect(host => host.startsWith('127.0.0.1') || host.startsWith('localhost'));
  receiver = await startReferenceReceiver(receiverOptions());
});

test.afterAll(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  // nock's interceptor stays in the worker after this file: later files of the same worker then send through its
  // pass-through, which re-frames requests (a receiver in tests/webhook-vectors.spec.ts answered such a request 400).
  nock.restore();
  try {
    await receiver?.close();
    await pool?.end();
  } finally {
    await cluster?.remove();
  }
});

test.beforeEach(async () => {
  nock.cleanAll();
  logs.length = 0;
  await pool.query('TRUNCATE processed_events');
});

interface ApiCall {
  path: string;
  authorization: string | undefined;
}

/** Intercepts the two follow-up routes; every call is recorded. `failFirst` answers the first call with 500. */
function mockApi({ delayMs = 0, failFirst = false } = {}): ApiCall[] {
  const calls: ApiCall[] = [];
  let failures = failFirst ? 1 : 0;
  // nock 15 hands the reply function the intercepted fetch Request.
  const record = (request: Request) => {
    calls.push({ path: new URL(request.url).pathname, authorization: request.headers.get('authorization') ?? undefined });
  };
  nock(API).persist()
    .get(/^\/external\/v1\/encounters\/[^/]+$/).delay(delayMs)
    .reply((request: Request) => {
      record(request);
      if (failures > 0) { failures--; return [500, { error: 'boom' }]; }
      const id = decodeURIComponent(new URL(request.url).pathname.split('/').pop() ?? '');
      return [200, { encounter: { encounter_id: id, organization_id: 'org_alpha', created_at: '2026-05-01T00:00:00Z', updated_at: '2026-05-01T00:00:00Z' } }];
    })
    .get(/^\/external\/v1\/encounters\/[^/]+\/documents\/[^/]+$/)
    .reply((request: Request) => {
      record(request);
      if (failures > 0) { failures--; return [500, { error: 'boom' }]; }
      return [200, { document: { document_id: 'doc', encounter_id: 'enc', schema_type: 'ambient_transcript', created_at: '2026-05-01T00:00:00Z', updated_at: '2026-05-01T00:00:00Z' } }];
    });
  return calls;
}

interface Answer {
  status: number;
  body: string;
}

/** Sends exactly the given headers (arrays become repeated header lines) and body bytes. */
function send(delivery: { headers: HeaderBag; body: Buffer | string }, url = receiver.url): Promise<Answer> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(delivery.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? [...v] : String(v);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, res => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(delivery.body);
  });
}

async function rows(): Promise<{ event_id: string; status: string; attempts: number; first_delivery_id: string }[]> {
  const result = await pool.query('SELECT event_id, status, attempts, first_delivery_id FROM processed_events ORDER BY event_id');
  return result.rows;
}

const encounterCalls = (calls: ApiCall[]) => calls.filter(c => !c.path.includes('/documents/'));

/** A retry of the same event: new delivery id and a new signing time, still within tolerance. */
function retry(event: WebhookEvent, n: number): Delivery {
  return buildDelivery(event, SECRET, NOW - n, { deliveryId: `dlv_retry_${n}` });
}

test('a valid delivery answers 204 and fetches the encounter and document once, with the bearer key', async () => {
  const calls = mockApi();
  const event = sampleEvent({ resources: { encounter_id: 'enc/with slash', document_id: 'doc 1' } });
  const answer = await send(buildDelivery(event, SECRET, NOW));
  expect(answer).toEqual({ status: 204, body: '' });
  expect(calls).toEqual([
    { path: '/external/v1/encounters/enc%2Fwith%20slash', authorization: `Bearer ${API_KEY}` },
    { path: '/external/v1/encounters/enc%2Fwith%20slash/documents/doc%201', authorization: `Bearer ${API_KEY}` },
  ]);
  expect(await rows()).toMatchObject([{ event_id: event.id, status: 'completed', attempts: 1 }]);
});

for (const c of fabricateRejections({ secret: SECRET, nowSeconds: NOW }).filter(x => x.overHttp)) {
  test(`rejected delivery ${c.name} answers 4xx (${c.expectedReason}) and fetches nothing`, async () => {
    const calls = mockApi();
    const answer = await send({ headers: c.headers, body: c.body });
    expect([400, 401]).toContain(answer.status);
    expect(JSON.parse(answer.body)).toEqual({ error: 'webhook_rejected', reason: c.expectedReason });
    expect(calls).toEqual([]);
    expect(await rows()).toEqual([]);
  });
}

test('sequential duplicates of one event id cause exactly one follow-up', async () => {
  const calls = mockApi();
  const event = sampleEvent({ id: 'evt_sequential' });
  const answers = [];
  for (let n = 0; n < 4; n++) answers.push(await send(retry(event, n * 60)));
  expect(answers.map(a => a.status)).toEqual([204, 204, 204, 204]);
  expect(encounterCalls(calls)).toHaveLength(1);
  expect(calls).toHaveLength(2);
  expect(await rows()).toMatchObject([{ event_id: 'evt_sequential', status: 'completed', attempts: 1, first_delivery_id: 'dlv_retry_0' }]);
  expect(logs.filter(l => l.outcome === 'duplicate_completed')).toHaveLength(3);
});

test('ten concurrent retries of one event id cause exactly one follow-up and all succeed', async () => {
  const calls = mockApi({ delayMs: 300 }); // keeps the first claim in progress while the others arrive
  const event = sampleEvent({ id: 'evt_concurrent' });
  const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => send(retry(event, n))));
  expect(answers.map(a => a.status)).toEqual(Array(10).fill(204));
  expect(encounterCalls(calls)).toHaveLength(1);
  expect(calls).toHaveLength(2);
  expect(await rows()).toMatchObject([{ event_id: 'evt_concurrent', status: 'completed', attempts: 1 }]);
  expect(logs.filter(l => l.outcome === 'accepted')).toHaveLength(1);
  // The in-progress branch was exercised: some retries arrived while the first was still fetching.
  expect(logs.filter(l => l.waitedForInProgress).length).toBeGreaterThan(0);
});

test('two different events with the same delivery id are both processed (dedupe is by event id)', async () => {
  const calls = mockApi();
  const first = sampleEvent({ id: 'evt_a', resources: { encounter_id: 'enc_a', document_id: 'doc_a' } });
  const second = sampleEvent({ id: 'evt_b', resources: { encounter_id: 'enc_b', document_id: 'doc_b' } });
  expect((await send(buildDelivery(first, SECRET, NOW, { deliveryId: 'dlv_shared' }))).status).toBe(204);
  expect((await send(buildDelivery(second, SECRET, NOW, { deliveryId: 'dlv_shared' }))).status).toBe(204);
  expect(encounterCalls(calls).map(c => c.path)).toEqual(['/external/v1/encounters/enc_a', '/external/v1/encounters/enc_b']);
  expect((await rows()).map(r => [r.event_id, r.status])).toEqual([['evt_a', 'completed'], ['evt_b', 'completed']]);
});

test('a failed follow-up answers 503 (retryable) and the retry processes the event', async () => {
  const calls = mockApi({ failFirst: true });
  const event = sampleEvent({ id: 'evt_flaky' });
  // The first delivery's encounter fetch gets a 500: retryable, row marked failed, no document fetch.
  expect((await send(retry(event, 0))).status).toBe(503);
  expect(await rows()).toMatchObject([{ status: 'failed', attempts: 1 }]);
  // The service's retry (same event, new delivery) takes the failed claim over and completes it.
  expect((await send(retry(event, 1))).status).toBe(204);
  expect(await rows()).toMatchObject([{ status: 'completed', attempts: 2 }]);
  expect(calls.map(c => c.path)).toEqual([
    '/external/v1/encounters/enc_001', '/external/v1/encounters/enc_001', '/external/v1/encounters/enc_001/documents/doc_001',
  ]);
  // Once completed, further retries are acknowledged without work.
  expect((await send(retry(event, 2))).status).toBe(204);
  expect(calls).toHaveLength(3);
});

test('a duplicate of an event still in progress elsewhere waits, then asks for a retry with 409', async () => {
  const calls = mockApi();
  const event = sampleEvent({ id: 'evt_elsewhere' });
  await pool.query(
    `INSERT INTO processed_events (event_id, status, first_delivery_id, last_delivery_id, organization_id, encounter_id, document_id)
     VALUES ($1, 'in_progress', 'dlv_other_worker', 'dlv_other_worker', 'org_alpha', 'enc_001', 'doc_001')`, [event.id]);
  const quick = await startReferenceReceiver(receiverOptions({ inProgressWaitMs: 150 }));
  try {
    const answer = await send(retry(event, 0), quick.url);
    expect(answer.status).toBe(409); // retryable per §6.4, never a 2xx for work not done
    expect(calls).toEqual([]);
    // A claim older than the stale limit is taken over and processed once.
    await pool.query(`UPDATE processed_events SET claimed_at = now() - interval '1 hour' WHERE event_id = $1`, [event.id]);
    expect((await send(retry(event, 1), quick.url)).status).toBe(204);
    expect(encounterCalls(calls)).toHaveLength(1);
    expect(await rows()).toMatchObject([{ status: 'completed', attempts: 2 }]);
  } finally {
    await quick.close();
  }
});

test('the receiver answers 405 to other methods and 413 to oversized bodies, without follow-up', async () => {
  const calls = mockApi();
  const small = await startReferenceReceiver(receiverOptions({ maxBodyBytes: 64 }));
  try {
    const get = await new Promise<number>((resolve, reject) => {
      http.get(small.url, res => { res.resume(); resolve(res.statusCode ?? 0); }).on('error', reject);
    });
    expect(get).toBe(405);
    const big = await send(buildDelivery(sampleEvent(), SECRET, NOW), small.url);
    expect(big.status).toBe(413);
    expect(calls).toEqual([]);
  } finally {
    await small.close();
  }
});

test('neither the signing secret nor the API key appears in answers or log entries', async () => {
  mockApi({ failFirst: true });
  const answers: Answer[] = [];
  for (const c of fabricateRejections({ secret: SECRET, nowSeconds: NOW }).filter(x => x.overHttp).slice(0, 10)) {
    answers.push(await send({ headers: c.headers, body: c.body }));
  }
  answers.push(await send(retry(sampleEvent({ id: 'evt_secret_check' }), 0)));
  const text = JSON.stringify({ answers, logs });
  expect(logs.length).toBeGreaterThan(0);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(API_KEY);
});
