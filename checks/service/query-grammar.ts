// Query values and path ids at the edges of their grammar (issue 30), each class a FIXED table of cases
// (./query-grammar.cases.ts) so a miss never depends on a property's seed:
// - start_at/end_at that are not timezone-aware ISO 8601 date-times (numbers, offsets with seconds, other formats,
//   no offset, junk after it, days that do not exist) → 422 invalid_query with `field` the parameter (§4.1, §7.2);
// - valid bounds across the real UTC offsets and the four-digit years, and at sub-millisecond precision, are
//   accepted and compared as instants: a bound B splits the caller's list in two, start_at=B (inclusive) and
//   end_at=B (exclusive), judged on the target's own data with no walk (below, splitAt);
// - spellings the spec leaves open (basic format, week and ordinal dates, lower-case t/z, a decimal comma, 24:00,
//   -00:00, years outside 1583..9999, …) are recorded: rejected with 422 invalid_query, or accepted and read as
//   the instant ISO 8601 gives them. Reading one as another instant fails;
// - start_at and end_at together in different offsets and one nanosecond apart;
// - limit, offset and sort_order with stray characters inside or around them, and percent-encoded sort values;
// - an empty query string, on the list route and on two item routes;
// - path ids sent in another but equivalent percent-encoding (RFC 3986 §2.3, §6.2.2) name the same resource.
// Request targets go on the wire exactly as written here (observe/http.ts).
import { suite } from '../../engine/declare.ts';
import { describe, expectDocumented, expectError, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { NotVerified, type CheckScope, type Exchange } from '../../record/record.ts';
import { compareInstants, describeInstant, floorSecond, instant, parseInstant, plus, type Instant } from '../../judge/instant.ts';
import { expectPage, percentEncode } from '../../judge/pagination.ts';
import type { CheckApi } from '../../observe/target.ts';
import {
  BOUND_CASES, boundId, CLAUSES, DATE_PARAMS, EMPTY_QUERIES, emptyQueryId, ID_ENCODINGS, ID_ROUTES, idEncodingId, INT_PARAMS, INTEGER_STRAYS,
  integerStrayId, NOT_DATE_TIMES, notDateTimeId, plainSegment, SORT_ENCODED, sortEncodedId, SORT_STRAYS, sortStrayId, WINDOW_CASES, windowId,
  type BoundCase, type DateParam, type SpelledBound, type ValueEncoding,
} from './query-grammar.cases.ts';
import { resourceNeeds } from './needs.ts';

const check = suite(import.meta.filename);

const LIST = '/external/v1/encounters';
/** Items per page of a bound's two halves: the first items of each are the ones nearest the bound. */
const PAGE = 5;
/** The largest page the contract allows, for a window that should hold a handful of encounters. */
const WINDOW_PAGE = 100;

interface Item { encounter_id: string; created_at: string }
interface ListBody { items: Item[]; limit: number; offset: number; total: number }

/** A date-time as a query value: percent-encoded (upper-case hex, `:` left raw for readable evidence), lower-case hex, or every byte. */
function encodeValue(text: string, encoding: ValueEncoding = 'upper'): string {
  if (encoding === 'all') return percentEncode(text, 'all');
  if (encoding === 'lower') return percentEncode(text, 'lower');
  return percentEncode(text).replaceAll('%3A', ':');
}

/** created_at of a listed encounter as an exact instant (a spelling this harness cannot read exactly is not judged). */
function createdAt(item: Item): Instant {
  const t = parseInstant(item.created_at);
  if (!t) throw new NotVerified(`created_at ${JSON.stringify(item.created_at)} of ${item.encounter_id} is not an RFC 3339 date-time this check can read exactly`);
  return t;
}

const list = async (api: CheckApi, query: string, opts: { fresh?: boolean } = {}): Promise<ListBody> => expectSuccess<ListBody>(await api.get(`${LIST}?${query}`, opts), 'listPublicEncounters');

/**
 * The newest listed encounter (the default order is created_at descending): the bounds on data are placed at its
 * created_at. One read per worker (shared): an encounter that was newest is still an instant of the data; the window
 * check asks again, fresh, before it judges a newest encounter missing.
 */
async function newest(api: CheckApi): Promise<{ body: ListBody; item: Item; x: Instant }> {
  const body = await list(api, 'sort_order=desc&limit=1');
  const item = body.items[0];
  if (!item) throw new NotVerified('the caller\'s organization lists no encounter: a bound cannot be placed on its data');
  return { body, item, x: createdAt(item) };
}

const show = (b: SpelledBound) => (compareInstants(b.lo, b.hi) === 0 ? describeInstant(b.lo) : `${describeInstant(b.lo)} … ${describeInstant(b.hi)}`);

/** One side of a split: the parameter, its answer, and whether it was accepted (200) or refused (422 invalid_query naming it). */
interface Side { param: DateParam; ex: Exchange; body?: ListBody }

function side(param: DateParam, ex: Exchange, kind: BoundCase['kind'], text: string): Side {
  if (ex.response?.status === 422 && kind !== 'valid') {
    expectError(ex, { reason: 'invalid_query', field: param });
    return { param, ex };
  }
  if (ex.response?.status !== 200 && kind === 'valid') fail(`${param}=${text}, a valid timezone-aware date-time, was not accepted`, describe(ex));
  return { param, ex, body: expectSuccess<ListBody>(ex, 'listPublicEncounters') };
}

/** What one bound did: refused as both parameters (open spellings only), or accepted, with what contradicts its instant. */
type Split = { refused: true } | { refused: false; problems: string[] };

/**
 * The bound B splits the list: start_at=B (ascending) holds no encounter created before B, end_at=B
 * (descending) none created at or after it, and their totals add up to the unbounded total. The first items of
 * each half are the ones nearest B, so an encounter misplaced by a wrong reading of B (text order, a lost offset,
 * digits dropped) is the first item of the half it does not belong to. No walk: four requests whatever the size
 * of the data. Totals that add up to the unbounded total (the worker's shared read) agree; totals that do not are
 * judged only when a fresh read of the unbounded total, taken after the halves, still gives the same number (offset
 * pages carry no snapshot guarantee, LIST-OFFSET-NO-SNAPSHOT): a conformant static target costs no extra read.
 */
async function splitAt(api: CheckApi, scope: CheckScope, b: SpelledBound, kind: BoundCase['kind'], encoding: ValueEncoding | undefined): Promise<Split> {
  const value = encodeValue(b.text, encoding);
  // The unbounded total before: the worker's shared read, taken at or before this check began.
  const before = await list(api, 'limit=1');
  const [a, c] = await Promise.all([
    api.get(`${LIST}?start_at=${value}&sort_order=asc&limit=${PAGE}`),
    api.get(`${LIST}?end_at=${value}&sort_order=desc&limit=${PAGE}`),
  ]);
  const start = side('start_at', a, kind, b.text);
  const end = side('end_at', c, kind, b.text);
  if (!start.body && !end.body) return { refused: true };
  if (!start.body || !end.body) {
    const [yes, no] = start.body ? ['start_at', 'end_at'] : ['end_at', 'start_at'];
    fail(`the same value is accepted as ${yes} but refused as ${no}`, `${JSON.stringify(b.text)}: both parameters are a timezone-aware ISO datetime (§4.1)`);
  }
  const problems: string[] = [];
  const early = start.body.items.filter((i) => compareInstants(createdAt(i), b.lo) < 0);
  const late = end.body.items.filter((i) => compareInstants(createdAt(i), b.hi) >= 0);
  if (early.length > 0) problems.push(`start_at=${b.text} (${show(b)}) lists ${early.map((i) => `${i.encounter_id} created ${i.created_at}`).join(', ')}, before the bound`);
  if (late.length > 0) problems.push(`end_at=${b.text} (${show(b)}) lists ${late.map((i) => `${i.encounter_id} created ${i.created_at}`).join(', ')}, at or after the bound`);
  if (start.body.total + end.body.total !== before.total) {
    // Fresh: equal totals before and after mean nothing moved while the halves were read.
    const after = await list(api, 'limit=1', { fresh: true });
    if (before.total === after.total) problems.push(`start_at=${b.text} counts ${start.body.total} and end_at=${b.text} ${end.body.total}, which do not add up to the ${before.total} listed without a bound`);
    else scope.note(`the unbounded total moved (${before.total} → ${after.total}) during the check: the halves' totals were not compared`);
  }
  return { refused: false, problems };
}

/** The bounds of a case: on the whole second of the newest created_at and the next one, on that created_at, or fixed. */
async function boundsOf(api: CheckApi, c: BoundCase): Promise<SpelledBound[]> {
  if (c.anchor === 'fixed') return [c.spell(instant(0n))];
  const { x } = await newest(api);
  if (c.anchor === 'exact') return [c.spell(x)];
  const s = floorSecond(x);
  return [c.spell(s), c.spell(plus(s, 1n, 0))];
}

// ---------------------------------------------------------------- not a timezone-aware date-time → 422

for (const param of DATE_PARAMS) {
  for (const c of NOT_DATE_TIMES) {
    const id = notDateTimeId(param, c.name);
    check({
      id, requirements: ['LIST-DATETIME-TZ-AWARE', 'COND-INVALID-QUERY-DATE', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD'],
      title: `${param} given ${c.what} is not a timezone-aware ISO 8601 date-time (${c.why}): 422 invalid_query with field "${param}" [${CLAUSES.notDateTime}]`,
      run: async (api) => {
        const raw = c.raw ?? `=${encodeValue(c.value!)}`;
        expectError(await api.get(`${LIST}?${param}${raw}`), { reason: 'invalid_query', field: param });
      },
    });
  }
}

// ---------------------------------------------------------------- instants spelled many ways

const BOUND_REQ: Record<BoundCase['kind'], string[]> = {
  valid: ['LIST-DATETIME-TZ-AWARE', 'LIST-DATETIME-SAME-INSTANT', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE', 'FIELD-LIST-TOTAL'],
  fraction: ['LIST-DATETIME-FORMAT-DETAILS', 'LIST-DATETIME-SAME-INSTANT', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE'],
  open: ['LIST-DATETIME-FORMAT-DETAILS'],
};

for (const c of BOUND_CASES) {
  const id = boundId(c.name);
  const title = {
    valid: `${c.what} is accepted as start_at and end_at and compared as that instant: start_at lists nothing earlier, end_at nothing at or later, and the two totals add up [${CLAUSES.valid}]`,
    fraction: `${c.what}: when accepted, compared at every digit (a refusal with 422 invalid_query is recorded) [${CLAUSES.fraction}]`,
    open: `${c.what}: refused with 422 invalid_query or accepted as the instant ISO 8601 gives it, recorded; accepted as another instant fails [${CLAUSES.open}]`,
  }[c.kind];
  check({ id, requirements: BOUND_REQ[c.kind], title, run: async (api, scope) => {
    const bounds = await boundsOf(api, c);
    // The bounds of a case split the list independently: side by side (a distant target pays three round trips, not six).
    const splits: Split[] = await Promise.all(bounds.map((b) => splitAt(api, scope, b, c.kind, (c as BoundCase).encoding)));
    const texts = bounds.map((b) => JSON.stringify(b.text)).join(' and ');
    if (splits.some((x) => x.refused) && splits.some((x) => !x.refused)) fail('the same spelling is accepted for one instant and refused for another', texts);
    if (splits.every((x) => x.refused)) {
      scope.observe(`${texts} refused as start_at and as end_at with 422 invalid_query (${c.kind === 'fraction' ? 'how many fraction digits are accepted is open' : 'the spelling is open'}: LIST-DATETIME-FORMAT-DETAILS)`);
      return;
    }
    const problems = splits.flatMap((x) => (x.refused ? [] : x.problems));
    if (problems.length > 0) fail(c.kind === 'valid' ? 'the bound is not compared as the instant it names' : `${texts} accepted but read as another instant`, problems.join('; '));
    if (c.kind === 'open') scope.observe(`${texts} accepted and compared as ${bounds.map(show).join(' and ')}`);
  } });
}

// ---------------------------------------------------------------- start_at and end_at together

for (const c of WINDOW_CASES) {
  const id = windowId(c.name);
  const requirements = c.kind === 'equal'
    ? ['LIST-START-BEFORE-END', 'LIST-DATETIME-SAME-INSTANT', 'LIST-START-BEFORE-END-REASON']
    : ['LIST-DATETIME-SAME-INSTANT', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE', ...(c.kind === 'fraction' ? ['LIST-DATETIME-FORMAT-DETAILS'] : ['LIST-DATETIME-TZ-AWARE'])];
  const title = c.kind === 'equal'
    ? `${c.what}: start_at is not earlier than end_at, so the request is refused with a documented 4xx (reason recorded) [${CLAUSES.window}]`
    : `${c.what}: accepted, and lists exactly the encounters created in [start_at, end_at), the encounter created at start_at among them${c.kind === 'fraction' ? ' (a refusal of the digits themselves is recorded)' : ''} [${CLAUSES.window}]`;
  check({ id, requirements, title, run: async (api, scope) => {
    const first = await newest(api);
    const w = c.spell(first.x);
    const q = `start_at=${encodeValue(w.start.text)}&end_at=${encodeValue(w.end.text)}`;
    const ex = await api.get(`${LIST}?${q}&limit=${WINDOW_PAGE}`);
    const status = ex.response?.status ?? 0;
    if (c.kind === 'equal') {
      const body = expectDocumented(ex, 'listPublicEncounters');
      if (status < 400 || status > 499) fail('start_at equal to end_at (the same instant in two offsets) was not refused', describe(ex));
      const e = body as ErrorBody;
      scope.note(`answered ${status} ${e.reason_code} with field ${JSON.stringify(e.field)} (the reason is not shown in §4.1)`);
      return;
    }
    if (status !== 200 && c.kind === 'fraction' && status >= 400 && status < 500) {
      expectDocumented(ex, 'listPublicEncounters');
      // Refused: for its digits (open), or as if start_at were not earlier than end_at (a defect)?
      const alone = await Promise.all([w.start, w.end].map((b, k) => api.get(`${LIST}?${k === 0 ? 'start_at' : 'end_at'}=${encodeValue(b.text)}&limit=1`)));
      if (alone.every((a) => a.response?.status === 200)) {
        fail('start_at earlier than end_at by one nanosecond is refused, though each bound alone is accepted', `${describe(ex)}: start_at ${show(w.start)}, end_at ${show(w.end)}`);
      }
      scope.observe(`nine fraction digits are refused (${alone.map((a) => a.response?.status).join(', ')} for the bounds alone): how many digits are accepted is open`);
      return;
    }
    if (status !== 200) fail(`a valid window was not accepted`, describe(ex));
    const body = expectSuccess<ListBody>(ex, 'listPublicEncounters');
    const outside = body.items.filter((i) => compareInstants(createdAt(i), w.start.lo) < 0 || compareInstants(createdAt(i), w.end.hi) >= 0);
    if (outside.length > 0) fail('the window lists encounters outside [start_at, end_at)', `${outside.map((i) => `${i.encounter_id} created ${i.created_at}`).join(', ')} for [${show(w.start)}, ${show(w.end)})`);
    if (!body.items.some((i) => i.encounter_id === first.item.encounter_id) && body.total <= WINDOW_PAGE) {
      const still = await list(api, 'sort_order=desc&limit=1', { fresh: true });
      if (still.items[0]?.encounter_id === first.item.encounter_id) {
        fail('the window leaves out the encounter created inside it', `${first.item.encounter_id} created ${first.item.created_at} is not listed for [${w.start.text}, ${w.end.text}) (${body.total} listed)`);
      }
      scope.observe(`the newest encounter changed during the check (${first.item.encounter_id} → ${still.items[0]?.encounter_id ?? 'none'}): its place in the window was not judged`);
    }
  } });
}

// ---------------------------------------------------------------- limit, offset and sort_order with stray characters

const INT_REASON = { limit: 'invalid_limit', offset: 'invalid_offset' } as const;
const INT_REQ = { limit: 'COND-INVALID-LIMIT', offset: 'COND-INVALID-OFFSET' } as const;

for (const param of INT_PARAMS) {
  for (const c of INTEGER_STRAYS) {
    const id = integerStrayId(param, c.name);
    check({
      id, requirements: ['LIST-CANONICAL-INTEGERS', 'LIMIT-CANONICAL-INTEGERS', INT_REQ[param], 'ERR-FIELD-FIELD'],
      title: `${param}=${c.raw}, ${c.what}, is not canonical decimal text: 422 ${INT_REASON[param]} with field "${param}" [${CLAUSES.integer}]`,
      run: async (api) => {
        expectError(await api.get(`${LIST}?${param}=${c.raw}`), { reason: INT_REASON[param], field: param });
      },
    });
  }
}

for (const c of SORT_STRAYS) {
  const id = sortStrayId(c.name);
  check({
    id, requirements: ['LIST-SORT-ORDER-ENUM', 'COND-INVALID-SORT', 'ERR-FIELD-FIELD'],
    title: `sort_order=${c.raw}, ${c.what}, is neither asc nor desc: 422 invalid_sort with field "sort_order" [${CLAUSES.sort}]`,
    run: async (api) => {
      expectError(await api.get(`${LIST}?sort_order=${c.raw}`), { reason: 'invalid_sort', field: 'sort_order' });
    },
  });
}

for (const c of SORT_ENCODED) {
  const id = sortEncodedId(c.name);
  check({
    id, requirements: ['LIST-SORT-ORDER-ENUM', 'LIST-ORDERING-CREATED-AT'],
    title: `sort_order=${c.raw} is "${c.value}" once percent-decoded: accepted, the same page as sort_order=${c.value} [${CLAUSES.sort}]`,
    run: async (api, scope) => {
      const encoded = await list(api, `sort_order=${c.raw}&limit=${PAGE}`);
      const plain = await list(api, `sort_order=${c.value}&limit=${PAGE}`);
      const ids = (b: ListBody) => b.items.map((i) => i.encounter_id).join(', ');
      if (ids(encoded) === ids(plain)) return;
      if (encoded.total !== plain.total) {
        scope.observe(`the total moved between the two reads (${encoded.total} → ${plain.total}): the pages were not compared`);
        return;
      }
      fail(`sort_order=${c.raw} gives another page than sort_order=${c.value}`, `${ids(encoded)} vs ${ids(plain)}`);
    },
  });
}

// ---------------------------------------------------------------- empty query strings

for (const c of EMPTY_QUERIES) {
  const id = emptyQueryId(c.name);
  const requirements = c.route === 'list' ? ['LIST-QUERY-OPTIONAL', 'LIST-UNSUPPORTED-KEYS'] : c.route === 'encounter' ? ['ENC-NO-QUERY', 'ENC-PATH'] : ['DOC-NO-QUERY', 'DOC-PATH'];
  const title = c.kind === 'must'
    ? `${c.what} holds no query key: answered as the plain request (200, the same resource or the default page) [${CLAUSES.emptyQuery}]`
    : `${c.what}: whether an empty pair is a key is not settled; a documented answer is required (200 honouring the other parameters, or 400 unsupported_filter), and recorded [${CLAUSES.emptyQuery}]`;
  check({ id, requirements, title, needs: resourceNeeds(...(c.route === 'encounter' ? ['own_encounter'] : c.route === 'document' ? ['clinical_document'] : [])), run: async (api, scope) => {
    if (c.route === 'encounter') {
      const enc = api.encounter('own_encounter');
      const body = expectSuccess<{ encounter: { encounter_id: string } }>(await api.get(`${LIST}/${plainSegment(enc)}${c.query}`), 'getPublicEncounter');
      if (body.encounter.encounter_id !== enc) fail('another encounter was answered', `${body.encounter.encounter_id}, not ${enc}`);
      return;
    }
    if (c.route === 'document') {
      const d = api.document('clinical_document');
      const body = expectSuccess<{ document: { document_id: string } }>(await api.get(`${LIST}/${plainSegment(d.encounter_id)}/documents/${plainSegment(d.document_id)}${c.query}`), 'getPublicEncounterDocument');
      if (body.document.document_id !== d.document_id) fail('another document was answered', `${body.document.document_id}, not ${d.document_id}`);
      return;
    }
    const ex = await api.get(`${LIST}${c.query}`);
    const want = c.name === 'list-empty-pairs-around-limit' ? { limit: 5, offset: 0 } : { limit: 50, offset: 0 };
    if (c.kind === 'must') {
      expectPage(ex, want);
      return;
    }
    if (ex.response?.status === 400) {
      const body = expectDocumented(ex, 'listPublicEncounters') as ErrorBody;
      if (body.reason_code !== 'unsupported_filter') fail(`${c.query} answered 400 ${body.reason_code}`, describe(ex));
      scope.observe(`400 unsupported_filter with field ${JSON.stringify(body.field)}: an empty pair is read as a key`);
      return;
    }
    expectPage(ex, want);
    scope.observe(`200 with limit ${want.limit}: empty pairs are skipped`);
  } });
}

// ---------------------------------------------------------------- path ids in equivalent encodings

interface Identity { label: string; get: (api: CheckApi, encode: (id: string) => string) => Promise<Exchange>; same: (a: any, b: any) => string | undefined; ids: (api: CheckApi) => string[] }

const IDENTITY: Record<(typeof ID_ROUTES)[number], Identity> = {
  encounter: {
    label: 'own_encounter',
    ids: (api) => [api.encounter('own_encounter')],
    get: (api, encode) => api.get(`${LIST}/${encode(api.encounter('own_encounter'))}`),
    same: (a, b) => {
      for (const k of ['encounter_id', 'organization_id', 'created_at'] as const) if (a.encounter[k] !== b.encounter[k]) return `encounter.${k} ${JSON.stringify(a.encounter[k])} vs ${JSON.stringify(b.encounter[k])}`;
      return undefined;
    },
  },
  document: {
    label: 'clinical_document',
    ids: (api) => Object.values(api.document('clinical_document')),
    get: (api, encode) => {
      const d = api.document('clinical_document');
      return api.get(`${LIST}/${encode(d.encounter_id)}/documents/${encode(d.document_id)}`);
    },
    same: (a, b) => {
      for (const k of ['document_id', 'encounter_id', 'schema_type'] as const) if (a.document[k] !== b.document[k]) return `document.${k} ${JSON.stringify(a.document[k])} vs ${JSON.stringify(b.document[k])}`;
      return undefined;
    },
  },
};

for (const route of ID_ROUTES) {
  for (const enc of ID_ENCODINGS) {
    const id = idEncodingId(route, enc.name);
    const op = route === 'encounter' ? 'getPublicEncounter' : 'getPublicEncounterDocument';
    const requirements = route === 'encounter' ? ['ENC-PATH-PARAM', 'ENC-PATH', 'CONTRACT-OPAQUE-IDS'] : ['DOC-PATH-PARAMS', 'DOC-PATH', 'CONTRACT-OPAQUE-IDS'];
    check({ id, requirements, title: `the profile's ${IDENTITY[route].label} path with ${enc.what} names the same resource: 200 with the same ${route} [${CLAUSES.pathId}]`, needs: resourceNeeds(IDENTITY[route].label), run: async (api, scope) => {
      const r = IDENTITY[route];
      const ids = r.ids(api);
      const plainEx = await r.get(api, plainSegment);
      if (plainEx.response?.status !== 200) throw new NotVerified(`the ${route} with its ids encoded the usual way does not answer 200 (${describe(plainEx)}): there is no resource to compare with`);
      const plain = expectSuccess(plainEx, op);
      if (!ids.some((x) => enc.applies(x))) {
        scope.observe(`no id of ${r.label} has a form ${enc.what} that differs from the usual one: nothing to compare`);
        return;
      }
      const other = await r.get(api, enc.encode);
      if (other.response?.status !== 200) fail(`the ${route} path with ${enc.what} does not name the ${route}`, describe(other));
      const diff = r.same(expectSuccess(other, op), plain);
      if (diff) fail(`the ${route} path with ${enc.what} names another ${route}`, diff);
    } });
  }
}
