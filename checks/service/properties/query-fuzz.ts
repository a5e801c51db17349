// Query, path-id and header fuzzing against the target: fast-check draws a route, path ids (profile ids and
// odd ones: `..`, `%2F`, NUL, unicode, very long), a query string (random keys and values, supported keys
// with random text, odd dates, several encodings, duplicates, keys without `=`, empty segments) and an
// Authorization variation (scheme casing, extra whitespace, header-name casing, duplicate headers, other
// profile keys, garbage), sometimes an environment fault. Whatever it draws, the answer must be documented:
// a status the contract lists for the operation with a body valid for it, a reason listed for that status
// on that operation, and the §7.2 `field` of that reason. In particular never a 5xx other than the
// documented 503s. Every request-target stays valid HTTP (nothing raw that HTTP/1.1 forbids), so anything
// undocumented is the service's answer, not the HTTP layer's.
// Unknown keys everywhere (§4.1-§4.5, §7.2): whenever a query key outside the route's keys (the five list keys;
// none on the other routes) is present, the full key is sent as is and no earlier stage can fail (no fault
// of steps 1-3), the answer is 400 unsupported_filter, whatever else the query holds.
// Requests outside the five routes (a path segment that is a dot segment or holds an encoded slash,
// backslash or NUL) name no route of the contract: a front proxy may answer them in its own way (nginx: 400
// text/html), so only a server error (5xx) or an undocumented 2xx fails there.
import fc from 'fast-check';
import { suite } from '../../../engine/declare.ts';
import { checkProperty } from '../../../engine/property-check.ts';
import { describe, expectDocumented, expectSuccess, fail, FIELD_BY_REASON, type ErrorBody } from '../../../judge/assertions.ts';
import type { Exchange } from '../../../record/record.ts';
import { operation } from '../../../judge/contract.ts';
import { ENCODINGS, LIST_PATH, percentEncode, type Encoding } from '../../../judge/pagination.ts';
import { faultJoinsAnyRequest, type CredentialRole, type FaultName } from '../../../profile/profile.ts';
import { LIST_KEYS, ROUTES, type RouteRef } from '../../../observe/routes.ts';
import { anyCodePoint, startProperty } from '../../../engine/seed.ts';
import type { As, CheckApi, Target } from '../../../observe/target.ts';

const check = suite(import.meta.filename, { solo: true });

const ID = 'query-fuzz-documented-responses';

// ---------------------------------------------------------------- the drawn case

interface PathId {
  text: string;
  /** `raw`: written into the path as is (only for text made of unreserved characters and %XX escapes). */
  mode: Encoding | 'raw';
}

interface Pair {
  key: string;
  value: string;
  keyEncoding: Encoding;
  valueEncoding: Encoding;
  /** `kv`: key=value; `k`: the key alone; `k=`: the key with an empty value. */
  form: 'kv' | 'k' | 'k=';
}

interface Auth {
  /** Short description for counterexamples (never the key itself). */
  label: string;
  as: As;
  headers?: Record<string, string>;
  /**
   * The request is malformed at the HTTP layer (Authorization, a singleton field, sent twice: RFC 9110 §5.3), so a
   * front proxy or the server itself may refuse it with 400 in a form of its own before the API sees it (nginx
   * answers such a request with its own HTML page); the specification says nothing of it.
   */
  malformed?: boolean;
}

interface FuzzCase {
  route: RouteRef;
  encounter: PathId;
  document: PathId;
  query: Pair[];
  /** How pairs are joined: `&`, or with empty segments around them. */
  join: '&' | '&&' | 'lead' | 'trail';
  auth: Auth;
  fault?: FaultName;
}

