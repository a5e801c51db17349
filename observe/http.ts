// Raw HTTP/1.1 client for conformance requests. It writes the request target exactly as given
// (no URL parsing, no normalisation: `?limit=%2B1`, `?limit=01&limit=2`, even a raw space reach the
// wire unchanged), with a per-request timeout and a response-size cap. Hostile targets (hangs, drips,
// huge bodies, resets) end as a typed transport error, never a crash or a hang.
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
 * Sends one request on a fresh connection (`Connection: close`) and reads the whole response.
 * `timeoutMs` is an overall deadline from the start (connect included), not an idle timeout: a target
 * that drips a byte now and then cannot hold a request past it.
 */
export function sendRaw(opts: ClientOptions, req: RawRequest): Promise<RawResponse> {
  const origin = parseBaseUrl(opts.baseUrl);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const method = req.method ?? 'GET';
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  // Defaults apply only where the caller gave no header of that name in any letter case (no duplicate Host/Accept).
  const given = new Set(Object.keys(req.headers ?? {}).map((k) => k.toLowerCase()));
  const defaults = Object.entries({ host: origin.hostHeader, connection: 'close', accept: 'application/json' }).filter(([k]) => !given.has(k));
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
    const socket: net.Socket = origin.secure
      ? tls.connect({ host: origin.host, port: origin.port, servername: origin.host })
      : net.connect({ host: origin.host, port: origin.port });
    const onAbort = () => finish(new TransportError('aborted', 'request abandoned before a complete response', firstBytes(chunks)));
    const finish = (err: TransportError | null, res?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      // The chunks are garbage now, whoever still holds this closure (a result keeps its own body).
      chunks.length = 0;
      if (err) reject(err); else resolve(res!);
    };
    const timer = setTimeout(() => finish(new TransportError('timeout', `no complete response within ${timeoutMs} ms`, Buffer.concat(chunks))), timeoutMs);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on(origin.secure ? 'secureConnect' : 'connect', () => {
      socket.write(head);
      if (body) socket.write(body);
    });
    socket.on('data', (d: Buffer) => {
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
      if (done && !(done instanceof TransportError)) finish(null, { ...done, durationMs: performance.now() - started });
      else if (done instanceof TransportError) finish(done);
    });
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const res = tryParse(all, maxBody, true);
      if (res instanceof TransportError) finish(res);
      else if (res) finish(null, { ...res, durationMs: performance.now() - started });
      else finish(new TransportError('malformed_response', 'connection closed before a complete response', all.subarray(0, 2048)));
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      finish(new TransportError(transportKindOf(e), `${e.code ?? 'error'}: ${e.message}`, firstBytes(chunks)));
    });
  });
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
  const sl = /^HTTP\/1\.[01] ([0-9]{3})(?: (.*))?$/.exec(lines[0]);
  if (!sl) return new TransportError('malformed_response', `bad status line: ${JSON.stringify(lines[0].slice(0, 120))}`);
  const status = Number(sl[1]);
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
  const base = { status, statusText: sl[2] ?? '', headers, rawHeaders };
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
