// Persistent connections in the raw client (observe/http.ts, `keepAlive`): a run's GETs share the connections an
// origin leaves open, and a connection is reused only where HTTP/1.1 says it may be (RFC 9112 §9.3): never after an
// answer that closes it by its words, its version or its framing, never for a request that may not persist, and a
// connection the origin closed meanwhile costs a request nothing but a new connection. Servers here are node:net,
// answering every request of a connection with hand-written bytes, and counting connections.
import net from 'node:net';
import { execFile } from 'node:child_process';
import { test, expect } from '@playwright/test';
import { sendRaw } from '../observe/http.ts';

interface KeepServer {
  baseUrl: string;
  /** Connections opened so far. */
  connections: number;
  /** Request heads in arrival order, with the connection (1-based) each came on. */
  heads: { conn: number; head: string }[];
  close(): Promise<void>;
}

const servers: KeepServer[] = [];
test.afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}';

/** Answers each request of each connection with `answer(socket, nth request on this connection, connection number)`. */
async function keepServer(answer: (socket: net.Socket, nth: number, conn: number) => void = (s) => s.write(OK)): Promise<KeepServer> {
  const sockets = new Set<net.Socket>();
  const s: KeepServer = { baseUrl: '', connections: 0, heads: [], close: async () => {} };
  const server = net.createServer((socket) => {
    const conn = ++s.connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = '';
    let nth = 0;
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        s.heads.push({ conn, head: buf.slice(0, end + 4) });
        buf = buf.slice(end + 4);
        answer(socket, ++nth, conn);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  s.baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  s.close = () => new Promise<void>((resolve) => {
    for (const sock of sockets) sock.destroy();
    server.close(() => resolve());
  });
  servers.push(s);
  return s;
}

const get = (s: KeepServer, keepAlive = true, req: Parameters<typeof sendRaw>[1] = { target: '/external/v1/encounters' }) =>
  sendRaw({ baseUrl: s.baseUrl, timeoutMs: 3000, keepAlive }, req);

test('GETs in a row share one connection when asked (each head says keep-alive); without keepAlive each has its own, saying close', async () => {
  const kept = await keepServer();
  for (let i = 0; i < 20; i++) expect((await get(kept)).body.toString()).toBe('{}');
  expect(kept.connections).toBe(1);
  expect(kept.heads.every((h) => h.head.includes('\r\nconnection: keep-alive\r\n'))).toBe(true);

  const closed = await keepServer();
  for (let i = 0; i < 5; i++) await get(closed, false);
  expect(closed.connections).toBe(5);
  expect(closed.heads.every((h) => h.head.includes('\r\nconnection: close\r\n'))).toBe(true);
});

test('requests in flight at once each take a connection, and come back to share them', async () => {
  const s = await keepServer((socket) => setTimeout(() => socket.write(OK), 20));
  await Promise.all(Array.from({ length: 6 }, () => get(s)));
  expect(s.connections).toBe(6);
  for (let i = 0; i < 12; i++) await get(s);
  expect(s.connections).toBe(6);
});

// Each answer ends its connection by its own words, version or framing: three GETs, three connections, all answered.
const CLOSING: [string, (socket: net.Socket) => void][] = [
  ['Connection: close', (s) => s.write('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\n{}')],
  ['close among other tokens', (s) => s.write('HTTP/1.1 200 OK\r\nconnection: Upgrade, Close\r\ncontent-length: 2\r\n\r\n{}')],
  ['an HTTP/1.0 answer', (s) => s.write('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\n{}')],
  ['a chunked body', (s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n')],
  ['a body that ends with the connection', (s) => s.end('HTTP/1.1 200 OK\r\n\r\n{}')],
  ['Keep-Alive: timeout=1 (no time in hand)', (s) => s.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=1\r\ncontent-length: 2\r\n\r\n{}')],
  ['bytes past the declared length', (s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}extra')],
];
for (const [what, answer] of CLOSING) {
  test(`no reuse after ${what}`, async () => {
    const s = await keepServer(answer);
    for (let i = 0; i < 3; i++) expect((await get(s)).body.toString()).toBe('{}');
    expect(s.connections).toBe(3);
  });
}

test('an HTTP/1.0 answer that says keep-alive, and Keep-Alive: timeout=5, leave the connection to reuse', async () => {
  const old = await keepServer((s) => s.write('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 2\r\n\r\n{}'));
  for (let i = 0; i < 3; i++) await get(old);
  expect(old.connections).toBe(1);
  const timed = await keepServer((s) => s.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\ncontent-length: 2\r\n\r\n{}'));
  for (let i = 0; i < 3; i++) await get(timed);
  expect(timed.connections).toBe(1);
});

test('requests that may not persist go on connections of their own: another method, a body, the caller\'s own Connection, a raw space', async () => {
  const s = await keepServer();
  await get(s); // leaves connection 1 idle, for a request that may take it
  await get(s, true, { method: 'POST', target: '/x' });
  await get(s, true, { target: '/x', body: 'a' });
  await get(s, true, { target: '/x', headers: { Connection: 'keep-alive' } });
  await get(s, true, { target: '/x?a b' });
  await get(s); // still idle: the plain GET takes it
  expect(s.heads.map((h) => h.conn)).toEqual([1, 2, 3, 4, 5, 1]);
  expect(s.heads.slice(1, 3).every((h) => h.head.includes('\r\nconnection: close\r\n'))).toBe(true);
  expect(s.heads[3].head).toContain('\r\nConnection: keep-alive\r\n');
});

test('a connection the origin ends or resets as the next request arrives: that request goes again on a new one and is answered', async () => {
  for (const hangUp of [(s: net.Socket) => s.end(), (s: net.Socket) => s.resetAndDestroy()]) {
    // Each connection answers its first request only: a second one on it is hung up on, without a byte.
    const s = await keepServer((socket, nth) => (nth === 1 ? socket.write(OK) : hangUp(socket)));
    for (let i = 0; i < 3; i++) expect((await get(s)).status).toBe(200);
    expect(s.connections).toBe(3);
    expect(s.heads.map((h) => h.conn)).toEqual([1, 1, 2, 2, 3]);
  }
});

test('a connection the origin closes while idle, or writes to unasked, is not used again', async () => {
  const closes = await keepServer((socket) => {
    socket.write(OK);
    setTimeout(() => socket.end(), 10);
  });
  await get(closes);
  await new Promise((r) => setTimeout(r, 60));
  await get(closes);
  expect(closes.heads.map((h) => h.conn)).toEqual([1, 2]);

  // Stray bytes after the answer would be read as the next request's answer on a reused connection.
  const chatty = await keepServer((socket, nth, conn) => {
    socket.write(OK);
    if (conn === 1) setTimeout(() => socket.write('HTTP/1.1 418 stale\r\ncontent-length: 5\r\n\r\nstale'), 10);
  });
  await get(chatty);
  await new Promise((r) => setTimeout(r, 60));
  const next = await get(chatty);
  expect([next.status, next.body.toString()]).toEqual([200, '{}']);
  expect(chatty.heads.map((h) => h.conn)).toEqual([1, 2]);
});

test('an idle kept connection holds no process open', async () => {
  const s = await keepServer();
  // A child process sends one kept-alive GET; what keeps its event loop alive afterwards is listed by Node.
  const script = `
    import { sendRaw } from ${JSON.stringify(new URL('../observe/http.ts', import.meta.url).href)};
    const r = await sendRaw({ baseUrl: ${JSON.stringify(s.baseUrl)}, timeoutMs: 3000, keepAlive: true }, { target: '/x' });
    setImmediate(() => console.log(JSON.stringify({ status: r.status, alive: process.getActiveResourcesInfo() })));`;
  // Asynchronous: the server in this process answers while the child runs.
  const child = await new Promise<{ status: number; alive: string[] }>((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 15_000 }, (err, out) => (err ? reject(err) : resolve(JSON.parse(out))));
  });
  expect(child.status).toBe(200);
  expect(s.connections).toBe(1);
  expect(child.alive.filter((r) => /TCP|Timeout/.test(r))).toEqual([]);
});

test('an origin that serves one connection at a time is not starved by kept connections: keep-alive ends for it, every request is answered', async () => {
  // A single-threaded HTTP/1.1 server: it answers the requests of one connection until that connection closes, and
  // only then reads the next one's. Kept connections alone would hold every new one waiting past its deadline.
  const waiting: { socket: net.Socket; buf: string }[] = [];
  let current: { socket: net.Socket; buf: string } | undefined;
  const serve = () => {
    while (current) {
      const end = current.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      current.buf = current.buf.slice(end + 4);
      current.socket.write(OK);
    }
  };
  const next = () => {
    current = waiting.shift();
    serve();
  };
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    const c = { socket, buf: '' };
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      c.buf += d.toString('latin1');
      if (current === c) serve();
    });
    socket.on('close', () => {
      const i = waiting.indexOf(c);
      if (i >= 0) waiting.splice(i, 1);
      if (current === c) next();
    });
    if (current) waiting.push(c);
    else current = c;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  try {
    let left = 40;
    const statuses: (number | string)[] = [];
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (left-- > 0) {
        statuses.push(await sendRaw({ baseUrl, timeoutMs: 5_000, keepAlive: true }, { target: '/x' }).then((r) => r.status, (e: Error) => e.message));
      }
    }));
    expect(statuses.filter((x) => x !== 200)).toEqual([]);
    expect(statuses).toHaveLength(40);
    expect(connections).toBeGreaterThanOrEqual(4);
  } finally {
    await new Promise<void>((resolve) => {
      current?.socket.destroy();
      for (const w of waiting) w.socket.destroy();
      server.close(() => resolve());
    });
  }
});
