// Mutants and variants as named overrides beside the correct rules. The reference asks for the rule at a named
// point, `ctx.rule('revokedReason', 'revoked_key')` (reference-impl/context.ts Points), and gets the correct one
// unless the request switched on a mutant (mutants.ts) or variant (variants.ts) that replaces it. Each override is
// a function of the correct rule (or value), and of what the request switched on, returning its replacement, so it
// may wrap the correct rule or set it aside. The tables below are the only place that knows what a mutant or
// variant does (grep a name to find it); the names and their descriptions stay in mutants.ts and variants.ts.
//
// Composition: the variants switched on apply in the order of VARIANT_OVERRIDES, each wrapping what came before
// (so of two variants answering the same point, the one further down wins); the mutant applies last, outermost.
import http from 'node:http';
import type stream from 'node:stream';
import { AUDIO_URL_TTL_SECONDS } from '../reference-impl/audio.ts';
import { iso } from '../reference-impl/bodies.ts';
import { correctRule, type Ctx, type DeliveryResult, type Found, type Points, type RawHead, type Rule, type Services, type Stage } from '../reference-impl/context.ts';
import { ApiError } from '../reference-impl/errors.ts';
import type { FaultName } from '../reference-impl/faults.ts';
import { ALL_SCOPES, decodeSegment, requireDigestKey, requireKeysEnabled } from '../reference-impl/pipeline.ts';
import { LIST_KEYS } from '../reference-impl/query.ts';
import type { MutantName } from './mutants.ts';
import { applyOpenapiVariants, OPENAPI_VARIANTS } from './served-contract.ts';
import type { VariantName } from './variants.ts';
import { writerFor, WRITER_VARIANTS } from './writers.ts';

/** What a request switched on (none in production). */
export interface Switches { mutant: MutantName | null; variants: ReadonlySet<VariantName> }
export const NO_SWITCHES: Switches = { mutant: null, variants: new Set() };

type Json = Record<string, any>;
type Body = Record<string, unknown>;

type Override = { [P in keyof Points]?: (correct: Points[P], sw: Switches) => Points[P] };

/** The rule hook of a request with these switches: the correct rule, or what its mutant or variants put in its place. */
export function ruleFor(sw: Switches): Rule {
  if (sw.mutant === null && sw.variants.size === 0) return correctRule;
  const mutant = sw.mutant === null ? undefined : MUTANT_OVERRIDES[sw.mutant];
  return <P extends keyof Points>(point: P, correct: Points[P]): Points[P] => {
    let chosen = correct;
    if (sw.variants.size > 0) {
      for (const [name, override] of VARIANT_LIST) {
        const replace = override[point];
        if (replace && sw.variants.has(name)) chosen = replace(chosen, sw);
      }
    }
    const replace = mutant?.[point];
    return replace ? replace(chosen, sw) : chosen;
  };
}

// ---------------------------------------------------------------- helpers of the tables

/** A stage order of the precedence mutants, by stage name; EXTRA_STAGES lend the stages the correct order lacks. */
const order = (...names: string[]) => (stages: readonly Stage[]): readonly Stage[] =>
  names.map((n) => stages.find((s) => s.name === n) ?? EXTRA_STAGES.find((s) => s.name === n)!);

const EXTRA_STAGES: readonly Stage[] = [
  // precedence-route-before-auth / precedence-scope-before-auth: the environment checks of step 1, run late.
  { name: 'environment_checks', run(ctx) { requireKeysEnabled(ctx); requireDigestKey(ctx); } },
  // precedence-lookup-before-auth: the encounter looked up (existence, demo flag) before the caller is known.
  {
    name: 'lookup_before_auth',
    async run(ctx, s) {
      if (!ctx.op || ctx.op.id === 'listPublicEncounters') return;
      const early = await s.repo.getEncounter(ctx.params[0]);
      if (!early) throw new ApiError('encounter_not_found');
      if (early.is_demo) throw new ApiError('demo_training_denied');
    },
  },
];

/** An override that sets the correct rule aside and does nothing in its place. */
const skipped = () => (): void => undefined;
const fault = (...faults: FaultName[]) => (ctx: Ctx) => faults.some((f) => ctx.faults.has(f));

/** A leniency of canonicalInt: text that `when` holds for is rewritten before the correct rule reads it. */
const readAs = (when: (t: string, which: 'limit' | 'offset') => boolean, as: (t: string) => string): Override['canonicalInt'] =>
  (correct) => (t, max, which) => correct(when(t, which) ? as(t) : t, max, which);
/** A leniency of canonicalInt: text that `when` holds for is answered without the correct rule. */
const answerAs = (when: (t: string, which: 'limit' | 'offset') => boolean, value: (max: number, which: 'limit' | 'offset') => number): Override['canonicalInt'] =>
  (correct) => (t, max, which) => (when(t, which) ? value(max, which) : correct(t, max, which));
const defaultOf = (_max: number, which: 'limit' | 'offset') => (which === 'limit' ? 50 : 0);
const isLimit = (which: string) => which === 'limit';
const isOffset = (which: string) => which === 'offset';

/** Mutant lenient-nonascii-digits: the value of a digit of another script (blocks of ten from DIGIT ZERO). */
function nonAsciiDigitValue(c: string): number {
  const cp = c.codePointAt(0)!;
  for (const zero of [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50, 0xff10, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6]) if (cp >= zero && cp < zero + 10) return cp - zero;
  return 0;
}

const DATE_TIME_NO_TZ = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?$/;

/** Variant null-optional-fields-omitted: every null-valued property is left out, except the required content.text. */
function dropNulls(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((x) => dropNulls(x));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) if (x !== null || (key === 'content' && k === 'text')) out[k] = dropNulls(x, k);
  return out;
}

/** A raw path segment a front proxy would not pass on as one segment: a dot segment, an encoded slash or backslash, a NUL. */
function outsideRouteSegment(raw: string): boolean {
  return /%2f|%5c|%00/i.test(raw) || /^\.\.?(;.*)?$/.test(decodeSegment(raw));
}

/** A sender mutant: the correct delivery headers, then changed in place. */
const header = (change: (h: Record<string, string>, d: Parameters<Points['deliveryHeaders']>[1]) => void): Override['deliveryHeaders'] =>
  (correct) => (h, d) => {
    const out = { ...correct(h, d) };
    change(out, d);
    return out;
  };
/** A sender mutant: the retry decision for the answers `when` holds for. */
const retryWhen = (when: (r: DeliveryResult) => boolean, retry: boolean): Override['retryable'] => (correct) => (r) => (when(r) ? retry : correct(r));

