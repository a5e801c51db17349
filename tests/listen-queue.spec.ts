// A slow but live target with a small listen queue, and how the harness keeps its own bursts from passing for the
// target's silence (observe/http.ts OriginGate, the connect timed apart from the answer); the worker count's plan
// and advice that came with it (engine/planner.ts with one worker, engine/preflight.ts). A Python deployment's
// socketserver (a backlog of 5, one accept per turn of a GIL-bound loop) false-failed a property request on the 10 s
// deadline when one worker kept 16 checks in flight: the kernel dropped SYNs and, past SYN cookies, the requests
// themselves, which came back 1, 3, 7 and 15 s later. The servers here do the same without Python: a node:net server
// in a worker thread (its own event loop) that listens with a backlog of 1 and holds its loop for a while on every
// request. Outcomes are asserted, never durations.
import net from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { test, expect } from '@playwright/test';
import { OriginGate, sendRaw, TransportError, type RawResponse } from '../observe/http.ts';
import { planRun, type Registered } from '../engine/planner.ts';
import { answersNear, lanesFor, watchesDeploymentSender } from '../engine/preflight.ts';

interface LiveServer {
  baseUrl: string;
  /** Ends the hold of a server started held (its loop blocked until now). */
  release(): void;
  close(): Promise<void>;
}

/**
 * A server in a worker thread that listens with `backlog` and answers every complete request head with the API's
 * keyless 401, after holding its event loop `holdMs` (a handler that keeps the loop, as a GIL-bound one keeps the
 * accept loop from running). `held`: its loop is blocked from the start until `release()` (it accepts nothing).
 */
async function liveServer(o: { backlog: number; holdMs: number; held?: boolean }): Promise<LiveServer> {
  const hold = new Int32Array(new SharedArrayBuffer(4));
  if (o.held) hold[0] = 1;
  const worker = new Worker(`
    const net = require('node:net');
    const { parentPort, workerData: { backlog, holdMs, hold } } = require('node:worker_threads');
    const body = '{"error":"unauthorized","reason_code":"missing_bearer","message":"no key","field":null}';
    const server = net.createServer((socket) => {
      socket.on('error', () => {});
      let head = '';
      socket.on('data', (d) => {
        head += d;
        if (!head.includes('\\r\\n\\r\\n')) return;
        const until = performance.now() + holdMs;
        while (performance.now() < until) {}
        socket.end('HTTP/1.1 401 Unauthorized\\r\\nContent-Type: application/json\\r\\nConnection: close\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n' + body);
      });
    });
    server.listen({ port: 0, host: '127.0.0.1', backlog }, () => {
      parentPort.postMessage(server.address().port);
      // Held: the loop is blocked (no accept, no answer) until the test releases it.
      Atomics.wait(hold, 0, 1);
    });
  `, { eval: true, workerData: { backlog: o.backlog, holdMs: o.holdMs, hold } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const release = () => {
    Atomics.store(hold, 0, 0);
    Atomics.notify(hold, 0);
  };
  return { baseUrl: `http://127.0.0.1:${port}`, release, close: async () => { release(); await worker.terminate(); } };
}

/** Each of `n` requests, `lanes` at once, to `baseUrl`: its answer, or the transport error it ended in. */
async function burst(baseUrl: string, n: number, lanes: number, timeoutMs: number): Promise<(RawResponse | TransportError)[]> {
  const out: (RawResponse | TransportError)[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await sendRaw({ baseUrl, timeoutMs }, { target: `/external/v1/encounters?offset=${i}` }).catch((e: unknown) => {
        if (e instanceof TransportError) return e;
        throw e;
      });
    }
  }));
  return out;
}

const said = (r: RawResponse | TransportError) => (r instanceof TransportError ? `${r.kind}: ${r.message}` : String(r.status));

test('a slow but live target with a listen queue of 1: every request of a burst gets its answer, none a harness timeout', async () => {
  // 256 requests, 32 at once, at the client's default deadline (10 s), to a server that keeps its loop 10 ms per
  // request. Without the gate 8 to 19 of the 256 ended in "no complete response within 10000 ms" (three runs: their
  // SYNs and then their requests dropped by the full queue), the way the deployment's property request did.
  const s = await liveServer({ backlog: 1, holdMs: 10 });
  try {
    const results = await burst(s.baseUrl, 256, 32, 10_000);
    const counts = new Map<string, number>();
    for (const r of results) counts.set(said(r), (counts.get(said(r)) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ 401: 256 });
  } finally {
    await s.close();
  }
});

test('a target that never accepts, and one that accepts and never answers, still fail: timeouts with evidence of which', async () => {
  // Held from the start: the queue of 1 takes two connections, which open and are never answered; every other SYN
  // is dropped, and its connect never completes. Never more lenient than the truth: every request ends in a timeout.
  const held = await liveServer({ backlog: 1, holdMs: 0, held: true });
  const hanging = net.createServer((socket) => socket.on('error', () => {}));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  try {
    const results = await burst(held.baseUrl, 12, 12, 1_500);
    expect(results.every((r) => r instanceof TransportError && r.kind === 'timeout')).toBe(true);
    const messages = new Set(results.map((r) => (r as TransportError).message));
    expect(messages).toContain('no connection within 1500 ms');
    // Accepted, never answered: the answer's deadline, with what arrived (nothing) kept.
    const port = (hanging.address() as net.AddressInfo).port;
    const hung = await burst(`http://127.0.0.1:${port}`, 20, 20, 500);
    expect(hung.map(said)).toEqual(Array(20).fill('timeout: no complete response within 500 ms'));
  } finally {
    await held.close();
    hanging.close();
  }
});

