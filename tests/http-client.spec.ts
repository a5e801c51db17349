// The raw HTTP/1.1 client against local node:net servers that capture the exact request bytes and
// answer with hand-written (sometimes hostile) responses. Every server is closed after its test.
import net from 'node:net';
import { test, expect } from '@playwright/test';
import { connectOnce, sendRaw, parseBaseUrl, TransportError, type RawResponse } from '../observe/http.ts';

interface RawServer {
  baseUrl: string;
  port: number;
  /** Raw request heads (up to and including the blank line), latin1-decoded, in arrival order. */
  heads: string[];
  /** Every byte received on each connection, in arrival order. */
  received: Buffer[];
  /** An interval that close() stops even if the socket is already gone. */
  every(ms: number, fn: () => void): NodeJS.Timeout;
  close(): Promise<void>;
}

const servers: RawServer[] = [];

/** A server that waits for a complete request head, records it, then hands the socket to `answer`. */
async function rawServer(answer: (socket: net.Socket, head: string) => void): Promise<RawServer> {
  const heads: string[] = [];
  const received: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {}); // the client hangs up on hostile answers; that is expected
    let buf = Buffer.alloc(0);
    let answered = false;
    const index = received.push(buf) - 1;
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      received[index] = buf;
      if (answered) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      answered = true;
      const head = buf.subarray(0, end + 4).toString('latin1');
      heads.push(head);
      answer(socket, head);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const s: RawServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    heads,
    received,
    every(ms, fn) {
      const t = setInterval(fn, ms);
      timers.add(t);
      return t;
    },
    close: () => new Promise<void>((resolve) => {
      for (const t of timers) clearInterval(t);
      for (const sock of sockets) sock.destroy();
      server.close(() => resolve());
    }),
  };
  servers.push(s);
  return s;
}

test.afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const OK_JSON = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}';

async function transportError(p: Promise<RawResponse>): Promise<TransportError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TransportError);
    return e as TransportError;
  }
  throw new Error('expected a TransportError, got a response');
}

/** Streams `chunk` forever, respecting back-pressure, until the peer goes away. */
function pump(socket: net.Socket, chunk: Buffer | string): void {
  const go = () => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', go);
  };
  go();
}

test.describe('request bytes', () => {
  const targets = [
    '/external/v1/encounters?limit=%2B1',
    '/external/v1/encounters?limit=01&limit=2',
    '/external/v1/encounters?limit=+1',
    '/external/v1/encounters?limit=%F0%9F%98%80',
    '/external/v1/encounters?limit= 1',
    '/external/v1/encounters/%2e%2e/x?Limit=1&&offset=',
  ];
  for (const target of targets) {
    test(`request target is written byte for byte: ${JSON.stringify(target)}`, async () => {
      const s = await rawServer((socket) => socket.end(OK_JSON));
      const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target });
      expect(res.status).toBe(200);
      expect(s.heads).toHaveLength(1);
      expect(s.heads[0].split('\r\n')[0]).toBe(`GET ${target} HTTP/1.1`);
    });
  }

  test('a very long request target is written unchanged', async () => {
    const target = `/external/v1/encounters?limit=${'0'.repeat(60_000)}1&sort_order=${'%41'.repeat(5000)}`;
    const s = await rawServer((socket) => socket.end(OK_JSON));
    await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 5000 }, { target });
    expect(s.heads[0].split('\r\n')[0]).toBe(`GET ${target} HTTP/1.1`);
  });

  test('the base URL path is prefixed and the method is used as given', async () => {
    const s = await rawServer((socket) => socket.end(OK_JSON));
    await sendRaw({ baseUrl: `${s.baseUrl}/api/`, timeoutMs: 2000 }, { method: 'DELETE', target: '/external/v1/encounters?limit=%2B1' });
    expect(s.heads[0].split('\r\n')[0]).toBe('DELETE /api/external/v1/encounters?limit=%2B1 HTTP/1.1');
  });

  test('headers are sent as given, with host, connection and accept defaults', async () => {
    const s = await rawServer((socket) => socket.end(OK_JSON));
    await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, {
      target: '/external/v1/encounters',
      headers: { authorization: 'Bearer  two-spaces', 'X-Mixed-Case': 'Value, with ; odd chars' },
    });
    const lines = s.heads[0].split('\r\n');
    expect(lines).toContain(`host: 127.0.0.1:${s.port}`);
    expect(lines).toContain('connection: close');
    expect(lines).toContain('accept: application/json');
    expect(lines).toContain('authorization: Bearer  two-spaces');
    expect(lines).toContain('X-Mixed-Case: Value, with ; odd chars');
    expect(s.heads[0].endsWith('\r\n\r\n')).toBe(true);
  });

  test('a given header replaces a default of the same name in any case (no duplicate)', async () => {
    const s = await rawServer((socket) => socket.end(OK_JSON));
    await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x', headers: { Accept: 'text/html', Host: 'api.example.test' } });
    const lines = s.heads[0].split('\r\n');
    expect(lines.filter((l) => /^accept:/i.test(l))).toEqual(['Accept: text/html']);
    expect(lines.filter((l) => /^host:/i.test(l))).toEqual(['Host: api.example.test']);
  });

  test('a body is sent with its content-length', async () => {
    const s = await rawServer((socket) => setTimeout(() => socket.end(OK_JSON), 100));
    await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { method: 'POST', target: '/x', body: '{"a":1}' });
    const all = s.received[0].toString('latin1');
    expect(all.startsWith('POST /x HTTP/1.1\r\n')).toBe(true);
    expect(all).toContain('\r\ncontent-length: 7\r\n');
    expect(all.endsWith('\r\n\r\n{"a":1}')).toBe(true);
  });

  test('parseBaseUrl accepts hosts, ports, IPv6 and paths and rejects other URLs', () => {
    expect(parseBaseUrl('https://api.example.test')).toEqual({ secure: true, host: 'api.example.test', port: 443, hostHeader: 'api.example.test', basePath: '' });
    expect(parseBaseUrl('http://[::1]:8080/base/')).toEqual({ secure: false, host: '::1', port: 8080, hostHeader: '[::1]:8080', basePath: '/base' });
    expect(() => parseBaseUrl('ftp://x')).toThrow(/not an http/);
    expect(() => parseBaseUrl('http://x/?q=1')).toThrow(/not an http/);
  });
});