const categoryOn = (status: number, category: string): Override['errorBody'] => (correct) => (s, b) => (s === status ? { ...correct(s, b), error: category } : correct(s, b));
/** A contract mutant: the served document is an edited copy (then rewritten by the openapi variants switched on). */
const contract = (edit: (doc: Json) => void): Override['servedContract'] => (correct) => (doc) => {
  const copy = structuredClone(doc);
  edit(copy);
  return correct(copy);
};
const AUDIO_PATH = '/external/v1/encounters/{encounter_id}/documents/{document_id}/audio';

// ---------------------------------------------------------------- helpers of the query-grammar entries (issue 30)

const RFC3339_STRICT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})/;

/** A date-time matcher that also refuses what `refuse` says of its match (a narrower range of years or offsets). */
const refuseMatch = (refuse: (m: RegExpExecArray) => boolean): Override['matchDateTime'] => (correct) => (t) => {
  const m = correct(t);
  return m && refuse(m) ? null : m;
};
const offsetMinutesOf = (m: RegExpExecArray) => (m[9] === undefined ? 0 : Number(m[9]) * 60 + Number(m[10]));

/** A pipeline stage in front of the others that puts the path parameters back as `decode` reads the raw segments. */
const pathIdsAs = (decode: (raw: string) => string): Override['pipeline'] => (stages) => [{
  name: 'path_ids_as_read',
  run(ctx) {
    if (!ctx.op) return;
    const raw = (ctx.req.url ?? '').split('?')[0];
    const m = ctx.op.path.exec(raw);
    if (m) ctx.params = m.slice(1).map(decode);
  },
}, ...stages];

/** The list query read by the correct rule after `change` rewrote the sort_order value. */
const sortReadAs = (change: (v: string) => string): Override['validateListQuery'] => (correct) => (pairs, rule) =>
  correct(pairs.map((p) => (p.key === 'sort_order' ? { ...p, value: change(p.value) } : p)), rule);

/** The UTC instant (ms) of a date-time the correct matcher accepted. */
function utcMsOf(m: RegExpExecArray): number {
  const t = new Date(0);
  t.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  t.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  return t.getTime() - (m[8]?.startsWith('-') ? -1 : 1) * offsetMinutesOf(m) * 60_000;
}

/**
 * Mutant date-lenient-local-time: a text that is not RFC 3339 (or ends in -00:00) read by a lenient parser: the
 * first calendar, week or ordinal date and the time after it, as local time in UTC-05:00; any zone designator is
 * ignored. Returned as RFC 3339 text for the correct parser; anything the lenient parser cannot read is left as is.
 */
function lenientLocalTime(t: string): string {
  if (RFC3339_STRICT.test(t) && /[0-9](Z|[+-](?!00:00$)[0-9]{2}:[0-9]{2})$/.test(t)) return t;
  const time = /[Tt ]([0-9]{2})(?::?([0-9]{2})(?::?([0-9]{2}))?)?/;
  const day = new Date(0);
  let m: RegExpExecArray | null;
  if ((m = /([0-9]{4})-?W([0-9]{2})-?([1-7])/.exec(t))) {
    // ISO week date: week 1 holds the year's first Thursday.
    const jan4 = new Date(0);
    jan4.setUTCFullYear(Number(m[1]), 0, 4);
    const monday = jan4.getTime() - ((jan4.getUTCDay() + 6) % 7) * 86_400_000;
    day.setTime(monday + ((Number(m[2]) - 1) * 7 + Number(m[3]) - 1) * 86_400_000);
  } else if ((m = /([0-9]{4})-?([0-9]{2})-?([0-9]{2})(?=[Tt ])/.exec(t))) {
    day.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  } else if ((m = /([0-9]{4})-?([0-9]{3})(?=[Tt ])/.exec(t))) {
    day.setUTCFullYear(Number(m[1]), 0, Number(m[2]));
  } else return t;
  const clock = time.exec(t.slice(m.index + m[0].length));
  if (!clock) return t;
  day.setUTCHours(Number(clock[1]) + 5, Number(clock[2] ?? 0), Number(clock[3] ?? 0), 0); // local UTC-05:00 → UTC
  return Number.isNaN(day.getTime()) ? t : day.toISOString();
}

const UTC_TEXT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// ---------------------------------------------------------------- the mutants (one deliberate defect each)

/** Mutant non-get-touches-resource: refused non-GET requests by path, for the life of the process. */
const TOUCHED = new Map<string, number>();

/** `value` with every updated_at moved `seconds` later, wherever it sits. */
function laterUpdatedAt(value: unknown, seconds: number): unknown {
  if (Array.isArray(value)) return value.map((v) => laterUpdatedAt(v, seconds));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'updated_at' && typeof v === 'string' ? iso(new Date(Date.parse(v) + seconds * 1000)) : laterUpdatedAt(v, seconds)]));
}

