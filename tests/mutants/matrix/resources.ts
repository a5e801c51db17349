// Mutants that the resources suite (checks/service/resources.ts) must catch, with the schema-strictness
// checks that see the same defect through the closed contract schema.
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'detail-differs-from-list': ['resources-encounter-detail-equals-list-item'],
  // The detail of an encounter without documents drops its empty array: both checks read one such detail.
  'detail-documents-omitted': ['resources-encounter-detail-equals-list-item', 'ownership-detail-lists-profile-documents'],
  'clinical-content-format-html': ['resources-clinical-document-markdown-content', 'schema-success-document-clinical-closed-json'],
  'clinical-status-not-null': ['resources-clinical-document-status-and-variant-null', 'schema-success-document-clinical-closed-json'],
  'ambient-detail-has-content': ['resources-ambient-document-metadata-only', 'schema-success-document-ambient-closed-json'],
  'unsupported-type-as-200': ['resources-billing-document-detail-unsupported', 'resources-checklist-document-detail-unsupported', 'schema-error-unsupported-document-type-closed-json'],
  'document-of-other-encounter-returned': ['resources-document-of-other-encounter-rejected'],
  'transcript-turns-unsorted': ['resources-transcript-turns-chronological'],
  'transcript-ids-swapped': ['resources-identifiers-echo-path'],
  'audio-expires-in-past': ['resources-audio-expires-at-in-future'],
  'audio-url-empty': ['resources-audio-url-present'],
};
