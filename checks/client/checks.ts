// The client checks: a partner's API client judged from its own traffic against the sandbox and its own
// output (observe/client-traffic.ts). Each is declared like every check (engine/registry.ts), its `run` a pure
// function of the record judged through the one evaluation (engine/evaluate.ts, by engine/client-judge.ts): it
// throws CheckFailure to fail, NotVerified (what would unlock it as `lacks`) when the client did nothing the check
// could judge (never a pass on nothing), warns on its scope for a should not met, cites the exchanges that show
// it, and returns for a pass. It names the requirements it verifies (catalog rows whose subjects include
// `client`). A check fails only for what the specification decides of a caller; the client's legitimate choices
// (concurrency, keep-alive, the case of `Bearer`, compression, retrying a 503 after a pause) pass.
import { CheckFailure, NotVerified, type CheckScope, type Exchange } from '../../record/record.ts';
import { defineCheck, type Declaration } from '../../engine/registry.ts';
import { reasonOf as bodyReason } from '../../judge/assertions.ts';
import { isRetryableStatus } from '../../fixtures/contract/webhook-retries.ts';
import { PART_LABEL } from './scenario.ts';
import { LIST_KEYS } from '../../observe/routes.ts';
import { bearerOf, decode, idsIn, issuedAudioUrls, parseTarget, type ClientExchange, type ClientTraffic, type Route } from '../../observe/client-traffic.ts';

/** A check of a partner's client: declared in the one registry (subject `client`), run over the client's traffic. */
export interface ClientCheck extends Declaration {
  /**
   * Judges the record: returns for a pass (its detail a `note`), throws CheckFailure to fail and NotVerified when
   * there is nothing to judge, its `lacks` what the client or its scenario would have to do for the check to judge
   * (the report's "what would unlock"); `warn`s for a should not met; `record`s the exchanges that show it.
   */
  run(traffic: ClientTraffic, scope: CheckScope): void;
}

/** An exchange of the client's record as report evidence (headers and bodies are redacted by the writers). */
export function clientEvidence(e: ClientExchange): Exchange {
  return {
    request: { method: e.method, target: e.target, headers: e.headers, ...(e.role ? { credentialRole: e.role } : {}) },
    response: { status: e.status, headers: e.injected ? { 'x-conformance-injected': e.injected } : {}, body: e.kind === 'api' ? e.body.slice(0, 4000) : '', bodyBytes: Buffer.byteLength(e.body), durationMs: e.durationMs },
  };
}

/** Identical requests after a terminal 4xx beyond this many are a retry storm. */
export const MAX_REPEATS_AFTER_4XX = 2;
/** The most API requests the client had in flight at once (its requests' spans overlapping), in its normal run. */
export function concurrencyOf(exchanges: readonly ClientExchange[]): number {
  const spans = exchanges.filter((e) => e.phase === 1).flatMap((e) => [[e.at, 1], [e.at + Math.max(1, e.durationMs), -1]] as [number, number][]);
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 1;
  for (const [, d] of spans) most = Math.max(most, (now += d));
  return most;
}

/** After a stop answer, requests arriving within this much may have been on their way (a concurrent client's). */
export const STOP_GRACE_MS = 250;
/** A retry of a 503 sooner than this after the answer is a retry without any pause. */
export const MIN_RETRY_PAUSE_MS = 100;
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
/** Cites the exchanges that show a judgement as its evidence. */
const cite = (scope: CheckScope, evidence: readonly ClientExchange[]): void => {
  for (const e of evidence) scope.record(clientEvidence(e));
};
/** A pass, its detail a note, with the exchanges that show it (if any). */
const pass = (scope: CheckScope, detail: string, evidence: readonly ClientExchange[] = []): void => {
  cite(scope, evidence);
  scope.note(detail);
};
/** A should not met, with the exchanges that show it. */
const warn = (scope: CheckScope, detail: string, evidence: readonly ClientExchange[]): void => {
  cite(scope, evidence);
  scope.warn(detail);
};
/** A failure, the detail its whole message, with at most a few of the exchanges that show it. */
const fail = (scope: CheckScope, detail: string, evidence: ClientExchange[]): never => {
  cite(scope, some(evidence));
  throw new CheckFailure(detail);
};
/** Nothing to judge: not verified, with what would unlock it. */
const notVerified = (detail: string, unlock: string): never => {
  throw new NotVerified(detail, unlock);
};
const ROUTES: readonly Route[] = ['list', 'encounter', 'document', 'transcript', 'audio'];
/** The pairs of a raw query, key and value as sent (not decoded). */
const rawPairs = (rawQuery: string | null) => (rawQuery ?? '').split('&').filter((x) => x !== '').map((x) => {
  const eq = x.indexOf('=');
  return { key: decode(eq === -1 ? x : x.slice(0, eq)) ?? x, raw: eq === -1 ? null : x.slice(eq + 1) };
});
const ENCODE_HOW = "each id is one path segment, percent-encoded whole ('/', '?', '#', '%', space and non-ASCII included: encodeURIComponent(id) in JavaScript, quote(id, safe='') in Python, URLEncoder.encode(id, UTF_8).replace(\"+\", \"%20\") in Java, url.PathEscape(id) in Go, Uri.EscapeDataString(id) in C#)";

