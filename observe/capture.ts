// What the harness observes of a webhook sender: the listening receiver (node:http on a local port) that captures
// every delivery and answers from a script, the sandbox control routes that make the service produce events on demand,
// and the shape of a deployment whose trigger causes them (observe/deployment.ts). Nothing here judges.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendRaw, TransportError } from './http.ts';
import type { CheckScope, Exchange } from '../record/record.ts';
import { WEBHOOK_HEADERS, webhookHeaders, type WebhookHeaderNames } from '../judge/signature.ts';

/** The §6.2 names with the deployment's header word (profile webhook.headerWord; default Service). */
export function namesFor(headerWord?: string): WebhookHeaderNames {
  return headerWord === undefined ? WEBHOOK_HEADERS : webhookHeaders(headerWord);
}

// ---------------------------------------------------------------------------------------------
// The listening receiver

/**
 * One scripted answer: a status, 'timeout' (hold the response past the sender's timeout, then drop it) or
 * 'reset' (drop the connection at once, without an answer: a connection error of §6.4).
 */
export type ScriptStep = number | 'timeout' | 'reset';

export interface CapturedDelivery {
  seq: number;
  path: string;
  method: string;
  /** Lower-cased names; a repeated header keeps every value. */
  headers: Record<string, string[]>;
  body: Buffer;
  receivedAtMs: number;
  /** What the harness answered (a status or 'timeout'). */
  answered: ScriptStep;
}

export interface CaptureOptions {
  port?: number;
  host?: string;
  /** The host name the service reaches this capture by, in the URLs it is given (default: the address listened on). */
  advertiseHost?: string;
  /** How long a 'timeout' step holds the response before dropping the connection (default 3 s). */
  holdMs?: number;
  /** Script for paths without their own (default: always 204). */
  defaultScript?: ScriptStep[];
  /** Called for every delivery, after it was answered. */
  onDelivery?: (d: CapturedDelivery) => void;
  /** The word of the §6.2 header names: the event-id header the n-th delivery of an event is counted by. */
  headerWord?: string;
  /** The URL the service delivers to, when it is not the address listened on (a tunnel, a proxy): the capture's url. */
  advertiseUrl?: string;
}

/** Where a scripted 3xx on `path` points (a delivery there means the sender followed the redirect). */
export function redirectPath(path: string): string {
  return `${path}-redirected`;
}

export function header(d: CapturedDelivery, name: string): string[] {
  return d.headers[name.toLowerCase()] ?? [];
}

/** The n-th delivery of one event on one path gets step n of the path's script (the last step repeats). */
export class Capture {
  readonly deliveries: CapturedDelivery[] = [];
  url = '';
  private readonly scripts = new Map<string, ScriptStep[]>();
  private readonly opts: CaptureOptions;
  private readonly server: http.Server;
  private readonly waiters = new Set<() => void>();
  private readonly held = new Set<http.ServerResponse>();
  /** Scripts waiting for the next new event (a deployment's deliveries all come to one URL), and each event's script. */
  private readonly claims: { script: ScriptStep[]; bind: (eventId: string) => void }[] = [];
  private readonly eventScripts = new Map<string, ScriptStep[]>();

