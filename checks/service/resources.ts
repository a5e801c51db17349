// §2 and §4.2–4.5 resources read through the routes: the encounter detail equals its list item, the
// document detail per schema_type (markdown content for `document`, metadata only for
// `ambient_transcript`, 400 for summary-only types), a document addressed under another encounter,
// transcript turns in chronological order, identifiers echoed from the path, and the audio URL
// response. The audio URL is registered with the redaction layer the moment it is read and is never
// put in a title, a detail or an observation.
import { isDeepStrictEqual } from 'node:util';
import { suite } from '../../engine/declare.ts';
import { expectDocumented, expectError, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { NotVerified } from '../../record/record.ts';
import { registerSecret } from '../../record/redact.ts';
import type { CheckApi } from '../../observe/target.ts';
import type { DocumentRole } from '../../profile/profile.ts';
import { instantNs, listTarget, sample, type EncounterSummary, type ListBody } from '../../observe/list-walk.ts';
import { resourceNeeds } from './needs.ts';

const check = suite(import.meta.filename);

const seg = encodeURIComponent;
const encounterPath = (e: string) => `/external/v1/encounters/${seg(e)}`;
const documentPath = (e: string, d: string) => `${encounterPath(e)}/documents/${seg(d)}`;

type Json = Record<string, unknown>;

async function encounterDetail(api: CheckApi, encounterId: string): Promise<EncounterSummary> {
  return expectSuccess<{ encounter: EncounterSummary }>(await api.get(encounterPath(encounterId), { shared: true }), 'getPublicEncounter').encounter;
}

async function documentDetail(api: CheckApi, role: DocumentRole): Promise<{ doc: Json; path: { encounter_id: string; document_id: string } }> {
  const d = api.document(role);
  const body = expectSuccess<{ document: Json }>(await api.get(documentPath(d.encounter_id, d.document_id), { shared: true }), 'getPublicEncounterDocument');
  return { doc: body.document, path: d };
}

/**
 * Differences between a list item and the detail of the same encounter, by value: an optional field that is
 * absent equals null (§2.1: Required "no"). Documents are compared as a set keyed by document_id (their order
 * is not specified), and only when both sides carry them: `documents` is optional in a list item (§2.1).
 * The detail must carry them (§2.8, ENC-DETAIL-DOCUMENTS-PRESENT: an empty array when there are none):
 * `documentsAbsent` reports a detail without `documents`, whatever the list item says.
 */
function summaryDifferences(item: EncounterSummary, detail: EncounterSummary): { diffs: string[]; documentsAbsent: boolean } {
  const diffs: string[] = [];
  const keys = new Set([...Object.keys(item), ...Object.keys(detail)].filter((k) => k !== 'documents'));
  for (const k of keys) {
    const a = k in item ? item[k] : null;
    const b = k in detail ? detail[k] : null;
    if (!sameValue(a, b)) diffs.push(`${k}: list ${k in item ? JSON.stringify(a) : '(absent)'}, detail ${k in detail ? JSON.stringify(b) : '(absent)'}`);
  }
  const listDocs = item.documents;
  const detailDocs = detail.documents;
  const documentsAbsent = detailDocs === undefined;
  if (listDocs !== undefined && detailDocs !== undefined) {
    const a = new Map(listDocs.map((d) => [d.document_id, d]));
    const b = new Map(detailDocs.map((d) => [d.document_id, d]));
    for (const [docId, d] of a) {
      const other = b.get(docId);
      if (!other) diffs.push(`documents: ${docId} is in the list item, not in the detail`);
      else if (!sameValue(d, other)) diffs.push(`documents: ${docId} differs: list ${JSON.stringify(d)}, detail ${JSON.stringify(other)}`);
    }
    for (const docId of b.keys()) if (!a.has(docId)) diffs.push(`documents: ${docId} is in the detail, not in the list item`);
  }
  return { diffs, documentsAbsent };
}

/** JSON equality by value, with an absent optional member equal to null (and member order ignored). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a as Json).filter((k) => (a as Json)[k] !== null);
    const kb = Object.keys(b as Json).filter((k) => (b as Json)[k] !== null);
    return new Set([...ka, ...kb]).size === ka.length && ka.length === kb.length && ka.every((k) => sameValue((a as Json)[k], (b as Json)[k]));
  }
  return isDeepStrictEqual(a, b);
}

// ---------------------------------------------------------------- encounter detail against the list

check({ id: 'resources-encounter-detail-equals-list-item', requirements: ['FIELD-DETAIL-ENCOUNTER', 'ENC-RESPONSE-SHAPE', 'LIST-RESPONSE-SHAPE', 'ENC-DETAIL-DOCUMENTS-PRESENT'], title: 'the encounter detail equals the list item with the same id, documents included', needs: ['resources.own_encounter'], run: async (api, scope) => {
  const own = api.encounter('own_encounter');
  // The own encounter wherever it is in the list, plus the first items of the first page.
  const pages: ListBody[] = [];
  let found: EncounterSummary | undefined;
  for (let offset = 0; offset <= 10_000 && !found; offset += 100) {
    const page = expectSuccess<ListBody>(await api.get(listTarget({ limit: 100, offset }), { shared: true }), 'listPublicEncounters');
    pages.push(page);
    found = page.items.find((i) => i.encounter_id === own);
    if (page.items.length < 100) break;
  }
  if (!found) fail('the own encounter is not listed', `${own} is not among ${pages.reduce((n, p) => n + p.items.length, 0)} listed encounters`);
  const items = [found, ...pages[0].items.filter((i) => i.encounter_id !== own).slice(0, 4)];
  // And the first listed encounter without documents (an empty or absent `documents` in its list item), so the
  // detail of an encounter with none is judged too: it must carry `documents: []` (ENC-DETAIL-DOCUMENTS-PRESENT).
  const none = pages.flatMap((p) => p.items).find((i) => (i.documents ?? []).length === 0 && !items.includes(i));
  if (none) items.push(none);
  const problems: string[] = [];
  const absent: string[] = [];
  // Items skipped for an open reason are noted beside the verdict of the ones compared; with none compared,
  // nothing decided was verified and the check is informational.
  let compared = 0;
  for (const item of items) {
    const ex = await api.get(encounterPath(item.encounter_id), { shared: true });
    // Whether the list includes demo/training encounters is open (LIST-DEMO-TRAINING); their detail is refused.
    if (ex.response?.status === 403 && /"reason_code"\s*:\s*"demo_training_denied"/.test(ex.response.body)) {
      expectError(ex, { reason: 'demo_training_denied', field: null });
      scope.note(`the listed encounter ${item.encounter_id} is a demo/training encounter (its detail answers 403 demo_training_denied)`);
      continue;
    }
    const detail = expectSuccess<{ encounter: EncounterSummary }>(ex, 'getPublicEncounter').encounter;
    const { diffs, documentsAbsent } = summaryDifferences(item, detail);
    if (documentsAbsent) absent.push(item.encounter_id);
    if (diffs.length === 0) {
      compared++;
      continue;
    }
    if (detail.updated_at !== item.updated_at) {
      scope.note(`${item.encounter_id} was updated between the list and the detail request (updated_at ${item.updated_at} → ${detail.updated_at}); not compared`);
      continue;
    }
    compared++;
    problems.push(`${item.encounter_id}: ${diffs.join('; ')}`);
  }
  if (absent.length > 0) fail('an encounter detail has no documents property', `the detail of ${sample(absent)} carries no documents (§2.8: the detail includes its documents, [] when there are none; ENC-DETAIL-DOCUMENTS-PRESENT)${problems.length > 0 ? ` | also: ${problems.join(' | ')}` : ''}`);
  if (problems.length > 0) fail('the encounter detail differs from its list item', problems.join(' | '));
  if (compared === 0) scope.observe('no listed encounter could be compared with its detail');
} });

// ---------------------------------------------------------------- document detail per schema_type

check({ id: 'resources-clinical-document-markdown-content', requirements: ['DOC-MARKDOWN-CONTENT', 'FIELD-CLINICAL-CONTENT', 'FIELD-DETAIL-CLINICAL-VARIANT', 'FIELD-CLINICAL-CONTENT-SUBFIELDS', 'FIELD-DETAIL-DISCRIMINATOR'], title: 'a clinical document returns schema_type document with markdown content (format markdown when present, text a string or null)', needs: ['resources.clinical_document'], run: async (api, scope) => {
  const { doc } = await documentDetail(api, 'clinical_document');
  if (doc.schema_type !== 'document') fail('the clinical document is not returned as schema_type document', `schema_type ${JSON.stringify(doc.schema_type)}`);
  const content = doc.content as Json | undefined;
  if (!content || typeof content !== 'object') fail('the clinical document has no content object', JSON.stringify(content));
  if ('format' in content && content.format !== 'markdown') fail('the clinical document content is not markdown', `format ${JSON.stringify(content.format)}`);
  if ('text' in content && content.text !== null && typeof content.text !== 'string') fail('the clinical document text is neither a string nor null', typeof content.text);
  // Whether format and text are required inside content is open: an absent one is recorded, never failed.
  const absent = ['format', 'text'].filter((k) => !(k in content));
  if (absent.length > 0) scope.note(`content leaves out ${absent.join(' and ')} (FIELD-CLINICAL-CONTENT-SUBFIELDS: whether they are required is not stated)`);
} });

check({ id: 'resources-clinical-document-status-and-variant-null', requirements: ['FIELD-CLINICAL-STATUS', 'FIELD-CLINICAL-WORKFLOW-VARIANT'], title: 'a clinical document detail carries null (or nothing) for status and workflow_variant', needs: ['resources.clinical_document'], run: async (api) => {
  const { doc } = await documentDetail(api, 'clinical_document');
  for (const k of ['status', 'workflow_variant']) {
    if (k in doc && doc[k] !== null) fail(`the clinical document carries a non-null ${k}`, JSON.stringify(doc[k]));
  }
} });

check({ id: 'resources-ambient-document-metadata-only', requirements: ['DOC-AMBIENT-METADATA-ONLY', 'FIELD-AMBIENT-NO-TURNS', 'FIELD-DETAIL-DISCRIMINATOR'], title: 'an ambient transcript document returns metadata only: schema_type ambient_transcript, no content, no turns', needs: ['resources.ambient_transcript_with_audio'], run: async (api) => {
  const { doc } = await documentDetail(api, 'ambient_transcript_with_audio');
  if (doc.schema_type !== 'ambient_transcript') fail('the ambient transcript document is not returned as schema_type ambient_transcript', `schema_type ${JSON.stringify(doc.schema_type)}`);
  const carried = ['content', 'turns', 'transcript', 'audio_url'].filter((k) => k in doc);
  if (carried.length > 0) fail('the ambient transcript document detail carries more than metadata', carried.join(', '));
} });

for (const role of ['billing_summary', 'checklist_summary'] as const) {
  const id = `resources-${role.replace('_summary', '')}-document-detail-unsupported`;
  check({ id, requirements: ['DOC-UNSUPPORTED-TYPE', 'DOC-SUMMARY-ONLY-TYPES', 'COND-UNSUPPORTED-DOCUMENT-TYPE'], title: `document detail of a ${role.replace('_summary', '')} summary answers 400 unsupported_document_type`, needs: resourceNeeds(role), run: async (api) => {
    const d = api.document(role);
    expectError(await api.get(documentPath(d.encounter_id, d.document_id)), { reason: 'unsupported_document_type', field: null });
  } });
}

// §4.3 leaves the reason open (DOC-WRONG-ENCOUNTER-REASON); document_not_found passes, another documented
// error is recorded, a 200 fails. The pair: a listed encounter of the caller that is not the clinical
// document's own encounter, with the clinical document's id: both of the caller's organization.
check({ id: 'resources-document-of-other-encounter-rejected', requirements: ['DOC-BELONGS-TO-ENCOUNTER', 'DOC-WRONG-ENCOUNTER-REASON', 'COND-NOT-FOUND'], title: 'a document addressed under another encounter of the same organization is not returned (404 document_not_found)', needs: ['resources.clinical_document'], run: async (api, scope) => {
  const doc = api.document('clinical_document');
  const page = expectSuccess<ListBody>(await api.get(listTarget({ limit: 100 }), { shared: true }), 'listPublicEncounters');
  // Another listed encounter that the detail route serves (the list may include demo/training encounters, LIST-DEMO-TRAINING).
  let other: EncounterSummary | undefined;
  for (const i of page.items.filter((i) => i.encounter_id !== doc.encounter_id && !(i.documents ?? []).some((x) => x.document_id === doc.document_id))) {
    if ((await api.get(encounterPath(i.encounter_id), { shared: true })).response?.status === 200) {
      other = i;
      break;
    }
  }
  if (!other) throw new NotVerified('no listed encounter other than the clinical document\'s own encounter');
  const ex = await api.get(documentPath(other.encounter_id, doc.document_id));
  const body = expectDocumented(ex, 'getPublicEncounterDocument');
  const status = ex.response!.status;
  if (status === 200) fail('a document of another encounter was returned', `${doc.document_id} under ${other.encounter_id} answered 200`);
  const e = body as ErrorBody;
  if (e.reason_code === 'document_not_found') {
    expectError(ex, { reason: 'document_not_found', field: null });
    return;
  }
  if (status < 400 || status > 499) fail('a document of another encounter did not get a 4xx', `${status} ${e.reason_code}`);
  scope.observe(`a document addressed under another encounter answered ${status} ${e.reason_code} (404 document_not_found is the closest reading)`);
} });

// ---------------------------------------------------------------- transcript

check({ id: 'resources-transcript-turns-chronological', requirements: ['TRANSCRIPT-CHRONOLOGICAL', 'FIELD-TRANSCRIPT-TRANSCRIPT-TURNS', 'TRANSCRIPT-FINALIZED-TURNS', 'TRANSCRIPT-TURN-BOUNDS'], title: 'transcript turns are in chronological order: each turn starts no earlier than the one before', needs: ['resources.ambient_transcript_with_audio'], run: async (api, scope) => {
  const d = api.document('ambient_transcript_with_audio');
  const body = expectSuccess<{ transcript: { turns: { start: number; end: number }[] } }>(await api.get(`${documentPath(d.encounter_id, d.document_id)}/transcript`, { shared: true }), 'getPublicEncounterDocumentTranscript');
  const turns = body.transcript.turns;
  const back = turns.flatMap((t, i) => (i > 0 && t.start < turns[i - 1].start ? [`turn ${i} (start ${t.start}) follows turn ${i - 1} (start ${turns[i - 1].start})`] : []));
  if (back.length > 0) fail('transcript turns are not in chronological order', sample(back));
  if (turns.length < 2) scope.observe(`the transcript has ${turns.length} turn(s): the order of turns could not be seen`);
  // Whether start <= end is required is open (TRANSCRIPT-TURN-BOUNDS): recorded, not judged.
  const inverted = turns.flatMap((t, i) => (t.start > t.end ? [`turn ${i}: start ${t.start} > end ${t.end}`] : []));
  if (inverted.length > 0) scope.observe(`turns ending before they start: ${sample(inverted)}`);
} });

// ---------------------------------------------------------------- identifiers echoed from the path

check({ id: 'resources-identifiers-echo-path', requirements: ['CONTRACT-OPAQUE-IDS', 'ENC-PATH-PARAM', 'DOC-PATH-PARAMS', 'TRANSCRIPT-PATH-PARAMS', 'FIELD-CLINICAL-DOCUMENT-ID', 'FIELD-CLINICAL-ENCOUNTER-ID', 'FIELD-AMBIENT-DOCUMENT-ID', 'FIELD-AMBIENT-ENCOUNTER-ID', 'FIELD-TRANSCRIPT-DOCUMENT-ID', 'FIELD-TRANSCRIPT-ENCOUNTER-ID', 'DOC-BELONGS-TO-ENCOUNTER'], title: 'encounter, document and transcript responses echo the path identifiers as the same opaque strings', needs: ['resources.ambient_transcript_with_audio', 'resources.clinical_document', 'resources.own_encounter'], run: async (api) => {
  const problems: string[] = [];
  const same = (what: string, got: unknown, want: string) => {
    if (got !== want) problems.push(`${what}: ${JSON.stringify(got)} for path ${JSON.stringify(want)}`);
  };
  const own = api.encounter('own_encounter');
  same('encounter detail encounter_id', (await encounterDetail(api, own)).encounter_id, own);
  for (const role of ['clinical_document', 'ambient_transcript_with_audio'] as const) {
    const { doc, path } = await documentDetail(api, role);
    same(`${role} detail document_id`, doc.document_id, path.document_id);
    same(`${role} detail encounter_id`, doc.encounter_id, path.encounter_id);
  }
  const t = api.document('ambient_transcript_with_audio');
  const body = expectSuccess<Json>(await api.get(`${documentPath(t.encounter_id, t.document_id)}/transcript`, { shared: true }), 'getPublicEncounterDocumentTranscript');
  same('transcript document_id', body.document_id, t.document_id);
  same('transcript encounter_id', body.encounter_id, t.encounter_id);
  if (problems.length > 0) fail('a response does not echo the identifiers of its path', problems.join('; '));
} });

// ---------------------------------------------------------------- audio URL (never printed)

const CLOCK_SKEW_MS = 5_000;

async function audio(api: CheckApi): Promise<{ audio_url: unknown; expires_at: string }> {
  const d = api.document('ambient_transcript_with_audio');
  const ex = await api.get(`${documentPath(d.encounter_id, d.document_id)}/audio`);
  // Register before anything can print it (the evidence layer also redacts the audio_url field).
  try {
    const parsed = JSON.parse(ex.response?.body ?? 'null') as { audio_url?: unknown } | null;
    if (typeof parsed?.audio_url === 'string') registerSecret(parsed.audio_url);
  } catch {
    /* not JSON: expectSuccess reports it */
  }
  return expectSuccess(ex, 'getPublicEncounterDocumentAudio');
}

