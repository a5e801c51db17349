// Raw HTTP/1.1 client for conformance requests. It writes the request target exactly as given
// (no URL parsing, no normalisation: `?limit=%2B1`, `?limit=01&limit=2`, even a raw space reach the
// wire unchanged), with a per-request timeout and a response-size cap. Hostile targets (hangs, drips,
// huge bodies, resets) end as a typed transport error, never a crash or a hang. A request opens its own
// connection, or, asked `keepAlive`, a plain GET takes one an earlier answer left open; how many this process
// opens to one origin at once adapts to what the origin's listen queue takes (OriginGate), so the harness's own
// bursts never pass for the target's silence.
import net from 'node:net';
import tls from 'node:tls';

export interface RawRequest {
  method?: string;
  /** Request target exactly as it goes on the wire, e.g. `/external/v1/encounters?limit=01`. */
  target: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  statusText: string;
  /** Lower-cased header names; a repeated header keeps every value, joined with ", ". */
  headers: Record<string, string>;
  rawHeaders: [string, string][];
  body: Buffer;
  durationMs: number;
  /** The status line's version: `1.1` or `1.0`. */
  httpVersion?: string;
}

export type TransportErrorKind = 'timeout' | 'connection_refused' | 'connection_reset' | 'body_too_large' | 'malformed_response' | 'dns' | 'aborted' | 'other';

export class TransportError extends Error {
  readonly kind: TransportErrorKind;
  readonly partial?: Buffer;
  constructor(kind: TransportErrorKind, message: string, partial?: Buffer) {
    super(message);
    this.name = 'TransportError';
    this.kind = kind;
    // A view of a few bytes (`subarray(0, 2048)`) would keep the whole body it was cut from alive (4 MiB of an
    // oversized answer, per error, for as long as the error is referenced): keep a copy of the bytes alone.
    this.partial = partial && partial.buffer.byteLength > partial.length * 2 + 8192 ? Buffer.from(partial) : partial;
  }
}