const MUTANT_OVERRIDES: Partial<Record<MutantName, Override>> = {
  // precedence: the stages of §4 in another order
  'precedence-query-before-auth': { pipeline: order('reject_unsupported_keys', 'authenticate', 'authorize_route', 'require_scopes', 'validate_query', 'lookup') },
  'precedence-scope-before-route': { pipeline: order('authenticate', 'require_scopes', 'authorize_route', 'reject_unsupported_keys', 'validate_query', 'lookup') },
  'precedence-query-before-scope': { pipeline: order('authenticate', 'authorize_route', 'reject_unsupported_keys', 'validate_query', 'require_scopes', 'lookup') },
  'precedence-lookup-before-query': { pipeline: order('authenticate', 'authorize_route', 'require_scopes', 'lookup', 'reject_unsupported_keys', 'validate_query') },
  'precedence-validation-before-auth': { pipeline: order('validate_query', 'authenticate', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'lookup') },
  'precedence-validation-before-keys': { pipeline: order('authenticate', 'authorize_route', 'require_scopes', 'validate_query', 'reject_unsupported_keys', 'lookup') },
  'precedence-lookup-before-auth': { pipeline: order('lookup_before_auth', 'authenticate', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'validate_query', 'lookup') },
  'precedence-lookup-before-route': { pipeline: order('authenticate', 'lookup', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'validate_query') },
  'precedence-lookup-before-scope': { pipeline: order('authenticate', 'authorize_route', 'lookup', 'require_scopes', 'reject_unsupported_keys', 'validate_query') },
  'precedence-query-before-route': { pipeline: order('authenticate', 'reject_unsupported_keys', 'authorize_route', 'require_scopes', 'validate_query', 'lookup') },
  'precedence-validation-before-route': { pipeline: order('authenticate', 'validate_query', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'lookup') },
  'precedence-validation-before-scope': { pipeline: order('authenticate', 'authorize_route', 'validate_query', 'require_scopes', 'reject_unsupported_keys', 'lookup') },
  'precedence-route-before-auth': {
    keysEnabledCheck: skipped, digestKeyCheck: skipped,
    pipeline: order('authenticate', 'authorize_route', 'environment_checks', 'require_scopes', 'reject_unsupported_keys', 'validate_query', 'lookup'),
  },
  'precedence-scope-before-auth': {
    keysEnabledCheck: skipped, digestKeyCheck: skipped,
    pipeline: order('authenticate', 'authorize_route', 'require_scopes', 'environment_checks', 'reject_unsupported_keys', 'validate_query', 'lookup'),
  },
  // step 1: authentication
  'reason-revoked-as-invalid': { revokedReason: () => 'invalid_key' },
  'reason-expired-as-disabled': { expiredReason: () => 'disabled_key' },
  'reason-missing-bearer-as-malformed': { missingBearerReason: () => () => 'malformed_token' },
  'test-key-always-allowed': { testKeysRefused: () => () => false },
  'digest-unavailable-as-500': {
    digestKeyCheck: () => (ctx) => {
      if (fault('digest_key_unavailable')(ctx)) throw new Error('digest key store unreachable');
    },
  },
  // The scheme matched by its spelling (RFC 7235 §2.1: case-insensitive).
  'bearer-scheme-case-sensitive': { presentedToken: (correct) => (ctx) => (/^\s*Bearer\s/.test(ctx.req.headers.authorization ?? '') ? correct(ctx) : null) },
  'api-key-query-param-accepted': { presentedToken: (correct) => (ctx) => correct(ctx) ?? keyOutsideHeader(ctx, false) },
  'api-key-anywhere-accepted': { presentedToken: (correct) => (ctx) => correct(ctx) ?? keyOutsideHeader(ctx, true) },
  // step 2: route and organization
  'org-scope-check-skipped': { orgScopeOnly: () => false },
  'reason-not-allowlisted-as-route-not-allowed': { notAllowlistedReason: () => 'route_not_allowed' },
  'route-group-check-skipped': { routeGroupEnabled: () => () => true },
  'route-disabled-blocks-both-groups': { routeGroupEnabled: () => (key) => Boolean(key.encounter_routes_enabled && key.document_routes_enabled) },
  // A DELETE that got past the method check is answered 204 and changes nothing.
  'non-get-answers-204': {
    methodAllowed: (correct) => (method) => correct(method) || method === 'DELETE',
    reply: (correct) => async (ctx, s) => (ctx.method === 'DELETE' ? { status: 204, headers: { 'cache-control': 'no-store' } } : correct(ctx, s)),
  },
  // Refused as it should be, yet remembered: each later GET of the same path reads updated_at one second later per
  // refused request (a handler that writes before it checks the method).
  'non-get-touches-resource': {
    frontEnd: (correct) => (method, path, res, write, req) => {
      if (method !== 'GET') TOUCHED.set(path, (TOUCHED.get(path) ?? 0) + 1);
      return correct(method, path, res, write, req);
    },
    reply: (correct) => async (ctx, s) => {
      const r = await correct(ctx, s);
      const touched = TOUCHED.get((ctx.req.url ?? '').replace(/\?.*$/, '')) ?? 0;
      return touched > 0 && r.body !== undefined ? { ...r, body: laterUpdatedAt(r.body, touched) } : r;
    },
  },
  // step 3: scopes
  'every-route-requires-all-scopes': { requiredScopes: () => () => ALL_SCOPES },
  'audio-missing-scope-recordings-ignored': { requiredScopes: (correct) => (op) => correct(op).filter((s) => s !== 'recordings:read') },
  'status-403-as-401': {
    missingScopeError: (correct) => (missing) => {
      const e = correct(missing);
      e.statusOverride = 401;
      return e;
    },
  },
  // step 4: unsupported keys
  'query-not-percent-decoded': { decodeQueryPart: () => (raw) => ({ text: raw, ok: true }) },
  'query-keys-case-insensitive': {
    rejectUnsupportedKeys: (correct) => (pairs, allowed, rule) => {
      for (const p of pairs) p.key = p.key.toLowerCase();
      correct(pairs, allowed, rule);
    },
  },
  // Only the example keys of §4.1 are refused, other unknown keys are ignored.
  'unsupported-keys-denylist': { unsupportedKey: (correct) => (key, allowed) => correct(key, allowed) && ['owners', 'record_kind', 'date_of_service', 'patient_id'].includes(key) },
  'field-unsupported-filter-null': { sanitizeField: () => () => null },
  'field-unsupported-filter-wrong': { unsupportedFilterField: () => (offending, pairs) => (pairs[pairs.length - 1] !== offending ? pairs[pairs.length - 1].key : 'query') },
  'multiple-query-errors-combined': {
    rejectUnsupportedKeys: (correct) => (pairs, allowed, rule) => {
      if (pairs.filter((p) => !p.keyOk || !allowed.includes(p.key)).length > 1) throw new ApiError('invalid_query', null, 'several query keys are not supported');
      correct(pairs, allowed, rule);
    },
    validateListQuery: (correct) => (pairs, rule) => {
      const failing = LIST_KEYS.filter((k) => {
        try {
          correct(pairs.filter((p) => p.key === k), correctRule);
          return false;
        } catch {
          return true;
        }
      });
      if (failing.length > 1) throw new ApiError('invalid_query', null, `several query parameters are invalid: ${failing.join(', ')}`);
      return correct(pairs, rule);
    },
  },
  // step 5: query values
  'duplicate-keys-crash': { duplicateQueryKey: () => (key) => { throw new TypeError(`${key}.match is not a function`); } },
  'default-limit-20': { listDefaults: (correct) => ({ ...correct, limit: 20 }) },
  'default-offset-1': { listDefaults: (correct) => ({ ...correct, offset: 1 }) },
  'limit-max-101': { limitMax: () => 101 },
  'offset-max-10001': { offsetMax: () => 10001 },
  'range-bounds-exclusive': { inRange: (correct) => (n, min, max) => correct(n, min, max) && n !== min && n !== max },
  'field-limit-null': { invalidValueField: (correct) => (key) => (key === 'limit' ? null : correct(key)) },
  'field-offset-wrong': { invalidValueField: (correct) => (key) => (key === 'offset' ? 'limit' : correct(key)) },
  'field-sort-null': { invalidValueField: (correct) => (key) => (key === 'sort_order' ? null : correct(key)) },
  'date-error-field-wrong': { invalidValueField: (correct) => (key) => (key === 'end_at' ? 'start_at' : correct(key)) },
  'reason-invalid-sort-as-invalid-query': { invalidSortReason: () => 'invalid_query' },
  'lenient-limit-plus': { canonicalInt: readAs((t, w) => isLimit(w) && /^\+[0-9]+$/.test(t), (t) => t.slice(1)) },
  'lenient-limit-leading-zero': { canonicalInt: readAs((t, w) => isLimit(w) && /^0+[1-9][0-9]*$/.test(t), (t) => t.replace(/^0+/, '')) },
  'offset-negative-accepted': { canonicalInt: answerAs((t, w) => isOffset(w) && /^-[0-9]+$/.test(t), () => 0) },
  'lenient-offset-plus': { canonicalInt: readAs((t, w) => isOffset(w) && /^\+[0-9]+$/.test(t), (t) => t.slice(1)) },
  'lenient-offset-leading-zero': { canonicalInt: readAs((t, w) => isOffset(w) && /^0+[0-9]+$/.test(t), (t) => t.replace(/^0+(?=[0-9])/, '')) },
  'lenient-whitespace': { canonicalInt: readAs(() => true, (t) => t.trim()) },
  'lenient-decimal': { canonicalInt: readAs((t) => /^[0-9]+\.0*$/.test(t), (t) => t.slice(0, t.indexOf('.'))) },
  'lenient-exponent': { canonicalInt: readAs((t) => /^[0-9]+[eE]\+?[0-9]+$/.test(t) && Number.isSafeInteger(Number(t)), (t) => String(Number(t))) },
  'lenient-hex': { canonicalInt: readAs((t) => /^0[xX][0-9a-fA-F]{1,6}$/.test(t), (t) => String(parseInt(t.slice(2), 16))) },
  'lenient-empty-as-default': { canonicalInt: answerAs((t) => t === '', defaultOf) },
  'lenient-non-numeric-as-default': { canonicalInt: answerAs((t) => t !== '' && !/[0-9]/.test(t), defaultOf) },
  'lenient-nonascii-digits': { canonicalInt: readAs(() => true, (t) => t.replace(/\p{Nd}/gu, (c) => String(nonAsciiDigitValue(c)))) },
  'lenient-integer-prefix': { canonicalInt: readAs((t) => /^[0-9]+[^0-9]/.test(t), (t) => /^[0-9]+/.exec(t)![0]) },
  'long-digits-overflow-accepted': { canonicalInt: answerAs((t) => /^[1-9][0-9]{9,}$/.test(t), (max) => max) },
  'limit-zero-as-default': { canonicalInt: answerAs((t, w) => isLimit(w) && t.trim() !== '' && Number(t) === 0, defaultOf) },
  'timezone-less-accepted': { matchDateTime: (correct) => (text) => correct(text) ?? DATE_TIME_NO_TZ.exec(text) },
  'date-offset-ignored': { dateOffsetMinutes: () => 0 }, // the local date and time read as UTC
  'date-invalid-ignored': { rejectInvalidDate: skipped },
  'start-not-before-end-accepted': { startBeforeEnd: () => () => true },
  // step 6: lookup
  'encounter-not-found-as-cross-org': { unknownEncounterReason: () => 'cross_organization_denied' },
  'cross-org-as-not-found': { crossOrgReason: () => 'encounter_not_found' },
  'demo-as-not-found': { demoReason: () => 'encounter_not_found' },
  'document-of-other-encounter-returned': { documentBelongs: (correct) => (d, e) => correct(d, e) || d.organization_id === e.organization_id },
  'document-not-found-as-encounter-not-found': { documentNotFoundReason: () => () => 'encounter_not_found' },
  'fuzz-crash-on-dotdot': {
    pipeline: (correct) => correct.map((stage) => (stage.name !== 'lookup' ? stage : {
      name: stage.name,
      run(ctx: Ctx, s: Services) {
        if (ctx.op && ctx.op.id !== 'listPublicEncounters' && ctx.key && ctx.params.some((p) => p.includes('..'))) throw new Error('path guard: cannot resolve ".."');
        return stage.run(ctx, s);
      },
    })),
  },
  // bodies
  'extra-field-encounter': { encounterSummary: (correct) => (summary, docs) => ({ ...correct(summary, docs), internal_notes: 'not part of the public contract' }) },
  'total-is-page-size': { listBody: (correct) => (body, rows) => correct({ ...body, total: rows.length }, rows) },
  'missing-required-total': {
    listBody: (correct) => (body, rows) => {
      const out = correct(body, rows);
      delete out.total;
      return out;
    },
  },
  // The detail drops the encounter's last document, so it no longer equals the list item.
  'detail-differs-from-list': { detailDocuments: (correct) => async (e, ctx, s) => (await correct(e, ctx, s)).slice(0, -1) },
  // The detail of an encounter without documents leaves documents out (§2.8 requires them, an empty array here).
  'detail-documents-omitted': {
    detailBody: (correct) => (body, docs) => {
      const out = correct(body, docs);
      if (docs.length === 0) delete out.encounter.documents;
      return out;
    },
  },
  'detail-omits-summary-documents': { detailDocuments: (correct) => async (e, ctx, s) => (await correct(e, ctx, s)).filter((d) => d.schema_type !== 'billing' && d.schema_type !== 'encounter_checklist') },
  // Documents gathered by patient, so the patient's other encounters' documents join in.
  'detail-documents-by-patient': {
    detailDocuments: (correct) => async (e, ctx, s) => {
      const own = await correct(e, ctx, s);
      if (e.patient_id === null) return own;
      const page = await s.repo.listEncounters(e.organization_id, { limit: 100, offset: 0, sortOrder: 'desc', startAt: null, endAt: null });
      return [...own, ...page.rows.filter((r) => r.patient_id === e.patient_id && r.encounter_id !== e.encounter_id).flatMap((r) => r.documents)];
    },
  },
  'clinical-content-format-html': { clinicalContentFormat: () => 'html' },
  'clinical-status-not-null': { clinicalStatus: () => 'signed' },
  'ambient-detail-has-content': {
    documentBody: (correct) => (document, d) => {
      const out = correct(document, d);
      if (d.schema_type === 'ambient_transcript') out.content = { format: 'markdown', text: null };
      return out;
    },
  },
  'unsupported-type-as-200': { unsupportedDocument: () => (d, common) => ({ ...common, schema_type: d.schema_type, created_at: iso(d.created_at), updated_at: iso(d.updated_at), title: d.title }) },
  'unsupported-type-as-not-found': {
    unsupportedDocument: () => () => { throw new ApiError('document_not_found'); },
    notAmbientError: () => () => new ApiError('document_not_found'),
  },
  'wrong-content-type': { successContentType: () => 'text/plain; charset=utf-8' },
  'transcript-not-found-as-500': { transcriptMissingError: () => () => new TypeError("Cannot read properties of undefined (reading 'turns')") },
  'transcript-unfinalized-returned': { transcriptServed: () => () => true },
  'transcript-turns-unsorted': { sortTurns: skipped },
  'transcript-phone-call-unsorted': { sortTurns: (correct) => (turns, d) => { if (d.workflow_variant !== 'phone_call') correct(turns, d); } },
  'transcript-ids-swapped': { transcriptBody: (correct) => (body) => { const b = correct(body); return { document_id: b.encounter_id, encounter_id: b.document_id, transcript: b.transcript }; } },
  'audio-not-available-as-not-found': { noAudioReason: () => 'audio_not_found' },
  'audio-storage-unavailable-as-404': { audioStorageUnavailableReason: () => 'audio_not_found' },
  'audio-expires-in-past': { audioUrlSkew: () => -3600 },
  'audio-url-lifetime-year': { audioUrlShift: () => 365 * 86_400 },
  // The URL carries another expiry than the one signed, so storage refuses it.
  'audio-url-expiry-mismatch': { audioUrl: (correct) => (url) => correct(url).replace(/expires=([0-9]+)/, (_, x: string) => `expires=${Number(x) + 60}`) },
  'audio-url-empty': { audioUrl: () => () => '' },
  // The expiry is checked against the epoch, so an expired URL is served.
  'audio-storage-ignores-expiry': { storageClock: () => () => 0 },
  // error bodies
  'category-401-wrong': { errorBody: categoryOn(401, 'unauthorized') },
  'category-403-wrong': { errorBody: categoryOn(403, 'forbidden') },
  'category-400-wrong': { errorBody: categoryOn(400, 'bad_request') },
  'category-422-wrong': { errorBody: categoryOn(422, 'validation_failed') },
  'category-503-wrong': { errorBody: categoryOn(503, 'unavailable') },
  'field-403-not-null': { errorBody: (correct) => (status, body) => (status === 403 ? { ...correct(status, body), field: 'authorization' } : correct(status, body)) },
  'extra-field-error': { errorBody: (correct) => (status, body) => ({ ...correct(status, body), details: { hint: 'undeclared field' } }) },
  // Labelled application/json, but the body is plain text.
  'error-body-not-json': {
    writeError: () => (res, status, body, headers) => {
      const b = body as Body;
      const text = `${status} ${String(b.reason_code)}: ${String(b.message)}`;
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    },
  },
  // the served contract (GET /openapi/v1/openapi.json)
  'openapi-not-closed': { servedContract: contract((doc) => delete doc.components?.schemas?.PublicEncounterSummary?.additionalProperties) },
  'openapi-version-wrong': { servedContract: contract((doc) => { doc.openapi = '3.0.3'; }) },
  'openapi-info-version-wrong': { servedContract: contract((doc) => { doc.info.version = '1.0.0'; }) },
  // A dangling reference: the document no longer resolves.
  'openapi-invalid': { servedContract: contract((doc) => { doc.components.schemas.PublicEncounterDetailResponse.properties.encounter = { $ref: '#/components/schemas/PublicEncounter' }; }) },
  'openapi-path-missing': { servedContract: contract((doc) => delete doc.paths[AUDIO_PATH]) },
  'openapi-operation-renamed': { servedContract: contract((doc) => { doc.paths['/external/v1/encounters/{encounter_id}'].get.operationId = 'getEncounter'; }) },
  'openapi-status-added': {
    servedContract: contract((doc) => {
      doc.paths['/external/v1/encounters'].get.responses['500'] = { description: 'Internal error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/PublicApiErrorResponse' } } } };
    }),
  },
  'openapi-reason-enum-drift': { servedContract: contract((doc) => doc.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.push('rate_limited')) },
  'openapi-security-drift': { servedContract: contract((doc) => { doc.components.securitySchemes.publicApiKeyBearer.scheme = 'basic'; }) },
  'openapi-nullability-dropped': { servedContract: contract((doc) => { doc.components.schemas.PublicEncounterSummary.properties.status = { type: 'string' }; }) },
  'openapi-extra-query-parameter': { servedContract: contract((doc) => doc.paths['/external/v1/encounters'].get.parameters.push({ name: 'patient_id', in: 'query', required: false, schema: { type: 'string' } })) },
  'openapi-anonymous-audio': { servedContract: contract((doc) => { doc.paths[AUDIO_PATH].get.security = []; }) },
  'openapi-drift-limit-max': {
    servedContract: contract((doc) => {
      for (const p of doc.paths?.['/external/v1/encounters']?.get?.parameters ?? []) {
        if (p?.name === 'limit' && p.schema) p.schema.maximum = 200;
      }
    }),
  },
  // A lenient front end reads the request target up to the LAST space of the request line, drops the spaces
  // inside it and forwards the request to this server.
  'raw-space-target-lenient': { repairRequestLine: () => repairRequestLine },
  // the list statement (repo.ts listEncounters, point listSql)
  'sort-order-inverted': { listSql: (c) => ({ ...c, direction: (o) => (c.direction(o) === 'ASC' ? 'DESC' : 'ASC') }) },
  // random() gives no deterministic order among ties (and is re-drawn by the outer query).
  'tiebreak-nondeterministic': { listSql: (c) => ({ ...c, tieBreaker: () => 'random()' }) },
  // md5(encounter_id) is deterministic but is not the encounter_id order.
  'tiebreak-not-encounter-id': { listSql: (c) => ({ ...c, tieBreaker: (prefix, dir) => `md5(${prefix}encounter_id) ${dir}` }) },
  // Off by one: every page after the first starts one row early, repeating the last row of the page before.
  'page-duplicates': { listSql: (c) => ({ ...c, offset: (o) => (o > 0 ? c.offset(o) - 1 : c.offset(o)) }) },
  'page-size-off-by-one': { listSql: (c) => ({ ...c, limit: (l) => c.limit(l) + 1 }) },
  'cross-org-listed': { listSql: (c) => ({ ...c, organization: '$1::text IS NOT NULL' }) },
  'start-at-exclusive': { listSql: (c) => ({ ...c, startBound: () => '($2::timestamptz IS NULL OR created_at > $2)' }) },
  'end-at-inclusive': { listSql: (c) => ({ ...c, endBound: () => '($3::timestamptz IS NULL OR created_at <= $3)' }) },
  // With both bounds in descending order the lower bound is dropped.
  'date-window-desc-ignores-start': { listSql: (c) => ({ ...c, startBound: (dir, q) => (dir === 'DESC' && q.endAt !== null ? '($2::timestamptz IS NULL OR TRUE)' : c.startBound(dir, q)) }) },
  // With both bounds in ascending order the upper bound is inclusive.
  'date-window-asc-end-inclusive': { listSql: (c) => ({ ...c, endBound: (dir, q) => (dir === 'ASC' && q.startAt !== null ? '($3::timestamptz IS NULL OR created_at <= $3)' : c.endBound(dir, q)) }) },
  'date-window-total-unfiltered': { listSql: (c) => ({ ...c, totalWhere: (where) => c.totalWhere(where).replace(/created_at (>=|>|<=|<) \$([23])/g, '$$$2 IS NOT NULL') }) },
  // An empty window answers the unfiltered list.
  'date-window-empty-falls-back': { listSql: (c) => ({ ...c, emptyWindowUnfiltered: true }) },
  // the webhook sender (reference-impl/webhooks.ts), applied to the deliveries of a subscription made under the mutant
  'webhook-subscription-active-by-default': { deliverToInactive: () => true },
  'webhook-resources-swapped': {
    webhookEvent: (c) => (p, attempt) => {
      const event = c(p, attempt);
      const r = event.resources as Body;
      return { ...event, resources: { ...r, encounter_id: r.document_id, document_id: r.encounter_id } };
    },
  },
  'webhook-payload-audio-url': {
    webhookEvent: (c) => (p, attempt) => {
      const event = c(p, attempt);
      return { ...event, resources: { ...(event.resources as Body), audio_url: `https://audio.example.invalid/${encodeURIComponent(p.resources.document_id)}.mp3` } };
    },
  },
  'webhook-extra-payload-field': { webhookEvent: (c) => (p, attempt) => ({ ...c(p, attempt), delivery_attempt: attempt }) },
  // The bytes sent are a re-serialisation (spaced) of the bytes signed.
  'webhook-signature-over-reserialised-body': { webhookBody: () => (event) => Buffer.from(JSON.stringify(event, null, 1), 'utf8') },
  'webhook-timestamp-stale': { webhookTimestamp: (c) => (now) => c(now) - 600 },
  'webhook-content-type-text-plain': { deliveryHeaders: header((h) => { h['content-type'] = 'text/plain; charset=utf-8'; }) },
  'webhook-event-id-header-mismatch': { deliveryHeaders: header((h, d) => { h['service-event-id'] = `${d.event_id}_x`; }) },
  'webhook-new-delivery-id-on-retry': { deliveryHeaders: header((h, d) => { if (d.attempts > 1) h['service-delivery-id'] = `${d.delivery_id}_r${d.attempts}`; }) },
  // A retry's timestamp header is not the one it was signed with.
  'webhook-retry-timestamp-not-signed': { deliveryHeaders: header((h, d) => { if (d.attempts > 1) h['service-timestamp'] = String(Number(d.timestamp) + 1); }) },
  'webhook-version-header-mismatch': { deliveryHeaders: header((h) => { h['service-webhook-version'] = '2026-06-01'; }) },
  'webhook-missing-delivery-id-header': { deliveryHeaders: header((h) => { delete h['service-delivery-id']; }) },
  // The delivery carries an API key as if the receiver authenticated it by key (a fixed dummy, never a real key).
  'webhook-sends-api-key': { deliveryHeaders: header((h) => { h.authorization = 'Bearer cek_dummy_webhook_token_not_a_key'; }) },
  // A 3xx is followed to its Location instead of ending the delivery.
  'webhook-follows-redirects': { followRedirect: () => (r) => r.kind === 'status' && r.status >= 300 && r.status < 400 },
  'webhook-202-not-success': {
    deliverySucceeded: (c) => (r) => c(r) && !(r.kind === 'status' && r.status === 202),
    retryable: retryWhen((r) => r.kind === 'status' && r.status === 202, true),
  },
  'webhook-never-retries': { retryable: () => () => false },
  'webhook-refused-not-retried': { retryable: retryWhen((r) => r.kind === 'transport' && r.error === 'ECONNREFUSED', false) },
  'webhook-reset-not-retried': { retryable: retryWhen((r) => r.kind === 'transport' && r.error === 'ECONNRESET', false) },
  'webhook-retries-terminal-400': { retryable: retryWhen((r) => r.kind === 'status' && r.status === 400, true) },
  'webhook-retries-all-4xx': { retryable: retryWhen((r) => r.kind === 'status' && r.status >= 400 && r.status < 500, true) },
  'webhook-retries-410-422': { retryable: retryWhen((r) => r.kind === 'status' && (r.status === 410 || r.status === 422), true) },
  'webhook-conflict-too-early-terminal': { retryable: retryWhen((r) => r.kind === 'status' && (r.status === 409 || r.status === 425), false) },
  'webhook-only-503-retried': { retryable: retryWhen((r) => r.kind === 'status' && r.status >= 500 && r.status !== 503, false) },
  // query values and path ids at the edges of their grammar (issue 30, checks/service/query-grammar.ts)
  'date-epoch-number-accepted': {
    dateTimeText: (correct) => (t) => correct(/^-?[0-9]+(\.[0-9]+)?$/.test(t) && Math.abs(Number(t)) < 8.64e12 ? new Date(Number(t) * 1000).toISOString() : t),
  },
  'date-offset-seconds-accepted': { dateTimeText: (correct) => (t) => correct(t.replace(/([+-][0-9]{2}:[0-9]{2}):[0-9]{2}$/, '$1')) },
  'date-trailing-text-ignored': { dateTimeText: (correct) => (t) => correct(RFC3339_STRICT.exec(t)?.[0] ?? t) },
  'date-parsed-by-date-parse': {
    dateTimeText: (correct) => (t) => correct(RFC3339_STRICT.test(t) || !Number.isFinite(Date.parse(t)) ? t : new Date(Date.parse(t)).toISOString()),
  },
  'date-bound-millisecond-precision': { dateTimeText: (correct) => (t) => correct(t.replace(/(\.[0-9]{3})[0-9]+/, '$1')) },
  // The bounds go to the statement as the client wrote them, compared as text with created_at written in UTC.
  'date-bound-compared-as-text': {
    validateListQuery: (correct) => (pairs, rule) => {
      const q = correct(pairs, rule);
      const raw = (key: string) => pairs.find((p) => p.key === key)?.value ?? null;
      return { ...q, startAt: q.startAt === null ? null : raw('start_at'), endAt: q.endAt === null ? null : raw('end_at') };
    },
    listSql: (c) => ({ ...c, startBound: () => `($2::text IS NULL OR ${UTC_TEXT} >= $2::text)`, endBound: () => `($3::text IS NULL OR ${UTC_TEXT} < $3::text)` }),
  },
  'date-32-bit-unix-time-only': { matchDateTime: refuseMatch((m) => { const t = utcMsOf(m); return t < 0 || t >= 2 ** 31 * 1000; }) },
  'date-utc-designator-only': { matchDateTime: refuseMatch((m) => m[8] !== 'Z') },
  'date-lenient-local-time': { dateTimeText: (correct) => (t) => correct(lenientLocalTime(t)) },
  'date-utc-overflow-500': {
    matchDateTime: (correct) => (t) => {
      const m = correct(t);
      const year = m ? new Date(utcMsOf(m)).getUTCFullYear() : 1;
      if (year < 1 || year > 9999) throw new RangeError(`year ${year} is out of range`);
      return m;
    },
  },
  'date-offsets-within-12h': { matchDateTime: refuseMatch((m) => offsetMinutesOf(m) > 12 * 60) },
  'sort-order-trimmed': { validateListQuery: sortReadAs((v) => v.trim()) },
  'sort-order-prefix-match': { validateListQuery: sortReadAs((v) => (v.startsWith('asc') ? 'asc' : v.startsWith('desc') ? 'desc' : v)) },
  'lenient-integer-non-digits-dropped': { canonicalInt: readAs(() => true, (t) => t.replace(/[^0-9]/g, '')) },
  // A hand-written query parser: ''.split('&') is one empty pair, and an empty key is not one of the route's keys.
  'empty-query-as-unsupported-key': {
    pipeline: (stages) => stages.flatMap((stage) => (stage.name !== 'reject_unsupported_keys' ? [stage] : [{
      name: 'empty_query_pairs',
      run(ctx: Ctx) {
        const url = ctx.req.url ?? '';
        const q = url.indexOf('?');
        if (q !== -1 && url.slice(q + 1).split('&').includes('')) throw new ApiError('unsupported_filter', '');
      },
    }, stage])),
  },
  'path-id-not-percent-decoded': { pipeline: pathIdsAs((raw) => raw) },
  'path-id-lowercase-escapes-not-decoded': {
    pipeline: pathIdsAs((raw) => {
      try {
        return decodeURIComponent(raw.replace(/%([0-9a-fA-F]{2})/g, (m, h: string) => (/[a-f]/.test(h) ? `%25${h}` : m)));
      } catch {
        return raw;
      }
    }),
  },
  // One header with another word than the other four (§6.2: one word stands in every name; the rest is exact).
  'webhook-header-word-mixed': {
    deliveryHeaders: header((h) => {
      const [name] = Object.keys(h).filter((k) => k.endsWith('-signature'));
      if (name === undefined) return;
      h[name.startsWith('ceapi-') ? 'service-signature' : 'ceapi-signature'] = h[name];
      delete h[name];
    }),
  },
};