const FORM_HOW = "encoded as a form ('+' for a space, as Java's URLEncoder or Python's quote_plus do): in a path a space is %20 and '+' is a plus";

/** Upper-cases the hex digits of every percent escape, so two encodings compare by meaning. */
const normalEscapes = (s: string) => s.replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase());
/** Ways a client encodes an id other than as one percent-encoded path segment, each with how to say it. */
const MISENCODINGS: readonly { how: string; encode: (id: string) => string }[] = [
  { how: "sent without percent-encoding (its '%' must be sent as %25)", encode: (id) => id },
  { how: FORM_HOW, encode: (id) => encodeURIComponent(id).replaceAll('%20', '+') },
  { how: 'percent-encoded twice', encode: (id) => encodeURIComponent(encodeURIComponent(id)) },
  { how: "percent-encoded but for its '%' (sent raw, so what follows it reads as an escape)", encode: (id) => encodeURIComponent(id).replaceAll('%25', '%') },
];

/** The handed-out id a path segment was most likely meant to name, and how it was encoded instead, or undefined. */
/**
 * Form encoding judged by meaning, whatever the encoder leaves bare (Java's URLEncoder escapes !'()~, JavaScript's
 * does not): a segment holding '+' that reads as a handed-out id once '+' is taken for a space.
 */
function formMismatch(raw: string, known: ReadonlySet<string>): string | undefined {
  if (!raw.includes('+')) return undefined;
  const asForm = decode(raw.replaceAll('+', '%20'));
  return asForm !== null && known.has(asForm) ? `it is the handed-out id ${JSON.stringify(asForm)} ${FORM_HOW}` : undefined;
}

function encodingMismatch(raw: string, known: ReadonlySet<string>): string | undefined {
  const form = formMismatch(raw, known);
  if (form) return form;
  const sent = normalEscapes(raw);
  for (const m of MISENCODINGS) {
    for (const id of known) if (normalEscapes(m.encode(id)) === sent) return `it is the handed-out id ${JSON.stringify(id)} ${m.how}`;
  }
  return undefined;
}

/** What reaches the server when a client puts `id` after `prefix` unencoded: a URL parser encodes what it must and cuts at '#'. */
function concatenated(prefix: string, id: string): string | null {
  try {
    const u = new URL(`http://client.invalid${prefix}${id}`);
    return `${u.pathname}${u.search}`;
  } catch {
    return null;
  }
}

/**
 * A handed-out id the request target holds with its reserved characters unencoded, or undefined: put in the path as
 * is (a URL parser encodes what it must and cuts at '#'), or encoded with '/' kept (Python's quote() default).
 */
