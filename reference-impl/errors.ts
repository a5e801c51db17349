// The one error table of the reference implementation: reason_code → HTTP status and public error category (§7.1).
// Handlers throw ApiError(reason); server.ts turns it into the body with toErrorBody. Nothing else builds errors.

export const CATEGORY = {
  400: 'public_api_bad_request',
  401: 'api_key_unauthorized',
  403: 'api_key_forbidden',
  // §7.1 shows no category for 404. Our choice, documented in README.md: "public_api_not_found".
  404: 'public_api_not_found',
  422: 'api_key_validation_failed',
  503: 'public_api_unavailable',
} as const;

type Status = keyof typeof CATEGORY;

export const ERRORS = {
  unsupported_filter: { status: 400, message: 'Query key is not supported by this route' },
  unsupported_document_type: { status: 400, message: 'Document type is not supported by this route' },
  audio_not_available_for_document: { status: 400, message: 'No audio is available for this document' },
  missing_bearer: { status: 401, message: 'No bearer API key was supplied' },
  api_keys_disabled: { status: 401, message: 'API-key authentication is disabled' },
  test_prefix_not_allowed: { status: 401, message: 'Test keys are not allowed in this environment' },
  malformed_token: { status: 401, message: 'The API key token is malformed' },
  invalid_key: { status: 401, message: 'The API key is not valid' },
  disabled_key: { status: 401, message: 'The API key is disabled' },
  revoked_key: { status: 401, message: 'The API key has been revoked' },
  expired_key: { status: 401, message: 'The API key has expired' },
  org_scope_only_required: { status: 403, message: 'Only organization-scoped API keys are accepted' },
  route_not_allowed: { status: 403, message: 'The route is not enabled for the organization' },
  missing_scope: { status: 403, message: 'The API key lacks a required scope' },
  organization_not_allowlisted: { status: 403, message: 'The organization is not approved for the public API' },
  cross_organization_denied: { status: 403, message: 'The encounter belongs to another organization' },
  demo_training_denied: { status: 403, message: 'Demo and training encounters are not disclosed' },
  encounter_not_found: { status: 404, message: 'Encounter not found' },
  document_not_found: { status: 404, message: 'Document not found for this encounter' },
  transcript_not_found: { status: 404, message: 'No finalized transcript for this document' },
  audio_not_found: { status: 404, message: 'Audio not found' },
  invalid_query: { status: 422, message: 'Query parameter is not valid' },
  invalid_limit: { status: 422, message: 'limit must be canonical decimal integer text from 1 to 100' },
  invalid_offset: { status: 422, message: 'offset must be canonical decimal integer text from 0 to 10000' },
  invalid_sort: { status: 422, message: 'sort_order must be asc or desc' },
  digest_key_unavailable: { status: 503, message: 'API-key verification is temporarily unavailable' },
  audio_storage_unavailable: { status: 503, message: 'Audio storage is temporarily unavailable' },
} as const satisfies Record<string, { status: Status; message: string }>;

export type ReasonCode = keyof typeof ERRORS;

export class ApiError extends Error {
  readonly reason: ReasonCode;
  readonly field: string | null;
  readonly detail: string | undefined;
  // Another status or category, set by a replaced rule (ctx.rule); undefined in the correct service.
  statusOverride: number | undefined;
  categoryOverride: string | undefined;
  constructor(reason: ReasonCode, field: string | null = null, detail?: string) {
    super(reason);
    this.reason = reason;
    this.field = field;
    this.detail = detail;
  }
}

/**
 * A path under /external/v1 that names none of the five routes. The contract has no reason code for it (§7.1's
 * enumeration is closed and route_not_allowed means a route the organization may not use): a 404 outside the
 * contract, like any path outside the API, whose body says the path names no route, so a client that branches on
 * reason codes (§5.7) never reads it as a refusal of its key. Documented in README.md.
 */
export class NoRoute extends Error {
  static readonly body = { error: 'not_found', message: 'the path names no route of the API: /external/v1/encounters[/{encounter_id}[/documents/{document_id}[/transcript|/audio]]], each id percent-encoded as one path segment' } as const;
}

export interface ErrorBody { error: string; reason_code: ReasonCode; message: string; field: string | null }

/** The message of an error: its row's text, with the detail after a colon. */
export function errorMessage(e: ApiError): string {
  const row = ERRORS[e.reason];
  return e.detail ? `${row.message}: ${e.detail}` : row.message;
}

export function toErrorBody(e: ApiError, message: (e: ApiError) => string = errorMessage): { status: number; body: ErrorBody } {
  const row = ERRORS[e.reason];
  return {
    status: e.statusOverride ?? row.status,
    body: { error: e.categoryOverride ?? CATEGORY[row.status], reason_code: e.reason, message: message(e), field: e.field },
  };
}

/** Keeps a client-supplied key printable and short before it is echoed back in `field` or a message. */
export function sanitizeField(raw: string): string {
  const cleaned = raw.replace(/[^\x20-\x7e]/g, '?');
  return cleaned.length > 64 ? `${cleaned.slice(0, 64)}…` : cleaned;
}
