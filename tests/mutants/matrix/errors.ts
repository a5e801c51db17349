// Mutants that the §7.2 error matrix (checks/service/errors.ts) must catch. Also claims
// start-not-before-end-accepted for the list suite's start/end relation checks.
import type { Matrix } from '../matrix.ts';
import { relationId, RELATIONS } from '../../../checks/service/list.cases.ts';

const UNSUPPORTED_FILTER = 'errors-unsupported-filter-*';
const QUERY_422 = ['errors-invalid-limit-field-limit', 'errors-invalid-offset-field-offset', 'errors-invalid-sort-*', 'errors-invalid-query-*'];
const NOT_FOUND = ['errors-encounter-not-found-*', 'errors-document-not-found-*', 'errors-transcript-not-found', 'errors-audio-not-found', 'errors-404-category-observed-*'];
const BAD_DOCUMENT = ['errors-unsupported-document-type-*', 'errors-audio-not-available-for-document'];

export const MATRIX: Matrix = {
  'extra-field-error': [UNSUPPORTED_FILTER, ...QUERY_422, ...NOT_FOUND, ...BAD_DOCUMENT, 'errors-audio-storage-unavailable', 'errors-category-*'],
  'field-unsupported-filter-wrong': [UNSUPPORTED_FILTER, 'errors-category-400'],
  // Null is accepted only where a key of the query has no name a sanitizer must keep (query-fuzz's fixed `foo` has one).
  'field-unsupported-filter-null': [UNSUPPORTED_FILTER, 'query-fuzz-documented-responses'],
  'field-limit-null': ['errors-invalid-limit-field-limit', 'errors-category-422'],
  'field-offset-wrong': ['errors-invalid-offset-field-offset'],
  'field-sort-null': ['errors-invalid-sort-*'],
  'reason-invalid-sort-as-invalid-query': ['errors-invalid-sort-*'],
  'timezone-less-accepted': ['errors-invalid-query-start-at-timezone-less', 'errors-invalid-query-end-at-timezone-less'],
  'date-invalid-ignored': ['errors-invalid-query-*'],
  'date-error-field-wrong': ['errors-invalid-query-end-at-*'],
  'start-not-before-end-accepted': RELATIONS.map((r) => relationId(r.name)),
  'category-400-wrong': [UNSUPPORTED_FILTER, ...BAD_DOCUMENT, 'errors-category-400'],
  'category-401-wrong': ['errors-category-401'],
  'category-403-wrong': ['errors-category-403'],
  'status-403-as-401': ['errors-category-403'],
  'category-422-wrong': [...QUERY_422, 'errors-category-422'],
  'category-503-wrong': ['errors-audio-storage-unavailable', 'errors-category-503'],
  'digest-unavailable-as-500': ['errors-category-503'],
  'audio-storage-unavailable-as-404': ['errors-audio-storage-unavailable'],
  'encounter-not-found-as-cross-org': ['errors-encounter-not-found-*', 'errors-404-category-observed-encounter-not-found-*'],
  // A document of another encounter answered encounter_not_found is an open choice (DOC-WRONG-ENCOUNTER-REASON): only the unknown document is decided.
  'document-not-found-as-encounter-not-found': ['errors-document-not-found-unknown-*', 'errors-404-category-observed-document-not-found-unknown-*'],
  'document-of-other-encounter-returned': ['errors-document-not-found-other-encounter-*', 'errors-404-category-observed-document-not-found-other-encounter-*'],
  'transcript-not-found-as-500': ['errors-transcript-not-found', 'errors-404-category-observed-transcript-not-found'],
  'audio-not-available-as-not-found': ['errors-audio-not-available-for-document'],
  'unsupported-type-as-not-found': ['errors-unsupported-document-type-*'],
  'unsupported-type-as-200': ['errors-unsupported-document-type-document-*'],
  'query-keys-case-insensitive': ['errors-unsupported-filter-list-case-variant'],
  'query-not-percent-decoded': ['errors-list-percent-encoded-key-is-supported'],
};
