// The run's breaker (observe/breaker.ts) and how Target uses it: consecutive "no answer" failures make
// the target suspect, any answer resets the count, the state is shared through one file by several
// processes (here: several FileBreaker instances on one file). Target then asks one plain question: no
// answer opens the breaker (a request is then neither sent nor waited for: the check fails with
// "target stopped answering" and the attempts as evidence); an answer keeps it closed (a front proxy
// that resets odd requests is not a dead target).
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BREAKER_THRESHOLD, FileBreaker, MemoryBreaker, runBreaker, type Attempt } from '../observe/breaker.ts';
import { Target, CheckApi, TargetStoppedAnswering } from '../observe/target.ts';
import { evaluateCheck } from '../engine/evaluate.ts';
import { registerSecret } from '../record/redact.ts';
import type { Profile } from '../profile/profile.ts';
import { declared } from './helpers/declared.ts';

const KEY = 'k_live_breaker_spec_4c5d6e7f8a9b';

function attempt(kind = 'timeout', target = '/external/v1/encounters'): Attempt {
  return { request: { method: 'GET', target, headers: { authorization: `Bearer ${KEY}` } }, error: { kind, message: `${kind} happened` }, at: new Date().toISOString() };
}

function tmpFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-breaker-'));
  const file = path.join(dir, 'breaker');
  fs.writeFileSync(file, '');
  return file;
}

test.beforeAll(() => registerSecret(KEY));

test('memory: opens at the threshold of consecutive failures, an answer in between resets the count', () => {
  expect(BREAKER_THRESHOLD).toBe(3);
  const b = new MemoryBreaker();
  b.report(attempt());
  b.report(attempt('connection_reset'));
  b.report(null); // the target answered
  expect(b.report(attempt())).toBeUndefined();
  expect(b.report(attempt('connection_refused'))).toBeUndefined();
  const suspect = b.report(attempt('timeout', '/last'));
  expect(suspect?.map((a) => a.error.kind)).toEqual(['timeout', 'connection_refused', 'timeout']);
  expect(suspect?.[2].request.target).toBe('/last');
  expect(b.opened(), 'suspect is not open: Target asks first').toBeUndefined();
  b.open(suspect!);
  expect(b.opened()).toHaveLength(3);
  // Open for the rest of the run: a late answer (a request that was already in flight) does not close it.
  b.report(null);
  expect(b.opened()).toHaveLength(3);
});