check({ id: 'resources-audio-expires-at-in-future', requirements: ['AUDIO-EXPIRES-AT', 'FIELD-AUDIO-EXPIRES-AT', 'LIMIT-AUDIO-VALIDITY', 'AUDIO-RESPONSE'], title: `the audio URL response has expires_at in the future (local clock, ${CLOCK_SKEW_MS / 1000} s skew allowed)`, needs: ['resources.ambient_transcript_with_audio'], run: async (api) => {
  const before = Date.now();
  const body = await audio(api);
  const expires = instantNs(body.expires_at);
  if (expires === undefined) fail('expires_at is not an RFC 3339 date-time', JSON.stringify(body.expires_at));
  const expiresMs = Number(expires / 1_000_000n);
  if (expiresMs <= before - CLOCK_SKEW_MS) fail('the audio URL has already expired when it is handed out', `expires_at ${body.expires_at}, local clock ${new Date(before).toISOString()}`);
} });

check({ id: 'resources-audio-url-present', requirements: ['FIELD-AUDIO-AUDIO-URL', 'AUDIO-RESPONSE'], title: 'the audio URL response carries a non-empty audio_url (an absolute URL)', needs: ['resources.ambient_transcript_with_audio'], run: async (api, scope) => {
  const body = await audio(api);
  const url = body.audio_url;
  if (typeof url !== 'string' || url.trim() === '') fail('audio_url is empty', `length ${typeof url === 'string' ? url.length : typeof url}`);
  // Only the shape is reported, never the value.
  if (!URL.canParse(url)) scope.observe('audio_url is not an absolute URL (a signed URL is expected to be fetchable as given)');
} });
