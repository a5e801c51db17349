// Mutants that the schema-strictness suite (suites/schema.spec.ts) and the served-OpenAPI suite
// (suites/openapi.spec.ts) must catch. Each openapi-* mutant drifts one aspect of the served document;
// the checks named are the aspects that must report it.
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'extra-field-encounter': ['schema-success-list-closed-json', 'schema-success-encounter-closed-json', 'list-excludes-demo-encounter'],
  'wrong-content-type': ['schema-success-*', 'openapi-served-as-json'],
  'extra-field-error': ['schema-error-*'],
  'error-body-not-json': ['schema-error-*'],
  'openapi-version-wrong': ['openapi-version-3-1-0', 'openapi-document-valid'],
  'openapi-info-version-wrong': ['openapi-info-version-v1'],
  'openapi-invalid': ['openapi-document-valid', 'openapi-schemas-agree'],
  'openapi-path-missing': ['openapi-paths-agree', 'openapi-operations-agree', 'openapi-parameters-agree', 'openapi-statuses-agree'],
  'openapi-operation-renamed': ['openapi-operations-agree'],
  'openapi-drift-limit-max': ['openapi-parameters-agree'],
  'openapi-status-added': ['openapi-statuses-agree'],
  'openapi-not-closed': ['openapi-schemas-closed', 'openapi-schemas-agree'],
  'openapi-reason-enum-drift': ['openapi-reason-enum-agrees', 'openapi-schemas-agree'],
  'openapi-security-drift': ['openapi-security-agrees'],
};