test('file: failures of several processes add up, an answer of any resets, the opening is seen by all', () => {
  const file = tmpFile();
  const [a, b, c] = [new FileBreaker(file), new FileBreaker(file), new FileBreaker(file)];
  a.report(attempt());
  b.report(attempt());
  c.report(null);
  a.report(attempt());
  expect(b.report(attempt())).toBeUndefined();
  const suspect = c.report(attempt('connection_reset'));
  expect(suspect?.map((x) => x.error.kind)).toEqual(['timeout', 'timeout', 'connection_reset']);
  expect(a.opened()).toBeUndefined();
  c.open(suspect!);
  expect(a.opened()?.map((x) => x.error.kind)).toEqual(['timeout', 'timeout', 'connection_reset']);
  expect(b.opened()).toHaveLength(3);
  // What is stored on disk is redacted: the key of the request never reaches the state file.
  for (const f of fs.readdirSync(path.dirname(file))) expect(fs.readFileSync(path.join(path.dirname(file), f), 'utf8')).not.toContain(KEY);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

test('file: a missing state file never throws and never opens', () => {
  const b = new FileBreaker(path.join(os.tmpdir(), 'cec-breaker-missing', 'nope'));
  for (let i = 0; i < 5; i++) b.report(attempt());
  b.open([attempt()]);
  expect(b.opened()).toBeUndefined();
});

test('runBreaker: the shared file when the run plan names one, a fresh memory breaker otherwise', () => {
  const file = tmpFile();
  expect(runBreaker(file)).toBe(runBreaker(file));
  expect(runBreaker(file)).toBeInstanceOf(FileBreaker);
  expect(runBreaker(undefined)).toBeInstanceOf(MemoryBreaker);
  expect(runBreaker(undefined)).not.toBe(runBreaker(undefined));
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

/** Accepts connections and never answers; counts complete request heads. */
async function silent(): Promise<{ baseUrl: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.includes('\r\n\r\n')) {
        requests++;
        buf = '';
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

function profile(baseUrl: string, requestMs: number): Profile {
  return { name: 'breaker', baseUrl, timeouts: { requestMs }, credentials: { full: { key: KEY } } };
}

test('Target: after three timeouts and no answer to the plain question nothing more is sent; the check fails "target stopped answering" with the attempts as evidence', async () => {
  const s = await silent();
  try {
    const target = new Target(profile(s.baseUrl, 200), new MemoryBreaker());
    for (let i = 0; i < 3; i++) expect((await target.send(`/external/v1/encounters?n=${i}`)).error?.kind).toBe('timeout');
    expect(s.requests(), 'three requests and the plain question').toBe(4);
    const started = Date.now();
    const ev = await evaluateCheck(declared('breaker-spec-check', 't', ['R']), async (scope) => {
      await new CheckApi(target, scope).get('/external/v1/encounters?n=3');
    });
    expect(Date.now() - started).toBeLessThan(150); // not waited for: the request timeout is 200 ms
    expect(s.requests()).toBe(4); // not sent
    expect(ev.rec.outcome).toBe('fail');
    expect(ev.rec.detail).toMatch(/^target stopped answering: 4 consecutive requests got no answer \(the last a plain GET without a key\); they were: GET \/external\/v1\/encounters\?n=0: timeout/);
    expect(ev.error).toBeInstanceOf(TargetStoppedAnswering);
    expect(ev.exchanges.map((x) => [x.request.target, x.error?.kind])).toEqual([
      ...[0, 1, 2].map((i) => [`/external/v1/encounters?n=${i}`, 'timeout']), ['/external/v1/encounters', 'timeout'],
    ]);
    expect(ev.exchanges[3].request.headers).toEqual({}); // the plain question carries no key
    expect(JSON.stringify(ev)).not.toContain(KEY);
  } finally {
    await s.close();
  }
});

test('Target: a request in flight is abandoned as soon as another process opens the breaker', async () => {
  const s = await silent();
  const file = tmpFile();
  try {
    const target = new Target(profile(s.baseUrl, 30_000), new FileBreaker(file));
    const started = Date.now();
    const pending = target.send('/external/v1/encounters').then(() => 'answered', (e: unknown) => e);
    setTimeout(() => new FileBreaker(file).open([attempt(), attempt(), attempt()]), 300);
    const e = await pending;
    expect(e).toBeInstanceOf(TargetStoppedAnswering);
    expect(Date.now() - started).toBeLessThan(3_000);
  } finally {
    await s.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
});

test('Target: answers keep it closed; bad answers are answers (not "no answer")', async () => {
  let n = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.once('data', () => {
      n++;
      // Alternate: a timeout-provoking silence, then a garbage answer, then a proper one.
      if (n % 3 === 1) return;
      if (n % 3 === 2) sock.end('NOT HTTP\r\n\r\n');
      else sock.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  try {
    const breaker = new MemoryBreaker();
    const target = new Target(profile(`http://127.0.0.1:${port}`, 150), breaker);
    const kinds: (string | number | undefined)[] = [];
    for (let i = 0; i < 9; i++) {
      const ex = await target.send('/x');
      kinds.push(ex.error?.kind ?? ex.response?.status);
    }
    expect(kinds).toEqual(['timeout', 'malformed_response', 200, 'timeout', 'malformed_response', 200, 'timeout', 'malformed_response', 200]);
    expect(breaker.opened()).toBeUndefined();
  } finally {
    for (const sock of sockets) sock.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('Target: a front proxy that resets odd requests but answers plain ones never opens the breaker', async () => {
  let plain = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.once('data', (d) => {
      const line = d.toString('latin1').split('\r\n')[0];
      if (line.includes('%00')) return sock.resetAndDestroy();
      plain++;
      sock.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  try {
    const breaker = new MemoryBreaker();
    const target = new Target(profile(`http://127.0.0.1:${port}`, 2_000), breaker);
    for (let i = 0; i < 7; i++) expect((await target.send(`/external/v1/encounters/%00${i}`)).error?.kind).toBe('connection_reset');
    expect(breaker.opened()).toBeUndefined();
    expect(plain, 'the plain question was asked each time three resets came in a row').toBe(2);
    expect((await target.send('/external/v1/encounters')).response?.status).toBe(401);
  } finally {
    for (const sock of sockets) sock.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