/** Mutants api-key-query-param-accepted / api-key-anywhere-accepted: a key sent outside the Authorization header. */
function keyOutsideHeader(ctx: Ctx, anywhere: boolean): string | null {
  const pair = ctx.pairs.find((p) => p.key === 'api_key' || (anywhere && p.key === 'access_token'));
  const cookie = /(?:^|;\s*)(?:api_key|access_token)=([^;]+)/.exec(String(ctx.req.headers.cookie ?? ''))?.[1];
  const header = ctx.req.headers['x-api-key'];
  ctx.pairs = ctx.pairs.filter((p) => p !== pair);
  return pair?.value ?? (anywhere ? (cookie ?? (typeof header === 'string' ? header : undefined)) : undefined) ?? null;
}

/** Mutant raw-space-target-lenient: the repaired request forwarded to this server, its answer relayed. */
function repairRequestLine(head: RawHead, socket: stream.Duplex, server: http.Server): boolean {
  const addr = server.address();
  const words = head.requestLine.split(' ');
  if (addr === null || typeof addr === 'string' || words.length < 4) return false;
  const forward = http.request({ host: addr.address, port: addr.port, method: words[0], path: words.slice(1, -1).join(''), headers: head.headers }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const body = Buffer.concat(chunks);
      socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${res.statusCode} Repaired\r\ncontent-type: ${res.headers['content-type'] ?? 'application/json'}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
    });
  });
  forward.on('error', () => socket.destroy());
  forward.end();
  return true;
}

