// Mutants that the schema-strictness suite (checks/service/schema.ts) and the served-OpenAPI suite
// (checks/service/openapi.ts) must catch. Each openapi-* mutant drifts one thing the specification fixes in the
// served document; the checks named are the judges of that thing (judge/openapi-meaning.ts). A route left
// out is only the routes judge's business: the parameter, status and name judges compare the routes present.
// openapi-status-added stays a mutant: §4 gives each route its complete list of error statuses, and a 500
// with the §7 error body could carry no reason code of §7.1 (each belongs to another status).
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'extra-field-encounter': ['schema-success-list-closed-json', 'schema-success-encounter-closed-json', 'list-excludes-demo-encounter'],
  'wrong-content-type': ['schema-success-*', 'openapi-served-as-json'],
  'extra-field-error': ['schema-error-*'],
  'error-body-not-json': ['schema-error-*'],
  'openapi-version-wrong': ['openapi-version-3-1-0', 'openapi-document-valid'],
  'openapi-info-version-wrong': ['openapi-info-version-v1'],
  'openapi-invalid': ['openapi-document-valid', 'openapi-schemas-agree'],
  'openapi-path-missing': ['openapi-paths-agree'],
  'openapi-operation-renamed': ['openapi-operations-agree'],
  'openapi-drift-limit-max': ['openapi-parameters-agree'],
  'openapi-status-added': ['openapi-statuses-agree'],
  'openapi-not-closed': ['openapi-schemas-closed', 'openapi-schemas-agree'],
  'openapi-reason-enum-drift': ['openapi-reason-enum-agrees', 'openapi-schemas-agree'],
  'openapi-security-drift': ['openapi-security-agrees'],
  'openapi-nullability-dropped': ['openapi-schemas-agree'],
  'openapi-extra-query-parameter': ['openapi-parameters-agree'],
  'openapi-anonymous-audio': ['openapi-security-agrees'],
};
