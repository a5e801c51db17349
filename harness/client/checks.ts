// The client checks: a partner's API client judged from its own traffic against the sandbox and its own
// output (harness/client/traffic.ts). Each is a pure function of the record, names the requirements it
// verifies (catalog rows whose subjects include `client`), and says `not_verified` when the client did
// nothing the check could judge (never a pass on nothing). A check fails only for what the specification
// decides of a caller; the client's legitimate choices (concurrency, keep-alive, the case of `Bearer`,
// compression, retrying a 503 after a pause) pass.
import type { Outcome } from '../record.ts';
import { reasonOf as bodyReason, STATUS_BY_REASON } from '../assertions.ts';
import { isRetryableStatus } from '../../fixtures/contract/webhook-retries.ts';
import { bearerOf, decode, idsIn, issuedAudioUrls, parseTarget, type ClientExchange, type ClientTraffic, type Route } from './traffic.ts';

export interface ClientJudgement {
  outcome: Outcome;
  detail: string;
  /** The exchanges that show it (at most a few). */
  evidence: ClientExchange[];
}

export interface ClientCheck {
  id: string;
  title: string;
  requirements: string[];
  judge(t: ClientTraffic): ClientJudgement;
}

/** Identical requests after a terminal 4xx beyond this many are a retry storm. */
export const MAX_REPEATS_AFTER_4XX = 2;
/** A retry of a 503 sooner than this after the answer is a retry without any pause. */
export const MIN_RETRY_PAUSE_MS = 100;
/** The five query keys of the list route (§4.1). */
export const LIST_KEYS = ['limit', 'offset', 'sort_order', 'start_at', 'end_at'] as const;
const CANONICAL = /^(0|[1-9][0-9]*)$/;
// A timezone-aware ISO 8601 date-time: a date, a time, and a zone designator (Z or an offset). Which finer
// forms a service accepts is open (LIST-DATETIME-FORMAT-DETAILS); the client fails only on a value with no
// zone or no date-time at all.
const TZ_AWARE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)$/;
/** The instant of a TZ_AWARE value: Date.parse wants a `T` and an offset with minutes (`+02` is `+02:00`). */
const instant = (v: string): number => Date.parse(v.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00'));

const api = (t: ClientTraffic) => t.exchanges.filter((e) => e.kind === 'api');
const line = (e: ClientExchange) => `#${e.seq} ${e.method} ${e.target} → ${e.injected ? `${e.status} ${e.injected} (injected)` : e.status}`;
const some = (xs: ClientExchange[]) => xs.slice(0, 5);
const pass = (detail: string, evidence: ClientExchange[] = []): ClientJudgement => ({ outcome: 'pass', detail, evidence });
const fail = (detail: string, evidence: ClientExchange[]): ClientJudgement => ({ outcome: 'fail', detail, evidence: some(evidence) });
const notVerified = (detail: string): ClientJudgement => ({ outcome: 'not_verified', detail, evidence: [] });
const sameRequest = (a: ClientExchange, b: ClientExchange) => a.phase === b.phase && a.method === b.method && a.target === b.target && a.headers.authorization === b.headers.authorization;
/** The values of `keys` the client sent on the list route, each with its exchange. */
const listValues = (t: ClientTraffic, keys: readonly string[]) => api(t).flatMap((e) => {
  const p = parseTarget(e.target);
  return p.route?.name === 'list' ? p.query.filter((q) => keys.includes(q.key)).map((q) => ({ e, q })) : [];
});
/** The reason code the client was answered with: the injected one, or its body's. */
const reasonOf = (e: ClientExchange): string | undefined => e.injected || bodyReason(e.body);

/** Where a secret shows up in a request other than the Authorization header (query, cookie, any other header). */
function keyOutsideAuthorization(e: ClientExchange, keys: Map<string, string>): string | undefined {
  const decoded = decode(e.target) ?? e.target;
  for (const key of keys.keys()) {
    if (e.target.includes(key) || decoded.includes(key)) return 'the request target';
    for (const [name, value] of Object.entries(e.headers)) if (name !== 'authorization' && value.includes(key)) return `the ${name} header`;
  }
  return undefined;
}

export const CLIENT_CHECKS: readonly ClientCheck[] = [
  {
    id: 'client-key-only-in-authorization-header',
    title: 'every API request carries a sandbox key as `Authorization: Bearer <key>`, and no key travels anywhere else',
    requirements: ['AUTH-BEARER-REQUIRED', 'AUTH-KEY-ONLY-IN-AUTHORIZATION-HEADER', 'AUTH-SERVER-SIDE-KEYS'],
    judge(t) {
      const reqs = t.exchanges;
      if (api(t).length === 0) return notVerified('the client made no request to the API');
      const elsewhere = reqs.map((e) => ({ e, where: keyOutsideAuthorization(e, t.keys) })).filter((x) => x.where);
      if (elsewhere.length) return fail(`a key was sent in ${elsewhere[0].where} (${elsewhere.length} request${elsewhere.length === 1 ? '' : 's'}); §5.1 allows it only in the Authorization header`, elsewhere.map((x) => x.e));
      // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are Bearer.
      const noBearer = api(t).filter((e) => {
        const b = bearerOf(e.headers);
        return !b || b.scheme.toLowerCase() !== 'bearer' || !t.keys.has(b.token);
      });
      if (noBearer.length) return fail(`${noBearer.length} API request${noBearer.length === 1 ? '' : 's'} without \`Authorization: Bearer <key>\` of a sandbox key (first: ${line(noBearer[0])})`, noBearer);
      return pass(`${api(t).length} API requests, each with a bearer key in the Authorization header and nowhere else`);
    },
  },
  {
    id: 'client-key-not-printed',
    title: "no API key appears in the client's own output (stdout, stderr)",
    requirements: ['AUTH-SERVER-SIDE-KEYS'],
    judge(t) {
      for (const [key, role] of t.keys) {
        for (const [stream, text] of [['stdout', t.stdout], ['stderr', t.stderr]] as const) {
          if (text.includes(key)) return fail(`the ${role} key appears in the command's ${stream} (keys are used from server-side code and never shown)`, []);
        }
      }
      return pass(`no key in ${t.stdout.length + t.stderr.length} characters of output`);
    },
  },
  {
    id: 'client-requests-are-get-without-body',
    title: 'every API request is a GET without a request body',
    requirements: ['CONTRACT-GET-ONLY', 'CONTRACT-NO-REQUEST-BODY'],
    judge(t) {
      if (api(t).length === 0) return notVerified('the client made no request to the API');
      const bad = api(t).filter((e) => e.method !== 'GET' || e.bodyBytes > 0);
      if (bad.length) return fail(`${bad.length} API request${bad.length === 1 ? ' is' : 's are'} not a GET without a body (first: ${bad[0].method}, ${bad[0].bodyBytes} body bytes)`, bad);
      return pass(`${api(t).length} GET requests without a body`);
    },
  },
  {
    id: 'client-queries-only-accepted-keys',
    title: 'the list route gets only its five query keys and the other routes get none',
    requirements: ['LIST-UNSUPPORTED-KEYS', 'ENC-NO-QUERY', 'DOC-NO-QUERY', 'TRANSCRIPT-NO-QUERY', 'AUDIO-NO-QUERY'],
    judge(t) {
      const routed = api(t).map((e) => ({ e, p: parseTarget(e.target) })).filter((x) => x.p.route);
      if (routed.length === 0) return notVerified('the client made no request to a route of the API');
      const bad = routed.filter(({ p }) => p.query.some((q) => p.route!.name !== 'list' || !(LIST_KEYS as readonly string[]).includes(q.key)));
      if (bad.length) {
        const { e, p } = bad[0];
        const keys = p.query.map((q) => q.key).filter((k) => p.route!.name !== 'list' || !(LIST_KEYS as readonly string[]).includes(k));
        return fail(`${bad.length} request${bad.length === 1 ? '' : 's'} with a query key the route does not accept (first: ${p.route!.name} route, key${keys.length === 1 ? '' : 's'} ${keys.map((k) => `\`${k}\``).join(', ')}; §4: 400 unsupported_filter)`, [e, ...bad.slice(1).map((x) => x.e)]);
      }
      const used = [...new Set(routed.map((x) => x.p.route!.name))].sort();
      return pass(`query keys accepted on every request (routes used: ${used.join(', ')})`);
    },
  },
  {
    id: 'client-list-paging-canonical',
    title: '`limit` and `offset` are canonical decimal text within 1..100 and 0..10000',
    requirements: ['LIST-LIMIT-RANGE', 'LIST-OFFSET-RANGE', 'LIST-CANONICAL-INTEGERS'],
    judge(t) {
      const sent = listValues(t, ['limit', 'offset']);
      if (sent.length === 0) return notVerified('the client sent no `limit` or `offset` (nothing to judge)');
      const bad = sent.filter(({ q }) => {
        if (q.value === null || !CANONICAL.test(q.value)) return true;
        const n = Number(q.value);
        return q.key === 'limit' ? n < 1 || n > 100 : n > 10000;
      });
      if (bad.length) return fail(`${bad[0].q.key}=${JSON.stringify(bad[0].q.value)} is not canonical decimal text within bounds (limit 1..100, offset 0..10000; §4.1, §8)${bad.length > 1 ? `; ${bad.length} values in all` : ''}`, bad.map((x) => x.e));
      return pass(`${sent.length} limit/offset values, all canonical and within bounds`);
    },
  },
  {
    id: 'client-sort-order-valid',
    title: '`sort_order` is exactly `asc` or `desc`',
    requirements: ['LIST-SORT-ORDER-ENUM'],
    judge(t) {
      const sent = listValues(t, ['sort_order']);
      if (sent.length === 0) return notVerified('the client sent no `sort_order` (nothing to judge)');
      const bad = sent.filter(({ q }) => q.value !== 'asc' && q.value !== 'desc');
      if (bad.length) return fail(`sort_order=${JSON.stringify(bad[0].q.value)} is not \`asc\` or \`desc\` (§4.1)`, bad.map((x) => x.e));
      return pass(`${sent.length} sort_order values, all asc or desc`);
    },
  },
  {
    id: 'client-list-dates-valid',
    title: '`start_at` and `end_at` are timezone-aware ISO date-times, start before end',
    requirements: ['LIST-DATETIME-TZ-AWARE', 'LIST-START-BEFORE-END'],
    judge(t) {
      const lists = api(t).map((e) => ({ e, p: parseTarget(e.target) })).filter((x) => x.p.route?.name === 'list' && x.p.query.some((q) => q.key === 'start_at' || q.key === 'end_at'));
      if (lists.length === 0) return notVerified('the client sent no `start_at` or `end_at` (nothing to judge)');
      for (const { e, p } of lists) {
        for (const q of p.query.filter((x) => x.key === 'start_at' || x.key === 'end_at')) {
          if (q.value === null || !TZ_AWARE.test(q.value) || Number.isNaN(instant(q.value))) {
            return fail(`${q.key}=${JSON.stringify(q.value)} is not a timezone-aware ISO date-time (§4.1)`, [e]);
          }
        }
        const start = p.query.find((x) => x.key === 'start_at')?.value;
        const end = p.query.find((x) => x.key === 'end_at')?.value;
        if (start && end && instant(start) >= instant(end)) {
          return fail(`start_at ${start} is not earlier than end_at ${end} (§4.1)`, [e]);
        }
      }
      return pass(`${lists.length} list requests with date bounds, all timezone-aware, start before end`);
    },
  },
  {
    id: 'client-ids-opaque-and-encoded',
    title: 'every id in a request path is one the sandbox handed out, percent-encoded as a path segment',
    requirements: ['CONTRACT-NO-ID-INFERENCE'],
    judge(t) {
      const known = new Set(t.profileIds);
      let judged = 0;
      for (const e of t.exchanges) {
        if (e.kind === 'api') {
          const p = parseTarget(e.target);
          if (!p.route && p.path !== '/external/v1/encounters') {
            return fail(`${e.method} ${p.path} names no route of the API: an id was not percent-encoded as a path segment, or the path was built`, [e]);
          }
          if (p.route && p.route.ids.length) {
            judged++;
            const unknown = p.route.ids.find((id) => !known.has(id));
            if (unknown !== undefined) return fail(`the request names the id ${JSON.stringify(unknown)}, which the sandbox never handed out: ids are opaque (§2), never built, guessed or altered`, [e]);
          }
        }
        for (const id of idsIn(e.body)) known.add(id);
      }
      if (judged === 0) return notVerified('the client sent no request with an id in its path');
      return pass(`${judged} requests named ids, each one handed out by the sandbox and encoded as a path segment`);
    },
  },
  {
    id: 'client-no-repeat-after-terminal-answer',
    title: `an identical request is not repeated more than ${MAX_REPEATS_AFTER_4XX} times after a terminal 4xx answer`,
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    judge(t) {
      const all = api(t);
      const terminal = all.filter((e) => e.status >= 400 && e.status < 500 && !isRetryableStatus(e.status));
      if (terminal.length === 0) return notVerified('the client got no 4xx answer (a scenario file makes the sandbox answer with the reason codes it declares)');
      for (const e of terminal) {
        const repeats = all.filter((x) => x.seq > e.seq && sameRequest(x, e));
        if (repeats.length > MAX_REPEATS_AFTER_4XX) return fail(`after ${e.status} ${reasonOf(e) ?? ''} the client sent the identical request ${repeats.length} more times: it did not branch on the reason_code (§5.7)`, [e, ...repeats]);
      }
      return pass(`${terminal.length} terminal 4xx answers, none hammered`);
    },
  },
  {
    id: 'client-pauses-before-retrying-503',
    title: `a 503 is retried only after a pause (at least ${MIN_RETRY_PAUSE_MS} ms)`,
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    judge(t) {
      const all = api(t);
      const unavailable = all.filter((e) => e.status === 503);
      if (unavailable.length === 0) return notVerified('the client got no 503 answer (a scenario file can declare digest_key_unavailable or audio_storage_unavailable)');
      for (const e of unavailable) {
        const next = all.find((x) => x.seq > e.seq && sameRequest(x, e));
        if (next && next.at - (e.at + e.durationMs) < MIN_RETRY_PAUSE_MS) {
          return { outcome: 'warning', detail: `after 503 ${reasonOf(e) ?? ''} the client retried after ${Math.max(0, next.at - (e.at + e.durationMs))} ms: a temporary unavailability should be retried after a pause`, evidence: [e, next] };
        }
      }
      return pass(`${unavailable.length} 503 answers, each retried (if at all) after a pause`);
    },
  },
  {
    id: 'client-audio-url-not-used-after-expiry',
    title: 'an audio URL is never fetched after its `expires_at`',
    requirements: ['AUDIO-URL-NOT-AFTER-EXPIRY'],
    judge(t) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL');
      const late = t.exchanges.filter((e) => e.kind === 'storage').map((e) => ({ e, u: issued.find((u) => u.target === e.target && u.issuedBy.seq < e.seq) })).filter((x) => x.u && x.e.at > x.u.expiresAtMs);
      if (late.length) return fail(`the client fetched an audio URL ${late[0].e.at - late[0].u!.expiresAtMs} ms after its expires_at (§2.6: never used after expires_at)`, [late[0].u!.issuedBy, late[0].e]);
      const fetched = t.exchanges.filter((e) => e.kind === 'storage').length;
      return pass(`${issued.length} audio URLs handed out, ${fetched} fetches, none after expires_at`);
    },
  },
  {
    id: 'client-audio-url-not-sent-to-api',
    title: 'an audio URL is never sent back to the API (it is not an identifier)',
    requirements: ['AUDIO-URL-NOT-DURABLE'],
    judge(t) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL');
      const bad = api(t).filter((e) => {
        const text = `${e.target} ${Object.values(e.headers).join(' ')}`;
        const decoded = decode(text) ?? text;
        return issued.some((u) => decoded.includes(u.target) || decoded.includes(u.sig));
      });
      if (bad.length) return fail('the client sent an audio URL back to the API: it is a temporary access artifact, never a durable identifier (§2.6)', bad);
      return pass(`${issued.length} audio URLs handed out, none sent back to the API`);
    },
  },
  {
    id: 'client-audio-url-not-printed',
    title: "no audio URL appears in the client's own output",
    requirements: ['AUDIO-URL-NOT-LOGGED'],
    judge(t) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL');
      const output = `${t.stdout}\n${t.stderr}`;
      const shown = issued.find((u) => output.includes(u.target) || output.includes(u.sig));
      if (shown) return fail('an audio URL appears in the command\'s output: it must not be put in client-visible logs (§2.6)', [shown.issuedBy]);
      return pass(`${issued.length} audio URLs handed out, none in the output`);
    },
  },
  {
    id: 'client-key-holds-route-scopes',
    title: 'the key the client uses holds the scopes of every route it calls (no 403 missing_scope)',
    requirements: ['AUTH-RECEIVER-SCOPES-UNION'],
    judge(t) {
      if (api(t).length === 0) return notVerified('the client made no request to the API');
      const missing = api(t).filter((e) => !e.injected && e.status === 403 && reasonOf(e) === 'missing_scope');
      if (missing.length) return fail(`${missing.length} request${missing.length === 1 ? '' : 's'} answered 403 missing_scope (first: ${line(missing[0])}): the client's key lacks a scope of a route it calls (§5.3, §5.8)`, missing);
      return pass(`no request was refused for a missing scope (${api(t).length} API requests)`);
    },
  },
  {
    id: 'client-follows-declared-reason-handling',
    title: 'the client does what its scenario file declares for each reason code the sandbox answered with',
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    judge(t) {
      if (!t.scenario) return notVerified('no scenario file: pass --scenario FILE naming what the client does per reason code (stop, retry-later, skip-resource)');
      const injected = t.exchanges.filter((e) => e.injected);
      if (injected.length === 0) return notVerified(`no declared reason code could be injected (${Object.entries(t.notInjected).map(([r, why]) => `${r}: ${why}`).join('; ') || 'the client made no eligible request'})`);
      const all = api(t);
      for (const e of injected) {
        const reason = e.injected!;
        const action = t.scenario[reason];
        const after = all.filter((x) => x.seq > e.seq && x.phase === e.phase);
        const same = after.filter((x) => sameRequest(x, e));
        if (action === 'stop') {
          const more = after.filter((x) => x.headers.authorization === e.headers.authorization);
          if (more.length) return fail(`declared \`stop\` for ${reason}, but the client sent ${more.length} more request${more.length === 1 ? '' : 's'} with that key`, [e, ...more]);
        } else if (action === 'retry-later') {
          if (same.length === 0) return fail(`declared \`retry-later\` for ${reason}, but the client never sent the request again`, [e]);
          const pause = same[0].at - (e.at + e.durationMs);
          if (pause < MIN_RETRY_PAUSE_MS) return fail(`declared \`retry-later\` for ${reason}, but the client retried after ${Math.max(0, pause)} ms`, [e, same[0]]);
        } else if (action === 'skip-resource') {
          if (same.length) return fail(`declared \`skip-resource\` for ${reason}, but the client sent the same request again`, [e, ...same]);
        }
      }
      const skipped = Object.keys(t.notInjected);
      return pass(`${injected.length} injected answers (${[...new Set(injected.map((e) => `${e.injected}: ${t.scenario![e.injected!]}`))].join(', ')}) handled as declared${skipped.length ? `; not injected: ${skipped.map((r) => `${r} (${t.notInjected[r]})`).join(', ')}` : ''}`, injected);
    },
  },
];

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