// ---------------------------------------------------------------- the variants (legitimate choices the spec leaves open)

/** nginx's own page for a request it refuses (a bad path, a duplicate singleton header). */
function nginxRefuses(res: http.ServerResponse): void {
  res.writeHead(400, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(NGINX_400), connection: 'close' }).end(NGINX_400);
}
const NGINX_400 = '<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

const VARIANT_OVERRIDES: Partial<Record<VariantName, Override>> = {
  // A front end that routes only GET (and HEAD) answers any other method with its own 404 before the service sees
  // it (CONTRACT-NON-GET-METHODS leaves the answer open; nothing changes either way).
  'non-get-as-plain-404': {
    frontEnd: (correct) => (method, path, res, write, req) => {
      if (method === 'GET' || method === 'HEAD') return correct(method, path, res, write, req);
      write(res, 404, { error: 'not_found', message: `no ${method} route here` }, {});
      return true;
    },
  },
  // A path with a dot segment, an encoded slash or backslash or a NUL names none of the five routes; a front proxy
  // (nginx) refuses it with its own HTML page before the service sees it. Below non-get-as-plain-404: asked first.
  'front-proxy-outside-routes': {
    frontEnd: (correct) => (method, path, res, write, req) => {
      if (!path.split('/').some(outsideRouteSegment)) return correct(method, path, res, write, req);
      nginxRefuses(res);
      return true;
    },
  },
  // Authorization, a singleton field, sent twice: a front proxy (nginx: "client sent duplicate header line")
  // refuses the request with its own HTML page before the service sees it (RFC 9110 §5.3; the spec says nothing).
  'front-proxy-duplicate-authorization': {
    frontEnd: (correct) => (method, path, res, write, req) => {
      const count = req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization').length;
      if (count < 2) return correct(method, path, res, write, req);
      nginxRefuses(res);
      return true;
    },
  },
  // An invalid request line answered as Python's http.server does: a body with no status line (HTTP/0.9's way,
  // the version being unknown), then the connection closed. Not accepted, only less helpful than a 400.
  'invalid-request-line-http09-answer': {
    repairRequestLine: () => (_head, socket) => {
      socket.end('<!DOCTYPE HTML>\n<html><body><h1>Error response</h1><p>Error code: 400</p><p>Message: Bad request syntax.</p></body></html>\n');
      return true;
    },
  },
  // HEAD is answered as GET (node:http sends no body for HEAD).
  'http-head-like-get': { methodAllowed: (correct) => (method) => correct(method) || method === 'HEAD' },
  // A header with another scheme (Basic) counts as a malformed token.
  'non-bearer-scheme-as-malformed': { missingBearerReason: (correct) => (ctx) => ((ctx.req.headers.authorization ?? '').trim() !== '' ? 'malformed_token' : correct(ctx)) },
  // Of several unsupported keys, the last one is named.
  'unsupported-filter-names-last-key': { offendingPair: () => (pairs, bad) => pairs.findLast(bad) },
  // One occurrence of a repeated key is read (LIST-DUPLICATE-KEYS is open). last-wins below first-wins: it wins.
  'duplicate-keys-first-wins': { duplicateQueryKey: () => (_key, all) => all[0] },
  'duplicate-keys-last-wins': { duplicateQueryKey: () => (_key, all) => all[all.length - 1] },
  // With several invalid parameters another one is reported first (ORDER-MULTIPLE-QUERY-ERRORS).
  'query-errors-reverse-order': { listCheckOrder: (correct) => [...correct].reverse() },
  // The same refusal naming the other parameter of the pair.
  'start-not-before-end-field-end-at': { startEndField: () => 'end_at' },
  // Lowercase t/z, a space separator and an hour-only offset read as their RFC 3339 form.
  'datetime-extra-iso-forms': { dateTimeText: (correct) => (text) => correct(text).replace(/^(.{10})[t ]/, '$1T').replace(/z$/, 'Z').replace(/([+-][0-9]{2})$/, '$1:00') },
  // Inside step (6) the demo flag and the document are judged before ownership (ORDER-LOOKUP-INTERNAL is open).
  'lookup-document-before-organization': {
    lookupJudgments: (correct) => [
      (_ctx: Ctx, { encounter }: Found) => { if (encounter.is_demo) throw new ApiError('demo_training_denied'); },
      (_ctx: Ctx, { document, documentId }: Found) => { if (documentId !== undefined && document === undefined) throw new ApiError('document_not_found'); },
      ...correct,
    ],
  },
  // An existing document under another encounter of the organization → encounter_not_found.
  'other-encounter-document-as-encounter-not-found': {
    documentNotFoundReason: (correct) => (d, e) => (d !== undefined && d.organization_id === e.organization_id ? 'encounter_not_found' : correct(d, e)),
  },
  'null-optional-fields-omitted': { successBody: (correct) => (body) => dropNulls(correct(body)) },
  // The same instant with another offset; minus-0800 above plus-0530, so plus-0530 wins should both be on.
  'timestamps-offset-minus-0800': { timestampOffsetMinutes: () => -480 },
  'timestamps-offset-plus-0530': { timestampOffsetMinutes: () => 330 },
  // A zero fraction dropped, other fractions written with six digits.
  'timestamps-fraction-varies': { timestampFraction: () => (ms) => (ms === '000' ? '' : `.${ms}000`) },
  // A list item without documents → no documents property (optional in a summary, §2.1); the detail keeps [] (§2.8).
  'empty-documents-omitted-in-list': {
    listBody: (correct) => (body, rows) => {
      const out = correct(body, rows);
      for (const item of out.items) if (Array.isArray(item.documents) && item.documents.length === 0) delete item.documents;
      return out;
    },
  },
  // List summaries leave documents out; the detail keeps them.
  'list-items-without-documents': {
    listBody: (correct) => (body, rows) => {
      const out = correct(body, rows);
      for (const item of out.items) delete item.documents;
      return out;
    },
  },
  // format has a default (markdown), so it may be left out.
  'clinical-content-format-omitted': {
    documentBody: (correct) => (document, d) => {
      const out = correct(document, d);
      if (d.schema_type === 'document') out.content = { text: d.content_text };
      return out;
    },
  },
  // Clinical text not available to the public contract, and left out rather than null (FIELD-CLINICAL-CONTENT-SUBFIELDS).
  'clinical-content-text-omitted': {
    documentBody: (correct) => (document, d) => {
      const out = correct(document, d);
      if (d.schema_type === 'document' && out.content && typeof out.content === 'object') {
        const { text: _text, ...rest } = out.content as Record<string, unknown>;
        out.content = rest;
      }
      return out;
    },
  },
  // Audio missing from storage is "no audio for the document" (AUDIO-NOT-FOUND-VS-NOT-AVAILABLE).
  'audio-missing-as-not-available': { audioMissingReason: () => 'audio_not_available_for_document' },
  // Storage's clock half a second behind: an expired URL is still served for that long.
  'audio-storage-clock-behind': { storageClock: () => () => Date.now() - 500 },
  // The URL lives 60 s instead of AUDIO_URL_TTL_SECONDS.
  'audio-url-short-lifetime': { audioUrlSkew: () => 60 - AUDIO_URL_TTL_SECONDS },
  // §7.1 shows no category for 404; another string is as good.
  'error-404-category-not-found': { errorBody: categoryOn(404, 'not_found') },
  // The list statement: the tie-breaker's direction is open (LIST-TIE-BREAKER-DIRECTION); the two exclude each other.
  'tie-breaker-always-ascending': { listSql: (c) => ({ ...c, tieDirection: () => 'ASC' }) },
  'tie-breaker-against-sort-order': { listSql: (c) => ({ ...c, tieDirection: (dir) => (c.tieDirection(dir) === 'ASC' ? 'DESC' : 'ASC') }) },
  // The list includes the caller's demo/training encounters (LIST-DEMO-TRAINING is open).
  'demo-encounters-listed': { listSql: (c) => ({ ...c, listable: 'TRUE' }) },
  // The free message text in another language (non-ASCII on purpose).
  'error-messages-other-text': { errorMessage: () => (e) => `Anfrage abgelehnt – Grund „${e.reason}“ (Größe, Ümläute, 日本語)` },
  // Another sanitization (ERR-FIELD-SANITIZATION is open): plain keys stay verbatim.
  'field-sanitize-replace': { sanitizeField: () => (raw) => raw.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40) },
  // Another (a common one in the field): characters outside [A-Za-z0-9_.-[\]] are dropped; a key with none left is null.
  'field-sanitize-strip-null': { sanitizeField: () => (raw) => raw.replace(/[^A-Za-z0-9_.\-[\]]/g, '').slice(0, 64) || null },
  // The areas http and json: another writer of the same value (writers.ts), one for all of them switched on.
  ...Object.fromEntries(WRITER_VARIANTS.map((name): [VariantName, Override] => [name, { writeJson: (_c, sw) => writerFor(sw.variants) }])),
  // The area openapi: the served document rewritten without changing its meaning (served-contract.ts), in its order.
  ...Object.fromEntries(OPENAPI_VARIANTS.map((name): [VariantName, Override] => [name, { servedContract: (c) => (doc) => applyOpenapiVariants(structuredClone(c(doc)) as Json, new Set([name])) }])),
  'openapi-oai-media-type': { contractContentType: () => 'application/vnd.oai.openapi+json;version=3.1.0' },
  // Date-time ranges a service's date type may have (LIST-DATETIME-FORMAT-DETAILS): refused with 422 invalid_query.
  'datetime-offsets-within-18h': { matchDateTime: refuseMatch((m) => offsetMinutesOf(m) > 18 * 60) },
  'datetime-fraction-nine-digits-max': { matchDateTime: (correct) => (t) => (/\.[0-9]{10,}/.test(t) ? null : correct(t)) },
  'datetime-years-from-1583': { matchDateTime: refuseMatch((m) => Number(m[1]) < 1583) },
  // The sender's own name in the five §6.2 header names; its deliveries carry the choice (the variant sticks to the subscription).
  'webhook-header-word-ceapi': { webhookHeaderWord: () => 'Ceapi' },
  // The same digest in uppercase hexadecimal text.
  'webhook-signature-uppercase-hex': { webhookDigestText: (correct) => (hex) => correct(hex).toUpperCase() },
};

const VARIANT_LIST = Object.entries(VARIANT_OVERRIDES) as [VariantName, Override][];
