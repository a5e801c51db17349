// What a partner's API client did, as the sandbox's recording proxy saw it (observe/client-proxy.ts): each
// exchange with its raw request target, headers, time, the key's role, the answer, and whether the answer was
// injected by the partner's scenario; plus the command's own output. The client checks
// (checks/client/checks.ts) are pure functions of this record. Nothing here talks to the network.

import { STATUS_BY_REASON } from '../judge/assertions.ts';
/** One request of the client and the answer it got. Headers keep their received values (redacted on the way out). */
export interface ClientExchange {
  seq: number;
  /** Which run of the command (1-based): run 1 is answered normally; the scenario's reasons are injected in the runs after it. */
  phase: number;
  /** Wall-clock ms (Date.now()) when the request arrived. */
  at: number;
  method: string;
  /** The request target exactly as received (path and query, never normalised). */
  target: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  bodyBytes: number;
  /** `api`: under /external/v1; `storage`: an audio URL; `other`: anything else (the served contract...). */
  kind: 'api' | 'storage' | 'other';
  /** The credential role of the key in the Authorization header, when it is one of the sandbox's keys. */
  role: string | null;
  status: number;
  /** The answer's body as text (API answers only; storage bodies are not kept). */
  body: string;
  /** The reason code the scenario injected instead of forwarding, if any. */
  injected?: string;
  /**
   * The injection is a key's state carried on, not a new one: after a stop reason (a revoked key, say) every later
   * request with that key in the run gets the same answer, as a real key in that state would.
   */
  carried?: true;
  durationMs: number;
}

/** How a partner says its client handles a reason code (the scenario file of `conformance client --scenario`). */
export type ReasonAction = 'stop' | 'retry-later' | 'skip-resource';
export const REASON_ACTIONS: readonly ReasonAction[] = ['stop', 'retry-later', 'skip-resource'];

/** A part of the API a client may use: a route, or a feature of the list's query (checks/client/scenario.ts). */
export type ScopePart = 'list' | 'paging' | 'sort_order' | 'date_window' | 'encounter' | 'document' | 'transcript' | 'audio';

/** The partner's scenario file (fixtures/client/scenario.schema.json), read by checks/client/scenario.ts. */
export interface Scenario {
  /** The declared parts, or null: the scope is then inferred from the traffic. */
  uses: ScopePart[] | null;
  /** reason_code → declared action (empty without `reasons`). */
  reasons: Record<string, ReasonAction>;
}

/** Why a declared reason was not judged; `blocks` when it was in the client's scope, so the handling is not verified. */
export interface ReasonNote {
  why: string;
  blocks: boolean;
}

export interface ClientTraffic {
  exchanges: ClientExchange[];
  stdout: string;
  stderr: string;
  /** Every sandbox key value → its credential role. */
  keys: Map<string, string>;
  /** Ids the sandbox handed out before the client started (the profile's resources). */
  profileIds: Set<string>;
  /** The partner's scenario (its scope and its handling per reason code), or null without a scenario file. */
  scenario: Scenario | null;
  /** Declared reasons that were never injected, each with why. */
  notInjected: Record<string, ReasonNote>;
}

export type Route = 'list' | 'encounter' | 'document' | 'transcript' | 'audio';

export interface ParsedTarget {
  path: string;
  rawQuery: string | null;
  /** The API route the path names, with its ids decoded; null when it names none. */
  route: { name: Route; ids: string[] } | null;
  /** Query pairs, key and value percent-decoded (`+` is a literal plus, as the API reads it). */
  query: { key: string; value: string | null }[];
}

/** Percent-decodes, or null when the text is not valid percent-encoding. */
export const decode = (s: string): string | null => {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
};

