// §2 "All responses reject undeclared extra fields" and §4 "success status 200 with application/json",
// checked explicitly: the happy path of every route with the full key answers 200, labelled
// application/json, with a body valid against its closed contract schema; a sample of error reasons
// (one per route family and status) answers a JSON body valid against the closed PublicApiErrorResponse.
// That a non-JSON body or another media type fails is shown by the mutants (wrong-content-type,
// error-body-not-json), not fabricated here.
import { suite } from '../../engine/declare.ts';
import { expectError, expectErrorOrOpen, expectSuccess } from '../../judge/assertions.ts';
import { registerSecret } from '../../record/redact.ts';
import type { OperationId } from '../../judge/contract.ts';
import type { CredentialRole, DocumentRole } from '../../profile/profile.ts';
import type { CheckApi } from '../../observe/target.ts';
import { asNeeds, needs, resourceNeeds } from './needs.ts';

const check = suite(import.meta.filename);

const seg = encodeURIComponent;
const enc = (e: string) => `/external/v1/encounters/${seg(e)}`;
const doc = (d: { encounter_id: string; document_id: string }) => `${enc(d.encounter_id)}/documents/${seg(d.document_id)}`;
const docOf = (api: CheckApi, role: DocumentRole) => doc(api.document(role));

interface SuccessCase {
  name: string;
  operationId: OperationId;
  requirements: string[];
  /** The profile settings `target` needs (checks/service/needs.ts). */
  needs: string[];
  target(api: CheckApi): string;
}