const RAW_SAFE = /^(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+$/;

function renderId(id: PathId): string {
  return id.mode === 'raw' && RAW_SAFE.test(id.text) ? id.text : percentEncode(id.text, id.mode === 'raw' ? 'component' : id.mode);
}

function renderQuery(c: FuzzCase): string {
  const parts = c.query.map((p) => {
    const k = percentEncode(p.key, p.keyEncoding);
    return p.form === 'k' ? k : p.form === 'k=' ? `${k}=` : `${k}=${percentEncode(p.value, p.valueEncoding)}`;
  });
  if (parts.length === 0) return '';
  const q = c.join === '&&' ? parts.join('&&') : c.join === 'lead' ? `&${parts.join('&')}` : c.join === 'trail' ? `${parts.join('&')}&` : parts.join('&');
  return `?${q}`;
}

function renderTarget(c: FuzzCase): string {
  const suffix = { list: '', encounter: '', document: '', transcript: '/transcript', audio: '/audio' }[c.route.name];
  const path = c.route.name === 'list' ? LIST_PATH
    : c.route.name === 'encounter' ? `${LIST_PATH}/${renderId(c.encounter)}`
    : `${LIST_PATH}/${renderId(c.encounter)}/documents/${renderId(c.document)}${suffix}`;
  return path + renderQuery(c);
}

/**
 * Whether a rendered path segment leaves the five routes: a dot segment (also `..;`, as some servlet
 * containers read it) once percent-decoded, or an encoded slash, backslash or NUL (which a front proxy may
 * decode, split on or refuse). Our own reading of RFC 3986 §3.3 and §5.2.4, not the reference's.
 */
function outsideSegment(rendered: string): boolean {
  if (/%2f|%5c|%00/i.test(rendered)) return true;
  let decoded = rendered;
  try {
    decoded = decodeURIComponent(rendered);
  } catch {
    /* an invalid escape is not a dot segment */
  }
  return /^\.\.?(;.*)?$/.test(decoded);
}

/** Whether the request path is outside the five routes (see outsideSegment). */
function outsideRoutes(c: FuzzCase): boolean {
  if (c.route.name === 'list') return false;
  const ids = c.route.name === 'encounter' ? [c.encounter] : [c.encounter, c.document];
  return ids.some((id) => outsideSegment(renderId(id)));
}

/** The query keys as the target reads them (percent-decoded UTF-8; a lone surrogate was sent as U+FFFD). */
function sentKeys(c: FuzzCase): string[] {
  return c.query.filter((p) => !(p.form === 'k' && p.key === '')).map((p) => Buffer.from(p.key, 'utf8').toString('utf8'));
}

/**
 * An unknown key the answer must refuse with unsupported_filter: a non-empty key outside the route's keys,
 * on one of the five routes, sent with the full key exactly as the profile gives it and no fault that fails
 * an earlier step (only audio storage, which comes after step 4, may be down). Empty key names are left out:
 * whether `=v` names a key is not settled.
 */
function unknownKey(c: FuzzCase): string | undefined {
  if (outsideRoutes(c) || c.auth.as !== 'full' || c.auth.headers !== undefined) return undefined;
  if (c.fault !== undefined && c.fault !== 'audio_storage_unavailable') return undefined;
  const allowed: readonly string[] = c.route.name === 'list' ? LIST_KEYS : [];
  return sentKeys(c).find((k) => k !== '' && !allowed.includes(k));
}

function describeCase(c: FuzzCase): string {
  return `${c.route.name} ${renderTarget(c)} with ${c.auth.label}${c.fault ? ` and fault ${c.fault}` : ''}`;
}

// ---------------------------------------------------------------- arbitraries

const OTHER_KEYS = ['Limit', 'OFFSET', 'Sort_Order', 'foo', 'owners', 'record_kind', 'date_of_service', 'patient_id', '', 'limit[]', 'limit.', ' limit', 'limit\u0000', 'лимит'];
const DOT_IDS = ['..', '.', '...', '../..', '..%2F..', '%2e%2e', '%2E%2E%2F', 'a..b', '..;', '..\\..', '%2F', '%2F..%2F'];
const ODD_IDS = ['%00', '\u0000', '%', '%zz', '%25', ' ', '+', '~', '\u202e', '\ufeff', 'null', 'undefined', '0', '-1', '[]', '{}', "'", '"', '\\', '<script>', 'encounter_id'];

/** Printable ASCII without space: safe inside a header value. */
const printable = (max: number) => fc.stringMatching(new RegExp(`^[\\x21-\\x7e]{0,${max}}$`));

function idArb(known: string[]): fc.Arbitrary<PathId> {
  const text = fc.oneof(
    { weight: known.length > 0 ? 3 : 0, arbitrary: known.length > 0 ? fc.constantFrom(...known) : fc.constant('x') },
    { weight: 1, arbitrary: fc.constantFrom(...DOT_IDS) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_IDS) },
    { weight: 1, arbitrary: fc.string({ unit: anyCodePoint(), minLength: 1, maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }) },
    // Very long, within what any HTTP server accepts in a request line (the request stays under ~4 KiB).
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '0', '_', 'é', '𝟙'), fc.integer({ min: 100, max: 1500 })).map(([ch, n]) => ch.repeat(ch.length === 1 && ch < '\u0080' ? n : Math.floor(n / 10))) },
  );
  return fc.record({ text, mode: fc.constantFrom<PathId['mode']>('raw', 'raw', ...ENCODINGS) });
}

