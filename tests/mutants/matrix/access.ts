// Mutants that the access suite (checks/service/access.ts) must catch: key kind, organization approval,
// route groups, scopes (required and not required), other-organization and demo data, audio storage.
import type { Matrix } from '../matrix.ts';

/** Every check of the suite that expects a 403. */
const ALL_403 = [
  'access-org-scope-only-required-*', 'access-organization-not-allowlisted-*', 'access-route-not-allowed-*', 'access-missing-scope-*',
  'access-cross-organization-denied-*', 'access-demo-training-denied-*', 'access-document-routes-open-when-encounter-routes-disabled-*',
];

export const MATRIX: Matrix = {
  'org-scope-check-skipped': ['access-org-scope-only-required-*'],
  'reason-not-allowlisted-as-route-not-allowed': ['access-organization-not-allowlisted-*'],
  'route-group-check-skipped': ['access-route-not-allowed-*'],
  'route-disabled-blocks-both-groups': ['access-encounter-routes-open-when-document-routes-disabled-*', 'access-document-routes-open-when-encounter-routes-disabled-*', 'access-document-routes-readable-when-encounter-routes-disabled-*'],
  'every-route-requires-all-scopes': ['access-scope-not-required-*'],
  'status-403-as-401': ['access-missing-scope-*'],
  'audio-missing-scope-recordings-ignored': ['access-missing-scope-recordings-read-audio'],
  'cross-org-as-not-found': ['access-cross-organization-denied-*', 'access-document-routes-open-when-encounter-routes-disabled-*'],
  'demo-as-not-found': ['access-demo-training-denied-*'],
  'category-403-wrong': ALL_403,
  'field-403-not-null': ALL_403,
  'audio-storage-unavailable-as-404': ['access-audio-storage-unavailable-audio'],
};
