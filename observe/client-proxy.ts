// The recording proxy of `conformance client`: the partner's client talks to it as if it were the sandbox;
// it forwards every request byte for byte (the raw request target, the client's own headers, its Host so the
// sandbox's links name the proxy) and records what the client did (observe/client-traffic.ts). In a run that
// injects reasons (beginRun), it answers an eligible request per reason with that reason's error body (§7)
// instead of forwarding, and records that it did: a request of a route the reason belongs to
// (INJECTABLE_REASONS), once the client has had a normal answer on that route in this run, a few normal
// requests apart. Judging happens later, over the record (checks/client/checks.ts).
import http from 'node:http';
import type net from 'node:net';
import { CATEGORY_BY_STATUS, STATUS_BY_REASON } from '../judge/assertions.ts';
import { notePatientData, registerSecret } from '../record/redact.ts';
import { INJECTABLE_REASONS } from './client-traffic.ts';
import { bearerOf, issuedAudioUrls, parseTarget, type ClientExchange, type ReasonAction, type Route } from './client-traffic.ts';

const MAX_KEPT_BODY = 4 * 1024 * 1024;
/** Normal API requests between two injections, so the client's reaction to each is seen on its own. */
const GAP = 2;
/** With --watch (one recording, every reason in it) a stop reason comes last, or once this many normal requests passed with the rest still waiting. */
const STOP_AFTER = 60;

export interface ProxyOptions {
  upstream: URL;
  keys: Map<string, string>;
}

export class RecordingProxy {
  readonly exchanges: ClientExchange[] = [];
  #server: http.Server;
  #sockets = new Set<net.Socket>();
  #seq = 0;
  #audioPaths = new Set<string>();
  // The run in progress: its number, the reasons still to inject and their declared actions, the routes that
  // have had a normal (forwarded) answer, the normal requests since the last injection, and the injected ones.
  #phase = 1;
  #pending: string[] = [];
  #actions: Record<string, ReasonAction> = {};
  #answered = new Set<Route>();
  #sinceInjection = 0;
  #injected: ClientExchange[] = [];
  #routes: readonly Route[] | undefined;

  readonly opts: ProxyOptions;

