// Assertions the checks share. Each throws a CheckFailure whose title names the violation. The
// status/category/reason table here is the oracle's own reading of spec §7.1 (never the reference's).
import { CheckFailure, type Exchange } from '../record/record.ts';
import { responseSchemaName, validateAgainst, type OperationId } from './contract.ts';

export const CATEGORY_BY_STATUS: Record<number, string | undefined> = {
  400: 'public_api_bad_request',
  401: 'api_key_unauthorized',
  403: 'api_key_forbidden',
  404: undefined, // §7.1: category not shown
  422: 'api_key_validation_failed',
  503: 'public_api_unavailable',
};

export const REASONS_BY_STATUS: Record<number, string[]> = {
  400: ['unsupported_filter', 'unsupported_document_type', 'audio_not_available_for_document'],
  401: ['missing_bearer', 'api_keys_disabled', 'test_prefix_not_allowed', 'malformed_token', 'invalid_key', 'disabled_key', 'revoked_key', 'expired_key'],
  403: ['org_scope_only_required', 'route_not_allowed', 'missing_scope', 'organization_not_allowlisted', 'cross_organization_denied', 'demo_training_denied'],
  404: ['encounter_not_found', 'document_not_found', 'transcript_not_found', 'audio_not_found'],
  422: ['invalid_query', 'invalid_limit', 'invalid_offset', 'invalid_sort'],
  503: ['digest_key_unavailable', 'audio_storage_unavailable'],
};

/**
 * §7.2's `field` of each reason: the parameter names the 422 reasons may carry, `key` for unsupported_filter (the
 * offending key, sanitized); every other reason carries null.
 */
export const FIELD_BY_REASON: Record<string, readonly string[] | 'key'> = {
  unsupported_filter: 'key',
  invalid_limit: ['limit'],
  invalid_offset: ['offset'],
  invalid_sort: ['sort_order'],
  invalid_query: ['start_at', 'end_at'],
};

export const STATUS_BY_REASON: Record<string, number> = Object.fromEntries(
  Object.entries(REASONS_BY_STATUS).flatMap(([s, rs]) => rs.map((r) => [r, Number(s)])),
);

export function describe(ex: Exchange): string {
  if (ex.error) return `${ex.request.method} ${ex.request.target} → transport ${ex.error.kind}: ${ex.error.message}`;
  const r = ex.response!;
  return `${ex.request.method} ${ex.request.target} → ${r.status} ${r.body.slice(0, 300)}`;
}

import { isJsonMediaType } from './media-type.ts';

export { isJsonMediaType };

/** Requires a response that arrived, is labelled with a JSON media type and parses as JSON. */
export function expectJson(ex: Exchange): unknown {
  if (ex.error) throw new CheckFailure('No response from target', `${ex.error.kind}: ${ex.error.message}`);
  const r = ex.response!;
  const ct = r.headers['content-type'] ?? '';
  if (!isJsonMediaType(ct)) throw new CheckFailure('Response is not labelled application/json', `status ${r.status}, content-type ${JSON.stringify(ct)}`);
  try {
    return JSON.parse(r.body);
  } catch (e) {
    throw new CheckFailure('Response body is not valid JSON', `status ${r.status}: ${(e as Error).message}`);
  }
}

export interface ErrorBody {
  error: string;
  reason_code: string;
  message: string;
  field: string | null;
}

/**
 * Requires the documented error: the status of the reason's §7.1 row, a body valid against the closed
 * PublicApiErrorResponse, the exact reason_code, the category of the status (except 404, not shown)
 * and the exact `field`.
 */