export interface ClientOptions {
  baseUrl: string;
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Ends the request at once (kind `aborted`), e.g. when the run's breaker opened meanwhile. */
  signal?: AbortSignal;
  /**
   * A GET without a body may go on a connection an earlier answer left open, and leave its own open for the next
   * (HTTP/1.1's persistent connections, RFC 9112 §9.3): a run's reads then cost the target, and this process, no
   * connect and no close each. Off unless asked (the service's checks ask: observe/target.ts).
   */
  keepAlive?: boolean;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

interface Origin { secure: boolean; host: string; port: number; hostHeader: string; basePath: string }

export function parseBaseUrl(baseUrl: string): Origin {
  const m = /^(https?):\/\/(\[[^\]]+\]|[^/:?#]+)(?::([0-9]+))?(\/[^?#]*)?$/.exec(baseUrl);
  if (!m) throw new Error(`baseUrl is not an http(s) URL: ${baseUrl}`);
  const secure = m[1] === 'https';
  const host = m[2].replace(/^\[|\]$/g, '');
  const port = m[3] ? Number(m[3]) : secure ? 443 : 80;
  // net.connect throws a RangeError for an out-of-range port: refuse it here, as a bad base URL.
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`baseUrl has a port outside 1..65535: ${baseUrl}`);
  const basePath = (m[4] ?? '').replace(/\/+$/, '');
  return { secure, host, port, hostHeader: m[3] ? `${m[2]}:${m[3]}` : m[2], basePath };
}

/**
 * Sends one request on a fresh connection (`Connection: close`) and reads the whole response, once its origin's
 * gate lets one more connection open (OriginGate: the wait for it is this process's own, not the target's). With
 * `keepAlive`, a plain GET goes on a connection an earlier answer left open where there is one (`Connection:
 * keep-alive`), and its own is kept for the next where its answer allows (keepAliveMs).
 * `timeoutMs` bounds the connect, and then, from the moment the connection is established, the whole answer: an
 * overall deadline, not an idle timeout, so a target that drips a byte now and then cannot hold a request past it.
 * A connect is timed apart (as undici and curl do) because its time is the listen queue's: a SYN the origin's
 * full queue dropped is sent again by the kernel after 1 s, then 3 s and 7 s, time the target never had the request.
 */
export function sendRaw(opts: ClientOptions, req: RawRequest): Promise<RawResponse> {
  const origin = parseBaseUrl(opts.baseUrl); // a bad base URL throws at once, as before the gate
  return sendGated(opts, req, origin, connectionsTo(origin));
}

async function sendGated(opts: ClientOptions, req: RawRequest, origin: Origin, to: Connections): Promise<RawResponse> {
  const attempt = await to.gate.acquire(opts.signal);
  let answered = false;
  try {
    const persistent = opts.keepAlive === true && mayPersist(req) && !to.pool.off;
    const idle = persistent ? takeIdle(to.pool) : undefined;
    let res: RawResponse | undefined;
    if (idle) {
      to.gate.reused(attempt);
      // The origin closed the idle connection as this request went on it (no byte of an answer came back): the
      // request, a GET, goes once more on a connection of its own, as every HTTP client does (RFC 9112 §9.3.1).
      res = await sendOnConnection(opts, req, origin, to, attempt, persistent, idle).catch((e: unknown) => {
        if (e instanceof StaleConnection) return undefined;
        throw e;
      });
    }
    res ??= await sendOnConnection(opts, req, origin, to, attempt, persistent);
    answered = true;
    return res;
  } finally {
    to.gate.release(attempt, answered);
  }
}

/**
 * A request whose connection may outlive it: a plain GET, without a body, whose caller did not set `Connection` or
 * framing headers, whose request target is all visible ASCII (a check's deliberately malformed request line, a raw
 * space, may leave the origin reading the connection differently: it gets a connection of its own, as before).
 */
function mayPersist(req: RawRequest): boolean {
  if ((req.method ?? 'GET') !== 'GET' || (req.body !== undefined && req.body.length > 0)) return false;
  if (!/^[\x21-\x7e]*$/.test(req.target)) return false;
  return !Object.keys(req.headers ?? {}).some((k) => /^(connection|content-length|transfer-encoding)$/i.test(k));
}

/** A reused connection ended or reset before any byte of the answer: the request is sent again on a new one. */
class StaleConnection extends Error {}

function sendOnConnection(opts: ClientOptions, req: RawRequest, origin: Origin, to: Connections, attempt: ConnectAttempt, persistent: boolean, reused?: net.Socket): Promise<RawResponse> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const method = req.method ?? 'GET';
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  // Defaults apply only where the caller gave no header of that name in any letter case (no duplicate Host/Accept).
  const given = new Set(Object.keys(req.headers ?? {}).map((k) => k.toLowerCase()));
  const defaults = Object.entries({ host: origin.hostHeader, connection: persistent ? 'keep-alive' : 'close', accept: 'application/json' }).filter(([k]) => !given.has(k));
  const headers: Record<string, string> = { ...Object.fromEntries(defaults), ...req.headers };
  if (body) headers['content-length'] = String(body.length);
  let head = `${method} ${origin.basePath}${req.target} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  head += '\r\n';

  const started = performance.now();
  return new Promise<RawResponse>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let framing: Framing | undefined;
    let tail = Buffer.alloc(0);
    const socket: net.Socket = reused ?? (origin.secure
      ? tls.connect({ host: origin.host, port: origin.port, servername: origin.host })
      : net.connect({ host: origin.host, port: origin.port }));
    const onAbort = () => finish(new TransportError('aborted', 'request abandoned before a complete response', firstBytes(chunks)));
    /** `keepFor`: the answer left the connection open for the next request, this many ms at most. */
    const finish = (err: TransportError | StaleConnection | null, res?: RawResponse, keepFor?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(stall);
      opts.signal?.removeEventListener('abort', onAbort);
      socket.off('data', onData).off('end', onEnd).off('error', onError);
      if (keepFor !== undefined) parkIdle(to.pool, socket, keepFor);
      else socket.destroy();
      // The chunks are garbage now, whoever still holds this closure (a result keeps its own body).
      chunks.length = 0;
      if (err) reject(err); else resolve(res!);
    };
    const answerTimer = () => setTimeout(() => finish(new TransportError('timeout', `no complete response within ${timeoutMs} ms`, Buffer.concat(chunks))), timeoutMs);
    let stall: NodeJS.Timeout | undefined;
    const send = () => {
      socket.write(head);
      if (body) socket.write(body);
      if (persistent && !reused) {
        const sentAt = performance.now();
        stall = setTimeout(() => size === 0 && noteStall(to.pool, sentAt), KEEP_ALIVE_STALL_MS);
      }
    };
    let timer: NodeJS.Timeout;
    if (reused) {
      timer = answerTimer();
      send();
    } else {
      timer = setTimeout(() => finish(new TransportError('timeout', `no ${origin.secure ? 'TLS ' : ''}connection within ${timeoutMs} ms`)), timeoutMs);
      socket.once(origin.secure ? 'secureConnect' : 'connect', () => {
        if (settled) return;
        to.gate.connected(attempt);
        // The answer's deadline runs from here: the connect's time was the listen queue's (sendRaw).
        clearTimeout(timer);
        timer = answerTimer();
        send();
      });
    }
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const complete = (res: Parsed) => {
      if (reused) to.pool.lastReusedAnswerAt = performance.now();
      finish(null, { ...res, durationMs: performance.now() - started }, persistent && framing?.kind === 'length' && size === framing.total ? keepAliveMs(res) : undefined);
    };
    function onData(d: Buffer): void {
      size += d.length;
      if (size > maxBody + 64 * 1024) {
        finish(new TransportError('body_too_large', `response exceeded ${maxBody} bytes`, firstBytes(chunks)));
        return;
      }
      chunks.push(d);
      // A complete message may arrive before the peer closes; parse eagerly when framing says it may be
      // complete. Concatenating on every chunk would cost O(n²) on a large streamed body.
      if (!framing) {
        framing = sniffFraming(Buffer.concat(chunks), maxBody);
        if (!framing) return;
      }
      if (framing.kind === 'length' && size < framing.total) return;
      if (framing.kind === 'close') return;
      if (framing.kind === 'chunked') {
        tail = Buffer.concat([tail, d]).subarray(-7);
        if (!tail.includes('0\r\n\r\n')) return;
      }
      const done = tryParse(Buffer.concat(chunks), maxBody, false);
      if (done && !(done instanceof TransportError)) complete(done);
      else if (done instanceof TransportError) finish(done);
    }
    function onEnd(): void {
      if (reused && size === 0) return finish(new StaleConnection());
      const all = Buffer.concat(chunks);
      const res = tryParse(all, maxBody, true);
      if (res instanceof TransportError) finish(res);
      else if (res) finish(null, { ...res, durationMs: performance.now() - started });
      else finish(new TransportError('malformed_response', 'connection closed before a complete response', all.subarray(0, 2048)));
    }
    function onError(e: NodeJS.ErrnoException): void {
      if (reused && size === 0 && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return finish(new StaleConnection());
      finish(new TransportError(transportKindOf(e), `${e.code ?? 'error'}: ${e.message}`, firstBytes(chunks)));
    }
    socket.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** An idle connection kept at most this long; an origin's own `Keep-Alive: timeout=N` shortens it (undici's default, 4 s). */
const IDLE_MS = 4_000;
/** Idle connections kept per origin at most. */
const IDLE_MAX = 64;

/**
 * How long the connection of this answer may wait idle for the next request, or undefined when the answer closes it:
 * an HTTP/1.0 answer (unless it says keep-alive), `Connection: close`, or a `Keep-Alive` timeout of a second or less
 * (the origin may close it as a request goes out: one second is kept in hand, as undici does).
 */
function keepAliveMs(res: Parsed): number | undefined {
  const tokens = (res.headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  if (tokens.includes('close')) return undefined;
  if (res.httpVersion !== '1.1' && !tokens.includes('keep-alive')) return undefined;
  const said = /(?:^|[,\s])timeout\s*=\s*([0-9]+)/i.exec(res.headers['keep-alive'] ?? '')?.[1];
  const ms = said === undefined ? IDLE_MS : Math.min(IDLE_MS, Number(said) * 1000 - 1000);
  return ms > 0 ? ms : undefined;
}

interface IdleConnection {
  socket: net.Socket;
  /** Out of the pool for a request: its idle watch ends, and it holds the process while the request is on it. */
  take: () => net.Socket;
}

/**
 * An origin's persistent connections: the idle ones, the most recently used last; when an answer last came on a reused
 * connection; and whether keep-alive is off for it (a stall, see noteStall).
 */
interface Pool {
  idle: IdleConnection[];
  lastReusedAnswerAt: number;
  off: boolean;
}

/** What this process keeps for one origin (scheme, host, port): its gate and its pool, shared by every caller's requests. */
interface Connections {
  gate: OriginGate;
  pool: Pool;
}
const ORIGINS = new Map<string, Connections>();

function connectionsTo(origin: Pick<Origin, 'secure' | 'host' | 'port'>): Connections {
  const key = `${origin.secure ? 'https' : 'http'}://${origin.host}:${origin.port}`;
  let to = ORIGINS.get(key);
  if (!to) ORIGINS.set(key, (to = { gate: new OriginGate(), pool: { idle: [], lastReusedAnswerAt: -Infinity, off: false } }));
  return to;
}

