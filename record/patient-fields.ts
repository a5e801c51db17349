// The one table of the contract's patient and clinical-content fields (spec §2.2-§2.5, the schemas of
// fixtures/contract/openapi.json): the values no report, log line or terminal output shows unless the user asks
// for full evidence (`--evidence full`). The redaction layer (record/redact.ts) reads it; tests/redaction-phi.spec.ts
// holds it to the contract both ways (every row is a string member of its schema, and every member of the contract
// with one of these names is a row), which is what lets the layer match them by member name inside any body.
//
// Left out on purpose: a turn's speaker (a label such as `patient` or `clinician`; remembered as a patient value it
// would shred every sentence with that word in it), identifiers (§2: opaque, no patient meaning may be inferred from them), record timestamps
// and date_of_service (system metadata the ordering and date-window checks' evidence must show), statuses,
// enums, numbers (durations, turn bounds) and the webhook event (§6.1: identifiers only).

export interface PatientField {
  /** The contract schema (components.schemas) that declares the member. */
  schema: string;
  /** The member's path inside that schema (`content.text`: `text` of the `content` object). */
  member: string;
  /** The section of the specification that lists it. */
  section: string;
  /** What it holds. */
  what: string;
}

export const PATIENT_FIELDS: readonly PatientField[] = [
  { schema: 'PublicPatientSummary', member: 'first_name', section: '2.2', what: "the patient's first name" },
  { schema: 'PublicPatientSummary', member: 'last_name', section: '2.2', what: "the patient's last name" },
  { schema: 'PublicPatientSummary', member: 'date_of_birth', section: '2.2', what: "the patient's date of birth" },
  { schema: 'PublicEncounterDocumentSummary', member: 'title', section: '2.3', what: 'a document title (clinical content: it may name a condition or a person)' },
  { schema: 'PublicClinicalDocumentDetail', member: 'title', section: '2.4', what: 'a document title' },
  { schema: 'PublicClinicalDocumentDetail', member: 'content.text', section: '2.4', what: 'the clinical document text' },
  { schema: 'PublicAmbientTranscriptDocumentDetail', member: 'title', section: '2.4', what: 'a document title' },
  { schema: 'PublicTranscriptTurn', member: 'text', section: '2.5', what: 'what was said in a transcript turn' },
];

/** The member names the table holds: the last segment of each member path. */
export const PATIENT_MEMBER_NAMES: ReadonlySet<string> = new Set(PATIENT_FIELDS.map((f) => f.member.split('.').pop()!));
