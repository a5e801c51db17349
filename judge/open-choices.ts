// What the contract the harness judges with may and may not decide: every ruling of the catalog with level
// `unspecified` (fixtures/requirements/requirements.json), classified by how it bears on the contract, and the
// sentences of prose the contract encodes beside its tables. Data and pure functions only: nothing here talks to a
// target. Read by judge/openapi-meaning.ts (the served document is judged between two readings of the contract)
// and by tests/contract-open-choices.spec.ts, which walks the catalog and fails when an `unspecified` ruling is
// still enforced by a judging artefact (the body validator of judge/contract.ts, or the served-document judge).
//
// Two readings of fixtures/contract/openapi.json bound a served document's schemas:
// - narrow: every open choice taken the narrowest way the catalog allows (content with format and text both
//   required, billing and checklist summaries carrying the clinical nulls). A served schema must accept at least
//   what this reading accepts: a service may document its own choice, never refuse a body the spec decides.
// - wide: the contract without the prose it encodes beside the tables (§2.3's "a clinical document summary carries
//   null ..."). A served schema may accept at most what this reading accepts: that sentence is verified on the
//   bodies (judge/contract.ts validates them with the fixture itself, which encodes it), and the §2.3 table the
//   served schema describes says only "string or null".
// The fixture lies between the two, and is what the body checks validate with.

type Json = Record<string, any>;

/** A body the judging contract must accept, because it takes one of the open choices of a ruling. */
export interface BodyProbe {
  /** Component schema of fixtures/contract/openapi.json the body is validated against. */
  schema: string;
  /** Which choice the body takes. */
  choice: string;
  body: unknown;
}

export type OpenRuling =
  /** The ruling leaves a response body open: each probe is accepted by the body validator and by the wide reading. */
  | { kind: 'body'; why: string; probes: BodyProbe[]; narrow?: (doc: Json) => void }
  /** The ruling leaves a query value open: a served parameter schema is not judged on these values. */
  | { kind: 'parameter'; why: string; parameters: string[]; isOpen: (value: unknown) => boolean; examples: string[] }
  /** The ruling leaves a response status open: a served document may document it (its schema is not judged). */
  | { kind: 'status'; why: string; statuses: string[] }
  /** The ruling concerns behaviour no schema of the contract can express (order, precedence, timing, headers). */
  | { kind: 'behaviour'; why: string };

/** A sentence of prose the contract encodes beside a table: verified on bodies, not required of a served schema. */
export interface ProseRule {
  why: string;
  /** Removes the prose from a copy of the contract (the wide reading). */
  wide: (doc: Json) => void;
  /** A body that breaks the sentence and that the body validator (the fixture) must still reject. */
  violation: { schema: string; body: unknown };
  /** Check ids that validate bodies with the fixture and cite the requirement. */
  verifiedBy: string[];
}

const T = '2026-01-02T03:04:05Z';
const enc = { encounter_id: 'e1', organization_id: 'o1', created_at: T, updated_at: T };
const clinicalDetail = { document_id: 'd1', encounter_id: 'e1', schema_type: 'document', created_at: T, updated_at: T };
const ambientDetail = { document_id: 'd2', encounter_id: 'e1', schema_type: 'ambient_transcript', created_at: T, updated_at: T };
const transcript = (turns: unknown[], extra: Json = {}) => ({ document_id: 'd2', encounter_id: 'e1', transcript: { provider: 'p', turns, ...extra } });
const turn = (start: number, end: number, over: Json = {}) => ({ speaker: 'clinician', text: 'Hello', start, end, ...over });
const error = (over: Json) => ({ error: 'public_api_bad_request', reason_code: 'unsupported_filter', message: 'm', field: 'view', ...over });
const LONG = 'x'.repeat(100_000);

const behaviour = (why: string): OpenRuling => ({ kind: 'behaviour', why });

/** §4.1's date parameters: the one form the catalog decides (extended, whole seconds, Z or ±hh:mm) and the rest. */
const DECIDED_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})$/;
const TZ_AWARE_ISO = /^\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * Every `unspecified` ruling of the catalog, by id. A ruling added to the catalog without an entry here fails
 * tests/contract-open-choices.spec.ts: whoever adds it says how it bears on the contract.
 */