/**
 * A request on a new connection had no byte of an answer KEEP_ALIVE_STALL_MS after it was sent, while requests on
 * reused connections were answered: an origin that serves one connection at a time (a single-threaded HTTP/1.1 server)
 * is serving the kept ones and leaves the new connection waiting for them to close. Keep-alive ends for that origin in
 * this process: its idle connections close, and the ones in use close after their answers, so the waiting connection
 * is served (a request delayed about a second, instead of one that times out for the harness's own choice).
 */
const KEEP_ALIVE_STALL_MS = 1_000;
function noteStall(pool: Pool, sentAt: number): void {
  if (pool.off || pool.lastReusedAnswerAt < sentAt) return;
  pool.off = true;
  for (let e = pool.idle.at(-1); e; e = pool.idle.at(-1)) e.take().destroy();
}

/**
 * Keeps a connection for the origin's next request. An idle connection holds no process open (unref), and is closed
 * when its time is up, when the origin closes or resets it, or when anything arrives on it unasked.
 */
function parkIdle(pool: Pool, socket: net.Socket, ms: number): void {
  const list = pool.idle;
  if (pool.off || socket.destroyed || socket.readableEnded || list.length >= IDLE_MAX) {
    socket.destroy();
    return;
  }
  const unwatch = () => {
    clearTimeout(timer);
    socket.off('data', drop).off('end', drop).off('error', drop).off('close', drop);
    const i = list.indexOf(entry);
    if (i >= 0) list.splice(i, 1);
  };
  const drop = () => {
    unwatch();
    socket.destroy();
  };
  const entry: IdleConnection = { socket, take: () => (unwatch(), socket.ref()) };
  const timer = setTimeout(drop, ms).unref();
  socket.on('data', drop).on('end', drop).on('error', drop).on('close', drop);
  socket.unref();
  list.push(entry);
}