/** Splits a raw request target into its route (ids decoded per segment, after splitting on `/`) and query. */
export function parseTarget(target: string): ParsedTarget {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const rawQuery = q === -1 ? null : target.slice(q + 1);
  const query = (rawQuery ?? '').split('&').filter((p) => p !== '').map((p) => {
    const eq = p.indexOf('=');
    const key = decode(eq === -1 ? p : p.slice(0, eq)) ?? p;
    return { key, value: eq === -1 ? null : decode(p.slice(eq + 1)) ?? p.slice(eq + 1) };
  });
  const segs = path.split('/');
  let route: ParsedTarget['route'] = null;
  if (segs[0] === '' && segs[1] === 'external' && segs[2] === 'v1' && segs[3] === 'encounters') {
    const rest = segs.slice(4).map((s) => decode(s));
    const ok = rest.every((s) => s !== null && s !== '');
    if (rest.length === 0) route = { name: 'list', ids: [] };
    else if (ok && rest.length === 1) route = { name: 'encounter', ids: [rest[0]!] };
    else if (ok && rest.length === 3 && segs[5] === 'documents') route = { name: 'document', ids: [rest[0]!, rest[2]!] };
    else if (ok && rest.length === 4 && segs[5] === 'documents' && (segs[7] === 'transcript' || segs[7] === 'audio')) route = { name: segs[7] as Route, ids: [rest[0]!, rest[2]!] };
  }
  return { path, rawQuery, route, query };
}

/** Every value of an `*_id` field anywhere in a JSON answer: the ids the sandbox handed out in it. */
export function idsIn(body: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (/_id$/.test(k) && typeof x === 'string') out.push(x);
        else walk(x);
      }
    }
  };
  walk(data);
  return out;
}

/** An audio URL the sandbox handed out: where, until when, and the exchange that issued it. */
export interface IssuedAudioUrl {
  url: string;
  /** Path and query of the URL: what a fetch of it sends as its request target. */
  target: string;
  /** Its signature (the `sig` query value), or the target when it has none: what identifies it in text. */
  sig: string;
  expiresAtMs: number;
  issuedBy: ClientExchange;
}

export function issuedAudioUrls(exchanges: readonly ClientExchange[]): IssuedAudioUrl[] {
  const out: IssuedAudioUrl[] = [];
  for (const ex of exchanges) {
    if (ex.kind !== 'api' || ex.status !== 200 || ex.injected) continue;
    let data: { audio_url?: unknown; expires_at?: unknown };
    try {
      data = JSON.parse(ex.body) as typeof data;
    } catch {
      continue;
    }
    if (typeof data?.audio_url !== 'string' || typeof data.expires_at !== 'string') continue;
    let target: string;
    try {
      const u = new URL(data.audio_url);
      target = `${u.pathname}${u.search}`;
    } catch {
      continue;
    }
    out.push({ url: data.audio_url, target, sig: new URL(data.audio_url).searchParams.get('sig') ?? target, expiresAtMs: Date.parse(data.expires_at), issuedBy: ex });
  }
  return out;
}

/** The credential (scheme and token) of an Authorization header, or null. */
export function bearerOf(headers: Record<string, string>): { scheme: string; token: string } | null {
  const h = headers.authorization;
  if (h === undefined) return null;
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(h);
  return m ? { scheme: m[1], token: m[2] } : null;
}

/** Reason codes the sandbox may inject: the state of a key or resource the client cannot know in advance. */
export const INJECTABLE_REASONS: Readonly<Record<string, readonly Route[]>> = (() => {
  const all: Route[] = ['list', 'encounter', 'document', 'transcript', 'audio'];
  const notList: Route[] = ['encounter', 'document', 'transcript', 'audio'];
  const docs: Route[] = ['document', 'transcript', 'audio'];
  return {
    api_keys_disabled: all, test_prefix_not_allowed: all, malformed_token: all, invalid_key: all, disabled_key: all, revoked_key: all, expired_key: all,
    org_scope_only_required: all, route_not_allowed: all, organization_not_allowlisted: all, missing_scope: all,
    cross_organization_denied: notList, demo_training_denied: notList, encounter_not_found: notList,
    document_not_found: docs, unsupported_document_type: docs, transcript_not_found: ['transcript'],
    audio_not_found: ['audio'], audio_not_available_for_document: ['audio'], audio_storage_unavailable: ['audio'],
    digest_key_unavailable: all,
  };
})();

/** Why a declared reason can never be injected: the client's own request decides it. */
export function notInjectable(reason: string): string | undefined {
  if (INJECTABLE_REASONS[reason]) return undefined;
  if (STATUS_BY_REASON[reason] === undefined) return 'not a reason code of §7.1';
  return "the client's own request decides it (a malformed request is the client's fault, never injected)";
}