test.describe('response framing', () => {
  test('content-length: resolves without waiting for the close; repeated headers are joined', async () => {
    const s = await rawServer((socket) => {
      // The connection stays open: the client must stop at content-length.
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 11\r\n\r\n{"ok":true}');
    });
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.status).toBe(200);
    expect(res.statusText).toBe('OK');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['set-cookie']).toBe('a=1, b=2');
    expect(res.rawHeaders).toContainEqual(['Set-Cookie', 'b=2']);
    expect(res.body.toString()).toBe('{"ok":true}');
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('content-length: extra bytes after the body are ignored', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}garbage'));
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.body.toString()).toBe('{}');
  });

  test('chunked: chunks split across writes, with extensions, are reassembled', async () => {
    const s = await rawServer((socket) => {
      const parts = ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel', 'lo\r\n6;ext=1\r\n world\r', '\n0\r\n\r\n'];
      let i = 0;
      const t = s.every(30, () => {
        if (socket.destroyed || i >= parts.length) return clearInterval(t);
        socket.write(parts[i++]);
      });
    });
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('hello world');
  });

  test('close-delimited: the body is everything until the peer closes', async () => {
    const s = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart one, ');
      setTimeout(() => socket.end('part two'), 50);
    });
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.body.toString()).toBe('part one, part two');
  });

  test('204: resolves with an empty body without waiting for the close', async () => {
    const s = await rawServer((socket) => socket.write('HTTP/1.1 204 No Content\r\nX-Trace: 1\r\n\r\n'));
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.status).toBe(204);
    expect(res.body.length).toBe(0);
    expect(res.headers['x-trace']).toBe('1');
  });

  test('an interim 100 Continue is skipped', async () => {
    const s = await rawServer((socket) => socket.end(`HTTP/1.1 100 Continue\r\n\r\n${OK_JSON}`));
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"ok":true}');
  });

  test('an empty status text is allowed', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n'));
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' });
    expect(res.status).toBe(404);
    expect(res.statusText).toBe('');
  });
});

