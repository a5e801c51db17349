// The /external/v1 pipeline: the order of evaluation of spec §4 as one table of stages,
//   (1) authenticate → (2) authorize_route → (3) require_scopes → (4) reject_unsupported_keys → (5) validate_query → (6) lookup
// then the operation of the route builds its body (bodies.ts), a disclosure event is queued, and 200 is the answer.
// Every refusal is an ApiError of the one table in errors.ts; server.ts renders it. The rules below are the correct
// ones: a caller outside replaces a named point through the request's hook (ctx.rule, context.ts), never by a
// branch in here.
import { bearerToken, digestToken, digestsEqual, parseToken } from './auth.ts';
import { respondAudio, respondDocument, respondEncounter, respondList, respondTranscript } from './bodies.ts';
import type { Ctx, Judgment, Operation, Reply, RouteGroup, Scope, Services, Stage } from './context.ts';
import { ApiError, NoRoute, type ReasonCode } from './errors.ts';
import { LIST_KEYS, rejectUnsupportedKeys, validateListQuery } from './query.ts';
import type { DocumentRow, EncounterRow, KeyRow } from './records.ts';

export type { Ctx, Operation, RouteGroup, Scope, Services, Stage } from './context.ts';

// ---------------------------------------------------------------- the operations: one row per operationId

const ENCOUNTER_SCOPES: Scope[] = ['encounters:read', 'patients:read', 'documents:read'];
const DOCUMENT_SCOPES: Scope[] = ['encounters:read', 'documents:read'];
export const ALL_SCOPES: readonly Scope[] = ['encounters:read', 'patients:read', 'documents:read', 'recordings:read'];
const SEGMENT = '([^/]+)';
const DOC_PATH = `^/external/v1/encounters/${SEGMENT}/documents/${SEGMENT}`;

const OPERATIONS: Operation[] = [
  { id: 'listPublicEncounters', path: /^\/external\/v1\/encounters$/, group: 'encounters', scopes: ENCOUNTER_SCOPES, queryKeys: LIST_KEYS, respond: respondList },
  { id: 'getPublicEncounter', path: new RegExp(`^/external/v1/encounters/${SEGMENT}$`), group: 'encounters', scopes: ENCOUNTER_SCOPES, queryKeys: [], respond: respondEncounter },
  { id: 'getPublicEncounterDocument', path: new RegExp(`${DOC_PATH}$`), group: 'documents', scopes: DOCUMENT_SCOPES, queryKeys: [], respond: respondDocument },
  { id: 'getPublicEncounterDocumentTranscript', path: new RegExp(`${DOC_PATH}/transcript$`), group: 'documents', scopes: DOCUMENT_SCOPES, queryKeys: [], respond: respondTranscript },
  { id: 'getPublicEncounterDocumentAudio', path: new RegExp(`${DOC_PATH}/audio$`), group: 'documents', scopes: [...DOCUMENT_SCOPES, 'recordings:read'], queryKeys: [], respond: respondAudio },
];

/**
 * The operation a path names (none: step 2 answers 404, the path names no route), with its path parameters. The raw path is
 * split on '/' first and each segment decoded after, so an id holding '/' arrives as one segment (%2F).
 */
export function route(path: string): { op: Operation | undefined; params: string[] } {
  for (const op of OPERATIONS) {
    const m = op.path.exec(path);
    if (m) return { op, params: m.slice(1).map(pathParam) };
  }
  return { op: undefined, params: [] };
}

// RFC 3986 segment: pchar = unreserved / pct-encoded / sub-delims / ":" / "@".
const RAW_SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*$/;

/**
 * A path parameter from its raw segment. A segment that is not an RFC 3986 segment (a raw '#', '[' or '{', a '%' not
 * starting an escape) or whose escapes are not UTF-8 names nothing: taken literally it would let a client that skipped
 * encoding reach an id that holds '%' or '#'. Such a parameter is what decodeSegment gives, after a NUL, which no
 * identifier holds: the lookup answers *_not_found, as it did for these segments before ids could hold '%' or '#'.
 */