export const OPEN_RULINGS: Record<string, OpenRuling> = {
  'CONTRACT-NON-GET-METHODS': behaviour('The answer to other methods is behaviour; the served document is refused only a method that would change something, which §1 decides.'),
  'LIST-PURPOSE': behaviour('A statement of intended use; it prescribes nothing a schema could say.'),
  'OPENAPI-SERVED-AUTH': behaviour('Whether fetching the document needs a key: the suite fetches without one, then with the full key.'),
  'FIELD-ENCOUNTER-TYPE-DERIVATION': {
    kind: 'body', why: 'Any pairing of encounter_type with the documents is accepted; only the enum is judged.',
    probes: [
      { schema: 'PublicEncounterSummary', choice: 'billing type beside an ambient transcript', body: { ...enc, encounter_type: 'billing', documents: [{ document_id: 'd', schema_type: 'ambient_transcript', workflow_variant: 'ambient' }] } },
      { schema: 'PublicEncounterSummary', choice: 'null type beside a clinical document', body: { ...enc, encounter_type: null, documents: [{ document_id: 'd', schema_type: 'document' }] } },
    ],
  },
  'FIELD-PATIENT-DEMOGRAPHICS-AVAILABILITY': {
    kind: 'body', why: 'Names and birth date may be null or absent.',
    probes: [
      { schema: 'PublicPatientSummary', choice: 'absent', body: { patient_id: 'p' } },
      { schema: 'PublicPatientSummary', choice: 'null', body: { patient_id: 'p', first_name: null, last_name: null, date_of_birth: null } },
    ],
  },
  'FIELD-DOCSUMMARY-OTHER-TYPES-NULLS': {
    kind: 'body', why: 'Billing and checklist summaries may carry values or nulls for status, workflow_variant and audio_duration_seconds.',
    probes: [
      { schema: 'PublicEncounterDocumentSummary', choice: 'billing with values', body: { document_id: 'd', schema_type: 'billing', status: 'open', workflow_variant: 'phone_call', audio_duration_seconds: 12.5 } },
      { schema: 'PublicEncounterDocumentSummary', choice: 'checklist with nulls', body: { document_id: 'd', schema_type: 'encounter_checklist', status: null, workflow_variant: null, audio_duration_seconds: null } },
    ],
    // The narrowest reading: §2.3's nulls extended to billing and checklist summaries.
    narrow: (doc) => {
      const s = doc.components.schemas.PublicEncounterDocumentSummary;
      s.if.properties.schema_type = { enum: ['document', 'billing', 'encounter_checklist'] };
    },
  },
  'FIELD-CLINICAL-CONTENT-SUBFIELDS': {
    kind: 'body', why: 'Whether format and text are required inside content is not stated: either may be absent.',
    probes: [
      { schema: 'PublicDocumentDetailResponse', choice: 'text absent', body: { document: { ...clinicalDetail, content: { format: 'markdown' } } } },
      { schema: 'PublicDocumentDetailResponse', choice: 'format absent', body: { document: { ...clinicalDetail, content: { text: 'Note' } } } },
      { schema: 'PublicDocumentDetailResponse', choice: 'both absent', body: { document: { ...clinicalDetail, content: {} } } },
      { schema: 'PublicDocumentDetailResponse', choice: 'both present, text null', body: { document: { ...clinicalDetail, content: { format: 'markdown', text: null } } } },
    ],
    // The narrowest reading: both always present.
    narrow: (doc) => {
      doc.components.schemas.PublicClinicalDocumentDetail.properties.content.required = ['format', 'text'];
    },
  },
  'TRANSCRIPT-TURN-BOUNDS': {
    kind: 'body', why: 'start after end, negative times, overlapping turns and an end past the duration are all accepted.',
    probes: [
      { schema: 'PublicDocumentTranscriptResponse', choice: 'start after end, negative', body: transcript([turn(5, 1), turn(-2, -1)]) },
      { schema: 'PublicDocumentTranscriptResponse', choice: 'overlapping, past the duration', body: transcript([turn(0, 10), turn(5, 99)], { audio_duration_seconds: 20 }) },
    ],
  },
  'TRANSCRIPT-SPEAKER-LABELS': {
    kind: 'body', why: 'Any string is a speaker label.',
    probes: [{ schema: 'PublicTranscriptTurn', choice: 'empty label', body: turn(0, 1, { speaker: '' }) }, { schema: 'PublicTranscriptTurn', choice: 'non-ASCII label', body: turn(0, 1, { speaker: 'Ärztin 医師' }) }],
  },
  'TRANSCRIPT-MAX-LENGTHS': {
    kind: 'body', why: 'No string field has a maximum length.',
    probes: [
      { schema: 'PublicTranscriptTurn', choice: '100 000 characters of turn text', body: turn(0, 1, { text: LONG }) },
      { schema: 'PublicEncounterDocumentSummary', choice: '100 000 characters of title', body: { document_id: LONG, schema_type: 'ambient_transcript', title: LONG } },
    ],
  },
  'AUDIO-URL-LIFETIME': {
    kind: 'body', why: 'Any lifetime: expires_at may lie a second or a year ahead.',
    probes: [{ schema: 'PublicDocumentAudioResponse', choice: 'a year ahead', body: { audio_url: 'https://files.example.test/a?sig=1', expires_at: '2027-01-02T03:04:05Z' } }],
  },
  'FIELD-STATUS-VALUES': {
    kind: 'body', why: 'Any string or null is a status, on every resource that has a free-form status.',
    probes: [
      { schema: 'PublicEncounterSummary', choice: 'a status no list names', body: { ...enc, status: 'Ärztlich geprüft / reviewed' } },
      { schema: 'PublicEncounterDocumentSummary', choice: 'ambient summary status', body: { document_id: 'd', schema_type: 'ambient_transcript', status: 'anything' } },
      { schema: 'PublicAmbientTranscriptDocumentDetail', choice: 'ambient detail status, and null', body: { ...ambientDetail, status: null } },
      { schema: 'PublicAmbientTranscriptDocumentDetail', choice: 'ambient detail status', body: { ...ambientDetail, status: 'x' } },
    ],
  },
  'FIELD-TRANSITIONS': behaviour('How a status changes between reads: no single body shows it.'),
  'ORDER-LOOKUP-INTERNAL': behaviour('The order of checks inside the lookup step; every reason involved is in the enum and documented on its status.'),
  'ORDER-ORG-SCOPE-ONLY-POSITION': behaviour('The position of a check in the order of evaluation.'),
  'ORDER-MULTIPLE-QUERY-ERRORS': behaviour('Which of several invalid parameters is reported first.'),
  'LIST-DUPLICATE-KEYS': behaviour('A key given twice: an OpenAPI parameter cannot say how it is read.'),
  'LIST-DATETIME-FORMAT-DETAILS': {
    kind: 'parameter', why: 'Timezone-aware ISO 8601 forms beyond the extended form with whole seconds and Z or ±hh:mm may be accepted or refused.',
    parameters: ['start_at', 'end_at'],
    isOpen: (v) => typeof v === 'string' && TZ_AWARE_ISO.test(v) && !DECIDED_DATETIME.test(v),
    examples: ['2026-01-02T03:04:05.123456Z', '2026-01-02t03:04:05z', '2026-01-02 03:04:05Z', '2026-01-02T03:04:05+05', '20260102T030405Z', '2026-01-02T03:04:05,5+01:00'],
  },
  'LIST-START-BEFORE-END-REASON': behaviour('The reason for start_at >= end_at; it is one of the 27 codes either way, which the enum already says.'),
  'LIST-TIE-BREAKER-DIRECTION': behaviour('The direction of ordering ties.'),
  'LIST-OFFSET-NO-SNAPSHOT': behaviour('Consistency across pages.'),
  'LIST-DEMO-TRAINING': behaviour('Which encounters the list includes.'),
  'DOC-WRONG-ENCOUNTER-REASON': behaviour('Which reason answers a document under another encounter; both candidates are documented.'),
  'AUDIO-NOT-FOUND-VS-NOT-AVAILABLE': behaviour('Which of two documented reasons answers missing audio.'),
  'AUTH-401-REASON-PRECEDENCE': behaviour('Which 401 reason wins when several hold.'),
  'AUTH-401-NON-BEARER-SCHEME': behaviour('Which 401 reason answers another scheme.'),
  'AUTH-KEY-FORMAT': behaviour('Key format: the served scheme\'s bearerFormat is an annotation the judge ignores.'),
  'WEBHOOK-HEADER-PREFIX': behaviour('The delivery header names; the served document\'s webhook is judged by its body schema only.'),
  'WEBHOOK-SIG-UPPERCASE-HEX': behaviour('The case of the signature digest, a header value.'),
  'WEBHOOK-SIG-MULTIPLE-SIGNATURES': behaviour('The form of the signature header.'),
  'WEBHOOK-SIG-SUBSECOND-BOUNDARY': behaviour('The receiver\'s clock boundary.'),
  'WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS': behaviour('The form of the timestamp header.'),
  'WEBHOOK-SIG-SECRET-PROVISIONING': behaviour('How the signing secret is provided.'),
  'WEBHOOK-RETRY-SCHEDULE': behaviour('When deliveries are retried.'),
  'ERR-FIELD-SANITIZATION': {
    kind: 'body', why: 'How a key is sanitized: field is any string.',
    probes: [{ schema: 'PublicApiErrorResponse', choice: 'a key sanitized another way', body: error({ field: 'a_b_' }) }],
  },
  'ERR-404-CATEGORY': {
    kind: 'body', why: 'Any error category accompanies a 404.',
    probes: [{ schema: 'PublicApiErrorResponse', choice: 'category not_found', body: error({ error: 'not_found', reason_code: 'encounter_not_found', field: null }) }],
  },
  'LIMIT-OFFSET-NOT-SNAPSHOT': behaviour('Consistency across pages.'),
  'LIMIT-RATE-LIMITS': {
    kind: 'status', why: 'Rate limits are not shown: a service that limits may document its 429 (the spec gives it no body, so its schema is not judged).',
    statuses: ['429'],
  },
  'LIMIT-AUDIO-LIFETIME': {
    kind: 'body', why: 'Any lifetime: only an expires_at that is a date-time is decided.',
    probes: [{ schema: 'PublicDocumentAudioResponse', choice: 'a lifetime of one second', body: { audio_url: 'u', expires_at: '2026-01-02T03:04:06.000+05:30' } }],
  },
  'VERSION-DEPRECATION-POLICY': behaviour('Deprecation headers; `deprecated` in a served document is an annotation the judge ignores.'),
};