const twoDigits = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));

/** Date-time-like text: valid and invalid fields, every offset up to ±25:60, sometimes no offset. */
const dateArb: fc.Arbitrary<string> = fc.record({
  y: fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
  mo: twoDigits(13), d: twoDigits(32), h: twoDigits(25), mi: twoDigits(61), s: twoDigits(61),
  frac: fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,10}$/)),
  t: fc.constantFrom('T', 't', ' '),
  tz: fc.oneof(fc.constantFrom('Z', 'z', '', '+00:00', '-00:00'), fc.tuple(fc.constantFrom('+', '-'), twoDigits(25), twoDigits(60)).map(([sg, hh, mm]) => `${sg}${hh}:${mm}`)),
}).map((x) => `${x.y}-${x.mo}-${x.d}${x.t}${x.h}:${x.mi}:${x.s}${x.frac}${x.tz}`);

const valueArb: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 20_000 }).map(String),
  fc.constantFrom('0', '1', '50', '100', '101', '10000', '10001', '01', '+1', '-0', '1.0', '1e2', 'asc', 'desc', 'ASC', 'Desc', ''),
  fc.stringMatching(/^[0-9]{1,40}$/),
  dateArb,
  fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ unit: anyCodePoint(), maxLength: 16 }),
);

const pairArb: fc.Arbitrary<Pair> = fc.record({
  key: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...LIST_KEYS) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_KEYS) }, { weight: 1, arbitrary: fc.string({ unit: anyCodePoint(), maxLength: 8 }) }),
  value: valueArb,
  keyEncoding: fc.constantFrom<Encoding>('component', 'component', 'component', ...ENCODINGS),
  valueEncoding: fc.constantFrom<Encoding>(...ENCODINGS),
  form: fc.constantFrom<Pair['form']>('kv', 'kv', 'kv', 'kv', 'k', 'k='),
});

/** A query; sometimes a pair is repeated (same key, same or another value). */
const queryArb: fc.Arbitrary<Pair[]> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Pair[]>([]) },
  { weight: 3, arbitrary: fc.array(pairArb, { minLength: 1, maxLength: 4 }) },
  { weight: 1, arbitrary: fc.tuple(pairArb, valueArb, fc.array(pairArb, { maxLength: 2 })).map(([p, v, rest]) => [p, ...rest, { ...p, value: v }]) },
);

function authArb(target: Target): fc.Arbitrary<Auth> {
  const key = target.key('full')!;
  const roles = (Object.keys(target.profile.credentials) as CredentialRole[]).filter((r) => r !== 'full' && target.key(r));
  const variants: fc.Arbitrary<Auth>[] = [
    fc.constant<Auth>({ label: 'the full key', as: 'full' }),
    fc.constantFrom('bearer', 'BEARER', 'BeArEr').map((s): Auth => ({ label: `scheme "${s}"`, as: { header: `${s} ${key}` } })),
    fc.constantFrom(['two spaces', `Bearer  ${key}`], ['a tab', `Bearer\t${key}`], ['leading space', ` Bearer ${key}`], ['trailing space', `Bearer ${key} `])
      .map(([what, header]): Auth => ({ label: `the full key with ${what}`, as: { header } })),
    fc.constantFrom('AUTHORIZATION', 'Authorization', 'aUtHoRiZaTiOn').map((name): Auth => ({ label: `header name "${name}"`, as: 'none', headers: { [name]: `Bearer ${key}` } })),
    // Two Authorization headers (the names differ in case, so both are sent).
    fc.tuple(fc.constantFrom('first', 'second'), printable(40)).map(([which, junk]): Auth => ({
      label: `two Authorization headers (full key ${which})`,
      as: which === 'first' ? 'full' : { header: `Bearer ${junk}` },
      headers: { Authorization: which === 'first' ? `Bearer ${junk}` : `Bearer ${key}` },
      malformed: true,
    })),
    fc.constant<Auth>({ label: 'no Authorization', as: 'none' }),
    fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Token abc').map((header): Auth => ({ label: `Authorization ${JSON.stringify(header)}`, as: { header } })),
    printable(60).map((junk): Auth => ({ label: 'a garbage bearer token', as: { header: `Bearer ${junk}` } })),
  ];
  if (roles.length > 0) variants.push(fc.constantFrom(...roles).map((role): Auth => ({ label: `the ${role} key`, as: role })));
  return fc.oneof({ weight: 6, arbitrary: variants[0] }, ...variants.slice(1).map((arbitrary) => ({ weight: 1, arbitrary })));
}