/** The origin's most recently used idle connection, taken out of the pool; undefined when there is none. */
function takeIdle(pool: Pool): net.Socket | undefined {
  const list = pool.idle;
  for (let e = list.at(-1); e; e = list.at(-1)) {
    const socket = e.take();
    if (!socket.destroyed && !socket.readableEnded && socket.writable) return socket;
    socket.destroy();
  }
  return undefined;
}

/** One connection attempt through a gate: when it started, and what its connect showed. */
export interface ConnectAttempt {
  /** Its place in the order attempts started (a clock may give two the same instant). */
  readonly seq: number;
  readonly startedAt: number;
  /** This process's event loop's busy time when it started (`loopBusy`). */
  readonly busyAtStart: number;
  /** Connects of later attempts that completed while this one's was still pending. */
  overtaken: number;
  /** Its SYN was taken as lost (overtaken, or a retransmission's delay): it cut the gate, or its burst did. */
  lost: boolean;
  connectedAt?: number;
}

/**
 * How many connections this process keeps open to one origin at once, adapted to what the origin takes, the way TCP
 * adapts its window (slow start, then one more per round, halved on a loss). Every request opens a connection of its
 * own, and a run keeps many checks, each with reads of its own, in flight: a burst of them can overflow a server's
 * listen queue (Python's socketserver listens with a backlog of 5). The kernel then drops the SYN, sent again after
 * 1 s, or, past a SYN cookie, the request itself, sent again 1, 3, 7 and 15 s later: a live target answers past the
 * deadline, and a check fails on the harness's own burst (a Python deployment did, with 16 checks in flight).
 *
 * A lost SYN shows before the kernel's retry as a connect still pending once OVERTAKEN connects started after it have
 * completed (TCP's fast retransmit reads three later segments acknowledged the same way), when it is also older than
 * twice the origin's fastest connect (a distant target's connects may complete out of order); failing that, as a
 * connect that took SYN_RETRY_MS and three times the origin's fastest (a target that far away is far, not full),
 * counting only the time this process's event loop was idle: a worker busy with a check's CPU reads every connect of
 * that moment late (a run against the sandbox, whose queue never overflows, read thirteen at once near 960 ms). A loss
 * halves the gate, once per burst: an attempt that started before the last cut was part of the burst that made it. The
 * gate starts at START, grows by one per answered request while it is the limit (doubling per round) until the first
 * loss, then by one per round: a target that never drops a SYN is held below what the checks ask for only while the
 * gate doubles, one answer's time per doubling (in sandbox runs a worker's gate ended between 13 and 65, never cut).
 */
