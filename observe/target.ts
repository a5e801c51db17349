// A target as the suites see it: a base URL reached through the raw client, plus the roles the
// profile offers (credentials, resources, fault switches). Every request becomes an Exchange that the
// running check records as evidence; transport failures become exchanges with an error, not throws.
// Every exchange reports to the run's breaker (observe/breaker.ts): once the target stopped answering,
// requests are no longer sent (nor waited for) and their checks fail with the last attempts as evidence.
import { sendRaw, TransportError, type RawResponse } from './http.ts';
import { describeAttempts, isNoAnswer, MemoryBreaker, type Attempt, type Breaker } from './breaker.ts';
import { CheckFailure } from '../record/record.ts';
import { credentialKey, environmentKey, faultFormKind, faultKey, settingPath, type CredentialRole, type DocumentRole, type EncounterRole, type FaultForm, type FaultName, type Profile } from '../profile/profile.ts';
import { NotVerified, type CheckScope, type Exchange } from '../record/record.ts';
import { MAX_ATTEMPTS, throttleWaitMs, workerPace } from './throttle.ts';

/** An exchange, with the throttled answers (429, a gateway's 503 with Retry-After) that came before it. */
export type SentExchange = Exchange & { raw?: RawResponse; throttled?: { ex: Exchange; waitedMs: number }[]; stillThrottled?: boolean };

export type As = CredentialRole | 'none' | { raw: string } | { header: string };

export interface GetOptions {
  /** Who calls: a profile credential role, no Authorization header, a raw bearer token, or a raw header value. */
  as?: As;
  headers?: Record<string, string>;
  faults?: FaultName[];
  method?: string;
  /**
   * Whether this read is shared with the worker's other checks (each distinct read once per run, principle 9): the
   * same GET with the same credential and headers already answered is not sent again. CheckApi.get decides it by
   * `sharable` unless given; `true` also shares an audio-route read whose link the check does not follow (an error
   * answer, a body only inspected). Never with fault switches, or in a check declared `fresh` or a read marked so.
   * Throttled, failed (no answer) and 5xx answers are never shared.
   */
  shared?: boolean;
  /** This read is sent now, never answered from another check's: a re-read that asks whether something moved. */
  fresh?: boolean;
}

/**
 * Whether a check's read may be answered from another check's (principle 9: each distinct read once per run): a
 * GET of the API or its document without fault switches. The audio route is never shared: each answer hands out a
 * link that expires, and a check following it needs its own; nor is anything outside the API (a storage URL).
 */