test.describe('hostile targets end in a typed transport error', () => {
  test('a server that never answers → timeout within the timeout', async () => {
    const s = await rawServer(() => {});
    const started = Date.now();
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 300 }, { target: '/x' }));
    const elapsed = Date.now() - started;
    expect(e.kind).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
  });

  test('a server that drips one byte every 100 ms → timeout, not a hang', async () => {
    const s = await rawServer((socket) => {
      const text = `HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n${'x'.repeat(500)}`;
      let i = 0;
      const t = s.every(100, () => {
        if (socket.destroyed || i >= text.length) return clearInterval(t);
        socket.write(text[i++]);
      });
    });
    const started = Date.now();
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 300 }, { target: '/x' }));
    expect(e.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(e.partial!.length).toBeGreaterThan(0); // what dripped in is kept for evidence
  });

  test('an abort signal ends a request in flight at once (kind aborted), keeping what arrived', async () => {
    const s = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\n'));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 10_000, signal: ac.signal }, { target: '/x' }));
    expect(e.kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(e.partial!.toString('latin1')).toBe('HTTP/1.1 200 OK\r\n');
    const again = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 10_000, signal: ac.signal }, { target: '/x' }));
    expect(again.kind).toBe('aborted'); // an already aborted signal: nothing is waited for
  });

  test('a declared body larger than maxBodyBytes → body_too_large as soon as the head arrives', async () => {
    const s = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n');
      pump(socket, Buffer.alloc(16 * 1024, 0x61));
    });
    const started = Date.now();
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 10_000, maxBodyBytes: 4096 }, { target: '/x' }));
    expect(e.kind).toBe('body_too_large');
    expect(e.message).toMatch(/content-length 1000000000000 exceeds/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('an undeclared endless body → body_too_large, not a timeout and not an unbounded buffer', async () => {
    const s = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n');
      pump(socket, Buffer.alloc(16 * 1024, 0x61));
    });
    const started = Date.now();
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 10_000, maxBodyBytes: 64 * 1024 }, { target: '/x' }));
    expect(e.kind).toBe('body_too_large');
    expect(Date.now() - started).toBeLessThan(5000);
    // The first 2 KiB of what arrived, head first, as evidence (not a copy of everything buffered).
    expect(e.partial?.length).toBe(2048);
    expect(e.partial!.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\nContent-Type: application\/json\r\n\r\naaaa/);
  });

  test('an endless chunked body → body_too_large', async () => {
    const s = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      pump(socket, `4000\r\n${'b'.repeat(0x4000)}\r\n`);
    });
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 10_000, maxBodyBytes: 64 * 1024 }, { target: '/x' }));
    expect(e.kind).toBe('body_too_large');
  });

  test('a body of exactly maxBodyBytes is accepted', async () => {
    const s = await rawServer((socket) => socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n${'c'.repeat(2048)}`));
    const res = await sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000, maxBodyBytes: 2048 }, { target: '/x' });
    expect(res.body.length).toBe(2048);
  });

  test('a connection reset mid-response → connection_reset', async () => {
    const s = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial":');
      setTimeout(() => socket.resetAndDestroy(), 50);
    });
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('connection_reset');
  });

  test('nothing listening → connection_refused', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const e = await transportError(sendRaw({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('connection_refused');
  });

  test('a garbage status line → malformed_response', async () => {
    const s = await rawServer((socket) => socket.end('SMTP ready, not HTTP\r\nX: y\r\n\r\n'));
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('malformed_response');
    expect(e.message).toMatch(/bad status line/);
  });

  test('a non-numeric status code → malformed_response', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n'));
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('malformed_response');
  });

  test('a close before the head ends → malformed_response', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Len'));
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('malformed_response');
  });

  test('a close before content-length is reached → malformed_response', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort'));
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('malformed_response');
    expect(e.message).toMatch(/shorter than content-length/);
  });

  test('a bad content-length → malformed_response', async () => {
    const s = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n'));
    const e = await transportError(sendRaw({ baseUrl: s.baseUrl, timeoutMs: 2000 }, { target: '/x' }));
    expect(e.kind).toBe('malformed_response');
  });
});

test('connectOnce, the one reachability probe: null when a connection opens, else why not (refused, dns), never a throw', async () => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  expect(await connectOnce('127.0.0.1', port, 2000)).toBeNull();
  await new Promise<void>((r) => server.close(() => r()));
  expect(await connectOnce('127.0.0.1', port, 2000)).toMatchObject({ kind: 'connection_refused', code: 'ECONNREFUSED' });
  expect(await connectOnce('no-such-host.invalid', 80, 5000)).toMatchObject({ kind: 'dns' });
});