test.describe('the origin gate', () => {
  /** A gate on a clock the test moves, with an event loop that is busy only when the test says so. */
  const clocked = () => {
    let t = 0;
    let busy = 0;
    const gate = new OriginGate(() => t, () => busy);
    return { gate, at: (ms: number) => (t = ms), busyFor: (ms: number) => (busy += ms) };
  };
  const turn = () => new Promise((r) => setImmediate(r));

  test('lets START connections open at once, queues the next, and grows by one per answered request while full (slow start)', async () => {
    const { gate } = clocked();
    const open = await Promise.all(Array.from({ length: OriginGate.START }, () => gate.acquire()));
    let queued = false;
    const next = gate.acquire().then((a) => ((queued = true), a));
    await turn();
    expect(queued).toBe(false);
    gate.connected(open[0]);
    gate.release(open[0], true);
    expect(gate.limit).toBe(OriginGate.START + 1);
    await next;
    expect(queued).toBe(true);
    // An answer while the gate is not the limit teaches nothing: no growth.
    for (const a of open.slice(1)) gate.connected(a);
    gate.release(open[1], true);
    expect(gate.limit).toBe(OriginGate.START + 1);
    // A request that got no answer (a timeout, a reset) never grows it.
    const more = await Promise.all(Array.from({ length: 2 }, () => gate.acquire()));
    for (const a of more) gate.release(a, false);
    expect(gate.limit).toBe(OriginGate.START + 1);
  });

  test('a connect overtaken by three later ones is a lost SYN: the gate halves, once per burst', async () => {
    const { gate, at } = clocked();
    const a = await Promise.all(Array.from({ length: 8 }, () => gate.acquire()));
    at(1);
    for (const x of a.slice(1, 4)) gate.connected(x);
    at(5); // older than twice the fastest connect (1) once the turn of the loop is over
    await turn();
    expect(gate.cuts).toBe(1);
    expect(gate.limit).toBe(4);
    // The rest of the same burst: overtaken too, or slow, but started before the cut: no second halving.
    for (const x of a.slice(4)) gate.connected(x);
    at(1_200);
    gate.connected(a[0]);
    await turn();
    expect(gate.cuts).toBe(1);
    // Answers on connections of the burst before the cut teach nothing.
    for (const x of a) gate.release(x, true);
    expect(gate.limit).toBe(4);
    // After a loss: one more per round (its limit in answers while full), not one per answer.
    const b = await Promise.all(Array.from({ length: 4 }, () => gate.acquire()));
    const queued = Array.from({ length: 4 }, () => gate.acquire());
    for (const x of b) gate.connected(x);
    for (const x of b.slice(0, 3)) gate.release(x, true);
    expect(gate.limit).toBe(4);
    gate.release(b[3], true);
    expect(gate.limit).toBe(5);
    for (const x of await Promise.all(queued)) gate.release(x, false);
  });

  test('a connect that took a SYN retransmission halves it; one read late by a busy loop does not; a target whose every connect takes that long is far, not full', async () => {
    const near = clocked();
    const quick = await near.gate.acquire();
    near.at(1);
    near.gate.connected(quick);
    const slow = await Promise.all(Array.from({ length: 6 }, () => near.gate.acquire()));
    near.at(1_001);
    near.gate.connected(slow[0]);
    expect(near.gate.cuts).toBe(1);
    expect(near.gate.limit).toBe(3);
    // The same second, but this process's loop was busy for most of it (a check's CPU): no loss.
    const busy = clocked();
    const first0 = await busy.gate.acquire();
    busy.at(1);
    busy.gate.connected(first0);
    const late = await busy.gate.acquire();
    busy.busyFor(950);
    busy.at(1_001);
    busy.gate.connected(late);
    expect(busy.gate.cuts).toBe(0);
    const far = clocked();
    const first = await Promise.all(Array.from({ length: 6 }, () => far.gate.acquire()));
    far.at(950);
    for (const x of first) far.gate.connected(x);
    await turn();
    expect(far.gate.cuts).toBe(0);
    expect(far.gate.limit).toBe(OriginGate.START);
  });

  test('never below MIN; a request abandoned while it waits for the gate leaves it with kind aborted', async () => {
    const { gate, at } = clocked();
    const a = await Promise.all(Array.from({ length: 8 }, () => gate.acquire()));
    at(1);
    gate.connected(a[0]);
    at(2_000);
    gate.connected(a[1]);
    expect(gate.limit).toBe(4);
    for (const x of a.slice(1)) gate.release(x, false);
    const b = await gate.acquire();
    at(4_000);
    gate.connected(b);
    expect(gate.cuts).toBe(2);
    expect(gate.limit).toBe(OriginGate.MIN);
    const ac = new AbortController();
    const third = gate.acquire(ac.signal);
    ac.abort();
    await expect(third).rejects.toMatchObject({ kind: 'aborted' });
    await expect(gate.acquire(ac.signal)).rejects.toMatchObject({ kind: 'aborted' });
  });
});