export function sharable(target: string, opts: GetOptions): boolean {
  if ((opts.method ?? 'GET') !== 'GET' || opts.faults?.length || opts.fresh) return false;
  const path = target.replace(/[?#].*$/, '');
  return (path.startsWith('/external/') || path.startsWith('/openapi/')) && !/\/audio$/.test(path);
}

/**
 * The caller a condition is judged with when it is not `full`: test_prefix_not_allowed is a test key's refusal,
 * so a condition given as a credential (a test-prefixed key where test keys are refused) stands for `test_key`.
 */
const FAULT_CALLER: Partial<Record<FaultName, CredentialRole>> = { test_prefix_not_allowed: 'test_key' };

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
/** Larger answers are not kept for sharing (memory stays flat whatever the target answers). */
const SHARED_MAX_BODY = 256 * 1024;
/** How often a request in flight looks whether the breaker opened meanwhile (then it is abandoned). */
const BREAKER_POLL_MS = 250;
/** The plain question asked of a suspect target (the CLI's probe asks the same), and its own deadline. */
const CONFIRM_TARGET = '/external/v1/encounters';
const CONFIRM_TIMEOUT_MS = 5_000;

/** The run plan's part a target carries to its checks (engine/plan.ts builds it from what the CLI chose). */
export interface TargetPlan {
  /** The least time between two requests of one worker, in ms (--max-rps). */
  readonly paceMs?: number;
  /** The most encounters a whole-list check walks (--list-window; observe/list-window.ts). */
  readonly listWindow?: number;
  /** The longest wait, in seconds, for an audio URL to pass its expires_at (--audio-expiry-wait). */
  readonly audioExpiryWaitS?: number;
  /** Where the profile's variables (a key's keyEnv) are read: the environment the engine hands the run (none: literal keys only). */
  readonly env?: NodeJS.ProcessEnv;
}

/** A request not sent (or abandoned) because the target stopped answering earlier in the run. */
export class TargetStoppedAnswering extends CheckFailure {
  readonly attempts: Attempt[];
  constructor(attempts: Attempt[]) {
    super('target stopped answering', describeAttempts(attempts));
    this.name = 'TargetStoppedAnswering';
    this.attempts = attempts;
  }

  /** The last attempts as exchanges, for a check's evidence. */
  exchanges(): Exchange[] {
    return this.attempts.map((a) => ({ request: a.request, error: a.error }));
  }
}

export class Target {
  readonly profile: Profile;
  readonly breaker: Breaker;
  /**
   * The conditions switched on for the whole service while this target's checks run (faults given as a `command`,
   * engine/switched.ts): a request that names one is sent as is, and one that names none is not sent at all.
   */
  readonly switchedOn: ReadonlySet<FaultName>;
  /** What the run's plan gives the target's checks (engine/plan.ts): its pace, the list window, the audio URL wait. */
  readonly plan: TargetPlan;
  constructor(profile: Profile, breaker: Breaker = new MemoryBreaker(), switchedOn: Iterable<FaultName> = [], plan: TargetPlan = {}) {
    this.profile = profile;
    this.plan = plan;
    this.breaker = breaker;
    this.switchedOn = new Set(switchedOn);
  }

  key(role: CredentialRole): string | undefined {
    return credentialKey(this.profile, role, this.plan.env ?? {});
  }

  encounter(role: EncounterRole): string | undefined {
    return this.profile.resources?.[role]?.encounter_id;
  }

  document(role: DocumentRole): { encounter_id: string; document_id: string } | undefined {
    return this.profile.resources?.[role];
  }

  /** The form the profile gives a condition in (faults.<name>), if it gives it. */
  fault(name: FaultName): FaultForm | undefined {
    return this.profile.faults?.[name];
  }

  /** A condition among `faults` is given as a credential: its own key stands for the caller, whose role is not needed. */
  callerReplaced(faults: readonly FaultName[] | undefined): boolean {
    return (faults ?? []).some((f) => !this.switchedOn.has(f) && faultFormKind(this.profile, f) === 'credential');
  }

  /**
   * Sends one request; never throws for transport failures (they are part of the evidence). Throws
   * TargetStoppedAnswering when the run's breaker is open, before sending or while waiting.
   */
  async send(target: string, opts: GetOptions = {}): Promise<SentExchange> {
    if (opts.shared && (opts.method ?? 'GET') === 'GET' && !opts.faults?.length) return this.sendShared(target, opts);
    return this.sendFresh(target, opts);
  }

  /** Answers shared by the checks of this worker: request target, credential and headers → the first answer. */
  private readonly shared = new Map<string, Promise<{ ex: SentExchange; transient: boolean }>>();

  private async sendShared(target: string, opts: GetOptions): Promise<SentExchange> {
    const key = JSON.stringify([target, opts.as ?? 'full', opts.headers ?? {}]);
    let entry = this.shared.get(key);
    if (!entry) {
      entry = this.sendFresh(target, opts).then((ex) => ({ ex, transient: ex.throttled !== undefined || ex.error !== undefined || (ex.response?.status ?? 500) >= 500 || (ex.response?.bodyBytes ?? 0) > SHARED_MAX_BODY }));
      this.shared.set(key, entry);
      entry.then((e) => e.transient && this.shared.delete(key), () => this.shared.delete(key));
      return { ...(await entry).ex };
    }
    const { ex, transient } = await entry;
    // Someone else's transient answer is not this check's: it asks for itself.
    return transient ? this.sendFresh(target, opts) : { ...ex };
  }

  private async sendFresh(target: string, opts: GetOptions): Promise<SentExchange> {
    const throttled: { ex: Exchange; waitedMs: number }[] = [];
    for (let attempt = 1; ; attempt++) {
      await workerPace(this.plan.paceMs ?? 0).turn();
      const ex = await this.sendOnce(target, opts);
      const r = ex.response;
      const wait = r ? throttleWaitMs(r.status, r.headers, r.body, attempt) : undefined;
      if (wait === undefined || attempt >= MAX_ATTEMPTS) {
        if (throttled.length) Object.assign(ex, { throttled, stillThrottled: wait !== undefined });
        return ex;
      }
      // The target asked to slow down: this worker waits as asked, and the exchange is sent again.
      throttled.push({ ex, waitedMs: wait });
      workerPace(this.plan.paceMs ?? 0).holdFor(wait);
    }
  }

  private async sendOnce(target: string, opts: GetOptions): Promise<Exchange & { raw?: RawResponse }> {
    const headers: Record<string, string> = { ...this.profile.requestHeaders };
    const as = opts.as ?? 'full';
    // A condition given as another environment sends the request there, with that environment's key for the role.
    const elsewhere = (opts.faults ?? []).find((f) => !this.switchedOn.has(f) && this.fault(f)?.baseUrl !== undefined);
    const baseUrl = elsewhere ? this.fault(elsewhere)!.baseUrl! : this.profile.baseUrl;
    if (typeof as === 'string') {
      // A condition given as a credential: its key stands for the caller (set below), whose own key is not asked for.
      if (as !== 'none' && !this.callerReplaced(opts.faults)) {
        const key = elsewhere ? environmentKey(this.profile, elsewhere, as, this.plan.env ?? {}) : this.key(as);
        if (!key) throw new Error(`credential ${as} is not in the profile (call need() first)`);
        headers.authorization = `Bearer ${key}`;
      }
    } else if ('raw' in as) headers.authorization = `Bearer ${as.raw}`;
    else headers.authorization = as.header;
    for (const f of opts.faults ?? []) {
      const form = this.fault(f);
      if (!form) throw new Error(`fault ${f} is not in the profile (call need() first)`);
      // Switched on for the whole service: the request is sent as is.
      if (this.switchedOn.has(f)) continue;
      if (form.headers) Object.assign(headers, form.headers);
      else if (form.credential) {
        const key = faultKey(this.profile, f, this.plan.env ?? {});
        if (!key) throw new Error(`the key of fault ${f} is not set`);
        headers.authorization = `Bearer ${key}`;
      } else if (form.command) throw new Error(`fault ${f} is switched by a command: its checks run while it is on (engine/switched.ts)`);
      // baseUrl: chosen above; resource: the check addressed the condition's document (CheckApi.faultDocument).
    }
    Object.assign(headers, opts.headers);
    const method = opts.method ?? 'GET';
    const ex: Exchange & { raw?: RawResponse } = { request: { method, target, headers, ...(typeof as === 'string' && as !== 'none' ? { credentialRole: as } : {}) } };
    const before = this.breaker.opened();
    if (before) throw new TargetStoppedAnswering(before);
    const abandon = new AbortController();
    const poll = setInterval(() => {
      if (this.breaker.opened()) abandon.abort();
    }, BREAKER_POLL_MS);
    try {
      const res = await sendRaw(
        { baseUrl, timeoutMs: this.profile.timeouts?.requestMs ?? DEFAULT_TIMEOUT_MS, maxBodyBytes: this.profile.timeouts?.maxBodyBytes ?? DEFAULT_MAX_BODY, signal: abandon.signal, keepAlive: true },
        { method, target, headers },
      );
      ex.raw = res;
      ex.response = { status: res.status, headers: res.headers, body: res.body.toString('utf8'), bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
      this.breaker.report(null);
    } catch (e) {
      const opened = this.breaker.opened();
      if (e instanceof TransportError && e.kind === 'aborted' && opened) throw new TargetStoppedAnswering(opened);
      ex.error = e instanceof TransportError ? { kind: e.kind, message: e.message } : { kind: 'other', message: (e as Error).message };
      const suspect = this.breaker.report(isNoAnswer(ex.error.kind) ? { request: ex.request, error: ex.error, at: new Date().toISOString() } : null);
      if (suspect) await this.confirm(suspect);
    } finally {
      clearInterval(poll);
    }
    return ex;
  }

  /**
   * The target did not answer several requests in a row: ask it one plain question (GET without a key,
   * like the CLI's probe). Any complete answer means it is alive (a front proxy may refuse odd requests
   * by resetting them) and the count starts again; no answer opens the breaker.
   */
  private async confirm(suspect: Attempt[]): Promise<void> {
    const headers = Object.fromEntries(Object.entries(this.profile.requestHeaders ?? {}).filter(([k]) => k.toLowerCase() !== 'authorization'));
    const request = { method: 'GET', target: CONFIRM_TARGET, headers };
    const timeoutMs = Math.min(this.profile.timeouts?.requestMs ?? DEFAULT_TIMEOUT_MS, CONFIRM_TIMEOUT_MS);
    try {
      await sendRaw({ baseUrl: this.profile.baseUrl, timeoutMs, maxBodyBytes: 64 * 1024 }, { target: CONFIRM_TARGET, headers });
      this.breaker.report(null);
    } catch (e) {
      const error = e instanceof TransportError ? { kind: e.kind, message: e.message } : { kind: 'other', message: (e as Error).message };
      if (!isNoAnswer(error.kind)) {
        this.breaker.report(null);
        return;
      }
      this.breaker.open([...suspect, { request, error, at: new Date().toISOString() }]);
    }
  }
}

/** The target bound to one running check: requests are recorded, missing roles end in not_verified. */
export class CheckApi {
  readonly target: Target;
  readonly scope: CheckScope;
  /** The check was declared `fresh`: none of its reads is shared. */
  readonly fresh: boolean;
  constructor(target: Target, scope: CheckScope, opts: { fresh?: boolean } = {}) {
    this.target = target;
    this.scope = scope;
    this.fresh = opts.fresh === true;
  }

  /** The same target and scope, every read sent fresh (a check declared `fresh`). */
  freshReads(): CheckApi {
    return new CheckApi(this.target, this.scope, { fresh: true });
  }

  key(role: CredentialRole): string {
    return this.scope.need(this.target.key(role), `credential role '${role}'`, settingPath('credential', role));
  }

  encounter(role: EncounterRole): string {
    return this.scope.need(this.target.encounter(role), `resource role '${role}'`, settingPath('resource', role));
  }

  document(role: DocumentRole): { encounter_id: string; document_id: string } {
    return this.scope.need(this.target.document(role), `resource role '${role}'`, settingPath('resource', role));
  }

  fault(name: FaultName): FaultForm {
    return this.scope.need(this.target.fault(name), `condition '${name}' (a fault role)`, settingPath('fault', name));
  }

  /** A condition among `faults` is given as a credential: its own key stands for the caller (Target.callerReplaced). */
  callerReplaced(faults: readonly FaultName[] | undefined): boolean {
    return this.target.callerReplaced(faults);
  }

  /**
   * The document a request meeting condition `name` addresses: the condition's own when the profile gives it as a
   * resource (a document whose audio storage is offline), otherwise the role's, to be sent with the condition.
   */
  faultDocument(name: FaultName, role: DocumentRole): { encounter_id: string; document_id: string } {
    const form = this.fault(name);
    return form.resource ?? this.document(role);
  }

  /**
   * Ends the check not_verified when the request cannot carry condition `name` in the form the profile gives it: a
   * credential fixes the caller (only the condition's natural caller `own` may be replaced by it), a resource fixes
   * the document (only a request of the condition's resource carries it).
   */
  carries(name: FaultName, as: As, target: string): void {
    const form = this.fault(name);
    const kind = faultFormKind(this.target.profile, name);
    if (this.target.switchedOn.has(name)) return;
    if (kind === 'credential' && as !== 'full' && as !== FAULT_CALLER[name]) {
      throw new NotVerified(`the condition ${name} is given as a credential (a key whose requests meet it), which joins no other caller (${typeof as === 'string' ? as : 'a raw header'}): give it as headers, baseUrl or command to judge this combination`, settingPath('fault', name));
    }
    if (kind === 'resource') {
      const r = form.resource!;
      if (!target.includes(`/${encodeURIComponent(r.document_id)}`) && !target.includes(`/${r.document_id}`)) {
        throw new NotVerified(`the condition ${name} is given as a resource (document ${r.document_id}), which this request does not address: give it as headers, baseUrl or command to judge this request`, settingPath('fault', name));
      }
    }
    if (kind === 'command') throw new NotVerified(`the condition ${name} is switched by a command: only the checks run while it is on can carry it`, settingPath('fault', name));
  }

  /** Asserts every role the request needs exists (→ not_verified otherwise), then sends and records it. */
  async get(target: string, opts: GetOptions = {}): Promise<Exchange & { raw?: RawResponse }> {
    const as = opts.as ?? 'full';
    if (typeof as === 'string' && as !== 'none' && !this.callerReplaced(opts.faults)) this.key(as);
    for (const f of opts.faults ?? []) this.carries(f, as, target);
    if (this.target.switchedOn.size > 0 && !(opts.faults ?? []).some((f) => this.target.switchedOn.has(f))) {
      throw new NotVerified(`this request would have been sent while ${[...this.target.switchedOn].join(', ')} was switched on for the whole service (its command): a check run in the switched phase sends only requests meeting the condition`);
    }
    let ex: SentExchange;
    try {
      // A plain read is shared with the worker's other checks unless the check or the read says it must be fresh.
      ex = await this.target.send(target, { ...opts, shared: !this.fresh && !opts.fresh && (opts.shared ?? sharable(target, opts)) });
    } catch (e) {
      // The evidence of a check the breaker ended: the attempts that showed the target stopped answering.
      if (e instanceof TargetStoppedAnswering) for (const x of e.exchanges()) this.scope.record(x);
      throw e;
    }
    const throttled = ex.throttled ?? [];
    const stillThrottled = ex.stillThrottled === true;
    delete ex.throttled;
    delete ex.stillThrottled;
    for (const t of throttled) this.scope.record(t.ex);
    this.scope.record(ex);
    if (stillThrottled) {
      // Only throttling was seen: nothing about the service can be judged from it.
      throw new NotVerified(`the target kept throttling (${throttled.length + 1} answers ${ex.response?.status}, ${Math.round(throttled.reduce((n, t) => n + t.waitedMs, 0) / 1000)} s waited as asked): a gateway in front of the service asked the harness to slow down; rerun with --max-rps`);
    }
    if (throttled.length) this.scope.note(`throttled ${throttled.length}× (${throttled.map((t) => `${t.ex.response?.status} wait ${t.waitedMs} ms`).join(', ')}) before the answer judged`);
    return ex;
  }
}