  constructor(opts: CaptureOptions = {}) {
    this.opts = opts;
    this.server = http.createServer((req, res) => this.onRequest(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 0, this.opts.host ?? '127.0.0.1', () => resolve());
    });
    const { port, address } = this.server.address() as AddressInfo;
    const host = this.opts.advertiseHost ?? address;
    this.url = this.opts.advertiseUrl?.replace(/\/+$/, '') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return this.url;
  }

  /** Lets the process end while this listens (a listener made on first use, with no place to close it). */
  unref(): void {
    this.server.unref();
  }

  /** The port listened on. */
  get port(): number {
    return (this.server.address() as AddressInfo | null)?.port ?? 0;
  }

  /**
   * The next delivery of an event not seen before is that event's first, and its deliveries are answered with
   * `script` (whatever path they come to); resolves with the event id. One claim per event a scenario causes.
   */
  claimNextEvent(script: ScriptStep[]): { eventId: Promise<string>; cancel: () => void } {
    let bind!: (eventId: string) => void;
    const eventId = new Promise<string>((resolve) => (bind = resolve));
    const claim = { script, bind };
    this.claims.push(claim);
    return {
      eventId,
      cancel: () => {
        const i = this.claims.indexOf(claim);
        if (i >= 0) this.claims.splice(i, 1);
      },
    };
  }

  /** The deliveries of one event (by its event-id header), optionally on one path. */
  ofEvent(eventId: string, path?: string): CapturedDelivery[] {
    const name = namesFor(this.opts.headerWord).eventId.toLowerCase();
    return this.deliveries.filter((d) => (d.headers[name]?.join(',') ?? '') === eventId && (path === undefined || d.path === path));
  }

  setScript(path: string, steps: ScriptStep[]): void {
    this.scripts.set(path, steps);
  }

  on(path: string): CapturedDelivery[] {
    return this.deliveries.filter((d) => d.path === path);
  }

  /** Resolves true as soon as `pred` holds, false after `timeoutMs`. */
  async waitFor(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(t);
          this.waiters.delete(wake);
          resolve();
        };
        const t = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
    return true;
  }

  async close(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const headers: Record<string, string[]> = {};
      for (const [k, v] of Object.entries(req.headersDistinct)) if (v) headers[k] = v;
      const eventHeader = namesFor(this.opts.headerWord).eventId.toLowerCase();
      const eventId = headers[eventHeader]?.join(',') ?? '';
      const known = eventId !== '' && (this.eventScripts.has(eventId) || this.deliveries.some((d) => (d.headers[eventHeader]?.join(',') ?? '') === eventId));
      if (!known && eventId !== '' && this.claims.length > 0) {
        const claim = this.claims.shift()!;
        this.eventScripts.set(eventId, claim.script);
        claim.bind(eventId);
      }
      const byEvent = this.eventScripts.get(eventId);
      const script = byEvent ?? this.scripts.get(path) ?? this.opts.defaultScript ?? [204];
      // A claimed event is counted across paths (a followed redirect is one more delivery of it); others per path.
      const previous = this.deliveries.filter((d) => (byEvent !== undefined || d.path === path) && (d.headers[eventHeader]?.join(',') ?? '') === eventId).length;
      const step = script[Math.min(previous, script.length - 1)] ?? 204;
      const d: CapturedDelivery = { seq: this.deliveries.length + 1, path, method: req.method ?? '', headers, body: Buffer.concat(chunks), receivedAtMs: Date.now(), answered: step };
      this.deliveries.push(d);
      if (step === 'reset') {
        req.socket.destroy();
      } else if (step === 'timeout') {
        this.held.add(res);
        setTimeout(() => {
          this.held.delete(res);
          res.destroy();
        }, this.opts.holdMs ?? 3000).unref();
      } else {
        // A 3xx names a sibling path: a sender that follows the redirect shows up there (redirectPath).
        const location = step >= 300 && step < 400 ? { location: `${this.url}${redirectPath(path)}` } : {};
        res.writeHead(step, { 'content-type': 'application/json', ...location }).end(step >= 200 && step < 300 ? undefined : JSON.stringify({ scripted: step }));
      }
      this.opts.onDelivery?.(d);
      for (const w of [...this.waiters]) w();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Sandbox control: make the service produce events on demand

export interface SandboxControlOptions {
  /** Base address of the /__sandbox/ routes (the profile's webhook.sandboxControlUrl). */
  baseUrl: string;
  /** Headers for every control request (the switchboard token; a mutant header in mutant runs). */
  headers: Record<string, string>;
  timeoutMs?: number;
}

export class SandboxControl {
  readonly opts: SandboxControlOptions;
  constructor(opts: SandboxControlOptions) {
    this.opts = opts;
  }

  private async call(scope: CheckScope | undefined, method: string, target: string, body?: unknown): Promise<{ status: number; json: any }> {
    const u = new URL(this.opts.baseUrl);
    const path = `${u.pathname.replace(/\/+$/, '')}${target}`;
    const headers = { ...this.opts.headers, 'content-type': 'application/json' };
    const text = body === undefined ? undefined : JSON.stringify(body);
    const ex: Exchange = { request: { method, target: `${u.origin}${path}`, headers, body: text } };
    try {
      const res = await sendRaw({ baseUrl: u.origin, timeoutMs: this.opts.timeoutMs ?? 10_000 }, { method, target: path, headers, body: text });
      const resText = res.body.toString('utf8');
      ex.response = { status: res.status, headers: res.headers, body: resText, bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
      scope?.record(ex);
      let json: unknown = null;
      try {
        json = resText ? JSON.parse(resText) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, json };
    } catch (e) {
      ex.error = { kind: e instanceof TransportError ? e.kind : 'other', message: (e as Error).message };
      scope?.record(ex);
      throw new Error(`sandbox control ${method} ${target} failed: ${(e as Error).message}`);
    }
  }

  async activate(scope: CheckScope | undefined, receiverUrl: string, secret: string, settings: { max_attempts: number; backoff_ms: number; timeout_ms: number }): Promise<string> {
    const r = await this.call(scope, 'POST', '/__sandbox/webhooks/subscriptions', { receiver_url: receiverUrl, signing_secret: secret, ...settings });
    if (r.status !== 201 || typeof r.json?.subscription_id !== 'string') throw new Error(`sandbox control could not activate a subscription (status ${r.status})`);
    return r.json.subscription_id as string;
  }

  async finalize(scope: CheckScope | undefined, doc: { encounter_id: string; document_id: string }, subscriptionId: string): Promise<string> {
    const r = await this.call(scope, 'POST', '/__sandbox/transcripts/finalize', { ...doc, subscription_id: subscriptionId });
    if (r.status !== 202 || typeof r.json?.event_id !== 'string') throw new Error(`sandbox control could not finalize the transcript (status ${r.status})`);
    return r.json.event_id as string;
  }

  /**
   * The sender's schedule for one event (GET /__sandbox/webhooks/events/{id}/deliveries): attempts so far and
   * the state of each delivery; undefined when the control does not offer it (404).
   */
  async deliveries(scope: CheckScope | undefined, eventId: string): Promise<{ status: string; attempts: number; last_result: string | null }[] | undefined> {
    const r = await this.call(scope, 'GET', `/__sandbox/webhooks/events/${encodeURIComponent(eventId)}/deliveries`);
    if (r.status === 404) return undefined;
    if (r.status !== 200 || !Array.isArray(r.json?.deliveries)) throw new Error(`sandbox control could not report the deliveries of an event (status ${r.status})`);
    return r.json.deliveries;
  }

  /** Returns the control's status (2xx: deactivated). */
  async deactivate(scope: CheckScope | undefined, subscriptionId: string): Promise<number> {
    return (await this.call(scope, 'DELETE', `/__sandbox/webhooks/subscriptions/${encodeURIComponent(subscriptionId)}`)).status;
  }
}

/** What one scenario brought: the path its deliveries came to, them, and those that followed a scripted redirect. */
export interface ScenarioResultOf { path: string; deliveries: CapturedDelivery[]; followed: CapturedDelivery[] }

/** A deployment whose events its trigger or team causes, one scenario at a time (observe/deployment.ts). */
export interface Deployment {
  scenario(scope: CheckScope, name: string, script: ScriptStep[], until: (ds: CapturedDelivery[]) => boolean, extraWaitMs?: number, wanted?: number): Promise<ScenarioResultOf>;
  inactive(scope: CheckScope, name: string, observeMs: number): Promise<CapturedDelivery[]>;
  shared(key: string, make: () => Promise<ScenarioResultOf>): Promise<ScenarioResultOf>;
}

/** Evidence for one captured delivery and the harness's answer. */
export function deliveryExchange(d: CapturedDelivery): Exchange {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.headers)) headers[k] = v.join(', ');
  const text = d.body.toString('utf8');
  return {
    request: { method: d.method, target: d.path, headers, body: text.length > 4096 ? `${text.slice(0, 4096)}…` : text },
    response: typeof d.answered !== 'number' ? undefined : { status: d.answered, headers: {}, body: '', bodyBytes: 0, durationMs: 0 },
    error: d.answered === 'timeout' ? { kind: 'held', message: 'the harness held the response (scripted timeout)' }
      : d.answered === 'reset' ? { kind: 'reset', message: 'the harness reset the connection without an answer (scripted)' } : undefined,
  };
}
