// The five routes as the suites address them, built from profile resource roles. Paths come from the
// contract; ids are percent-encoded as path segments (they are opaque strings).
import type { CheckApi } from './target.ts';
import type { OperationId } from '../judge/contract.ts';
import type { DocumentRole } from '../profile/profile.ts';

export interface RouteRef {
  operationId: OperationId;
  /** Short name used in check ids. */
  name: 'list' | 'encounter' | 'document' | 'transcript' | 'audio';
  routeGroup: 'encounters' | 'documents';
  scopes: string[];
  /** Builds the request path for this route on the caller's own data (needs profile roles). */
  path(api: CheckApi): string;
  /** The profile settings `path` needs (checks/service/needs.ts): the resource role of the caller's own data. */
  needs: readonly string[];
  /** The same route on an encounter id and, for document routes, a document id. */
  pathFor(encounterId: string, documentId?: string): string;
}

const seg = encodeURIComponent;
const base = '/external/v1/encounters';

function docRoute(name: 'document' | 'transcript' | 'audio', operationId: OperationId, role: DocumentRole, suffix: string, scopes: string[]): RouteRef {
  return {
    operationId, name, routeGroup: 'documents', scopes, needs: [`resources.${role}`],
    path(api) {
      const d = api.document(role);
      return this.pathFor(d.encounter_id, d.document_id);
    },
    pathFor: (e, d) => `${base}/${seg(e)}/documents/${seg(d ?? '')}${suffix}`,
  };
}

/** The five query keys of the list route (§4.1); any other key is unsupported there, and every key on the others. */
export const LIST_KEYS = ['limit', 'offset', 'sort_order', 'start_at', 'end_at'] as const;

export const ROUTES: RouteRef[] = [
  {
    operationId: 'listPublicEncounters', name: 'list', routeGroup: 'encounters', scopes: ['encounters:read', 'patients:read', 'documents:read'], needs: [],
    path: () => base,
    pathFor: () => base,
  },
  {
    operationId: 'getPublicEncounter', name: 'encounter', routeGroup: 'encounters', scopes: ['encounters:read', 'patients:read', 'documents:read'], needs: ['resources.own_encounter'],
    path(api) {
      return this.pathFor(api.encounter('own_encounter'));
    },
    pathFor: (e) => `${base}/${seg(e)}`,
  },
  docRoute('document', 'getPublicEncounterDocument', 'clinical_document', '', ['encounters:read', 'documents:read']),
  docRoute('transcript', 'getPublicEncounterDocumentTranscript', 'ambient_transcript_with_audio', '/transcript', ['encounters:read', 'documents:read']),
  docRoute('audio', 'getPublicEncounterDocumentAudio', 'ambient_transcript_with_audio', '/audio', ['encounters:read', 'documents:read', 'recordings:read']),
];

export const SCOPE_ROLE = {
  'encounters:read': 'missing_scope_encounters_read',
  'patients:read': 'missing_scope_patients_read',
  'documents:read': 'missing_scope_documents_read',
  'recordings:read': 'missing_scope_recordings_read',
} as const;