function caseArb(target: Target): fc.Arbitrary<FuzzCase> {
  const resources = target.profile.resources ?? {};
  const encounters = new Set<string>();
  const documents = new Set<string>();
  for (const [role, r] of Object.entries(resources)) {
    if (role === 'list_min_total' || typeof r !== 'object') continue;
    encounters.add(r.encounter_id);
    if ('document_id' in r) documents.add(r.document_id);
  }
  // Only a condition that joins any caller and request (a header switch, another environment) is drawn beside random queries.
  const faults = (Object.keys(target.profile.faults ?? {}) as FaultName[]).filter((f) => faultJoinsAnyRequest(target.profile, f));
  return fc.record({
    route: fc.constantFrom(...ROUTES),
    encounter: idArb([...encounters]),
    document: idArb([...documents]),
    query: queryArb,
    join: fc.constantFrom<FuzzCase['join']>('&', '&', '&', '&&', 'lead', 'trail'),
    auth: authArb(target),
    fault: faults.length > 0 ? fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...faults) }) : fc.constant(undefined),
  });
}

/** Fixed cases drawn first, so known hazards are always tried whatever the seed. */
function examples(api: CheckApi): FuzzCase[] {
  const own = api.target.document('ambient_transcript_with_audio');
  const enc = own?.encounter_id ?? api.target.encounter('own_encounter') ?? 'x';
  const doc = own?.document_id ?? 'x';
  const route = (n: RouteRef['name']) => ROUTES.find((r) => r.name === n)!;
  const base = (r: RouteRef['name']): FuzzCase => ({
    route: route(r), encounter: { text: enc, mode: 'component' }, document: { text: doc, mode: 'component' }, query: [], join: '&', auth: { label: 'the full key', as: 'full' },
  });
  const pair = (key: string, value: string): Pair => ({ key, value, keyEncoding: 'component', valueEncoding: 'component', form: 'kv' });
  return [
    { ...base('document'), document: { text: '..', mode: 'raw' } },
    { ...base('audio'), encounter: { text: '..', mode: 'raw' } },
    { ...base('encounter'), encounter: { text: '\u0000', mode: 'component' } },
    { ...base('transcript'), document: { text: '%2F..%2F', mode: 'raw' } },
    { ...base('list'), query: [pair('start_at', '2025-01-01T00:00:00+23:59')] },
    { ...base('list'), query: [pair('end_at', '0001-01-01T00:00:00+15:00'), pair('limit', '1')] },
    { ...base('list'), query: [pair('limit', '1'), pair('limit', '2')] },
    { ...base('list'), query: [pair('offset', `1${'0'.repeat(30)}`)] },
    { ...base('encounter'), encounter: { text: 'a'.repeat(1500), mode: 'component' } },
    // Unknown keys that are not the spec's examples, alone and beside invalid list values.
    { ...base('list'), query: [pair('foo', '1')] },
    // A key no ASCII-only sanitizer keeps a character of: field may be null (ERR-FIELD-SANITIZATION).
    { ...base('list'), query: [pair('лимит', '1')] },
    // Authorization twice: the full key first, then another (a front proxy may refuse the request itself).
    { ...base('list'), auth: { label: 'two Authorization headers (full key first)', as: 'full', headers: { Authorization: 'Bearer x' }, malformed: true } },
    { ...base('list'), query: [pair('Limit', '5')] },
    { ...base('list'), query: [pair('limit', 'abc'), pair('include', 'all')] },
    { ...base('transcript'), query: [pair('format', 'txt')] },
  ];
}

// ---------------------------------------------------------------- the oracle

/** A key no sanitization changes (ERR-FIELD-SANITIZATION): ASCII letters, digits and _, at most 64. */
const PLAIN_KEY = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The §7.2 field of each reason. For unsupported_filter, the offending key sanitized: any string, or null when
 * a key of the query is not plain (how a key is sanitized is open, and a key with nothing left after it, лимит to
 * an ASCII-only sanitizer, or the empty key of `=v`, has no name to give: "when applicable … otherwise null", §7).
 */
function fieldOk(reason: string, field: unknown, c: FuzzCase): boolean {
  const f = FIELD_BY_REASON[reason];
  if (f === undefined) return field === null;
  if (f !== 'key') return typeof field === 'string' && f.includes(field);
  return typeof field === 'string' || (field === null && sentKeys(c).some((k) => !PLAIN_KEY.test(k)));
}

