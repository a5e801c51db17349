// §7.2 conditions as a matrix: for each row, the exact status, reason_code, §7.1 category and `field`.
// unsupported_filter on every route (field = the offending key, also for a key that differs only in case
// and for a percent-encoded key), the four 422 rows with their field, the 404 rows (category recorded as
// informational: §7.1 does not show it), unsupported_document_type, audio_not_available_for_document and
// audio_storage_unavailable; and one explicit check per status that its category string is the §7.1 one.
// Authentication (401) and access (403) rows per route live in authentication.spec.ts and access.spec.ts.
import { suite } from '../../engine/declare.ts';
import { describe, expectError, expectErrorOrOpen, expectJson, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import type { Exchange } from '../../record/record.ts';
import type { DocumentRole } from '../../profile/profile.ts';
import { ROUTES, type RouteRef } from '../../observe/routes.ts';
import type { CheckApi } from '../../observe/target.ts';
import { asNeeds, faultNeeds, resourceNeeds } from './needs.ts';

const check = suite(import.meta.filename);

const LIST = '/external/v1/encounters';
const ITEM_ROUTES = ROUTES.filter((r) => r.name !== 'list');
const route = (name: RouteRef['name']): RouteRef => ROUTES.find((r) => r.name === name)!;

/** Per-route requirement ids: the route's "no query keys" rule (list: the five keys) and its error list. */
const ROUTE_REQ: Record<RouteRef['name'], { keys: string; errors: string }> = {
  list: { keys: 'LIST-UNSUPPORTED-KEYS', errors: 'LIST-ERRORS' },
  encounter: { keys: 'ENC-NO-QUERY', errors: 'ENC-ERRORS' },
  document: { keys: 'DOC-NO-QUERY', errors: 'DOC-ERRORS' },
  transcript: { keys: 'TRANSCRIPT-NO-QUERY', errors: 'TRANSCRIPT-ERRORS' },
  audio: { keys: 'AUDIO-NO-QUERY', errors: 'AUDIO-ERRORS' },
};

/** The `field` of an error body, when the response is JSON with one; never throws (the assertion that follows judges). */
function fieldOf(ex: Exchange): unknown {
  try {
    return (JSON.parse(ex.response?.body ?? '') as ErrorBody)?.field;
  } catch {
    return undefined;
  }
}

/** An id that names no document: opaque ids carry no format, so a long, marked one is used. */
const UNKNOWN_DOCUMENT_ID = 'conformance-no-such-document-0c5e2f9a41d7';

// ---------------------------------------------------------------- 400 unsupported_filter

interface KeyCase {
  /** kebab-case, part of the check id. */
  name: string;
  /** Raw query text as sent. */
  query: string;
  field: string;
  what: string;
}

// §4.1 names these four as examples of unsupported keys on the list route.
const LIST_UNSUPPORTED: KeyCase[] = [
  { name: 'owners', query: 'owners=me', field: 'owners', what: 'owners' },
  { name: 'record-kind', query: 'record_kind=note', field: 'record_kind', what: 'record_kind' },
  { name: 'date-of-service', query: 'date_of_service=2025-01-15', field: 'date_of_service', what: 'date_of_service' },
  { name: 'patient-id', query: 'patient_id=p-1', field: 'patient_id', what: 'patient_id' },
  // The offending key is not the first one: field must name it, not the first or last key.
  { name: 'after-supported-key', query: 'limit=5&foo=1&sort_order=asc', field: 'foo', what: 'foo between two supported keys' },
];

for (const c of LIST_UNSUPPORTED) {
  const id = `errors-unsupported-filter-list-${c.name}`;
  check({
    id, requirements: ['COND-UNSUPPORTED-FILTER', 'LIST-UNSUPPORTED-KEYS', 'LIST-ERRORS', 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD', 'ERR-BODY-FIELDS'],
    title: `list: the unsupported key ${c.what} answers 400 unsupported_filter with field ${JSON.stringify(c.field)}`,
    run: async (api) => {
      expectError(await api.get(`${LIST}?${c.query}`, { shared: true }), { reason: 'unsupported_filter', field: c.field });
    },
  });
}

// Query keys are case-sensitive text: `Limit` is not `limit`, so it is an unsupported key on every route.
// It is plain ASCII letters, so no sanitization changes it: field is `Limit` verbatim. A field of `limit`
// would name a supported key and mislead a client that branches on it.
for (const r of ROUTES) {
  const id = `errors-unsupported-filter-${r.name}-case-variant`;
  check({
    id, requirements: ['COND-UNSUPPORTED-FILTER', ROUTE_REQ[r.name].keys, ROUTE_REQ[r.name].errors, 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD'],
    title: `${r.name}: the key Limit (differs from limit only in case) answers 400 unsupported_filter with field "Limit"`,
    needs: r.needs,
    run: async (api) => {
      expectError(await api.get(`${r.path(api)}?Limit=1`, { shared: true }), { reason: 'unsupported_filter', field: 'Limit' });
    },
  });
}

// On routes without query parameters, any key is unsupported: a key the list route supports (limit), an
// invented one (foo), and `%6Cimit`, which percent-decodes to `limit` (RFC 3986 §2.3: an encoded unreserved
// character is equivalent to the character itself).
for (const r of ITEM_ROUTES) {
  for (const c of [
    { name: 'limit', query: 'limit=1', field: 'limit', what: 'limit (supported only on the list route)' },
    { name: 'foo', query: 'foo=bar', field: 'foo', what: 'foo' },
  ]) {
    const id = `errors-unsupported-filter-${r.name}-${c.name}`;
    check({
      id, requirements: ['COND-UNSUPPORTED-FILTER', ROUTE_REQ[r.name].keys, ROUTE_REQ[r.name].errors, 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD', 'ERR-BODY-FIELDS'],
      title: `${r.name}: the query key ${c.what} answers 400 unsupported_filter with field ${JSON.stringify(c.field)}`,
      needs: r.needs,
      run: async (api) => {
        expectError(await api.get(`${r.path(api)}?${c.query}`, { shared: true }), { reason: 'unsupported_filter', field: c.field });
      },
    });
  }

  const id = `errors-unsupported-filter-${r.name}-percent-encoded-key`;
  check({
    id, requirements: ['COND-UNSUPPORTED-FILTER', ROUTE_REQ[r.name].keys, ROUTE_REQ[r.name].errors, 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD', 'ERR-FIELD-SANITIZATION'],
    title: `${r.name}: the key %6Cimit (percent-encoded limit) answers 400 unsupported_filter naming the decoded key "limit"`,
    needs: r.needs,
    run: async (api, scope) => {
      const ex = await api.get(`${r.path(api)}?%6Cimit=1`, { shared: true });
      // The decoded name is the field name; echoing the key as sent is a sanitization choice §7 leaves open.
      const asSent = fieldOf(ex) === '%6Cimit';
      expectError(ex, { reason: 'unsupported_filter', field: asSent ? '%6Cimit' : 'limit' });
      if (asSent) scope.observe('field names the key as sent ("%6Cimit"), not its decoded form "limit"');
    },
  });
}

// The same key percent-encoded on the list route IS `limit`, so it is supported and validated as limit.
check({
  id: 'errors-list-percent-encoded-key-is-supported', requirements: ['LIST-UNSUPPORTED-KEYS', 'LIST-QUERY-OPTIONAL', 'LIST-LIMIT-RANGE'],
  title: 'list: %6Cimit=1 is the supported key limit (RFC 3986 equivalence), answered 200 with limit 1',
  run: async (api) => {
    const body = expectSuccess<{ limit: number; items: unknown[] }>(await api.get(`${LIST}?%6Cimit=1`, { shared: true }), 'listPublicEncounters');
    if (body.limit !== 1 || body.items.length > 1) fail('%6Cimit=1 was not read as limit=1', `limit ${body.limit}, ${body.items.length} item(s)`);
  },
});

// ---------------------------------------------------------------- 422 rows (list route)

interface QueryCase {
  id: string;
  query: string;
  reason: 'invalid_limit' | 'invalid_offset' | 'invalid_sort' | 'invalid_query';
  field: string;
  requirements: string[];
  what: string;
}

const QUERY_CASES: QueryCase[] = [
  { id: 'errors-invalid-limit-field-limit', query: 'limit=abc', reason: 'invalid_limit', field: 'limit', requirements: ['COND-INVALID-LIMIT', 'LIST-LIMIT-RANGE'], what: 'limit=abc' },
  { id: 'errors-invalid-offset-field-offset', query: 'offset=abc', reason: 'invalid_offset', field: 'offset', requirements: ['COND-INVALID-OFFSET', 'LIST-OFFSET-RANGE'], what: 'offset=abc' },
  { id: 'errors-invalid-sort-field-sort-order', query: 'sort_order=up', reason: 'invalid_sort', field: 'sort_order', requirements: ['COND-INVALID-SORT', 'LIST-SORT-ORDER-ENUM'], what: 'sort_order=up' },
  // The enum values are lower-case text; `ASC` is another value.
  { id: 'errors-invalid-sort-uppercase', query: 'sort_order=ASC', reason: 'invalid_sort', field: 'sort_order', requirements: ['COND-INVALID-SORT', 'LIST-SORT-ORDER-ENUM'], what: 'sort_order=ASC' },
  { id: 'errors-invalid-sort-empty', query: 'sort_order=', reason: 'invalid_sort', field: 'sort_order', requirements: ['COND-INVALID-SORT', 'LIST-SORT-ORDER-ENUM'], what: 'an empty sort_order' },
  { id: 'errors-invalid-query-start-at-timezone-less', query: 'start_at=2025-01-15T08:30:00', reason: 'invalid_query', field: 'start_at', requirements: ['COND-INVALID-QUERY-DATE', 'LIST-DATETIME-TZ-AWARE'], what: 'a start_at without timezone' },
  { id: 'errors-invalid-query-end-at-timezone-less', query: 'end_at=2025-01-15T08:30:00', reason: 'invalid_query', field: 'end_at', requirements: ['COND-INVALID-QUERY-DATE', 'LIST-DATETIME-TZ-AWARE'], what: 'an end_at without timezone' },
  { id: 'errors-invalid-query-start-at-malformed', query: 'start_at=2025-02-30T00:00:00Z', reason: 'invalid_query', field: 'start_at', requirements: ['COND-INVALID-QUERY-DATE', 'LIST-DATETIME-TZ-AWARE'], what: 'a start_at of 30 February' },
  { id: 'errors-invalid-query-end-at-malformed', query: 'end_at=2025-01-15T24:61:00Z', reason: 'invalid_query', field: 'end_at', requirements: ['COND-INVALID-QUERY-DATE', 'LIST-DATETIME-TZ-AWARE'], what: 'an end_at at 24:61' },
  // One bad date next to a good one: field names the bad one.
  { id: 'errors-invalid-query-end-at-beside-valid-start-at', query: 'start_at=2025-01-01T00:00:00Z&end_at=soon', reason: 'invalid_query', field: 'end_at', requirements: ['COND-INVALID-QUERY-DATE', 'LIST-DATETIME-TZ-AWARE'], what: 'a malformed end_at beside a valid start_at' },
];

for (const c of QUERY_CASES) {
  check({
    id: c.id, requirements: [...c.requirements, 'LIST-ERRORS', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD', 'ERR-BODY-FIELDS'],
    title: `list: ${c.what} answers 422 ${c.reason} with field ${JSON.stringify(c.field)}`,
    run: async (api) => {
      expectError(await api.get(`${LIST}?${c.query}`, { shared: true }), { reason: c.reason, field: c.field });
    },
  });
}

// ---------------------------------------------------------------- 404 rows

/**
 * The caller's own encounter and a document of ANOTHER encounter of the same organization. Taken from two
 * profile roles whose encounter ids differ; when every document role sits in one encounter, another
 * encounter of the organization is found through the list route.
 */
async function documentOfAnotherEncounter(api: CheckApi, documentRole: DocumentRole): Promise<{ encounterId: string; documentId: string }> {
  const doc = api.document(documentRole);
  const own: (string | undefined)[] = [api.target.encounter('own_encounter')];
  for (const role of ['clinical_document', 'ambient_transcript_with_audio', 'ambient_transcript_without_audio', 'ambient_transcript_audio_missing', 'ambient_transcript_without_transcript', 'billing_summary', 'checklist_summary'] as const) {
    own.push(api.target.document(role)?.encounter_id);
  }
  const other = own.find((e) => e !== undefined && e !== doc.encounter_id);
  if (other) return { encounterId: other, documentId: doc.document_id };
  const body = expectSuccess<{ items: { encounter_id: string }[] }>(await api.get(`${LIST}?limit=10`, { shared: true }), 'listPublicEncounters');
  // A listed encounter that the detail route serves: the list may include demo/training encounters (LIST-DEMO-TRAINING).
  let found: string | undefined;
  for (const item of body.items.filter((i) => i.encounter_id !== doc.encounter_id)) {
    if ((await api.get(route('encounter').pathFor(item.encounter_id))).response?.status === 200) {
      found = item.encounter_id;
      break;
    }
  }
  return { encounterId: api.scope.need(found, 'a second encounter of the caller\'s organization (profile roles or the list)'), documentId: doc.document_id };
}

interface NotFoundCase {
  /** kebab-case suffix of both check ids. */
  name: string;
  route: RouteRef['name'];
  reason: 'encounter_not_found' | 'document_not_found' | 'transcript_not_found' | 'audio_not_found';
  requirements: string[];
  what: string;
  /** Other documented reasons the catalog leaves open here: judged as fully, then recorded as informational. */
  open?: { reasons: string[]; requirement: string };
  /** The profile settings `path` needs (checks/service/needs.ts). */
  needs: string[];
  path(api: CheckApi): Promise<string>;
}

const NOT_FOUND: NotFoundCase[] = [
  ...ITEM_ROUTES.map((r): NotFoundCase => ({
    name: `encounter-not-found-${r.name}`, route: r.name, reason: 'encounter_not_found', requirements: ['COND-NOT-FOUND'],
    what: 'an encounter id that names no encounter',
    needs: resourceNeeds('unknown_encounter', ...(r.name === 'encounter' ? [] : ['clinical_document'])),
    path: async (api) => r.name === 'encounter' ? r.pathFor(api.encounter('unknown_encounter')) : r.pathFor(api.encounter('unknown_encounter'), api.document('clinical_document').document_id),
  })),
  ...ITEM_ROUTES.filter((r) => r.name !== 'encounter').map((r): NotFoundCase => ({
    name: `document-not-found-unknown-${r.name}`, route: r.name, reason: 'document_not_found', requirements: ['COND-NOT-FOUND'],
    what: 'a document id that names no document, in the caller\'s own encounter',
    needs: resourceNeeds('own_encounter'),
    path: async (api) => r.pathFor(api.encounter('own_encounter'), UNKNOWN_DOCUMENT_ID),
  })),
  ...ITEM_ROUTES.filter((r) => r.name !== 'encounter').map((r): NotFoundCase => ({
    name: `document-not-found-other-encounter-${r.name}`, route: r.name, reason: 'document_not_found', requirements: ['COND-NOT-FOUND', 'DOC-BELONGS-TO-ENCOUNTER', 'DOC-WRONG-ENCOUNTER-REASON'],
    what: 'a document of another encounter of the same organization',
    open: { reasons: ['encounter_not_found'], requirement: 'DOC-WRONG-ENCOUNTER-REASON' },
    needs: resourceNeeds(r.name === 'document' ? 'clinical_document' : 'ambient_transcript_with_audio'),
    path: async (api) => {
      const { encounterId, documentId } = await documentOfAnotherEncounter(api, r.name === 'document' ? 'clinical_document' : 'ambient_transcript_with_audio');
      return r.pathFor(encounterId, documentId);
    },
  })),
  {
    name: 'transcript-not-found', route: 'transcript', reason: 'transcript_not_found', requirements: ['COND-NOT-FOUND'],
    what: 'an ambient transcript document without a finalized transcript',
    needs: resourceNeeds('ambient_transcript_without_transcript'),
    path: async (api) => route('transcript').pathFor(api.document('ambient_transcript_without_transcript').encounter_id, api.document('ambient_transcript_without_transcript').document_id),
  },
  {
    name: 'audio-not-found', route: 'audio', reason: 'audio_not_found', requirements: ['COND-NOT-FOUND', 'AUDIO-NOT-FOUND-VS-NOT-AVAILABLE'],
    what: 'an ambient transcript whose recording\'s audio is missing from storage',
    open: { reasons: ['audio_not_available_for_document'], requirement: 'AUDIO-NOT-FOUND-VS-NOT-AVAILABLE' },
    needs: resourceNeeds('ambient_transcript_audio_missing'),
    path: async (api) => route('audio').pathFor(api.document('ambient_transcript_audio_missing').encounter_id, api.document('ambient_transcript_audio_missing').document_id),
  },
];

for (const c of NOT_FOUND) {
  const req = [...c.requirements, ROUTE_REQ[c.route].errors, 'ERR-BODY-FIELDS', 'ERR-FIELD-FIELD'];
  const id = `errors-${c.name}`;
  check({ id, requirements: req, title: `${c.route}: ${c.what} answers 404 ${c.reason} with a null field${c.open ? ` (or, recorded, ${c.open.reasons.join(' / ')})` : ''}`, needs: c.needs, run: async (api, scope) => {
    const ex = await api.get(await c.path(api), { shared: true });
    if (c.open) expectErrorOrOpen(ex, { reason: c.reason, field: null }, c.open, (t) => scope.observe(t));
    else expectError(ex, { reason: c.reason, field: null });
  } });
  // §7.1 shows no category for 404: status and reason are still required here, the category is recorded.
  const observed = `errors-404-category-observed-${c.name}`;
  check({ id: observed, requirements: ['ERR-404-CATEGORY', ...c.requirements], title: `${c.route}: 404 ${c.reason} carries a category string (value recorded; §7.1 does not show it)`, needs: c.needs, run: async (api, scope) => {
    const ex = await api.get(await c.path(api), { shared: true });
    const body = c.open ? expectErrorOrOpen(ex, { reason: c.reason, field: null }, c.open, (t) => scope.observe(t)) : expectError(ex, { reason: c.reason, field: null });
    if (ex.response!.status === 404) scope.observe(`404 ${body.reason_code} category ${JSON.stringify(body.error)}`);
  } });
}

// ---------------------------------------------------------------- 400 unsupported_document_type, audio_not_available_for_document

const UNSUPPORTED_TYPE: { route: RouteRef['name']; role: DocumentRole; requirements: string[] }[] = [
  { route: 'document', role: 'billing_summary', requirements: ['DOC-UNSUPPORTED-TYPE', 'DOC-SUMMARY-ONLY-TYPES'] },
  { route: 'document', role: 'checklist_summary', requirements: ['DOC-UNSUPPORTED-TYPE', 'DOC-SUMMARY-ONLY-TYPES'] },
  { route: 'transcript', role: 'clinical_document', requirements: ['TRANSCRIPT-UNSUPPORTED-TYPE'] },
  { route: 'transcript', role: 'billing_summary', requirements: ['TRANSCRIPT-UNSUPPORTED-TYPE'] },
  { route: 'audio', role: 'clinical_document', requirements: ['AUDIO-UNSUPPORTED-TYPE'] },
  { route: 'audio', role: 'billing_summary', requirements: ['AUDIO-UNSUPPORTED-TYPE'] },
];

for (const c of UNSUPPORTED_TYPE) {
  const id = `errors-unsupported-document-type-${c.route}-${c.role.replace('_document', '').replace('_summary', '')}`;
  check({
    id, requirements: ['COND-UNSUPPORTED-DOCUMENT-TYPE', ...c.requirements, ROUTE_REQ[c.route].errors, 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD'],
    title: `${c.route}: a ${c.role.replaceAll('_', ' ')} answers 400 unsupported_document_type with a null field`,
    needs: resourceNeeds(c.role),
    run: async (api) => {
      const d = api.document(c.role);
      expectError(await api.get(route(c.route).pathFor(d.encounter_id, d.document_id)), { reason: 'unsupported_document_type', field: null });
    },
  });
}

check({
  id: 'errors-audio-not-available-for-document',
  requirements: ['COND-AUDIO-NOT-AVAILABLE', 'AUDIO-NOT-AVAILABLE', 'AUDIO-ERRORS', 'ERR-400-CATEGORY', 'ERR-FIELD-FIELD'],
  title: 'audio: an ambient transcript without audio answers 400 audio_not_available_for_document with a null field',
  needs: ['resources.ambient_transcript_without_audio'], run: async (api) => {
    const d = api.document('ambient_transcript_without_audio');
    expectError(await api.get(route('audio').pathFor(d.encounter_id, d.document_id)), { reason: 'audio_not_available_for_document', field: null });
  },
});

// ---------------------------------------------------------------- 503 audio_storage_unavailable

check({
  id: 'errors-audio-storage-unavailable',
  requirements: ['COND-AUDIO-STORAGE-UNAVAILABLE', 'AUDIO-STORAGE-UNAVAILABLE', 'AUDIO-ERRORS', 'ERR-503-CATEGORY', 'ERR-FIELD-FIELD'],
  title: 'audio: with audio storage unavailable, the audio route answers 503 audio_storage_unavailable with a null field',
  needs: ['faults.audio_storage_unavailable', 'resources.ambient_transcript_with_audio'], run: async (api) => {
    const d = api.faultDocument('audio_storage_unavailable', 'ambient_transcript_with_audio');
    const ex = await api.get(route('audio').pathFor(d.encounter_id, d.document_id), { faults: ['audio_storage_unavailable'] });
    expectError(ex, { reason: 'audio_storage_unavailable', field: null });
  },
});

// ---------------------------------------------------------------- §7.1 category per status, explicitly

/** Requires the §7.1 category, with a failure that names the category rule itself. */
function expectCategory(ex: Exchange, status: number, category: string, reason: string, field: string | null): void {
  const body = expectJson(ex) as ErrorBody;
  if (ex.response!.status !== status) fail(`Expected ${status}`, describe(ex));
  if (body?.error !== category) fail(`Error category for ${status} is not ${category}`, `got ${JSON.stringify(body?.error)}`);
  expectError(ex, { reason, field });
}

const CATEGORY_CASES: { status: number; category: string; reason: string; field: string | null; what: string; needs: string[]; send(api: CheckApi): Promise<Exchange> }[] = [
  { status: 400, category: 'public_api_bad_request', reason: 'unsupported_filter', field: 'foo', what: 'an unsupported key on the list route', needs: [], send: (api) => api.get(`${LIST}?foo=1`) },
  { status: 401, category: 'api_key_unauthorized', reason: 'missing_bearer', field: null, what: 'a request without Authorization', needs: [], send: (api) => api.get(LIST, { as: 'none' }) },
  { status: 403, category: 'api_key_forbidden', reason: 'missing_scope', field: null, what: 'a key without encounters:read', needs: asNeeds('missing_scope_encounters_read'), send: (api) => api.get(LIST, { as: 'missing_scope_encounters_read' }) },
  { status: 422, category: 'api_key_validation_failed', reason: 'invalid_limit', field: 'limit', what: 'limit=0', needs: [], send: (api) => api.get(`${LIST}?limit=0`) },
  { status: 503, category: 'public_api_unavailable', reason: 'digest_key_unavailable', field: null, what: 'key verification unavailable', needs: faultNeeds(['digest_key_unavailable']), send: (api) => api.get(LIST, { faults: ['digest_key_unavailable'] }) },
];

for (const c of CATEGORY_CASES) {
  const id = `errors-category-${c.status}`;
  check({
    id, requirements: [`ERR-${c.status}-CATEGORY`, 'ERR-FIELD-ERROR', 'ERR-BODY-FIELDS'],
    title: `every ${c.status} error carries the §7.1 category "${c.category}" (here: ${c.what})`,
    needs: c.needs,
    run: async (api) => {
      expectCategory(await c.send(api), c.status, c.category, c.reason, c.field);
    },
  });
}