function idUnencodedIn(target: string, known: ReadonlySet<string>): string | undefined {
  const prefix = '/external/v1/encounters/';
  if (!target.startsWith(prefix)) return undefined;
  const sent = normalEscapes(target);
  // Longest first: an id that is the start of another is not taken for it.
  for (const id of [...known].filter((x) => x.length >= 4 && /[/?#%]/.test(x)).sort((a, b) => b.length - a.length)) {
    const raw = concatenated(prefix, id);
    if (raw !== null && sent.startsWith(normalEscapes(raw))) return id;
    if (id.includes('/') && sent.startsWith(`${prefix}${encodeURIComponent(id).replaceAll('%2F', '/')}`)) return id;
  }
  return undefined;
}
const UNENCODED = "with its reserved characters ('/', '?', '#', '%') not percent-encoded, so they changed the request target (put in the path as is, or encoded with '/' kept as Python's quote() does by default)";

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
  defineCheck({ subject: 'client',
    id: 'client-key-only-in-authorization-header',
    title: 'every API request carries a sandbox key as `Authorization: Bearer <key>`, and no key travels anywhere else',
    requirements: ['AUTH-BEARER-REQUIRED', 'AUTH-KEY-ONLY-IN-AUTHORIZATION-HEADER', 'AUTH-SERVER-SIDE-KEYS'],
    run(t, scope) {
      const reqs = t.exchanges;
      if (api(t).length === 0) return notVerified('the client made no request to the API', 'the client makes requests to the API');
      const elsewhere = reqs.map((e) => ({ e, where: keyOutsideAuthorization(e, t.keys) })).filter((x) => x.where);
      if (elsewhere.length) return fail(scope, `a key was sent in ${elsewhere[0].where} (${elsewhere.length} request${elsewhere.length === 1 ? '' : 's'}); §5.1 allows it only in the Authorization header`, elsewhere.map((x) => x.e));
      // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are Bearer.
      const noBearer = api(t).filter((e) => {
        const b = bearerOf(e.headers);
        return !b || b.scheme.toLowerCase() !== 'bearer' || !t.keys.has(b.token);
      });
      if (noBearer.length) return fail(scope, `${noBearer.length} API request${noBearer.length === 1 ? '' : 's'} without \`Authorization: Bearer <key>\` of a sandbox key (first: ${line(noBearer[0])})`, noBearer);
      return pass(scope, `${api(t).length} API requests, each with a bearer key in the Authorization header and nowhere else`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-key-not-printed',
    title: "no API key appears in the client's own output (stdout, stderr); a should: the spec does not forbid it",
    requirements: ['AUTH-SERVER-SIDE-KEYS'],
    run(t, scope) {
      for (const [key, role] of t.keys) {
        for (const [stream, text] of [['stdout', t.stdout], ['stderr', t.stderr]] as const) {
          // §5.1 says keys are used from server-side code; it does not forbid printing one (§2.6 forbids it for audio
          // URLs only): a should, good practice, a warning.
          if (text.includes(key)) return warn(scope, `the ${role} key appears in the command's ${stream}: keep keys out of output (good practice; §5.1 says keys are used from server-side code, it does not forbid printing them)`, []);
        }
      }
      return pass(scope, `no key in ${t.stdout.length + t.stderr.length} characters of output`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-requests-are-get-without-body',
    title: 'every API request is a GET without a request body',
    requirements: ['CONTRACT-GET-ONLY', 'CONTRACT-NO-REQUEST-BODY'],
    run(t, scope) {
      if (api(t).length === 0) return notVerified('the client made no request to the API', 'the client makes requests to the API');
      const bad = api(t).filter((e) => e.method !== 'GET' || e.bodyBytes > 0);
      if (bad.length) return fail(scope, `${bad.length} API request${bad.length === 1 ? ' is' : 's are'} not a GET without a body (first: ${bad[0].method}, ${bad[0].bodyBytes} body bytes)`, bad);
      return pass(scope, `${api(t).length} GET requests without a body`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-queries-only-accepted-keys',
    title: 'the list route gets only its five query keys and the other routes get none',
    requirements: ['LIST-UNSUPPORTED-KEYS', 'ENC-NO-QUERY', 'DOC-NO-QUERY', 'TRANSCRIPT-NO-QUERY', 'AUDIO-NO-QUERY'],
    run(t, scope) {
      const routed = api(t).map((e) => ({ e, p: parseTarget(e.target) })).filter((x) => x.p.route);
      if (routed.length === 0) return notVerified('the client made no request to a route of the API', 'the client calls the routes of the API');
      const bad = routed.filter(({ p }) => p.query.some((q) => p.route!.name !== 'list' || !(LIST_KEYS as readonly string[]).includes(q.key)));
      if (bad.length) {
        const { e, p } = bad[0];
        const keys = p.query.map((q) => q.key).filter((k) => p.route!.name !== 'list' || !(LIST_KEYS as readonly string[]).includes(k));
        return fail(scope, `${bad.length} request${bad.length === 1 ? '' : 's'} with a query key the route does not accept (first: ${p.route!.name} route, key${keys.length === 1 ? '' : 's'} ${keys.map((k) => `\`${k}\``).join(', ')}; §4: 400 unsupported_filter)`, [e, ...bad.slice(1).map((x) => x.e)]);
      }
      const used = [...new Set(routed.map((x) => x.p.route!.name))].sort();
      // A route the scenario declares (`uses`) and the client never called is a part of its scope left unjudged.
      const missing = ROUTES.filter((r) => t.scenario?.uses?.includes(r) && !used.includes(r));
      if (missing.length) {
        const names = missing.map((r) => PART_LABEL[r]).join(', ');
        return notVerified(`the scenario declares ${names} (\`uses\`), but the client never called ${missing.length === 1 ? 'it' : 'them'} (routes called: ${used.join(', ')})`, `the client calls ${names}, or the scenario's \`uses\` leaves ${missing.length === 1 ? 'it' : 'them'} out`);
      }
      return pass(scope, `query keys accepted on every request (routes used: ${used.join(', ')})`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-list-paging-canonical',
    title: '`limit` and `offset` are canonical decimal text within 1..100 and 0..10000',
    requirements: ['LIST-LIMIT-RANGE', 'LIST-OFFSET-RANGE', 'LIST-CANONICAL-INTEGERS'],
    run(t, scope) {
      const sent = listValues(t, ['limit', 'offset']);
      if (sent.length === 0) return notVerified('the client sent no `limit` or `offset` (nothing to judge)', 'the client pages with `limit`/`offset`, or the scenario\'s `uses` leaves out paging');
      const bad = sent.filter(({ q }) => {
        if (q.value === null || !CANONICAL.test(q.value)) return true;
        const n = Number(q.value);
        return q.key === 'limit' ? n < 1 || n > 100 : n > 10000;
      });
      if (bad.length) return fail(scope, `${bad[0].q.key}=${JSON.stringify(bad[0].q.value)} is not canonical decimal text within bounds (limit 1..100, offset 0..10000; §4.1, §8)${bad.length > 1 ? `; ${bad.length} values in all` : ''}`, bad.map((x) => x.e));
      return pass(scope, `${sent.length} limit/offset values, all canonical and within bounds`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-list-walk-sees-every-item',
    title: 'a walk of the list starts at offset 0 and each page starts where the last one ended (no encounter skipped)',
    requirements: ['FIELD-LIST-OFFSET'],
    run(t, scope) {
      // The normal run only: injected answers change what a careful client does next.
      const pages = api(t).filter((e) => e.phase === 1 && !e.injected && e.status === 200 && parseTarget(e.target).route?.name === 'list');
      if (pages.length === 0) return notVerified('the client read no page of the list in its normal run', 'the client walks the encounter list, or the scenario\'s `uses` leaves out paging');
      const walks = new Map<string, { offset: number; items: number; e: ClientExchange }[]>();
      for (const e of pages) {
        const q = parseTarget(e.target).query;
        const offset = Number(q.find((x) => x.key === 'offset')?.value ?? '0');
        let items: number;
        try {
          items = (JSON.parse(e.body) as { items?: unknown[] }).items?.length ?? NaN;
        } catch {
          continue;
        }
        if (!Number.isInteger(offset) || !Number.isFinite(items)) continue;
        const key = q.filter((x) => x.key !== 'offset' && x.key !== 'limit').map((x) => `${x.key}=${x.value}`).sort().join('&');
        (walks.get(key) ?? walks.set(key, []).get(key)!).push({ offset, items, e });
      }
      const overlaps: string[] = [];
      for (const [key, ps] of walks) {
        const byOffset = [...new Map(ps.map((p) => [p.offset, p])).values()].sort((a, b) => a.offset - b.offset);
        const what = `the walk of the list${key ? ` (${key})` : ''}`;
        if (byOffset[0].offset !== 0) return fail(scope, `${what} starts at offset ${byOffset[0].offset}: offset is zero-based (§2.7), so the first ${byOffset[0].offset} encounter${byOffset[0].offset === 1 ? '' : 's'} of the list ${byOffset[0].offset === 1 ? 'is' : 'are'} never read`, [byOffset[0].e]);
        for (let i = 1; i < byOffset.length; i++) {
          const prev = byOffset[i - 1];
          const next = prev.offset + prev.items;
          if (byOffset[i].offset > next) return fail(scope, `${what} skips encounters: the page at offset ${prev.offset} held ${prev.items}, so the next starts at ${next}, but the client asked for offset ${byOffset[i].offset} (offsets ${next} to ${byOffset[i].offset - 1} are never read; §2.7 zero-based offset)`, [prev.e, byOffset[i].e]);
          if (byOffset[i].offset < next) overlaps.push(`${what}: offset ${byOffset[i].offset} after a page at ${prev.offset} of ${prev.items}`);
        }
      }
      if (overlaps.length) return warn(scope, `pages overlap, so some encounters are read twice (harmless, but not needed): ${overlaps.slice(0, 3).join('; ')}`, some(pages));
      return pass(scope, `${pages.length} pages in ${walks.size} walk${walks.size === 1 ? '' : 's'}, each from offset 0, every page starting where the last ended`, some(pages));
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-sort-order-valid',
    title: '`sort_order` is exactly `asc` or `desc`',
    requirements: ['LIST-SORT-ORDER-ENUM'],
    run(t, scope) {
      const sent = listValues(t, ['sort_order']);
      if (sent.length === 0) return notVerified('the client sent no `sort_order` (nothing to judge)', 'the client sends `sort_order`, or the scenario\'s `uses` leaves out sort_order');
      const bad = sent.filter(({ q }) => q.value !== 'asc' && q.value !== 'desc');
      if (bad.length) return fail(scope, `sort_order=${JSON.stringify(bad[0].q.value)} is not \`asc\` or \`desc\` (§4.1)`, bad.map((x) => x.e));
      return pass(scope, `${sent.length} sort_order values, all asc or desc`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-list-dates-valid',
    title: '`start_at` and `end_at` are timezone-aware ISO date-times, start before end',
    requirements: ['LIST-DATETIME-TZ-AWARE', 'LIST-START-BEFORE-END'],
    run(t, scope) {
      const lists = api(t).map((e) => ({ e, p: parseTarget(e.target) })).filter((x) => x.p.route?.name === 'list' && x.p.query.some((q) => q.key === 'start_at' || q.key === 'end_at'));
      if (lists.length === 0) return notVerified('the client sent no `start_at` or `end_at` (nothing to judge)', 'the client sends `start_at`/`end_at`, or the scenario\'s `uses` leaves out date_window');
      for (const { e, p } of lists) {
        for (const q of p.query.filter((x) => x.key === 'start_at' || x.key === 'end_at')) {
          if (q.value === null || !TZ_AWARE.test(q.value) || Number.isNaN(instant(q.value))) {
            return fail(scope, `${q.key}=${JSON.stringify(q.value)} is not a timezone-aware ISO date-time (§4.1)`, [e]);
          }
        }
        const start = p.query.find((x) => x.key === 'start_at')?.value;
        const end = p.query.find((x) => x.key === 'end_at')?.value;
        if (start && end && instant(start) >= instant(end)) {
          return fail(scope, `start_at ${start} is not earlier than end_at ${end} (§4.1)`, [e]);
        }
      }
      // A raw '+' is read as a plus here (as the sandbox reads it), but a server that decodes the query as a form
      // reads a space: an interoperability hazard, not a breach of the specification.
      const plus = lists.flatMap(({ e, p }) => rawPairs(p.rawQuery).filter((q) => (q.key === 'start_at' || q.key === 'end_at') && q.raw?.includes('+')).map((q) => ({ e, q })));
      if (plus.length) {
        const { q } = plus[0];
        return warn(scope, `${q.key}=${q.raw} carries a raw '+': a server that decodes the query as a form (application/x-www-form-urlencoded, as most frameworks do) reads a space there and answers 422 invalid_query; percent-encode it as %2B (RFC 3986 §2.2: data in the reserved set should be percent-encoded)${plus.length > 1 ? `; ${plus.length} values in all` : ''}`, some(plus.map((x) => x.e)));
      }
      return pass(scope, `${lists.length} list requests with date bounds, all timezone-aware, start before end`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-ids-opaque-and-encoded',
    title: 'every id in a request path is one the sandbox handed out, percent-encoded as a path segment',
    requirements: ['CONTRACT-NO-ID-INFERENCE'],
    run(t, scope) {
      const known = new Set(t.profileIds);
      let judged = 0;
      for (const e of t.exchanges) {
        if (e.kind === 'api') {
          const p = parseTarget(e.target);
          if (!p.route && p.path !== '/external/v1/encounters') {
            const form = p.path.split('/').slice(4).map((s) => formMismatch(s, known)).find((x) => x !== undefined);
            if (form) return fail(scope, `${e.method} ${p.path} names no route of the API: ${form}; ${ENCODE_HOW}`, [e]);
            const found = idUnencodedIn(e.target, known);
            return fail(scope, found !== undefined
              ? `${e.method} ${p.path} names no route of the API: it holds the handed-out id ${JSON.stringify(found)} ${UNENCODED}; ${ENCODE_HOW}`
              : `${e.method} ${p.path} names no route of the API: an id was not percent-encoded as one path segment, or the path was built (${ENCODE_HOW})`, [e]);
          }
          if (p.route && p.route.ids.length) {
            judged++;
            const segs = p.path.split('/');
            const raws = p.route.ids.length === 1 ? [segs[4]] : [segs[4], segs[6]];
            const i = p.route.ids.findIndex((id) => !known.has(id));
            if (i !== -1) {
              const unknown = p.route.ids[i];
              const unencoded = idUnencodedIn(e.target, known);
              const why = encodingMismatch(raws[i], known) ?? (unencoded !== undefined ? `the request target holds the handed-out id ${JSON.stringify(unencoded)} ${UNENCODED}` : undefined);
              return fail(scope, `the request names the id ${JSON.stringify(unknown)}, which the sandbox never handed out: ${why ? `${why}; ${ENCODE_HOW}` : 'ids are opaque (§2), never built, guessed or altered'}`, [e]);
            }
          }
        }
        for (const id of idsIn(e.body)) known.add(id);
      }
      if (judged === 0) return notVerified('the client sent no request with an id in its path', 'the client reads an encounter or document by its id, or the scenario\'s `uses` names the list route only');
      return pass(scope, `${judged} requests named ids, each one handed out by the sandbox and encoded as a path segment`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-no-repeat-after-terminal-answer',
    title: `an identical request is not repeated more than ${MAX_REPEATS_AFTER_4XX} times after a 4xx answer (a should)`,
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    run(t, scope) {
      const all = api(t);
      const terminal = all.filter((e) => e.status >= 400 && e.status < 500 && !isRetryableStatus(e.status));
      if (terminal.length === 0) return notVerified('the client got no 4xx answer (a scenario file makes the sandbox answer with the reason codes it declares)', 'a scenario whose `reasons` declare 4xx reason codes (--scenario FILE)');
      for (const e of terminal) {
        const repeats = all.filter((x) => x.seq > e.seq && sameRequest(x, e));
        // The spec calls no reason terminal (transcript_not_found is a state that can change): repeating a refused
        // request is poor practice, a should.
        if (repeats.length > MAX_REPEATS_AFTER_4XX) return warn(scope, `after ${e.status} ${reasonOf(e) ?? ''} the client sent the identical request ${repeats.length} more times (good practice: branch on the reason_code, §5.7, rather than repeat; the spec calls no reason terminal)`, some([e, ...repeats]));
      }
      return pass(scope, `${terminal.length} terminal 4xx answers, none hammered`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-pauses-before-retrying-503',
    title: `a 503 is retried only after a pause (at least ${MIN_RETRY_PAUSE_MS} ms)`,
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    run(t, scope) {
      const all = api(t);
      const unavailable = all.filter((e) => e.status === 503);
      if (unavailable.length === 0) return notVerified('the client got no 503 answer (a scenario file can declare digest_key_unavailable or audio_storage_unavailable)', 'a scenario whose `reasons` declare digest_key_unavailable or audio_storage_unavailable');
      for (const e of unavailable) {
        const next = all.find((x) => x.seq > e.seq && sameRequest(x, e));
        if (next && next.at - (e.at + e.durationMs) < MIN_RETRY_PAUSE_MS) {
          return warn(scope, `after 503 ${reasonOf(e) ?? ''} the client retried after ${Math.max(0, next.at - (e.at + e.durationMs))} ms: a temporary unavailability should be retried after a pause`, [e, next]);
        }
      }
      return pass(scope, `${unavailable.length} 503 answers, each retried (if at all) after a pause`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-audio-url-not-used-after-expiry',
    title: 'an audio URL is never fetched after its `expires_at`',
    requirements: ['AUDIO-URL-NOT-AFTER-EXPIRY'],
    run(t, scope) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL', AUDIO_UNLOCK);
      const late = t.exchanges.filter((e) => e.kind === 'storage').map((e) => ({ e, u: issued.find((u) => u.target === e.target && u.issuedBy.seq < e.seq) })).filter((x) => x.u && x.e.at > x.u.expiresAtMs);
      if (late.length) return fail(scope, `the client fetched an audio URL ${late[0].e.at - late[0].u!.expiresAtMs} ms after its expires_at (§2.6: never used after expires_at)`, [late[0].u!.issuedBy, late[0].e]);
      const fetched = t.exchanges.filter((e) => e.kind === 'storage').length;
      return pass(scope, `${issued.length} audio URLs handed out, ${fetched} fetches, none after expires_at`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-audio-url-not-sent-to-api',
    title: 'an audio URL is never sent back to the API (it is not an identifier); storage itself is not seen in traffic',
    requirements: ['AUDIO-URL-NOT-DURABLE'],
    // Only a breach shows on the wire: AUDIO-URL-NOT-DURABLE is listed as observable by no run, never verified.
    breachOnly: true,
    run(t, scope) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL', AUDIO_UNLOCK);
      const bad = api(t).filter((e) => {
        const text = `${e.target} ${Object.values(e.headers).join(' ')}`;
        const decoded = decode(text) ?? text;
        return issued.some((u) => decoded.includes(u.target) || decoded.includes(u.sig));
      });
      if (bad.length) return fail(scope, 'the client sent an audio URL back to the API: it is a temporary access artifact, never a durable identifier (§2.6)', bad);
      return pass(scope, `${issued.length} audio URLs handed out, none sent back to the API (whether the client stores one is not seen in traffic)`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-audio-url-not-printed',
    title: "no audio URL appears in the client's own output",
    requirements: ['AUDIO-URL-NOT-LOGGED'],
    run(t, scope) {
      const issued = issuedAudioUrls(t.exchanges);
      if (issued.length === 0) return notVerified('the client got no audio URL', AUDIO_UNLOCK);
      const output = `${t.stdout}\n${t.stderr}`;
      const shown = issued.find((u) => output.includes(u.target) || output.includes(u.sig));
      if (shown) return fail(scope, 'an audio URL appears in the command\'s output: it must not be put in client-visible logs (§2.6)', [shown.issuedBy]);
      return pass(scope, `${issued.length} audio URLs handed out, none in the output`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-key-holds-route-scopes',
    title: 'the key the client uses holds the scopes of every route it calls (no 403 missing_scope)',
    requirements: ['AUTH-RECEIVER-SCOPES-UNION'],
    run(t, scope) {
      if (api(t).length === 0) return notVerified('the client made no request to the API', 'the client makes requests to the API');
      const missing = api(t).filter((e) => !e.injected && e.status === 403 && reasonOf(e) === 'missing_scope');
      if (missing.length) return fail(scope, `${missing.length} request${missing.length === 1 ? '' : 's'} answered 403 missing_scope (first: ${line(missing[0])}): the client's key lacks a scope of a route it calls (§5.3, §5.8)`, missing);
      return pass(scope, `no request was refused for a missing scope (${api(t).length} API requests)`);
    },
  }),
  defineCheck({ subject: 'client',
    id: 'client-follows-declared-reason-handling',
    title: 'the client does what its scenario file declares for each reason code the sandbox answered with',
    requirements: ['AUTH-BRANCH-ON-REASON-CODE'],
    run(t, scope) {
      const declared = Object.keys(t.scenario?.reasons ?? {});
      if (!t.scenario || declared.length === 0) return notVerified('no scenario `reasons`: pass --scenario FILE naming what the client does per reason code (stop, retry-later, skip-resource)', 'a scenario whose `reasons` declare what the client does per reason code (--scenario FILE)');
      const reasons = t.scenario.reasons;
      // A key's state carried on after a stop is not a new injection: those requests are judged as "more" below.
      const injected = t.exchanges.filter((e) => e.injected && !e.carried);
      const all = api(t);
      const warnings: string[] = [];
      const concurrency = concurrencyOf(all);
      for (const e of injected) {
        const reason = e.injected!;
        const action = reasons[reason];
        const after = all.filter((x) => x.seq > e.seq && x.phase === e.phase);
        const same = after.filter((x) => sameRequest(x, e));
        if (action === 'stop') {
          // A concurrent client's other workers may each have one request on its way when the answer reaches it: at
          // most (its concurrency − 1) requests arriving within STOP_GRACE_MS are excused; a sequential client, none.
          const withKey = after.filter((x) => x.headers.authorization === e.headers.authorization);
          const onTheirWay = withKey.filter((x) => x.at < e.at + e.durationMs + STOP_GRACE_MS).slice(0, Math.max(0, concurrency - 1));
          const more = withKey.filter((x) => !onTheirWay.includes(x));
          // Going on with other work is what stop rules out; asking the same thing again before stopping is poor
          // practice (a should: the key keeps its state, so the repeat gets the same answer).
          const others = more.filter((x) => !sameRequest(x, e));
          if (others.length) return fail(scope, `declared \`stop\` for ${reason}, but the client sent ${others.length} more request${others.length === 1 ? '' : 's'} with that key`, [e, ...others]);
          if (more.length) warnings.push(`declared \`stop\` for ${reason}; the client sent the refused request again ${more.length} time${more.length === 1 ? '' : 's'} before stopping (good practice: stop at once)`);
        } else if (action === 'retry-later') {
          if (same.length === 0) return fail(scope, `declared \`retry-later\` for ${reason}, but the client never sent the request again`, [e]);
          // §5.6 and §8 say nothing of a pause: retrying at once is poor practice, a should (a warning).
          const pause = same[0].at - (e.at + e.durationMs);
          if (pause < MIN_RETRY_PAUSE_MS) warnings.push(`declared \`retry-later\` for ${reason}; the client retried after ${Math.max(0, pause)} ms (good practice: a pause before retrying a temporary unavailability)`);
        } else if (action === 'skip-resource') {
          // The same request again is poor practice but branches all the same (§5.7 calls no reason terminal; a
          // resource's state can change): a should. Not going on at all is what skip-resource rules out.
          if (same.length) warnings.push(`declared \`skip-resource\` for ${reason}; the client sent the same request again ${same.length} time${same.length === 1 ? '' : 's'} (good practice: go on without it)`);
          // Skip means go on: when the client reached more resources in its normal run than it had in this run, it
          // must reach another one after the skip.
          const reachedBefore = new Set(all.filter((x) => x.phase === e.phase && x.seq <= e.seq).map((x) => x.target));
          const waiting = all.some((x) => x.phase === 1 && !reachedBefore.has(x.target));
          if (waiting && !after.some((x) => x.target !== e.target)) return fail(scope, `declared \`skip-resource\` for ${reason}, but the client sent no request to any other resource afterwards (its normal run reached more): it ended its work instead of going on without that resource`, [e]);
        }
      }
      const judged = [...new Set(injected.map((e) => e.injected!))];
      const notes = Object.entries(t.notInjected);
      const blocking = notes.filter(([, n]) => n.blocks);
      const aside = notes.filter(([, n]) => !n.blocks);
      const runs = new Set(t.exchanges.map((e) => e.phase)).size;
      const judgedText = `${judged.length} of ${declared.length} declared reason${declared.length === 1 ? '' : 's'} judged over ${runs} run${runs === 1 ? '' : 's'}, each handled as declared${judged.length ? ` (${judged.map((r) => `${r}: ${reasons[r]}`).join(', ')})` : ''}`;
      const asideText = aside.length ? `; not applicable: ${aside.map(([r, n]) => `${r} (${n.why})`).join(', ')}` : '';
      if (blocking.length) {
        return notVerified(`${judgedText}; not judged: ${blocking.map(([r, n]) => `${r} (${n.why})`).join(', ')}${asideText}`, `a run in which the sandbox answers with ${blocking.map(([r]) => r).join(', ')}`);
      }
      if (judged.length === 0) return notVerified(`no declared reason could be injected${asideText}`, 'a scenario whose `reasons` declare reason codes the sandbox can answer with (the state of a key or a resource)');
      if (warnings.length) return warn(scope, `${warnings.join('; ')}; ${judgedText}${asideText}`, some(injected));
      return pass(scope, `${judgedText}${asideText}`, injected);
    },
  }),
];

const AUDIO_UNLOCK = 'the client fetches audio (the audio route hands out audio URLs), or the scenario\'s `uses` leaves out audio';