export class OriginGate {
  /** Connections at once before anything is known of the origin. */
  static readonly START = 8;
  /** Never fewer: a server with a backlog of 1 holds two waiting connections. */
  static readonly MIN = 2;
  /** Never more: file descriptors of one process. */
  static readonly MAX = 512;
  /** Later connects completed while one is pending that show its SYN lost. */
  static readonly OVERTAKEN = 3;
  /** A connect this slow took a SYN retransmission (the kernel's first retry waits 1 s, RFC 6298). */
  static readonly SYN_RETRY_MS = 900;
  #limit = OriginGate.START;
  #active = 0;
  #waiting: (() => void)[] = [];
  /** Attempts whose connect is pending, in the order they started. */
  #pending = new Set<ConnectAttempt>();
  #slowStart = true;
  #credit = 0;
  #fastestConnectMs = Infinity;
  /** Attempts started so far; those up to `#cutSeq` were under way when the gate last halved. */
  #started = 0;
  #cutSeq = 0;
  #cuts = 0;
  #review = false;
  readonly #now: () => number;
  readonly #loopBusy: () => number;

  /**
   * `now`: the clock of its attempts (performance.now(), or a test's own); `loopBusy`: the milliseconds this process's
   * event loop has spent busy so far (its utilization's active time).
   */
  constructor(now: () => number = () => performance.now(), loopBusy: () => number = () => performance.eventLoopUtilization().active) {
    this.#now = now;
    this.#loopBusy = loopBusy;
  }

  /** Connections it lets open at once now. */
  get limit(): number {
    return this.#limit;
  }

  /** Times it halved: lost SYNs, one per burst. */
  get cuts(): number {
    return this.#cuts;
  }

