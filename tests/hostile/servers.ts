// Deliberately hostile targets for the robustness tests: each listens on 127.0.0.1, port 0, and
// misbehaves in one way on EVERY request (no route is special, the probe included). They are test
// fixtures, not checks: nothing here judges anything. Each server stops writing as soon as its peer
// goes away, so a harness that gives up early never makes the test process buffer megabytes.
import http from 'node:http';
import net from 'node:net';

export interface HostileServer {
  name: HostileName;
  baseUrl: string;
  /** Connections accepted so far (a hostile target must at least be reached). */
  connections(): number;
  close(): Promise<void>;
}

export const HOSTILE_NAMES = ['hang', 'drip', 'huge-content-length', 'huge-streamed', 'reset', 'invalid-json', 'redirect-loop', 'empty-200', 'html-500'] as const;
export type HostileName = (typeof HOSTILE_NAMES)[number];

export const HUGE_BODY_BYTES = 50 * 1024 * 1024;
const DRIP_INTERVAL_MS = 200;

/** Tracks sockets so close() can end the held/dripping ones (server.close alone waits for them). */
function tracked(server: net.Server, name: HostileName): Promise<HostileServer> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  server.on('connection', (s: net.Socket) => {
    count++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {}); // the harness hanging up is expected, never an error here
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        name,
        baseUrl: `http://127.0.0.1:${port}`,
        connections: () => count,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Accepts the connection, reads the request, and never answers. */
function hang(): net.Server {
  return net.createServer((socket) => {
    socket.resume();
  });
}

/** Answers one byte every 200 ms, forever: a valid status line and head, then an endless JSON array. */
function drip(): net.Server {
  return net.createServer((socket) => {
    socket.resume();
    const head = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n[';
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || !socket.writable) return clearInterval(timer);
      socket.write(i < head.length ? head[i] : i % 2 === 0 ? '0' : ',');
      i++;
    }, DRIP_INTERVAL_MS);
    socket.on('close', () => clearInterval(timer));
  });
}

/** Streams a 50 MB JSON body with backpressure, declared up front or not (chunked). */
function huge(withLength: boolean): http.Server {
  const chunk = Buffer.alloc(64 * 1024, 0x20); // whitespace: the body stays "JSON-ish" to the very end
  return http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': String(HUGE_BODY_BYTES) } : {}) });
    let sent = 0;
    const pump = () => {
      while (sent < HUGE_BODY_BYTES) {
        if (res.destroyed) return;
        const n = Math.min(chunk.length, HUGE_BODY_BYTES - sent);
        sent += n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
}

/** Reads the request, then answers with a TCP RST (no HTTP bytes at all). */
function reset(): net.Server {
  return net.createServer((socket) => {
    socket.once('data', () => socket.resetAndDestroy());
  });
}

/** Labels its answer application/json and sends something that is not JSON. */
function invalidJson(): http.Server {
  return http.createServer((req, res) => {
    req.resume();
    const body = '{"items": [ {"encounter_id": "e1", ';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
}

/** Answers 302 to the very request target it was asked for: a loop for any client that follows. */
function redirectLoop(): http.Server {
  return http.createServer((req, res) => {
    req.resume();
    res.writeHead(302, { location: req.url ?? '/', 'content-length': '0' });
    res.end();
  });
}

/** 200, labelled application/json, with an empty body. */
function empty200(): http.Server {
  return http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
    res.end();
  });
}

/** A proxy's error page: 500 with an HTML body, to every request. */
function html500(): http.Server {
  return http.createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>');
  });
}

/**
 * Targets that pass the probe and then stop answering: the first request (the CLI's probe) gets the
 * API's 401 JSON error, every later one is held (`stall-hang`) or dripped one byte every 200 ms
 * (`stall-drip`). Only the run's breaker keeps such a target from holding the run for an hour.
 */
export const STALLING_NAMES = ['stall-hang', 'stall-drip'] as const;
export type StallingName = (typeof STALLING_NAMES)[number];

export interface StallingServer extends Omit<HostileServer, 'name'> {
  name: StallingName;
  /** Complete request heads received so far (the probe included). */
  requests(): number;
}

const PROBE_ANSWER = JSON.stringify({ error: 'api_key_unauthorized', reason_code: 'missing_bearer', message: 'Missing bearer token', field: null });

export async function startStalling(name: StallingName): Promise<StallingServer> {
  let requests = 0;
  const server = net.createServer((socket) => {
    let buf = '';
    let seen = false;
    socket.on('data', (d: Buffer) => {
      if (seen) return;
      buf += d.toString('latin1');
      if (!buf.includes('\r\n\r\n')) return;
      seen = true;
      requests++;
      if (requests === 1) {
        socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nwww-authenticate: Bearer\r\ncontent-length: ${Buffer.byteLength(PROBE_ANSWER)}\r\nconnection: close\r\n\r\n${PROBE_ANSWER}`);
        return;
      }
      if (name === 'stall-hang') return;
      const text = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n[${'0,'.repeat(1_000_000)}`;
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || !socket.writable) return clearInterval(timer);
        socket.write(text[i++ % text.length]);
      }, DRIP_INTERVAL_MS);
      socket.on('close', () => clearInterval(timer));
    });
  });
  const base = await tracked(server, 'hang');
  return { ...base, name, requests: () => requests };
}

export function startHostile(name: HostileName): Promise<HostileServer> {
  const server: net.Server =
    name === 'hang' ? hang()
    : name === 'drip' ? drip()
    : name === 'huge-content-length' ? huge(true)
    : name === 'huge-streamed' ? huge(false)
    : name === 'reset' ? reset()
    : name === 'invalid-json' ? invalidJson()
    : name === 'redirect-loop' ? redirectLoop()
    : name === 'html-500' ? html500()
    : empty200();
  return tracked(server, name);
}
