// A target as the suites see it: a base URL reached through the raw client, plus the roles the
// profile offers (credentials, resources, fault switches). Every request becomes an Exchange that the
// running check records as evidence; transport failures become exchanges with an error, not throws.
import { sendRaw, TransportError, type RawResponse } from './http.ts';
import { credentialKey, type CredentialRole, type DocumentRole, type EncounterRole, type FaultName, type Profile } from './profile.ts';
import type { CheckScope, Exchange } from './checks.ts';

export type As = CredentialRole | 'none' | { raw: string } | { header: string };

export interface GetOptions {
  /** Who calls: a profile credential role, no Authorization header, a raw bearer token, or a raw header value. */
  as?: As;
  headers?: Record<string, string>;
  faults?: FaultName[];
  method?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

export class Target {
  readonly profile: Profile;
  constructor(profile: Profile) {
    this.profile = profile;
  }

  key(role: CredentialRole): string | undefined {
    return credentialKey(this.profile, role);
  }

  encounter(role: EncounterRole): string | undefined {
    return this.profile.resources?.[role]?.encounter_id;
  }

  document(role: DocumentRole): { encounter_id: string; document_id: string } | undefined {
    return this.profile.resources?.[role];
  }

  fault(name: FaultName): Record<string, string> | undefined {
    return this.profile.faults?.[name]?.headers;
  }

  /** Sends one request; never throws for transport failures (they are part of the evidence). */
  async send(target: string, opts: GetOptions = {}): Promise<Exchange & { raw?: RawResponse }> {
    const headers: Record<string, string> = { ...this.profile.requestHeaders };
    const as = opts.as ?? 'full';
    if (typeof as === 'string') {
      if (as !== 'none') {
        const key = this.key(as);
        if (!key) throw new Error(`credential ${as} is not in the profile (call need() first)`);
        headers.authorization = `Bearer ${key}`;
      }
    } else if ('raw' in as) headers.authorization = `Bearer ${as.raw}`;
    else headers.authorization = as.header;
    for (const f of opts.faults ?? []) {
      const h = this.fault(f);
      if (!h) throw new Error(`fault ${f} is not in the profile (call need() first)`);
      Object.assign(headers, h);
    }
    Object.assign(headers, opts.headers);
    const method = opts.method ?? 'GET';
    const ex: Exchange & { raw?: RawResponse } = { request: { method, target, headers } };
    try {
      const res = await sendRaw(
        { baseUrl: this.profile.baseUrl, timeoutMs: this.profile.timeouts?.requestMs ?? DEFAULT_TIMEOUT_MS, maxBodyBytes: this.profile.timeouts?.maxBodyBytes ?? DEFAULT_MAX_BODY },
        { method, target, headers },
      );
      ex.raw = res;
      ex.response = { status: res.status, headers: res.headers, body: res.body.toString('utf8'), bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
    } catch (e) {
      ex.error = e instanceof TransportError ? { kind: e.kind, message: e.message } : { kind: 'other', message: (e as Error).message };
    }
    return ex;
  }
}

/** The target bound to one running check: requests are recorded, missing roles end in not_verified. */
export class CheckApi {
  readonly target: Target;
  readonly scope: CheckScope;
  constructor(target: Target, scope: CheckScope) {
    this.target = target;
    this.scope = scope;
  }

  key(role: CredentialRole): string {
    return this.scope.need(this.target.key(role), `credential role '${role}'`);
  }

  encounter(role: EncounterRole): string {
    return this.scope.need(this.target.encounter(role), `resource role '${role}'`);
  }

  document(role: DocumentRole): { encounter_id: string; document_id: string } {
    return this.scope.need(this.target.document(role), `resource role '${role}'`);
  }

  fault(name: FaultName): Record<string, string> {
    return this.scope.need(this.target.fault(name), `fault switch '${name}'`);
  }

  /** Asserts every role the request needs exists (→ not_verified otherwise), then sends and records it. */
  async get(target: string, opts: GetOptions = {}): Promise<Exchange & { raw?: RawResponse }> {
    const as = opts.as ?? 'full';
    if (typeof as === 'string' && as !== 'none') this.key(as);
    for (const f of opts.faults ?? []) this.fault(f);
    const ex = await this.target.send(target, opts);
    this.scope.record(ex);
    return ex;
  }
}