  /** Resolves with the attempt once one more connection may open; rejects `aborted` if `signal` ends the request while it waits. */
  acquire(signal?: AbortSignal): Promise<ConnectAttempt> {
    if (signal?.aborted) return Promise.reject(new TransportError('aborted', 'request abandoned before it was sent'));
    if (this.#active < this.#limit && this.#waiting.length === 0) return Promise.resolve(this.#start());
    return new Promise<ConnectAttempt>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.#start());
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(go);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(new TransportError('aborted', 'request abandoned before it was sent'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(go);
    });
  }

  #start(): ConnectAttempt {
    this.#active++;
    const a: ConnectAttempt = { seq: ++this.#started, startedAt: this.#now(), busyAtStart: this.#loopBusy(), overtaken: 0, lost: false };
    this.#pending.add(a);
    return a;
  }

  /** The attempt goes on a connection already open (keep-alive): no connect of its own to judge the origin's queue by. */
  reused(a: ConnectAttempt): void {
    if (this.#pending.delete(a)) a.connectedAt = this.#now();
  }

  /** The attempt's connection is established (TCP, or TLS where that is what the request waited for). */
  connected(a: ConnectAttempt): void {
    if (!this.#pending.delete(a)) return;
    a.connectedAt = this.#now();
    const ms = a.connectedAt - a.startedAt;
    const waited = ms - (this.#loopBusy() - a.busyAtStart); // the part the loop sat idle: the connect's own wait
    if (waited >= OriginGate.SYN_RETRY_MS && ms >= 3 * this.#fastestConnectMs) this.#lose(a);
    this.#fastestConnectMs = Math.min(this.#fastestConnectMs, ms);
    let overtook = false;
    for (const p of this.#pending) {
      if (p.seq > a.seq) break;
      p.overtaken++;
      overtook ||= p.overtaken >= OriginGate.OVERTAKEN;
    }
    // Judged once this turn of the event loop has handed every connect that completed meanwhile to its attempt.
    if (overtook && !this.#review) {
      this.#review = true;
      setImmediate(() => {
        this.#review = false;
        const now = this.#now();
        for (const p of this.#pending) if (!p.lost && p.overtaken >= OriginGate.OVERTAKEN && now - p.startedAt >= 2 * this.#fastestConnectMs) this.#lose(p);
      });
    }
  }

  /**
   * The attempt's request ended. A complete answer on a connection whose SYN was not lost and that opened after the
   * last cut, while the gate was the limit (requests waited, or every place was taken), grows it.
   */
  release(a: ConnectAttempt, answered: boolean): void {
    this.#pending.delete(a);
    const full = this.#waiting.length > 0 || this.#active >= this.#limit;
    this.#active--;
    if (answered && full && !a.lost && a.connectedAt !== undefined && a.seq > this.#cutSeq) {
      if (this.#slowStart) this.#limit++;
      else if ((this.#credit += 1 / this.#limit) >= 1) {
        this.#credit = 0;
        this.#limit++;
      }
      this.#limit = Math.min(OriginGate.MAX, this.#limit);
    }
    while (this.#active < this.#limit && this.#waiting.length > 0) this.#waiting.shift()!();
  }

  #lose(a: ConnectAttempt): void {
    a.lost = true;
    if (a.seq <= this.#cutSeq) return;
    this.#cutSeq = this.#started;
    this.#cuts++;
    this.#slowStart = false;
    this.#credit = 0;
    this.#limit = Math.max(OriginGate.MIN, Math.floor(Math.min(this.#limit, this.#active) / 2));
  }
}


/** The kind of a socket error (its errno code). */
function transportKindOf(e: NodeJS.ErrnoException): TransportErrorKind {
  return e.code === 'ECONNREFUSED' ? 'connection_refused'
    : e.code === 'ECONNRESET' || e.code === 'EPIPE' ? 'connection_reset'
    : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' ? 'dns' : 'other';
}

/** Why a TCP connection could not be opened: its kind, the errno code (none for a timeout) and the message. */
export interface ConnectFailure {
  kind: TransportErrorKind;
  code?: string;
  message: string;
}

/**
 * The one reachability probe: opens one TCP connection to host:port and closes it at once. Null when it
 * connected within `timeoutMs`, else why not (never throws). The CLI's preflights (`run`'s target, `webhook
 * receiver`'s receiver) call it and word the failure for their own command.
 */
export function connectOnce(host: string, port: number, timeoutMs: number): Promise<ConnectFailure | null> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve({ kind: 'timeout', message: `no TCP connection within ${timeoutMs} ms` });
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve({ kind: transportKindOf(e), ...(e.code ? { code: e.code } : {}), message: e.message });
    });
  });
}

/**
 * The first `n` bytes of what arrived, for an error's evidence, without copying the rest: joining every chunk of an
 * oversized answer to keep 2 KiB of it cost a second copy of up to the whole cap per request in flight.
 */
function firstBytes(chunks: readonly Buffer[], n = 2048): Buffer {
  const take: Buffer[] = [];
  let got = 0;
  for (const c of chunks) {
    if (got >= n) break;
    take.push(c);
    got += c.length;
  }
  return Buffer.concat(take).subarray(0, n);
}

type Parsed = Omit<RawResponse, 'durationMs'>;

/** How the end of the message will be known: total bytes, the last chunk, the peer closing, or re-parse always. */
type Framing = { kind: 'length'; total: number } | { kind: 'chunked' } | { kind: 'close' } | { kind: 'always' };

/** Reads the framing from the response head once it has arrived; undefined while the head is incomplete. */
function sniffFraming(buf: Buffer, maxBody: number): Framing | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return buf.length > 64 * 1024 ? { kind: 'always' } : undefined;
  const head = buf.subarray(0, headEnd).toString('latin1');
  const status = /^HTTP\/1\.[01] ([0-9]{3})/.exec(head)?.[1];
  if (!status || status.startsWith('1')) return { kind: 'always' }; // malformed or interim: let tryParse decide
  if (status === '204' || status === '304') return { kind: 'length', total: 0 };
  if (/^transfer-encoding:.*\bchunked\b/im.test(head)) return { kind: 'chunked' };
  const len = /^content-length:[ \t]*([0-9]+)[ \t]*$/im.exec(head)?.[1];
  // A declared body over the cap is refused as soon as the head arrives (tryParse says so).
  if (len !== undefined) return Number(len) > maxBody ? { kind: 'always' } : { kind: 'length', total: headEnd + 4 + Number(len) };
  return /^content-length:/im.test(head) ? { kind: 'always' } : { kind: 'close' };
}

/** Returns the parsed response when complete, null when more bytes are needed, or a TransportError. */
function tryParse(buf: Buffer, maxBody: number, atEof: boolean): Parsed | null | TransportError {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) {
    if (buf.length > 64 * 1024) return new TransportError('malformed_response', 'response head larger than 64 KiB');
    return atEof ? new TransportError('malformed_response', 'connection closed before the response head ended', buf.subarray(0, 2048)) : null;
  }
  const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const sl = /^HTTP\/(1\.[01]) ([0-9]{3})(?: (.*))?$/.exec(lines[0]);
  if (!sl) return new TransportError('malformed_response', `bad status line: ${JSON.stringify(lines[0].slice(0, 120))}`);
  const status = Number(sl[2]);
  if (status >= 100 && status < 200) {
    // Skip interim responses (100 Continue) and parse what follows.
    return tryParse(buf.subarray(headEnd + 4), maxBody, atEof);
  }
  const rawHeaders: [string, string][] = [];
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) return new TransportError('malformed_response', `bad header line: ${JSON.stringify(line.slice(0, 120))}`);
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    rawHeaders.push([name, value]);
    const k = name.toLowerCase();
    headers[k] = k in headers ? `${headers[k]}, ${value}` : value;
  }
  const rest = buf.subarray(headEnd + 4);
  const base = { status, statusText: sl[3] ?? '', headers, rawHeaders, httpVersion: sl[1] };
  if (status === 204 || status === 304) return { ...base, body: Buffer.alloc(0) };
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    const out = dechunk(rest, maxBody);
    if (out instanceof TransportError) return out;
    if (out) return { ...base, body: out };
    return atEof ? new TransportError('malformed_response', 'chunked body ended early', rest.subarray(0, 2048)) : null;
  }
  if (headers['content-length'] !== undefined) {
    const len = Number(headers['content-length']);
    if (!/^[0-9]+$/.test(headers['content-length']) || !Number.isSafeInteger(len)) {
      return new TransportError('malformed_response', `bad content-length: ${headers['content-length']}`);
    }
    if (len > maxBody) return new TransportError('body_too_large', `content-length ${len} exceeds the ${maxBody}-byte cap`);
    if (rest.length >= len) return { ...base, body: rest.subarray(0, len) };
    return atEof ? new TransportError('malformed_response', `body shorter than content-length (${rest.length} < ${len})`, rest.subarray(0, 2048)) : null;
  }
  if (rest.length > maxBody) return new TransportError('body_too_large', `response exceeded ${maxBody} bytes`);
  return atEof ? { ...base, body: rest } : null;
}

function dechunk(buf: Buffer, maxBody: number): Buffer | null | TransportError {
  const parts: Buffer[] = [];
  let pos = 0;
  let total = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return null;
    const sizeText = buf.subarray(pos, eol).toString('latin1').split(';')[0].trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) return new TransportError('malformed_response', `bad chunk size: ${JSON.stringify(sizeText.slice(0, 40))}`);
    const size = parseInt(sizeText, 16);
    if (size === 0) return Buffer.concat(parts);
    total += size;
    if (total > maxBody) return new TransportError('body_too_large', `response exceeded ${maxBody} bytes`);
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}
