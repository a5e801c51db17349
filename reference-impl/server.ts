// HTTP server of the reference implementation (node:http, no framework): the plumbing only. A request goes to
// one of four places: the served contract (contract-route.ts), audio storage (storage-route.ts), webhook sandbox
// control (sandbox-routes.ts), or the /external/v1 pipeline (pipeline.ts: the §4 stages, then the operation's
// body from bodies.ts). The server is created with a hook (context.ts Hook; by default every named point keeps its
// correct rule) and runs the rules it is handed; the sandbox's faults are read here (faults.ts). Every error is an
// ApiError rendered here, in the one catch, from the one table in errors.ts.
import crypto from 'node:crypto';
import http from 'node:http';
import type pg from 'pg';
import { digestToken } from './auth.ts';
import { AudioSigner, STORAGE_PREFIX } from './audio.ts';
import { ContractRoute, CONTRACT_ROUTE } from './contract-route.ts';
import type { DisclosureLog } from './disclosure.ts';
import { CORRECT_HOOK, correctRule, type Ctx, type Hook, type RawHead, type Rule, type Services } from './context.ts';
import { ApiError, errorMessage, NoRoute, toErrorBody } from './errors.ts';
import { readFaults } from './faults.ts';
import { answer, route } from './pipeline.ts';
import { parseRawQuery } from './query.ts';
import { Repo } from './repo.ts';
import { serveSandbox } from './sandbox-routes.ts';
import { sendJson } from './send.ts';
import { serveStorage } from './storage-route.ts';

export interface ServerOptions {
  pool: pg.Pool;
  digestKey: Buffer;
  openapiPath: string;
  /** Enables the sandbox's faults and its /__sandbox/ routes; without it the fault header is ignored. */
  switchboardToken: string | null;
  /** The rules each request runs with (default: the correct ones). */
  hook?: Hook;
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
  readonly hook: Hook;
  constructor(options: ServerOptions) {
    this.options = options;
    this.hook = options.hook ?? CORRECT_HOOK;
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
    const hooked = this.hook.forRequest(req);
    if ('refused' in hooked) return sendJson(res, hooked.refused, { error: hooked.error, message: hooked.message });
    const faults = readFaults(req, this.options.switchboardToken);
    if ('refused' in faults) return sendJson(res, faults.refused, { error: faults.error, message: faults.message });
    const rule = hooked.rule;

    if (path === CONTRACT_ROUTE) return this.contract.serve(method, res, rule);
    if (path.startsWith(STORAGE_PREFIX)) return serveStorage(this, method, path, rawQuery, { rule, faults }, res);
    if (path.startsWith('/__sandbox/')) return serveSandbox({ ...this.options, ruleOf: (key) => this.hook.fromKey(key) }, req, method, path, hooked.key, res);
    if (path !== '/external/v1' && !path.startsWith('/external/v1/')) {
      // Outside the public API: not governed by the contract, so a plain JSON 404 (no reason_code).
      return sendJson(res, 404, { error: 'not_found', message: 'no such path; the public API lives under /external/v1' });
    }
    const write = rule('writeJson', sendJson);
    // No front end in front of the service, unless the hook puts one there that answers some requests itself.
    if (rule('frontEnd', () => false)(method, path, res, write, req)) return;
    const { op, params } = route(path);
    const ctx: Ctx = { rule, faults, req, method, op, params, pairs: parseRawQuery(rawQuery, rule), origin: this.origin(req) };
    try {
      const reply = await answer(ctx, this);
      if (reply.body === undefined) return void res.writeHead(reply.status, reply.headers).end();
      write(res, reply.status, reply.body, reply.headers);
    } catch (e) {
      this.sendError(res, e, rule);
    }
  }

  /** The one place an error becomes an answer: an ApiError by its row of errors.ts, anything else a 500. */
  sendError(res: http.ServerResponse, e: unknown, rule: Rule = correctRule): void {
    let err: ApiError;
    if (e instanceof NoRoute) return rule('writeJson', sendJson)(res, 404, { ...NoRoute.body });
    if (e instanceof ApiError) err = e;
    else if (isDatabaseUnavailable(e)) err = new ApiError('digest_key_unavailable', null, 'the key and data store is unreachable');
    else {
      // A bug, not a contract outcome: say so honestly (500 is not in the contract, so a harness will flag it).
      process.stderr.write(`reference-impl: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      return sendJson(res, 500, { error: 'public_api_internal_error', reason_code: 'internal_error', message: 'Internal error', field: null });
    }
    const { status, body } = toErrorBody(err, rule('errorMessage', errorMessage));
    const out = rule('errorBody', (_status: number, b: Record<string, unknown>) => b)(status, { ...body });
    const headers: Record<string, string> = status === 405 ? { allow: 'GET' } : status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    rule('writeError', rule('writeJson', sendJson))(res, status, out, headers);
  }
}

/** A request head node:http refused (malformed request line), split into its request line and its headers. */
function rawHead(raw: Buffer | undefined): RawHead | null {
  if (!raw) return null;
  const lines = raw.toString('latin1').split('\r\n\r\n')[0].split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { requestLine: lines[0], headers };
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
    const head = rawHead(err.rawPacket);
    const rule = head && app.hook.forRawHead(head.headers);
    if (head && rule && rule('repairRequestLine', () => false)(head, socket, server)) return;
    const text = JSON.stringify({ error: 'bad_request', message: 'malformed HTTP request' });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}
