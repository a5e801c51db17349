// Real deployments sit behind gateways. A rate limiter's 429 (and a gateway's 503 with Retry-After) is the
// target asking the harness to slow down, not the service's answer: waited out, retried, recorded, and a
// check that only ever sees throttling is not_verified, never fail (observe/throttle.ts). A gateway that
// answers keyless requests itself (a plain-text 401) does not stop the run: the preflight identifies the API
// with the full key, and the checks judge the keyless answers (NOT CONFORMANT, with reports).
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { retryAfterMs, throttleWaitMs, Pace, MAX_WAIT_MS } from '../observe/throttle.ts';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { runCli } from './helpers/cli-process.ts';
import { declared } from './helpers/declared.ts';

test('throttleWaitMs: a 429 is throttling (Retry-After as asked, capped; without it 1 s, 2 s, 4 s); a gateway 503 with Retry-After is; the API\'s own 503 and anything else are judged', () => {
  expect(throttleWaitMs(429, { 'retry-after': '2' }, '', 1)).toBe(2000);
  expect(throttleWaitMs(429, { 'retry-after': '3600' }, '', 1)).toBe(MAX_WAIT_MS);
  expect([1, 2, 3].map((a) => throttleWaitMs(429, {}, 'Too Many Requests', a))).toEqual([1000, 2000, 4000]);
  expect(throttleWaitMs(503, { 'retry-after': '1' }, '<html>busy</html>', 1)).toBe(1000);
  expect(throttleWaitMs(503, { 'retry-after': '1' }, JSON.stringify({ error: 'public_api_unavailable', reason_code: 'digest_key_unavailable', message: 'm', field: null }), 1)).toBeUndefined();
  expect(throttleWaitMs(503, {}, 'busy', 1)).toBeUndefined();
  for (const s of [200, 400, 401, 404, 500]) expect(throttleWaitMs(s, { 'retry-after': '1' }, '', 1)).toBeUndefined();
  const now = Date.parse('2026-01-01T00:00:00Z');
  expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
  expect(retryAfterMs('soon', now)).toBeUndefined();
});

test('Pace spaces the starts of a worker\'s requests and holds them after a throttle', async () => {
  const pace = new Pace(40);
  const t0 = Date.now();
  for (let i = 0; i < 4; i++) await pace.turn();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
  const free = new Pace(0);
  free.holdFor(80);
  const t1 = Date.now();
  await free.turn();
  expect(Date.now() - t1).toBeGreaterThanOrEqual(70);
});