function judge(ex: Exchange, c: FuzzCase): void {
  if (outsideRoutes(c)) return judgeOutside(ex, c);
  if (c.auth.malformed && refusedAtHttpLayer(ex, c)) return;
  const body = expectDocumented(ex, c.route.operationId);
  const status = ex.response!.status;
  const unknown = unknownKey(c);
  if (unknown !== undefined && (status !== 400 || (body as ErrorBody).reason_code !== 'unsupported_filter')) {
    fail(`Unknown query key ${JSON.stringify(unknown)} not refused with 400 unsupported_filter`, describe(ex));
  }
  if (status === 200) return;
  const e = body as ErrorBody;
  const listed = operation(c.route.operationId).reasons[String(status)] ?? [];
  if (!listed.includes(e.reason_code)) fail(`Reason ${e.reason_code} is not listed for ${status} on ${c.route.operationId}`, describe(ex));
  if (!fieldOk(e.reason_code, e.field, c)) fail(`Field ${JSON.stringify(e.field)} does not fit ${e.reason_code} (§7.2)`, describe(ex));
}

/** A 400 that is not the route's documented answer, to a request malformed at the HTTP layer: the layer's refusal. */
function refusedAtHttpLayer(ex: Exchange, c: FuzzCase): boolean {
  if (ex.response?.status !== 400) return false;
  try {
    expectDocumented(ex, c.route.operationId);
    return false;
  } catch {
    return true;
  }
}

/**
 * Outside the five routes: an answer documented for the drawn route passes, and so does any other refusal in
 * any form (a front proxy's own page too); an undocumented 5xx or an undocumented 2xx fails.
 */
function judgeOutside(ex: Exchange, c: FuzzCase): void {
  if (ex.error) fail('No response from target', `${ex.error.kind}: ${ex.error.message}`);
  try {
    expectDocumented(ex, c.route.operationId);
    return;
  } catch {
    /* not the service's documented answer: judged below */
  }
  const status = ex.response!.status;
  if (status >= 500) fail('Server error on a request outside the five routes', describe(ex));
  if (status < 200 || status > 299) return;
  const errors: string[] = [];
  for (const r of ROUTES) {
    try {
      expectSuccess(ex, r.operationId);
      return;
    } catch (e) {
      errors.push(`${r.operationId}: ${(e as Error).message}`);
    }
  }
  fail('Undocumented 2xx on a request outside the five routes', `${describe(ex)} (${errors[0]})`);
}

async function send(api: CheckApi, c: FuzzCase, record: boolean): Promise<Exchange> {
  const target = renderTarget(c);
  const opts = { as: c.auth.as, headers: c.auth.headers, faults: c.fault ? [c.fault] : [] };
  return record ? api.get(target, { ...opts, shared: true }) : api.target.send(target, { ...opts, shared: true });
}

check({
  id: ID,
  requirements: [
    'ERR-BODY-ON-FAILURE', 'ERR-BODY-FIELDS', 'ERR-FIELD-FIELD', 'ERR-REASON-CODE-ENUM', 'CONTRACT-CLOSED-RESPONSES', 'CONTRACT-JSON-RESPONSES',
    'CONTRACT-OPAQUE-IDS', 'LIST-ERRORS', 'ENC-ERRORS', 'DOC-ERRORS', 'TRANSCRIPT-ERRORS', 'AUDIO-ERRORS',
    'LIST-UNSUPPORTED-KEYS', 'ENC-NO-QUERY', 'DOC-NO-QUERY', 'TRANSCRIPT-NO-QUERY', 'AUDIO-NO-QUERY', 'COND-UNSUPPORTED-FILTER', 'ORDER-4-UNSUPPORTED-KEYS',
  ],
  title: 'random queries, path ids and Authorization variations on every route get only documented answers (status, body, reason and field), and any unknown query key sent with the full key gets 400 unsupported_filter',
  run: async (api, _scope, { testInfo }) => {
    testInfo.setTimeout(180_000);
    const { seed, runs } = startProperty(testInfo, 100);
    api.key('full');
    const statuses = new Map<number, number>();
    try {
      await checkProperty({
        arbitrary: caseArb(api.target), seed, runs, examples: examples(api),
        send: (c, record) => send(api, c, record),
        judge: (ex, c) => {
          if (ex.response) statuses.set(ex.response.status, (statuses.get(ex.response.status) ?? 0) + 1);
          judge(ex, c);
        },
        describe: describeCase,
        failure: 'Undocumented answer',
      });
    } finally {
      testInfo.annotations.push({ type: 'distribution', description: [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`).join(', ') });
    }
  },
});