export function pathParam(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return `\u0000${raw}`;
  }
  return RAW_SEGMENT.test(raw) ? decoded : `\u0000${decoded}`;
}

export function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // kept as sent (a route parameter: pathParam, which makes such a segment name nothing)
  }
}

// ---------------------------------------------------------------- the stages (spec §4 order of evaluation)

/** Step 1's environment switch, checked before the token is even parsed. */
export function requireKeysEnabled(ctx: Ctx): void {
  if (ctx.faults.has('api_keys_disabled')) throw new ApiError('api_keys_disabled');
}

/** Step 1's digest key: without it no key can be verified (503, never 500). */
export function requireDigestKey(ctx: Ctx): void {
  if (ctx.faults.has('digest_key_unavailable')) throw new ApiError('digest_key_unavailable');
}

function routeGroupEnabled(key: KeyRow, group: RouteGroup): boolean | null {
  return group === 'encounters' ? key.encounter_routes_enabled : key.document_routes_enabled;
}

/** (1) API-key authentication, in the order of README "API keys": the most permanent key state first. */
async function authenticate(ctx: Ctx, s: Services): Promise<void> {
  ctx.rule('keysEnabledCheck', requireKeysEnabled)(ctx);
  const token = ctx.rule('presentedToken', (c: Ctx) => bearerToken(c.req.headers.authorization))(ctx);
  if (token === null) throw new ApiError(ctx.rule('missingBearerReason', (): ReasonCode => 'missing_bearer')(ctx));
  const parsed = parseToken(token);
  if (!parsed) throw new ApiError('malformed_token');
  if (parsed.isTest && ctx.rule('testKeysRefused', (c: Ctx) => c.faults.has('test_prefix_not_allowed'))(ctx)) throw new ApiError('test_prefix_not_allowed');
  ctx.rule('digestKeyCheck', requireDigestKey)(ctx);
  let row: KeyRow | undefined;
  try {
    row = await s.repo.findKey(parsed.keyId);
  } catch {
    // Database unreachable or slow: verification is impossible right now (§5.6), never a 500.
    throw new ApiError('digest_key_unavailable');
  }
  const digest = digestToken(s.digestKey, token);
  // Compare against a dummy digest when the id is unknown, so both failures cost the same.
  const matches = digestsEqual(digest, row?.key_digest ?? s.dummyDigest) && row !== undefined;
  if (!row || !matches) throw new ApiError('invalid_key');
  // When several apply, the most permanent state is reported: revoked, then disabled, then expired.
  if (row.revoked) throw new ApiError(ctx.rule('revokedReason', 'revoked_key'));
  if (row.disabled) throw new ApiError('disabled_key');
  if (row.expired) throw new ApiError(ctx.rule('expiredReason', 'expired_key'));
  ctx.key = row;
}

/** (2) Route availability and organization approval. Unknown paths (404, outside the contract) and other methods end here (documented choices). */
function authorizeRoute(ctx: Ctx): void {
  if (!ctx.op) throw new NoRoute();
  if (!ctx.rule('methodAllowed', (method: string) => method === 'GET')(ctx.method)) {
    const e = new ApiError('route_not_allowed', null, `method ${ctx.method} is not allowed; every route is GET only`);
    e.statusOverride = 405;
    e.categoryOverride = 'public_api_method_not_allowed';
    throw e;
  }
  const key = ctx.key!;
  if (key.organization_id === null && ctx.rule('orgScopeOnly', true)) throw new ApiError('org_scope_only_required');
  if (!key.allowlisted) throw new ApiError(ctx.rule('notAllowlistedReason', 'organization_not_allowlisted'));
  if (!ctx.rule('routeGroupEnabled', routeGroupEnabled)(key, ctx.op.group)) throw new ApiError('route_not_allowed', null, `the ${ctx.op.group} routes are not enabled for the organization`);
}

/** (3) Required scopes: the key must hold every scope of the route. */
function requireScopes(ctx: Ctx): void {
  if (!ctx.op || !ctx.key) return;
  const missing = ctx.rule('requiredScopes', (op: Operation) => op.scopes)(ctx.op).filter((scope) => !ctx.key!.scopes.includes(scope));
  if (missing.length > 0) throw ctx.rule('missingScopeError', (m: readonly Scope[]) => new ApiError('missing_scope', null, m.join(', ')))(missing);
}