/** Prose the contract encodes beside a §2 table, by the `must` requirement that states it. */
export const PROSE_RULES: Record<string, ProseRule> = {
  'FIELD-DOCSUMMARY-CLINICAL-NULLS': {
    why: '§2.3\'s table types status, workflow_variant and audio_duration_seconds "… or null"; the sentence below it (a clinical summary carries null) is checked on every summary the body checks read.',
    wide: (doc) => {
      const s = doc.components.schemas.PublicEncounterDocumentSummary;
      delete s.if;
      delete s.then;
    },
    violation: { schema: 'PublicEncounterDocumentSummary', body: { document_id: 'd', schema_type: 'document', status: 'signed' } },
    verifiedBy: ['schema-success-list-closed-json', 'schema-success-encounter-closed-json'],
  },
};

/** The response statuses a served document may document beside §4's (their schemas are not judged). */
export function openStatuses(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, r] of Object.entries(OPEN_RULINGS)) if (r.kind === 'status') for (const s of r.statuses) out.set(s, id);
  return out;
}

/** The ruling that leaves this value of a query parameter open, if any (the served schema is not judged on it). */
export function openParameterValue(parameter: string, value: unknown): string | undefined {
  for (const [id, r] of Object.entries(OPEN_RULINGS)) if (r.kind === 'parameter' && r.parameters.includes(parameter) && r.isOpen(value)) return id;
  return undefined;
}

/** The narrow and wide readings of the contract (copies; the contract is not changed). */
export function judgingReadings(contract: Json): { narrow: Json; wide: Json } {
  const narrow = structuredClone(contract);
  const wide = structuredClone(contract);
  for (const r of Object.values(OPEN_RULINGS)) if (r.kind === 'body') r.narrow?.(narrow);
  for (const p of Object.values(PROSE_RULES)) p.wide(wide);
  return { narrow, wide };
}