  constructor(opts: ProxyOptions) {
    this.opts = opts;
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  listen(host = '127.0.0.1'): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, host, () => {
        const a = this.#server.address() as net.AddressInfo;
        resolve(`http://${host}:${a.port}`);
      });
    });
  }

  /** Starts run `n` of the command (1-based), injecting `reasons` (none: a normal run) with their declared actions. */
  beginRun(n: number, reasons: readonly string[] = [], actions: Record<string, ReasonAction> = {}, routes?: readonly Route[]): void {
    this.#phase = n;
    this.#routes = routes;
    this.#pending = reasons.filter((r) => INJECTABLE_REASONS[r]);
    this.#actions = actions;
    this.#answered = new Set();
    this.#sinceInjection = 0;
    this.#injected = [];
  }

  /** Ends the run in progress: the reasons it injected and those still waiting for an eligible request. */
  endRun(): { injected: string[]; pending: string[] } {
    const out = { injected: this.#injected.map((e) => e.injected!), pending: [...this.#pending] };
    this.#pending = [];
    return out;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  #headers(req: http.IncomingMessage): Record<string, string> {
    const out: Record<string, string> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i].toLowerCase();
      out[name] = out[name] === undefined ? req.rawHeaders[i + 1] : `${out[name]}, ${req.rawHeaders[i + 1]}`;
    }
    return out;
  }

  /** The reason to inject for this request, if its turn has come. */
  #injectionFor(ex: ClientExchange): string | undefined {
    if (ex.kind !== 'api') return undefined;
    // A key answered with a stop reason stays in that state for the rest of the run (a revoked key stays revoked).
    const stopped = this.#injected.find((i) => !i.carried && this.#actions[i.injected!] === 'stop' && i.headers.authorization === ex.headers.authorization);
    if (stopped) {
      ex.carried = true;
      return stopped.injected;
    }
    if (this.#pending.length === 0) return undefined;
    // A request repeating one that got an injected answer goes through: the client's retry gets the real answer.
    if (this.#injected.some((i) => i.method === ex.method && i.target === ex.target && i.headers.authorization === ex.headers.authorization)) return undefined;
    const route = parseTarget(ex.target).route?.name;
    // Only once the client has had a normal answer on this route: what it does normally is seen first.
    if (!route || !this.#answered.has(route)) return undefined;
    // A run aimed at some routes (a stop reason judged on each route group the client uses) injects there only.
    if (this.#routes && !this.#routes.includes(route)) return undefined;
    if (this.#injected.length > 0 && this.#sinceInjection < GAP) return undefined;
    const nonStopLeft = this.#pending.some((r) => this.#actions[r] !== 'stop');
    const reason = this.#pending.find((r) => INJECTABLE_REASONS[r]?.includes(route) && (this.#actions[r] !== 'stop' || !nonStopLeft || this.#sinceInjection >= STOP_AFTER));
    if (reason) this.#pending = this.#pending.filter((r) => r !== reason);
    return reason;
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = Date.now();
    const target = req.url ?? '/';
    const headers = this.#headers(req);
    const chunks: Buffer[] = [];
    let bodyBytes = 0;
    for await (const c of req) {
      bodyBytes += (c as Buffer).length;
      if (bodyBytes <= MAX_KEPT_BODY) chunks.push(c as Buffer);
    }
    const path = target.split('?')[0];
    const kind: ClientExchange['kind'] = path === '/external/v1' || path.startsWith('/external/v1/') ? 'api' : this.#audioPaths.has(path) ? 'storage' : 'other';
    const bearer = bearerOf(headers);
    const ex: ClientExchange = {
      seq: ++this.#seq, phase: this.#phase, at: started, method: req.method ?? 'GET', target, headers, bodyBytes, kind,
      role: bearer ? this.opts.keys.get(bearer.token) ?? null : null, status: 0, body: '', durationMs: 0,
    };
    this.exchanges.push(ex);
    const reason = this.#injectionFor(ex);
    if (reason) {
      const status = STATUS_BY_REASON[reason];
      const body = JSON.stringify({ error: CATEGORY_BY_STATUS[status] ?? 'public_api_not_found', reason_code: reason, message: `injected by the client scenario: ${reason}`, field: null });
      ex.injected = reason;
      ex.status = status;
      ex.body = body;
      ex.durationMs = Date.now() - started;
      if (!ex.carried) {
        this.#injected.push(ex);
        this.#sinceInjection = 0;
      }
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (kind === 'api') this.#sinceInjection++;
    const forward: http.OutgoingHttpHeaders = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i];
      // The answer is judged as JSON: the sandbox is asked for it uncompressed (what the client accepts is its choice).
      if (kind === 'api' && name.toLowerCase() === 'accept-encoding') continue;
      const prev = forward[name];
      forward[name] = prev === undefined ? req.rawHeaders[i + 1] : [...(Array.isArray(prev) ? prev : [String(prev)]), req.rawHeaders[i + 1]];
    }
    const up = http.request({ host: this.opts.upstream.hostname, port: this.opts.upstream.port, method: req.method, path: target, headers: forward });
    const route = kind === 'api' ? parseTarget(target).route?.name : undefined;
    const phase = this.#phase;
    up.on('response', (answer) => {
      ex.status = answer.statusCode ?? 0;
      if (route && phase === this.#phase) this.#answered.add(route);
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      const kept: Buffer[] = [];
      let size = 0;
      answer.on('data', (c: Buffer) => {
        if (kind === 'api' && size + c.length <= MAX_KEPT_BODY) kept.push(c);
        size += c.length;
        res.write(c);
      });
      answer.on('end', () => {
        ex.body = Buffer.concat(kept).toString('utf8');
        ex.durationMs = Date.now() - started;
        // Patient values are met before the client can print them (its output is shown redacted).
        notePatientData(ex.body);
        // Audio URLs are secrets from the moment they exist: no report, log or echoed output shows them.
        for (const u of issuedAudioUrls([ex])) {
          registerSecret(u.url);
          registerSecret(u.target);
          this.#audioPaths.add(u.target.split('?')[0]);
        }
        res.end();
      });
      answer.on('error', () => res.destroy());
    });
    up.on('error', (e) => {
      ex.status = 502;
      ex.durationMs = Date.now() - started;
      ex.body = '';
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the sandbox did not answer: ${e.message}`);
    });
    up.end(Buffer.concat(chunks));
  }
}