test('one worker: the other waiting suites share the listening test; two workers keep it alone', () => {
  const mk = (file: string, n: number, opts: Registered['opts'] = {}): Registered[] =>
    Array.from({ length: n }, (_, i) => ({ title: `${path.basename(file, '.spec.ts')}-${i}`, body: async () => {}, file, opts, property: file.startsWith('properties/') }));
  const cases = [
    ...mk('properties/p.spec.ts', 2, { solo: true }),
    ...mk('suites/a.spec.ts', 150),
    ...mk('suites/audio.spec.ts', 2, { waits: true }),
    ...mk('suites/sender.spec.ts', 29, { waits: true, capture: true, inFlight: 64 }),
  ];
  const shape = (plan: ReturnType<typeof planRun>) => plan.map((t) => `${t.title}: ${t.groups.map((g) => `${path.basename(g.cases[0].file!)}${g.waits ? ' (waits)' : ''}`).join(', ')}`);
  const one = planRun(cases, 8, 1);
  expect(shape(one)).toEqual(['sender [1]: sender.spec.ts, audio.spec.ts (waits)', 'checks [1]: a.spec.ts', 'p-0: p.spec.ts', 'p-1: p.spec.ts', 'checks [2]: a.spec.ts']);
  expect(one[0].capture).toBe(true);
  // checks [1] no longer waits, so it takes no spare batch; checks [2] runs its own.
  expect(one[1].spare).toBeUndefined();
  const two = planRun(cases, 8, 2);
  expect(shape(two)).toEqual(['sender [1]: sender.spec.ts', 'checks [1]: audio.spec.ts (waits), a.spec.ts', 'p-0: p.spec.ts', 'p-1: p.spec.ts', 'checks [2]: a.spec.ts']);
  // One worker without a listening suite: the waits stay beside the first batch.
  expect(shape(planRun(cases.filter((c) => !c.opts.capture), 8, 1))[0]).toBe('checks [1]: audio.spec.ts (waits), a.spec.ts');
  // Every case once, in either plan.
  for (const plan of [one, two]) expect(plan.flatMap((t) => t.groups.flatMap((g) => g.cases.map((c) => c.title))).sort()).toEqual(cases.map((c) => c.title).sort());
});

test('the worker count of a target run: one for a near target (an answer within 60 ms) unless a deployment sender is watched; one worker takes the lanes two would share', async () => {
  expect([1, 59, 60, 150, 400].map((ms) => lanesFor(ms, 1))).toEqual([undefined, undefined, 40, 100, 128]);
  expect([1, 60, 150, 400].map((ms) => lanesFor(ms))).toEqual([undefined, 20, 50, 64]);
  const http = await import('node:http');
  const serve = (delayMs: number) => new Promise<import('node:http').Server>((resolve) => {
    const s = http.createServer((_q, r) => setTimeout(() => r.writeHead(401, { 'content-type': 'application/json' }).end('{"reason_code":"missing_bearer"}'), delayMs));
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = (s: import('node:http').Server) => `http://127.0.0.1:${(s.address() as net.AddressInfo).port}`;
  const near = await serve(0);
  const far = await serve(150);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-near-'));
  try {
    const profile = path.join(dir, 'p.json');
    fs.writeFileSync(profile, JSON.stringify({ name: 'x', baseUrl: `${url(near)}/` }));
    expect(await answersNear(profile, undefined)).toBe(true);
    expect(await answersNear(profile, url(far))).toBe(false);
    const closed = await serve(0);
    const gone = url(closed);
    await new Promise((r) => closed.close(r));
    expect(await answersNear(profile, gone)).toBe(false);
    expect(await answersNear(path.join(dir, 'missing.json'), undefined)).toBe(false);
    // A deployment whose sender is watched keeps two workers, however near: its scenarios hold a worker for minutes.
    const write = (webhook?: object) => (fs.writeFileSync(profile, JSON.stringify({ name: 'x', baseUrl: url(near), ...(webhook ? { webhook } : {}) })), profile);
    expect(watchesDeploymentSender(write({ delivery: 'activated', sender: { listen: { port: 18790 }, trigger: { command: ['sh', 't.sh'] } } }))).toBe(true);
    expect(watchesDeploymentSender(write({ sender: { listen: { port: 18790 } }, sandboxControlUrl: url(near) }))).toBe(false);
    expect(watchesDeploymentSender(write({ delivery: 'not_activated', sender: { listen: { port: 18790 } } }))).toBe(false);
    expect(watchesDeploymentSender(write())).toBe(false);
    expect(watchesDeploymentSender(path.join(dir, 'missing.json'))).toBe(false);
  } finally {
    near.close();
    far.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