const SUCCESS: SuccessCase[] = [
  { name: 'list', operationId: 'listPublicEncounters', requirements: ['FIELD-LIST-ITEMS', 'FIELD-ENCOUNTER-ENCOUNTER-ID', 'FIELD-ENCOUNTER-ORGANIZATION-ID', 'FIELD-ENCOUNTER-CREATED-AT', 'FIELD-ENCOUNTER-UPDATED-AT', 'FIELD-ENCOUNTER-DATE-OF-SERVICE', 'FIELD-ENCOUNTER-ENCOUNTER-TYPE', 'FIELD-ENCOUNTER-STATUS', 'FIELD-ENCOUNTER-PATIENT', 'FIELD-ENCOUNTER-DOCUMENTS', 'FIELD-PATIENT-PATIENT-ID', 'FIELD-PATIENT-FIRST-NAME', 'FIELD-PATIENT-LAST-NAME', 'FIELD-PATIENT-DATE-OF-BIRTH', 'FIELD-DOCSUMMARY-DOCUMENT-ID', 'FIELD-DOCSUMMARY-SCHEMA-TYPE', 'FIELD-DOCSUMMARY-TITLE', 'FIELD-DOCSUMMARY-STATUS', 'FIELD-DOCSUMMARY-WORKFLOW-VARIANT', 'FIELD-DOCSUMMARY-AUDIO-DURATION-SECONDS', 'FIELD-DOCSUMMARY-CLINICAL-NULLS', 'FIELD-STATUS-FREE-FORM', 'FIELD-CLASSIFICATIONS-NOT-STATES', 'CONTRACT-TIMESTAMPS-ISO8601', 'OPENAPI-SCHEMA-LIST', 'LIST-RESPONSE-SHAPE', 'OPENAPI-SCHEMA-ENCOUNTER-SUMMARY', 'OPENAPI-SCHEMA-PATIENT-SUMMARY', 'OPENAPI-SCHEMA-DOCUMENT-SUMMARY'], needs: [], target: () => '/external/v1/encounters' },
  { name: 'encounter', operationId: 'getPublicEncounter', requirements: ['FIELD-ENCOUNTER-ENCOUNTER-ID', 'FIELD-ENCOUNTER-ORGANIZATION-ID', 'FIELD-ENCOUNTER-CREATED-AT', 'FIELD-ENCOUNTER-UPDATED-AT', 'FIELD-ENCOUNTER-DATE-OF-SERVICE', 'FIELD-ENCOUNTER-ENCOUNTER-TYPE', 'FIELD-ENCOUNTER-STATUS', 'FIELD-ENCOUNTER-PATIENT', 'FIELD-ENCOUNTER-DOCUMENTS', 'FIELD-PATIENT-PATIENT-ID', 'FIELD-PATIENT-FIRST-NAME', 'FIELD-PATIENT-LAST-NAME', 'FIELD-PATIENT-DATE-OF-BIRTH', 'FIELD-DOCSUMMARY-DOCUMENT-ID', 'FIELD-DOCSUMMARY-SCHEMA-TYPE', 'FIELD-DOCSUMMARY-TITLE', 'FIELD-DOCSUMMARY-STATUS', 'FIELD-DOCSUMMARY-WORKFLOW-VARIANT', 'FIELD-DOCSUMMARY-AUDIO-DURATION-SECONDS', 'FIELD-DOCSUMMARY-CLINICAL-NULLS', 'FIELD-STATUS-FREE-FORM', 'FIELD-CLASSIFICATIONS-NOT-STATES', 'CONTRACT-TIMESTAMPS-ISO8601', 'OPENAPI-SCHEMA-ENCOUNTER-DETAIL', 'ENC-RESPONSE-SHAPE', 'OPENAPI-SCHEMA-ENCOUNTER-SUMMARY'], needs: resourceNeeds('own_encounter'), target: (api) => enc(api.encounter('own_encounter')) },
  { name: 'document-clinical', operationId: 'getPublicEncounterDocument', requirements: ['FIELD-CLINICAL-SCHEMA-TYPE', 'FIELD-CLINICAL-CREATED-AT', 'FIELD-CLINICAL-UPDATED-AT', 'FIELD-CLINICAL-TITLE', 'OPENAPI-SCHEMA-DOCUMENT-DETAIL', 'DOC-RESPONSE-SHAPE', 'FIELD-DETAIL-CLINICAL-VARIANT'], needs: resourceNeeds('clinical_document'), target: (api) => docOf(api, 'clinical_document') },
  { name: 'document-ambient', operationId: 'getPublicEncounterDocument', requirements: ['FIELD-AMBIENT-SCHEMA-TYPE', 'FIELD-AMBIENT-CREATED-AT', 'FIELD-AMBIENT-UPDATED-AT', 'FIELD-AMBIENT-TITLE', 'FIELD-AMBIENT-STATUS', 'FIELD-AMBIENT-WORKFLOW-VARIANT', 'FIELD-AMBIENT-AUDIO-DURATION-SECONDS', 'OPENAPI-SCHEMA-DOCUMENT-DETAIL', 'DOC-RESPONSE-SHAPE', 'FIELD-AMBIENT-NO-TURNS'], needs: resourceNeeds('ambient_transcript_with_audio'), target: (api) => docOf(api, 'ambient_transcript_with_audio') },
  { name: 'transcript', operationId: 'getPublicEncounterDocumentTranscript', requirements: ['FIELD-TRANSCRIPT-TRANSCRIPT', 'FIELD-TRANSCRIPT-TRANSCRIPT-PROVIDER', 'FIELD-TRANSCRIPT-TRANSCRIPT-AUDIO-DURATION-SECONDS', 'FIELD-TRANSCRIPT-TURN-SPEAKER', 'FIELD-TRANSCRIPT-TURN-TEXT', 'FIELD-TRANSCRIPT-TURN-START', 'FIELD-TRANSCRIPT-TURN-END', 'OPENAPI-SCHEMA-TRANSCRIPT', 'TRANSCRIPT-FINALIZED-TURNS'], needs: resourceNeeds('ambient_transcript_with_audio'), target: (api) => `${docOf(api, 'ambient_transcript_with_audio')}/transcript` },
  { name: 'audio', operationId: 'getPublicEncounterDocumentAudio', requirements: ['AUDIO-PATH-PARAMS', 'AUDIO-URL-TEMPORARY', 'OPENAPI-SCHEMA-AUDIO', 'AUDIO-RESPONSE'], needs: resourceNeeds('ambient_transcript_with_audio'), target: (api) => `${docOf(api, 'ambient_transcript_with_audio')}/audio` },
];

