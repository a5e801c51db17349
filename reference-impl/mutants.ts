// The fault switchboard's mutants: one deliberate non-conformance each. Off unless a request carries the
// switchboard token and `x-switchboard-mutant: NAME` (or the process was started with --mutant NAME).
// The code consults `mutant === 'NAME'` at the exact place of each defect; grep the name to find it.

export const MUTANTS = {
  'precedence-query-before-auth': { area: 'precedence', description: 'unsupported query keys are rejected before API-key authentication' },
  'precedence-scope-before-route': { area: 'precedence', description: 'scopes are checked before route availability and organization approval' },
  'precedence-query-before-scope': { area: 'precedence', description: 'query keys and values are checked before required scopes' },
  'precedence-lookup-before-query': { area: 'precedence', description: 'the encounter/document is looked up before query keys are checked' },
  'precedence-route-before-auth': { area: 'precedence', description: 'the API-key environment checks (api_keys_disabled, digest_key_unavailable) run after route availability and organization approval' },
  'precedence-scope-before-auth': { area: 'precedence', description: 'the API-key environment checks (api_keys_disabled, digest_key_unavailable) run after the required-scope check' },
  'precedence-validation-before-auth': { area: 'precedence', description: 'list query values are validated before API-key authentication' },
  'precedence-validation-before-keys': { area: 'precedence', description: 'list query values are validated before unsupported query keys are rejected' },
  'precedence-lookup-before-auth': { area: 'precedence', description: 'the encounter is looked up (existence, demo flag) before API-key authentication' },
  'precedence-lookup-before-route': { area: 'precedence', description: 'the encounter/document is looked up before route availability and organization approval' },
  'precedence-lookup-before-scope': { area: 'precedence', description: 'the encounter/document is looked up before required scopes are checked' },
  'reason-revoked-as-invalid': { area: 'auth-reason', description: 'a revoked key reports invalid_key' },
  'reason-expired-as-disabled': { area: 'auth-reason', description: 'an expired key reports disabled_key' },
  'reason-missing-bearer-as-malformed': { area: 'auth-reason', description: 'a missing Authorization header reports malformed_token' },
  'test-key-always-allowed': { area: 'auth-reason', description: 'the test_prefix_not_allowed environment switch is ignored' },
  'org-scope-check-skipped': { area: 'access', description: 'keys that are not organization scoped are not rejected with org_scope_only_required' },
  'reason-not-allowlisted-as-route-not-allowed': { area: 'access', description: 'an organization that is not allowlisted reports route_not_allowed' },
  'route-group-check-skipped': { area: 'access', description: 'the route-group enablement of the organization is not checked' },
  'route-disabled-blocks-both-groups': { area: 'access', description: 'an organization with either route group disabled is refused on every route' },
  'every-route-requires-all-scopes': { area: 'access', description: 'every route requires all four scopes, including ones the route does not list' },
  'category-401-wrong': { area: 'error-shape', description: '401 errors carry the category "unauthorized" instead of api_key_unauthorized' },
  'status-403-as-401': { area: 'error-shape', description: 'missing_scope is answered with status 401' },
  'category-403-wrong': { area: 'error-shape', description: '403 errors carry the category "forbidden" instead of api_key_forbidden' },
  'field-403-not-null': { area: 'error-shape', description: '403 errors carry field "authorization" instead of null' },
  'digest-unavailable-as-500': { area: 'error-shape', description: 'an unavailable digest key ends in a 500 internal error instead of 503 digest_key_unavailable' },
  'extra-field-error': { area: 'error-shape', description: 'error bodies carry an undeclared "details" field' },
  'field-limit-null': { area: 'error-shape', description: 'invalid_limit errors carry field null' },
  'multiple-query-errors-combined': { area: 'error-shape', description: 'several query problems at once are answered with one 422 invalid_query (field null) instead of one of the documented errors' },
  'field-unsupported-filter-wrong': { area: 'error-shape', description: 'unsupported_filter names the last query key instead of the offending one' },
  'lenient-limit-leading-zero': { area: 'query-validation', description: 'limit accepts leading zeros (01)' },
  'lenient-limit-plus': { area: 'query-validation', description: 'limit accepts a leading plus sign (+1, %2B1)' },
  'limit-max-101': { area: 'query-validation', description: 'limit accepts 101' },
  'offset-max-10001': { area: 'query-validation', description: 'offset accepts 10001' },
  'offset-negative-accepted': { area: 'query-validation', description: 'offset accepts negative values (treated as 0)' },
  'timezone-less-accepted': { area: 'query-validation', description: 'start_at/end_at without a timezone are accepted (as UTC)' },
  'start-not-before-end-accepted': { area: 'query-validation', description: 'start_at equal to or after end_at is accepted' },
  'default-limit-20': { area: 'list-semantics', description: 'the default limit is 20 instead of 50' },
  'missing-required-total': { area: 'list-semantics', description: 'the list response omits total' },
  'total-is-page-size': { area: 'list-semantics', description: 'total reports the number of items on the page' },
  'sort-ignores-tiebreaker': { area: 'list-semantics', description: 'ties on created_at are ordered against the encounter_id tie-breaker' },
  'sort-order-inverted': { area: 'list-semantics', description: 'sort_order=asc returns descending order and vice versa' },
  'end-at-inclusive': { area: 'list-semantics', description: 'end_at is an inclusive bound' },
  'start-at-exclusive': { area: 'list-semantics', description: 'start_at is an exclusive bound' },
  'demo-listed': { area: 'resource-access', description: 'demo/training encounters appear in the list' },
  'cross-org-listed': { area: 'resource-access', description: 'encounters of other organizations appear in the list' },
  'cross-org-as-not-found': { area: 'resource-access', description: 'an encounter of another organization gives 404 encounter_not_found instead of 403' },
  'demo-as-not-found': { area: 'resource-access', description: 'a demo/training encounter gives 404 encounter_not_found instead of 403 demo_training_denied' },
  'document-of-other-encounter-returned': { area: 'resource-access', description: 'a document of another encounter (same organization) is returned' },
  'extra-field-encounter': { area: 'response-shape', description: 'encounter summaries carry an undeclared field' },
  'clinical-status-not-null': { area: 'response-shape', description: 'clinical document detail carries a non-null status' },
  'unsupported-type-as-200': { area: 'response-shape', description: 'document detail of a billing/checklist summary answers 200' },
  'wrong-content-type': { area: 'response-shape', description: 'successful responses are sent as text/plain' },
  'transcript-turns-unsorted': { area: 'transcript', description: 'transcript turns are returned in storage order, not chronological order' },
  'audio-expires-in-past': { area: 'audio', description: 'expires_at of the audio URL lies in the past' },
  'audio-missing-scope-recordings-ignored': { area: 'audio', description: 'the audio route does not require recordings:read' },
  'audio-storage-unavailable-as-404': { area: 'audio', description: 'unavailable audio storage is reported as 404 audio_not_found instead of 503 audio_storage_unavailable' },
  'openapi-drift-limit-max': { area: 'contract', description: 'the served OpenAPI document says limit maximum 200' },
  'openapi-not-closed': { area: 'contract', description: 'the served OpenAPI document drops additionalProperties:false from PublicEncounterSummary' },
} as const satisfies Record<string, { area: string; description: string }>;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}

/** Environment switches that a switchboard request may turn on (profile `faults`). */
export const FAULTS = ['api_keys_disabled', 'test_prefix_not_allowed', 'digest_key_unavailable', 'audio_storage_unavailable'] as const;
export type FaultName = (typeof FAULTS)[number];
export function isFaultName(name: string): name is FaultName {
  return (FAULTS as readonly string[]).includes(name);
}