/** Step (6) after existence, in our order (ORDER-LOOKUP-INTERNAL is open): ownership, demo flag, the document's encounter. */
const LOOKUP_JUDGMENTS: readonly Judgment[] = [
  function owned(ctx, { encounter }) {
    if (encounter.organization_id !== ctx.key!.organization_id) throw new ApiError(ctx.rule('crossOrgReason', 'cross_organization_denied'));
  },
  function notDemo(ctx, { encounter }) {
    if (encounter.is_demo) throw new ApiError(ctx.rule('demoReason', 'demo_training_denied'));
  },
  function documentOfEncounter(ctx, { encounter, document, documentId }) {
    if (documentId === undefined) return;
    const belongs = document !== undefined && ctx.rule('documentBelongs', (d: DocumentRow, e: EncounterRow) => d.encounter_id === e.encounter_id)(document, encounter);
    if (!belongs) throw new ApiError(ctx.rule('documentNotFoundReason', (): ReasonCode => 'document_not_found')(document, encounter));
  },
];

/** (6) Resource lookup: the encounter (and document) named by the path, seen from the caller's organization. */
async function lookup(ctx: Ctx, s: Services): Promise<void> {
  if (!ctx.op || ctx.op.id === 'listPublicEncounters') return;
  const [encounterId, documentId] = ctx.params;
  // One statement: the encounter (with its document summaries on the detail route), or the encounter and the
  // document named by the path. What is reported follows the order of the judgments either way.
  const found = documentId === undefined
    ? { encounter: await s.repo.getEncounter(encounterId, true), document: undefined }
    : await s.repo.getEncounterAndDocument(encounterId, documentId);
  const encounter = found.encounter;
  if (!encounter) throw new ApiError(ctx.rule('unknownEncounterReason', 'encounter_not_found'));
  for (const judge of ctx.rule('lookupJudgments', LOOKUP_JUDGMENTS)) judge(ctx, { encounter, document: found.document, documentId });
  ctx.encounter = encounter;
  if (documentId !== undefined) ctx.document = found.document;
}

/** The conformant order of spec §4 (the named point pipeline: another order of the same stages may replace it). */
export const PIPELINE: readonly Stage[] = [
  { name: 'authenticate', run: authenticate },
  { name: 'authorize_route', run: authorizeRoute },
  { name: 'require_scopes', run: requireScopes },
  // (4) Unsupported query keys: any key on item routes, anything but the five list keys on the list route.
  { name: 'reject_unsupported_keys', run: (ctx) => ctx.rule('rejectUnsupportedKeys', rejectUnsupportedKeys)(ctx.pairs, ctx.op?.queryKeys ?? [], ctx.rule) },
  // (5) Query validation (list route only).
  { name: 'validate_query', run: (ctx) => { if (ctx.op?.id === 'listPublicEncounters') ctx.list = ctx.rule('validateListQuery', validateListQuery)(ctx.pairs, ctx.rule); } },
  { name: 'lookup', run: lookup },
];

/** The operation's body, its disclosure event queued (written within milliseconds, flushed at shutdown), 200. */
async function respond(ctx: Ctx, s: Services): Promise<Reply> {
  const { body, resourceIds } = await ctx.op!.respond(ctx, s);
  s.disclosures.record(ctx.op!.id, ctx.key!.organization_id!, ctx.key!.key_id, resourceIds);
  const contentType = ctx.rule('successContentType', undefined);
  return { status: 200, body: ctx.rule('successBody', (b: unknown) => b)(body), headers: contentType ? { 'content-type': contentType } : {} };
}

/** Runs the stages in order, then the operation. Throws the ApiError of the first stage that refuses. */
export async function answer(ctx: Ctx, s: Services): Promise<Reply> {
  for (const stage of ctx.rule('pipeline', PIPELINE)) await stage.run(ctx, s);
  return ctx.rule('reply', respond)(ctx, s);
}