for (const c of SUCCESS) {
  const id = `schema-success-${c.name}-closed-json`;
  check({ id, requirements: ['CONTRACT-CLOSED-RESPONSES', 'CONTRACT-JSON-RESPONSES', ...c.requirements], title: `${c.name}: the happy path answers 200 application/json with a body valid against its closed schema`, needs: c.needs, run: async (api) => {
    const ex = await api.get(c.target(api));
    if (c.operationId === 'getPublicEncounterDocumentAudio') {
      // The audio URL is a secret for output purposes: register it before anything can print it.
      const m = /"audio_url"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(ex.response?.body ?? '');
      if (m) registerSecret(JSON.parse(`"${m[1]}"`) as string);
    }
    expectSuccess(ex, c.operationId);
  } });
}

interface ErrorCase {
  reason: string;
  field: string | null;
  as?: CredentialRole | 'none';
  /** Another documented reason the catalog leaves open for this situation (the body is judged the same). */
  open?: { reasons: string[]; requirement: string };
  /** The profile settings `target` and `as` need (checks/service/needs.ts). */
  needs: string[];
  target(api: CheckApi): string;
}

const ERRORS: ErrorCase[] = [
  { reason: 'missing_bearer', field: null, as: 'none', needs: [], target: () => '/external/v1/encounters' },
  { reason: 'missing_scope', field: null, as: 'missing_scope_recordings_read', needs: needs(asNeeds('missing_scope_recordings_read'), resourceNeeds('ambient_transcript_with_audio')), target: (api) => `${docOf(api, 'ambient_transcript_with_audio')}/audio` },
  { reason: 'unsupported_filter', field: 'view', needs: resourceNeeds('own_encounter'), target: (api) => `${enc(api.encounter('own_encounter'))}?view=full` },
  { reason: 'invalid_limit', field: 'limit', needs: [], target: () => '/external/v1/encounters?limit=0' },
  { reason: 'invalid_query', field: 'start_at', needs: [], target: () => '/external/v1/encounters?start_at=yesterday' },
  { reason: 'cross_organization_denied', field: null, needs: resourceNeeds('other_org_encounter'), target: (api) => enc(api.encounter('other_org_encounter')) },
  { reason: 'demo_training_denied', field: null, needs: resourceNeeds('demo_encounter'), target: (api) => enc(api.encounter('demo_encounter')) },
  { reason: 'encounter_not_found', field: null, needs: resourceNeeds('unknown_encounter'), target: (api) => enc(api.encounter('unknown_encounter')) },
  { reason: 'document_not_found', field: null, needs: resourceNeeds('own_encounter', 'other_org_document'), target: (api) => `${enc(api.encounter('own_encounter'))}/documents/${seg(api.document('other_org_document').document_id)}` },
  { reason: 'unsupported_document_type', field: null, needs: resourceNeeds('billing_summary'), target: (api) => docOf(api, 'billing_summary') },
  { reason: 'transcript_not_found', field: null, needs: resourceNeeds('ambient_transcript_without_transcript'), target: (api) => `${docOf(api, 'ambient_transcript_without_transcript')}/transcript` },
  { reason: 'audio_not_available_for_document', field: null, needs: resourceNeeds('ambient_transcript_without_audio'), target: (api) => `${docOf(api, 'ambient_transcript_without_audio')}/audio` },
  { reason: 'audio_not_found', field: null, open: { reasons: ['audio_not_available_for_document'], requirement: 'AUDIO-NOT-FOUND-VS-NOT-AVAILABLE' }, needs: resourceNeeds('ambient_transcript_audio_missing'), target: (api) => `${docOf(api, 'ambient_transcript_audio_missing')}/audio` },
];

for (const c of ERRORS) {
  const id = `schema-error-${c.reason.replaceAll('_', '-')}-closed-json`;
  check({ id, requirements: ['ERR-FIELD-MESSAGE', 'ERR-BODY-FIELDS', 'ERR-BODY-ON-FAILURE', 'OPENAPI-SCHEMA-ERROR', 'CONTRACT-CLOSED-RESPONSES'], title: `${c.reason}: the error answers application/json with a body valid against the closed PublicApiErrorResponse`, needs: c.needs, run: async (api, scope) => {
    const ex = await api.get(c.target(api), { as: c.as ?? 'full' });
    if (c.open) expectErrorOrOpen(ex, { reason: c.reason, field: c.field }, c.open, (t) => scope.observe(t));
    else expectError(ex, { reason: c.reason, field: c.field });
  } });
}