test('a check that only ever sees throttling is not_verified, never fail; one throttled answer then a real one is judged on the real one', async () => {
  const { Target, CheckApi } = await import('../observe/target.ts');
  const { MemoryBreaker } = await import('../observe/breaker.ts');
  const { evaluateCheck } = await import('../engine/evaluate.ts');
  const { CheckFailure } = await import('../record/record.ts');
  let n = 0;
  let mode: 'always' | 'once' = 'always';
  const server = http.createServer((_req, res) => {
    n++;
    if (mode === 'always' || n === 1) {
      res.writeHead(429, { 'retry-after': '0', 'content-type': 'text/plain' });
      res.end('slow down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"items":[],"limit":50,"offset":0,"total":0}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  try {
    const target = new Target({ name: 't', baseUrl: `http://127.0.0.1:${port}`, credentials: { full: { key: 'k_live_throttle_test_1234' } } } as never, new MemoryBreaker());
    const body = async (scope: Parameters<Parameters<typeof evaluateCheck>[1]>[0]) => {
      const ex = await new CheckApi(target, scope).get('/external/v1/encounters');
      if (ex.response?.status !== 200) throw new CheckFailure('expected 200', `got ${ex.response?.status}`);
    };
    const always = await evaluateCheck(declared('gateway-throttle-always', 't', ['X']), body);
    expect(always.rec.outcome).toBe('not_verified');
    expect(always.rec.detail).toMatch(/kept throttling \(6 answers 429/);
    expect(always.exchanges).toHaveLength(6);
    mode = 'once';
    n = 0;
    const once = await evaluateCheck(declared('gateway-throttle-once', 't', ['X']), body);
    expect(once.rec).toMatchObject({ outcome: 'pass', detail: expect.stringMatching(/^throttled 1× \(429 wait 0 ms\)/) });
    expect(once.exchanges.map((e) => e.response?.status)).toEqual([429, 200]);
  } finally {
    server.close();
  }
});

test('--max-rps takes a positive number; anything else is one line, exit 2', async () => {
  for (const bad of ['0', '-3', 'fast']) {
    const r = await runCli(['run', `--max-rps=${bad}`], { sampleMs: 0 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^conformance: --max-rps must be a positive number of requests per second/)]);
  }
});

/** A front for the reference: forwards every request, except what `intercept` answers itself. */
function front(upstream: string, intercept: (req: http.IncomingMessage, res: http.ServerResponse) => boolean): Promise<{ url: string; close: () => Promise<void>; counts: Record<string, number> }> {
  const up = new URL(upstream);
  const counts: Record<string, number> = { forwarded: 0, intercepted: 0 };
  const server = http.createServer((req, res) => {
    if (intercept(req, res)) {
      counts.intercepted++;
      return;
    }
    counts.forwarded++;
    const p = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    p.on('error', () => res.destroy());
    req.pipe(p);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    resolve({ url: `http://127.0.0.1:${port}`, counts, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) });
  }));
}

function profileFor(ref: ReferenceHandle, baseUrl: string, dir: string): string {
  const raw = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as Record<string, unknown>;
  const file = path.join(dir, 'gateway.profile.json');
  fs.writeFileSync(file, JSON.stringify({ ...raw, baseUrl }));
  return file;
}

test.describe('behind a gateway', () => {
  test.describe.configure({ mode: 'serial', timeout: 400_000 });
  let ref: ReferenceHandle;
  let dir: string;
  test.beforeAll(async () => {
    test.setTimeout(200_000);
    ref = await startReference();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-gateway-'));
  });
  test.afterAll(async () => {
    await ref?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a conformant service behind a 60 requests/s limiter (burst 120, 429 with Retry-After: 1) ends with 0 fails', async () => {
    // A token bucket per client address, as common gateways do.
    let tokens = 120;
    let last = Date.now();
    const g = await front(ref.baseUrl, (_req, res) => {
      const now = Date.now();
      tokens = Math.min(120, tokens + ((now - last) / 1000) * 60);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return false;
      }
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
      res.end('Too Many Requests');
      return true;
    });
    try {
      const out = path.join(dir, 'limited');
      const r = await runCli(['run', '--profile', profileFor(ref, g.url, dir), '--out', out, '--allow-incomplete'], { timeoutMs: 380_000, sampleMs: 0 });
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { summary: { fail: number }; checks: { id: string; outcome: string; detail: string | null }[] };
      expect(g.counts.intercepted, 'the limiter never refused anything: the test proves nothing').toBeGreaterThan(0);
      expect(report.checks.filter((c) => c.outcome === 'fail').map((c) => `${c.id}: ${c.detail}`), r.stderr.slice(-2000)).toEqual([]);
      // Recorded exchanges that were throttled say so in their check's detail; most throttling falls on the
      // properties' unrecorded cases, which are simply sent again.
      expect(report.checks.filter((c) => /kept throttling/.test(c.detail ?? ''))).toEqual([]);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
    } finally {
      await g.close();
    }
  });

  test('a gateway answering keyless requests with a plain-text 401 is judged, not refused: NOT CONFORMANT with reports, exit 1', async () => {
    const g = await front(ref.baseUrl, (req, res) => {
      if (req.headers.authorization) return false;
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('Unauthorized');
      return true;
    });
    try {
      const out = path.join(dir, 'plain401');
      const r = await runCli(['run', '--profile', profileFor(ref, g.url, dir), '--out', out], { timeoutMs: 300_000, sampleMs: 0 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr).not.toMatch(/does not look like/);
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { verdict: string; checks: { id: string; outcome: string }[] };
      expect(report.verdict).toBe('not_conformant');
      expect(report.checks.filter((c) => c.outcome === 'fail').map((c) => c.id)).toEqual(expect.arrayContaining([expect.stringMatching(/missing-bearer/)]));
      for (const f of ['junit.xml', 'conformance.html']) expect(fs.existsSync(path.join(out, f))).toBe(true);
    } finally {
      await g.close();
    }
  });
});
