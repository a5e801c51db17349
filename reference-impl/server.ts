// HTTP server of the reference implementation (node:http, no framework): the plumbing only. A request goes to
// one of four places: the served contract (contract-route.ts), audio storage (storage-route.ts), webhook sandbox
// control (sandbox-routes.ts), or the /external/v1 pipeline (pipeline.ts: the §4 stages, then the operation's
// body from bodies.ts). The switchboard (switchboard.ts) reads what a request switched on; mutants and variants
// apply as named overrides (overrides.ts). Every error is an ApiError rendered here, in the one catch, from the
// one table in errors.ts.
import crypto from 'node:crypto';
import http from 'node:http';
import type pg from 'pg';
import { digestToken } from './auth.ts';
import { AudioSigner, STORAGE_PREFIX } from './audio.ts';
import { ContractRoute, CONTRACT_ROUTE } from './contract-route.ts';
import type { DisclosureLog } from './disclosure.ts';
import { ApiError, toErrorBody } from './errors.ts';
import type { MutantName } from './mutants.ts';
import { NO_SWITCHES, rule, type Switches } from './overrides.ts';
import { answer, route, type Ctx, type Services } from './pipeline.ts';
import { parseRawQuery } from './query.ts';
import { Repo } from './repo.ts';
import { serveSandbox } from './sandbox-routes.ts';
import { sendJson } from './send.ts';
import { serveStorage } from './storage-route.ts';
import { readRawHead, readSwitches } from './switchboard.ts';

export interface ServerOptions {
  pool: pg.Pool;
  digestKey: Buffer;
  openapiPath: string;
  /** Enables the fault switchboard; without it the switchboard headers are ignored. */
  switchboardToken: string | null;
  /** A mutant applied to every request (the --mutant flag); per-request headers override it. */
  defaultMutant: MutantName | null;
  /** Origin used in audio URLs when the Host header is unusable. */
  fallbackOrigin: string;
  /** Webhook sandbox control (routes under /__sandbox/, switchboard token required): the organization they act for. */
  sandboxOrganizationId?: string;
  /** Wakes the webhook delivery worker after an event is written. */
  onWebhookEvent?: () => void;
  /** Where the disclosure event of each successful read goes (flushed by the caller at shutdown). */
  disclosures: DisclosureLog;
  /** Lifetime of the signed audio URLs (default AUDIO_URL_TTL_SECONDS). */
  audioTtlSeconds?: number;
}

class App implements Services {
  readonly repo: Repo;
  readonly digestKey: Buffer;
  readonly dummyDigest: Buffer;
  readonly signer: AudioSigner;
  readonly disclosures: DisclosureLog;
  readonly options: ServerOptions;
  readonly contract: ContractRoute;
  constructor(options: ServerOptions) {
    this.options = options;
    this.repo = new Repo(options.pool);
    this.digestKey = options.digestKey;
    this.dummyDigest = digestToken(options.digestKey, crypto.randomBytes(16).toString('hex'));
    this.disclosures = options.disclosures;
    this.signer = new AudioSigner({ ttlSeconds: options.audioTtlSeconds });
    this.contract = new ContractRoute(options.openapiPath);
  }

  origin(req: http.IncomingMessage): string {
    const host = req.headers.host;
    if (host && /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$/.test(host)) return `http://${host}`;
    return this.options.fallbackOrigin;
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const rawQuery = q === -1 ? '' : target.slice(q + 1);
    const method = req.method ?? 'GET';
    const sw = readSwitches(req, this.options.switchboardToken, this.options.defaultMutant);
    if ('refused' in sw) return sendJson(res, sw.refused, { error: sw.error, message: sw.message });

    if (path === CONTRACT_ROUTE) return this.contract.serve(method, res, sw);
    if (path.startsWith(STORAGE_PREFIX)) return serveStorage(this, method, path, rawQuery, sw, res);
    if (path.startsWith('/__sandbox/')) return serveSandbox(this.options, req, method, path, sw.mutant, res);
    if (path !== '/external/v1' && !path.startsWith('/external/v1/')) {
      // Outside the public API: not governed by the contract, so a plain JSON 404 (no reason_code).
      return sendJson(res, 404, { error: 'not_found', message: 'no such path; the public API lives under /external/v1' });
    }
    // No front end in front of the service, unless a variant puts one there that answers some requests itself.
    if (rule(sw, 'frontEnd', () => false)(method, path, res, sw.variants)) return;
    const { op, params } = route(path);
    const ctx: Ctx = { ...sw, req, method, op, params, pairs: parseRawQuery(rawQuery, sw), origin: this.origin(req) };
    try {
      const reply = await answer(ctx, this);
      if (reply.body === undefined) return void res.writeHead(reply.status, reply.headers).end();
      sendJson(res, reply.status, reply.body, reply.headers, sw.variants);
    } catch (e) {
      this.sendError(res, e, sw);
    }
  }

  /** The one place an error becomes an answer: an ApiError by its row of errors.ts, anything else a 500. */
  sendError(res: http.ServerResponse, e: unknown, sw: Switches = NO_SWITCHES): void {
    let err: ApiError;
    if (e instanceof ApiError) err = e;
    else if (isDatabaseUnavailable(e)) err = new ApiError('digest_key_unavailable', null, 'the key and data store is unreachable');
    else {
      // A bug, not a contract outcome: say so honestly (500 is not in the contract, so a harness will flag it).
      process.stderr.write(`reference-impl: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      return sendJson(res, 500, { error: 'public_api_internal_error', reason_code: 'internal_error', message: 'Internal error', field: null });
    }
    const { status, body } = toErrorBody(err, sw.variants);
    const out = rule(sw, 'errorBody', (_status: number, b: Record<string, unknown>) => b)(status, { ...body });
    const headers: Record<string, string> = status === 405 ? { allow: 'GET' } : status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    rule(sw, 'writeError', sendJson)(res, status, out, headers, sw.variants);
  }
}

function isDatabaseUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return (typeof code === 'string' && (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND)$/.test(code) || code.startsWith('08') || code === '57P01' || code === '57P03'))
    || /timeout|Connection terminated|connect/i.test(e.message);
}

export function createServer(options: ServerOptions): http.Server {
  const app = new App(options);
  const server = http.createServer((req, res) => {
    app.handle(req, res).catch((e) => {
      // Last line of defence: every request gets an answer.
      if (!res.headersSent) app.sendError(res, e);
      else res.destroy();
    });
  });
  // Malformed HTTP (bad request line, oversized headers…): answer 400 JSON when the socket is still writable.
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const raw = readRawHead(err.rawPacket, options.switchboardToken);
    if (raw && rule(raw.switches, 'repairRequestLine', () => false)(raw.head, socket, server)) return;
    const text = JSON.stringify({ error: 'bad_request', message: 'malformed HTTP request' });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}