export function expectError(ex: Exchange, want: { reason: string; field?: string | null }): ErrorBody {
  const status = STATUS_BY_REASON[want.reason];
  if (status === undefined) throw new Error(`unknown reason ${want.reason}`);
  const body = expectJson(ex) as ErrorBody;
  const r = ex.response!;
  const got = body && typeof body === 'object' ? body.reason_code : undefined;
  if (r.status !== status || got !== want.reason) {
    // A success body has no reason_code: say what the answer was instead of "undefined".
    const what = got !== undefined ? JSON.stringify(got) : r.status >= 200 && r.status < 300 ? '(a success: the request was accepted)' : '(no reason_code in the body)';
    throw new CheckFailure(`Expected ${status} ${want.reason}`, `got ${r.status} ${what} for ${ex.request.target}`);
  }
  const invalid = validateAgainst('PublicApiErrorResponse', body);
  if (invalid) throw new CheckFailure('Error body does not match PublicApiErrorResponse', invalid);
  const category = CATEGORY_BY_STATUS[status];
  if (category !== undefined && body.error !== category) {
    throw new CheckFailure(`Wrong error category for ${status}`, `expected ${JSON.stringify(category)}, got ${JSON.stringify(body.error)}`);
  }
  const field = want.field === undefined ? null : want.field;
  if (body.field !== field) throw new CheckFailure(`Wrong field for ${want.reason}`, `expected ${JSON.stringify(field)}, got ${JSON.stringify(body.field)}`);
  return body;
}

/**
 * The reason_code of a JSON error body (text or bytes), or undefined; never throws (the assertion that follows
 * judges). The one reading of it: the checks, the client checks and `profile check` all call this.
 */
export function reasonOf(body: string | Uint8Array | undefined): string | undefined {
  try {
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
    const parsed = JSON.parse(text) as Partial<ErrorBody> | null;
    return typeof parsed?.reason_code === 'string' ? parsed.reason_code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Like expectError, where the catalog leaves the reason open (level `unspecified`): `want` is the closest
 * reading and passes; a reason in `open` is the documented error of another reading, judged as fully as
 * `want` (status, body, category, field) and then recorded through `observe`. Anything else fails as
 * expectError does. Returns the body.
 */
export function expectErrorOrOpen(ex: Exchange, want: { reason: string; field?: string | null }, open: { reasons: string[]; requirement: string }, observe: (text: string) => void): ErrorBody {
  const seen = reasonOf(ex.response?.body);
  if (seen === undefined || seen === want.reason || !open.reasons.includes(seen)) return expectError(ex, want);
  const body = expectError(ex, { reason: seen, field: want.field });
  observe(`answered ${ex.response!.status} ${seen} where ${want.reason} is the closest reading (${open.requirement} leaves it open)`);
  return body;
}

/** Requires 200 with a body valid against the operation's success schema. */
export function expectSuccess<T = any>(ex: Exchange, operationId: OperationId): T {
  const body = expectJson(ex);
  const r = ex.response!;
  if (r.status !== 200) throw new CheckFailure('Expected 200', `got ${r.status}: ${r.body.slice(0, 300)}`);
  // §4 names application/json for 200 itself (parameters allowed); a +json type is accepted for errors only.
  const essence = (r.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (essence !== 'application/json') throw new CheckFailure('Success response is not application/json', `content-type ${JSON.stringify(r.headers['content-type'])}`);
  const name = responseSchemaName(operationId, 200)!;
  const invalid = validateAgainst(name, body);
  if (invalid) throw new CheckFailure(`Response does not match ${name}`, invalid);
  return body as T;
}

/** Requires a status the contract documents for the operation, and a body valid for it. */
export function expectDocumented(ex: Exchange, operationId: OperationId): unknown {
  const body = expectJson(ex);
  const r = ex.response!;
  const name = responseSchemaName(operationId, r.status);
  if (!name) throw new CheckFailure('Undocumented status code', `${r.status} is not listed for ${operationId}`);
  const invalid = validateAgainst(name, body);
  if (invalid) throw new CheckFailure(`Response does not match ${name}`, invalid);
  if (name === 'PublicApiErrorResponse') {
    const reason = (body as ErrorBody).reason_code;
    if (STATUS_BY_REASON[reason] !== r.status) throw new CheckFailure('Reason code under the wrong status', `${reason} under ${r.status}`);
  }
  return body;
}

export function fail(title: string, detail = ''): never {
  throw new CheckFailure(title, detail);
}
