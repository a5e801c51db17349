// HTTP server of the reference implementation (node:http, no framework).
// Every /external/v1 request goes through ONE pipeline in the order of spec §4:
//   (1) authenticate → (2) authorize_route → (3) require_scopes → (4) reject_unsupported_keys → (5) validate_query → (6) lookup
// then the operation builds its body, a disclosure event is recorded, and 200 is sent. Every error is an ApiError
// rendered from the one table in errors.ts. Other paths: the served OpenAPI document and the audio storage route.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type stream from 'node:stream';
import type pg from 'pg';
import { bearerToken, digestToken, digestsEqual, parseToken } from './auth.ts';
import { AUDIO_URL_TTL_SECONDS, AudioSigner, STORAGE_PREFIX } from './audio.ts';
import { ApiError, toErrorBody } from './errors.ts';
import { isFaultName, isMutantName } from './mutants.ts';
import { isVariantName, type VariantName } from './variants.ts';
import { applyOpenapiVariants, openapiContentType, OPENAPI_VARIANTS } from './served-contract.ts';
import type { FaultName, MutantName } from './mutants.ts';
import { LIST_KEYS, parseRawQuery, rejectUnsupportedKeys, validateListQuery } from './query.ts';
import type { ListQuery, QueryPair } from './query.ts';
import { DisclosureLog } from './disclosure.ts';
import { Repo } from './repo.ts';
import type { DocumentRow, DocumentSummaryRow, EncounterRow, KeyRow } from './repo.ts';
import { activateSubscription, deactivateSubscription, eventDeliveries, finalizeTranscript, parseSubscriptionInput, WebhookInputError } from './webhooks.ts';

export interface ServerOptions {
  pool: pg.Pool;
  digestKey: Buffer;
  openapiPath: string;
  /** Enables the fault switchboard; without it the switchboard headers are ignored. */
  switchboardToken: string | null;
  /** A mutant applied to every request (the --mutant flag); per-request headers override it. */
  defaultMutant: MutantName | null;
  /** Origin used in audio URLs when the Host header is unusable. */
  fallbackOrigin: string;
  /** Webhook sandbox control (routes under /__sandbox/, switchboard token required): the organization they act for. */
  sandboxOrganizationId?: string;
  /** Wakes the webhook delivery worker after an event is written. */
  onWebhookEvent?: () => void;
  /** Where the disclosure event of each successful read goes (flushed by the caller at shutdown). */
  disclosures: DisclosureLog;
}

type Scope = 'encounters:read' | 'patients:read' | 'documents:read' | 'recordings:read';
type RouteGroup = 'encounters' | 'documents';

interface Ctx {
  req: http.IncomingMessage;
  method: string;
  op: Operation | undefined;
  params: string[];
  pairs: QueryPair[];
  faults: Set<FaultName>;
  mutant: MutantName | null;
  /** Legitimate choices the spec allows, switched on for this request (reference-impl/variants.ts). */
  variants: ReadonlySet<VariantName>;
  origin: string;
  key?: KeyRow;
  list?: ListQuery;
  /** With its document summaries on the encounter detail route. */
  encounter?: EncounterRow & { documents?: DocumentSummaryRow[] };
  document?: DocumentRow;
}

interface Operation {
  id: string;
  path: RegExp;
  group: RouteGroup;
  scopes: Scope[];
  queryKeys: readonly string[];
  respond(ctx: Ctx, app: App): Promise<{ body: unknown; resourceIds: string[] }>;
}

const ENCOUNTER_SCOPES: Scope[] = ['encounters:read', 'patients:read', 'documents:read'];
const DOCUMENT_SCOPES: Scope[] = ['encounters:read', 'documents:read'];
const SEGMENT = '([^/]+)';
const DOC_PATH = `^/external/v1/encounters/${SEGMENT}/documents/${SEGMENT}`;

const OPERATIONS: Operation[] = [
  { id: 'listPublicEncounters', path: /^\/external\/v1\/encounters$/, group: 'encounters', scopes: ENCOUNTER_SCOPES, queryKeys: LIST_KEYS, respond: respondList },
  { id: 'getPublicEncounter', path: new RegExp(`^/external/v1/encounters/${SEGMENT}$`), group: 'encounters', scopes: ENCOUNTER_SCOPES, queryKeys: [], respond: respondEncounter },
  { id: 'getPublicEncounterDocument', path: new RegExp(`${DOC_PATH}$`), group: 'documents', scopes: DOCUMENT_SCOPES, queryKeys: [], respond: respondDocument },
  { id: 'getPublicEncounterDocumentTranscript', path: new RegExp(`${DOC_PATH}/transcript$`), group: 'documents', scopes: DOCUMENT_SCOPES, queryKeys: [], respond: respondTranscript },
  { id: 'getPublicEncounterDocumentAudio', path: new RegExp(`${DOC_PATH}/audio$`), group: 'documents', scopes: [...DOCUMENT_SCOPES, 'recordings:read'], queryKeys: [], respond: respondAudio },
];

// ---------------------------------------------------------------- the pipeline (spec §4 order of evaluation)

type StageName = 'authenticate' | 'authorize_route' | 'require_scopes' | 'reject_unsupported_keys' | 'validate_query' | 'lookup';
const PIPELINE: readonly StageName[] = ['authenticate', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'validate_query', 'lookup'];

/** The conformant order, or the reordered one of a precedence mutant. */
function pipelineFor(mutant: MutantName | null): readonly StageName[] {
  if (mutant === 'precedence-query-before-auth') return ['reject_unsupported_keys', 'authenticate', 'authorize_route', 'require_scopes', 'validate_query', 'lookup'];
  if (mutant === 'precedence-scope-before-route') return ['authenticate', 'require_scopes', 'authorize_route', 'reject_unsupported_keys', 'validate_query', 'lookup'];
  if (mutant === 'precedence-query-before-scope') return ['authenticate', 'authorize_route', 'reject_unsupported_keys', 'validate_query', 'require_scopes', 'lookup'];
  if (mutant === 'precedence-lookup-before-query') return ['authenticate', 'authorize_route', 'require_scopes', 'lookup', 'reject_unsupported_keys', 'validate_query'];
  if (mutant === 'precedence-validation-before-auth') return ['validate_query', 'authenticate', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'lookup'];
  if (mutant === 'precedence-validation-before-keys') return ['authenticate', 'authorize_route', 'require_scopes', 'validate_query', 'reject_unsupported_keys', 'lookup'];
  if (mutant === 'precedence-lookup-before-auth') return ['lookup', 'authenticate', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'validate_query', 'lookup'];
  if (mutant === 'precedence-lookup-before-route') return ['authenticate', 'lookup', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'validate_query'];
  if (mutant === 'precedence-lookup-before-scope') return ['authenticate', 'authorize_route', 'lookup', 'require_scopes', 'reject_unsupported_keys', 'validate_query'];
  if (mutant === 'precedence-query-before-route') return ['authenticate', 'reject_unsupported_keys', 'authorize_route', 'require_scopes', 'validate_query', 'lookup'];
  if (mutant === 'precedence-validation-before-route') return ['authenticate', 'validate_query', 'authorize_route', 'require_scopes', 'reject_unsupported_keys', 'lookup'];
  if (mutant === 'precedence-validation-before-scope') return ['authenticate', 'authorize_route', 'validate_query', 'require_scopes', 'reject_unsupported_keys', 'lookup'];
  return PIPELINE;
}

/** Mutants precedence-route-before-auth / precedence-scope-before-auth: the environment checks of step 1, run late. */
function deferredEnvironmentChecks(ctx: Ctx): void {
  if (ctx.faults.has('api_keys_disabled')) throw new ApiError('api_keys_disabled');
  if (ctx.faults.has('digest_key_unavailable')) throw new ApiError('digest_key_unavailable');
}

const STAGES: Record<StageName, (ctx: Ctx, app: App) => Promise<void> | void> = {
  // (1) API-key authentication. The environment switch comes first, before the token is even parsed.
  async authenticate(ctx, app) {
    const deferEnvironment = ctx.mutant === 'precedence-route-before-auth' || ctx.mutant === 'precedence-scope-before-auth';
    if (ctx.faults.has('api_keys_disabled') && !deferEnvironment) throw new ApiError('api_keys_disabled');
    let token = bearerToken(ctx.req.headers.authorization);
    // Mutant bearer-scheme-case-sensitive: the scheme matched by its spelling (RFC 7235 §2.1: case-insensitive).
    if (ctx.mutant === 'bearer-scheme-case-sensitive' && !/^\s*Bearer\s/.test(ctx.req.headers.authorization ?? '')) token = null;
    // Mutants api-key-query-param-accepted / api-key-anywhere-accepted: a key sent outside the Authorization header is honoured.
    if (token === null && (ctx.mutant === 'api-key-query-param-accepted' || ctx.mutant === 'api-key-anywhere-accepted')) {
      const anywhere = ctx.mutant === 'api-key-anywhere-accepted';
      const pair = ctx.pairs.find((p) => p.key === 'api_key' || (anywhere && p.key === 'access_token'));
      const cookie = /(?:^|;\s*)(?:api_key|access_token)=([^;]+)/.exec(String(ctx.req.headers.cookie ?? ''))?.[1];
      const header = ctx.req.headers['x-api-key'];
      token = pair?.value ?? (anywhere ? (cookie ?? (typeof header === 'string' ? header : undefined)) : undefined) ?? null;
      ctx.pairs = ctx.pairs.filter((p) => p !== pair);
    }
    // Variant non-bearer-scheme-as-malformed: a header with another scheme (Basic) counts as a malformed token.
    const otherScheme = token === null && ctx.variants.has('non-bearer-scheme-as-malformed') && (ctx.req.headers.authorization ?? '').trim() !== '';
    if (token === null) throw new ApiError(ctx.mutant === 'reason-missing-bearer-as-malformed' || otherScheme ? 'malformed_token' : 'missing_bearer');
    const parsed = parseToken(token);
    if (!parsed) throw new ApiError('malformed_token');
    if (parsed.isTest && ctx.faults.has('test_prefix_not_allowed') && ctx.mutant !== 'test-key-always-allowed') throw new ApiError('test_prefix_not_allowed');
    if (ctx.faults.has('digest_key_unavailable') && !deferEnvironment) {
      if (ctx.mutant === 'digest-unavailable-as-500') throw new Error('digest key store unreachable');
      throw new ApiError('digest_key_unavailable');
    }
    let row: KeyRow | undefined;
    try {
      row = await app.repo.findKey(parsed.keyId);
    } catch {
      // Database unreachable or slow: verification is impossible right now (§5.6), never a 500.
      throw new ApiError('digest_key_unavailable');
    }
    const digest = digestToken(app.digestKey, token);
    // Compare against a dummy digest when the id is unknown, so both failures cost the same.
    const matches = digestsEqual(digest, row?.key_digest ?? app.dummyDigest) && row !== undefined;
    if (!row || !matches) throw new ApiError('invalid_key');
    // When several apply, the most permanent state is reported: revoked, then disabled, then expired.
    if (row.revoked) throw new ApiError(ctx.mutant === 'reason-revoked-as-invalid' ? 'invalid_key' : 'revoked_key');
    if (row.disabled) throw new ApiError('disabled_key');
    if (row.expired) throw new ApiError(ctx.mutant === 'reason-expired-as-disabled' ? 'disabled_key' : 'expired_key');
    ctx.key = row;
  },

  // (2) Route availability and organization approval. Unknown paths and other methods end here (documented choice).
  authorize_route(ctx) {
    if (!ctx.op) throw new ApiError('route_not_allowed', null, 'no such route under /external/v1');
    // Variant http-head-like-get: HEAD is answered as GET (node:http sends no body for HEAD).
    const headAsGet = ctx.method === 'HEAD' && ctx.variants.has('http-head-like-get');
    if (ctx.method !== 'GET' && !headAsGet && !(ctx.mutant === 'non-get-answers-204' && ctx.method === 'DELETE')) {
      const e = new ApiError('route_not_allowed', null, `method ${ctx.method} is not allowed; every route is GET only`);
      e.statusOverride = 405;
      e.categoryOverride = 'public_api_method_not_allowed';
      throw e;
    }
    const key = ctx.key!;
    if (key.organization_id === null && ctx.mutant !== 'org-scope-check-skipped') throw new ApiError('org_scope_only_required');
    if (!key.allowlisted) throw new ApiError(ctx.mutant === 'reason-not-allowlisted-as-route-not-allowed' ? 'route_not_allowed' : 'organization_not_allowlisted');
    let enabled = ctx.op.group === 'encounters' ? key.encounter_routes_enabled : key.document_routes_enabled;
    if (ctx.mutant === 'route-group-check-skipped') enabled = true;
    if (ctx.mutant === 'route-disabled-blocks-both-groups') enabled = Boolean(key.encounter_routes_enabled && key.document_routes_enabled);
    if (!enabled) throw new ApiError('route_not_allowed', null, `the ${ctx.op.group} routes are not enabled for the organization`);
    if (ctx.mutant === 'precedence-route-before-auth') deferredEnvironmentChecks(ctx);
  },

  // (3) Required scopes: the key must hold every scope of the route.
  require_scopes(ctx) {
    if (!ctx.op || !ctx.key) return;
    let required = ctx.op.scopes;
    if (ctx.mutant === 'audio-missing-scope-recordings-ignored') required = required.filter((s) => s !== 'recordings:read');
    if (ctx.mutant === 'every-route-requires-all-scopes') required = ['encounters:read', 'patients:read', 'documents:read', 'recordings:read'];
    const missing = required.filter((s) => !ctx.key!.scopes.includes(s));
    if (missing.length > 0) {
      const e = new ApiError('missing_scope', null, missing.join(', '));
      if (ctx.mutant === 'status-403-as-401') e.statusOverride = 401;
      throw e;
    }
    if (ctx.mutant === 'precedence-scope-before-auth') deferredEnvironmentChecks(ctx);
  },

  // (4) Unsupported query keys: any key on item routes, anything but the five list keys on the list route.
  reject_unsupported_keys(ctx) {
    rejectUnsupportedKeys(ctx.pairs, ctx.op?.queryKeys ?? [], ctx.mutant, ctx.variants);
  },

  // (5) Query validation (list route only).
  validate_query(ctx) {
    if (ctx.op?.id === 'listPublicEncounters') ctx.list = validateListQuery(ctx.pairs, ctx.mutant, ctx.variants);
  },

  // (6) Resource lookup: the encounter (and document) named by the path, seen from the caller's organization.
  async lookup(ctx, app) {
    if (!ctx.op || ctx.op.id === 'listPublicEncounters') return;
    if (!ctx.key) {
      // Mutant precedence-lookup-before-auth: the encounter is looked up before the caller is known.
      if (ctx.mutant !== 'precedence-lookup-before-auth') return;
      const early = await app.repo.getEncounter(ctx.params[0]);
      if (!early) throw new ApiError('encounter_not_found');
      if (early.is_demo) throw new ApiError('demo_training_denied');
      return;
    }
    const [encounterId, documentId] = ctx.params;
    if (ctx.mutant === 'fuzz-crash-on-dotdot' && ctx.params.some((p) => p.includes('..'))) throw new Error('path guard: cannot resolve ".."');
    // One statement: the encounter (with its document summaries on the detail route), or the encounter and the
    // document named by the path. What is reported follows the order below either way.
    const found = documentId === undefined
      ? { encounter: await app.repo.getEncounter(encounterId, true), document: undefined }
      : await app.repo.getEncounterAndDocument(encounterId, documentId);
    const encounter = found.encounter;
    if (!encounter) throw new ApiError(ctx.mutant === 'encounter-not-found-as-cross-org' ? 'cross_organization_denied' : 'encounter_not_found');
    // Variant lookup-document-before-organization: inside step (6) the demo flag and the document are judged
    // before ownership (the order within the lookup is open, ORDER-LOOKUP-INTERNAL).
    if (ctx.variants.has('lookup-document-before-organization')) {
      if (encounter.is_demo) throw new ApiError('demo_training_denied');
      if (documentId !== undefined && found.document === undefined) throw new ApiError('document_not_found');
    }
    if (encounter.organization_id !== ctx.key.organization_id) {
      throw new ApiError(ctx.mutant === 'cross-org-as-not-found' ? 'encounter_not_found' : 'cross_organization_denied');
    }
    if (encounter.is_demo) throw new ApiError(ctx.mutant === 'demo-as-not-found' ? 'encounter_not_found' : 'demo_training_denied');
    ctx.encounter = encounter;
    if (documentId === undefined) return;
    const document = found.document;
    const belongs = document !== undefined && (document.encounter_id === encounter.encounter_id ||
      (ctx.mutant === 'document-of-other-encounter-returned' && document.organization_id === encounter.organization_id));
    // Variant other-encounter-document-as-encounter-not-found: an existing document under another encounter → encounter_not_found.
    const otherEncounter = document !== undefined && document.organization_id === encounter.organization_id && ctx.variants.has('other-encounter-document-as-encounter-not-found');
    if (!belongs) throw new ApiError(ctx.mutant === 'document-not-found-as-encounter-not-found' || otherEncounter ? 'encounter_not_found' : 'document_not_found');
    ctx.document = document;
  },
};

// ---------------------------------------------------------------- response bodies (closed schemas of §2)

type Variants = ReadonlySet<VariantName>;

/**
 * An instant as RFC 3339 text: UTC with milliseconds and `Z`. Variants timestamps-offset-plus-0530 and
 * timestamps-offset-minus-0800 write the same instant with another offset; timestamps-fraction-varies drops a
 * zero fraction and writes other fractions with six digits.
 */
function iso(d: Date | null, v: Variants = NO_VARIANTS): string | null {
  if (d === null) return null;
  const offset = v.has('timestamps-offset-plus-0530') ? 330 : v.has('timestamps-offset-minus-0800') ? -480 : 0;
  const shifted = new Date(d.getTime() + offset * 60_000).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  let clock = shifted.slice(0, 19);
  const ms = shifted.slice(20, 23);
  if (!v.has('timestamps-fraction-varies')) clock += `.${ms}`;
  else if (ms !== '000') clock += `.${ms}000`;
  if (offset === 0) return `${clock}Z`;
  const abs = Math.abs(offset);
  return `${clock}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
const NO_VARIANTS: Variants = new Set();

/** Variant null-optional-fields-omitted: every null-valued property is left out, except the required content.text. */
function dropNulls(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((x) => dropNulls(x));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) if (x !== null || (key === 'content' && k === 'text')) out[k] = dropNulls(x, k);
  return out;
}

function documentSummary(d: DocumentSummaryRow) {
  const clinical = d.schema_type === 'document';
  return {
    document_id: d.document_id,
    schema_type: d.schema_type,
    title: d.title,
    status: clinical ? null : d.status,
    workflow_variant: clinical ? null : d.workflow_variant,
    audio_duration_seconds: clinical ? null : d.audio_duration_seconds,
  };
}

function encounterSummary(e: EncounterRow, docs: DocumentSummaryRow[], mutant: MutantName | null, v: Variants = NO_VARIANTS) {
  const summary: Record<string, unknown> = {
    encounter_id: e.encounter_id,
    organization_id: e.organization_id,
    created_at: iso(e.created_at, v),
    updated_at: iso(e.updated_at, v),
    date_of_service: iso(e.date_of_service, v),
    encounter_type: e.encounter_type,
    status: e.status,
    patient: e.patient_id === null ? null : { patient_id: e.patient_id, first_name: e.first_name, last_name: e.last_name, date_of_birth: e.date_of_birth },
    documents: docs.map(documentSummary),
  };
  if (mutant === 'extra-field-encounter') summary.internal_notes = 'not part of the public contract';
  // Variant empty-documents-omitted: no documents → no documents property (it is optional, §2.1).
  if (docs.length === 0 && v.has('empty-documents-omitted')) delete summary.documents;
  return summary;
}

async function respondList(ctx: Ctx, app: App) {
  const q = ctx.list!;
  const { total, rows } = await app.repo.listEncounters(ctx.key!.organization_id!, q, ctx.mutant, ctx.variants);
  const body: Record<string, unknown> = {
    items: rows.map((r) => {
      const item = encounterSummary(r, r.documents, ctx.mutant, ctx.variants);
      // Variant list-items-without-documents: list summaries leave documents out; the detail keeps them.
      if (ctx.variants.has('list-items-without-documents')) delete item.documents;
      return item;
    }),
    limit: q.limit,
    offset: q.offset,
    total: ctx.mutant === 'total-is-page-size' ? rows.length : total,
  };
  if (ctx.mutant === 'missing-required-total') delete body.total;
  return { body, resourceIds: rows.map((r) => r.encounter_id) };
}

async function respondEncounter(ctx: Ctx, app: App) {
  const e = ctx.encounter!;
  let own = e.documents ?? [];
  // The detail drops the encounter's last document, so it no longer equals the list item.
  if (ctx.mutant === 'detail-differs-from-list') own = own.slice(0, -1);
  if (ctx.mutant === 'detail-omits-summary-documents') own = own.filter((d) => d.schema_type !== 'billing' && d.schema_type !== 'encounter_checklist');
  // Mutant detail-documents-by-patient: documents gathered by patient, so the patient's other encounters' documents join in.
  if (ctx.mutant === 'detail-documents-by-patient' && e.patient_id !== null) {
    const page = await app.repo.listEncounters(e.organization_id, { limit: 100, offset: 0, sortOrder: 'desc', startAt: null, endAt: null }, null);
    own = [...own, ...page.rows.filter((r) => r.patient_id === e.patient_id && r.encounter_id !== e.encounter_id).flatMap((r) => r.documents)];
  }
  return { body: { encounter: encounterSummary(e, own, ctx.mutant, ctx.variants) }, resourceIds: [e.encounter_id] };
}

async function respondDocument(ctx: Ctx) {
  const d = ctx.document!;
  const common = { document_id: d.document_id, encounter_id: ctx.encounter!.encounter_id };
  let document: Record<string, unknown>;
  if (d.schema_type === 'document') {
    document = {
      ...common, schema_type: 'document', content: { format: ctx.mutant === 'clinical-content-format-html' ? 'html' : 'markdown', text: d.content_text },
      created_at: iso(d.created_at, ctx.variants), updated_at: iso(d.updated_at, ctx.variants), title: d.title,
      status: ctx.mutant === 'clinical-status-not-null' ? 'signed' : null, workflow_variant: null,
    };
    // Variant clinical-content-format-omitted: format has a default (markdown), so it may be left out.
    if (ctx.variants.has('clinical-content-format-omitted')) document.content = { text: d.content_text };
  } else if (d.schema_type === 'ambient_transcript') {
    document = {
      ...common, schema_type: 'ambient_transcript', created_at: iso(d.created_at, ctx.variants), updated_at: iso(d.updated_at, ctx.variants),
      title: d.title, status: d.status, workflow_variant: d.workflow_variant, audio_duration_seconds: d.audio_duration_seconds,
    };
    if (ctx.mutant === 'ambient-detail-has-content') document.content = { format: 'markdown', text: null };
  } else if (ctx.mutant === 'unsupported-type-as-200') {
    document = { ...common, schema_type: d.schema_type, created_at: iso(d.created_at), updated_at: iso(d.updated_at), title: d.title };
  } else {
    if (ctx.mutant === 'unsupported-type-as-not-found') throw new ApiError('document_not_found');
    throw new ApiError('unsupported_document_type', null, `${d.schema_type} documents appear in summaries only`);
  }
  return { body: { document }, resourceIds: [ctx.encounter!.encounter_id, d.document_id] };
}

function requireAmbient(d: DocumentRow): void {
  if (d.schema_type !== 'ambient_transcript') throw new ApiError('unsupported_document_type', null, 'only ambient_transcript documents have transcripts and audio');
}

async function respondTranscript(ctx: Ctx, app: App) {
  const d = ctx.document!;
  if (ctx.mutant === 'unsupported-type-as-not-found' && d.schema_type !== 'ambient_transcript') throw new ApiError('document_not_found');
  requireAmbient(d);
  const t = await app.repo.getTranscript(d.document_id);
  if ((!t || !t.finalized) && ctx.mutant === 'transcript-not-found-as-500') throw new TypeError("Cannot read properties of undefined (reading 'turns')");
  if (!t || (!t.finalized && ctx.mutant !== 'transcript-unfinalized-returned')) throw new ApiError('transcript_not_found');
  const turns = t.turns.map((x) => ({ speaker: x.speaker, text: x.text, start: x.start, end: x.end }));
  // Stored turns may be out of order; the contract promises chronological order.
  const unsorted = ctx.mutant === 'transcript-turns-unsorted' || (ctx.mutant === 'transcript-phone-call-unsorted' && d.workflow_variant === 'phone_call');
  if (!unsorted) turns.sort((a, b) => a.start - b.start || a.end - b.end);
  return {
    body: ctx.mutant === 'transcript-ids-swapped'
      ? { document_id: ctx.encounter!.encounter_id, encounter_id: d.document_id, transcript: { provider: t.provider, audio_duration_seconds: t.audio_duration_seconds, turns } }
      : { document_id: d.document_id, encounter_id: ctx.encounter!.encounter_id, transcript: { provider: t.provider, audio_duration_seconds: t.audio_duration_seconds, turns } },
    resourceIds: [ctx.encounter!.encounter_id, d.document_id],
  };
}

async function respondAudio(ctx: Ctx, app: App) {
  const d = ctx.document!;
  if (ctx.mutant === 'unsupported-type-as-not-found' && d.schema_type !== 'ambient_transcript') throw new ApiError('document_not_found');
  requireAmbient(d);
  const rec = await app.repo.getRecording(d.document_id);
  if (!rec || !rec.has_audio || rec.storage_key === null) throw new ApiError(ctx.mutant === 'audio-not-available-as-not-found' ? 'audio_not_found' : 'audio_not_available_for_document');
  if (ctx.faults.has('audio_storage_unavailable')) throw new ApiError(ctx.mutant === 'audio-storage-unavailable-as-404' ? 'audio_not_found' : 'audio_storage_unavailable');
  // Variant audio-missing-as-not-available: audio missing from storage is "no audio for the document" (AUDIO-NOT-FOUND-VS-NOT-AVAILABLE).
  if (!(await app.repo.audioObjectExists(rec.storage_key))) throw new ApiError(ctx.variants.has('audio-missing-as-not-available') ? 'audio_not_available_for_document' : 'audio_not_found');
  // Variant audio-url-short-lifetime: the URL lives 60 s instead of AUDIO_URL_TTL_SECONDS.
  const skew = ctx.mutant === 'audio-expires-in-past' ? -3600 : ctx.variants.has('audio-url-short-lifetime') ? 60 - AUDIO_URL_TTL_SECONDS : 0;
  // Fault audio_url_expires_soon (sandbox switch): the URL lives 2 s, so a client can see it refused after expires_at.
  const soon = ctx.faults.has('audio_url_expires_soon') ? 2 - AUDIO_URL_TTL_SECONDS : 0;
  const signed = app.signer.sign(ctx.origin, rec.storage_key, Date.now(), ctx.mutant === 'audio-url-lifetime-year' ? 365 * 86_400 : skew + soon);
  // Mutant audio-url-expiry-mismatch: the URL carries another expiry than the one signed, so storage refuses it.
  if (ctx.mutant === 'audio-url-expiry-mismatch') signed.url = signed.url.replace(/expires=([0-9]+)/, (_, x: string) => `expires=${Number(x) + 60}`);
  return { body: { audio_url: ctx.mutant === 'audio-url-empty' ? '' : signed.url, expires_at: iso(new Date(signed.expiresAt), ctx.variants) }, resourceIds: [ctx.encounter!.encounter_id, d.document_id] };
}

// ---------------------------------------------------------------- the served contract

const CONTRACT_MUTANTS: readonly MutantName[] = [
  'openapi-drift-limit-max', 'openapi-not-closed', 'openapi-version-wrong', 'openapi-info-version-wrong', 'openapi-invalid',
  'openapi-path-missing', 'openapi-operation-renamed', 'openapi-status-added', 'openapi-reason-enum-drift', 'openapi-security-drift',
  'openapi-nullability-dropped', 'openapi-extra-query-parameter', 'openapi-anonymous-audio',
];

function servedContract(doc: Record<string, any>, mutant: MutantName | null, variants: ReadonlySet<string> = new Set()): unknown {
  const rewritten = OPENAPI_VARIANTS.some((v) => variants.has(v));
  if ((mutant === null || !CONTRACT_MUTANTS.includes(mutant)) && !rewritten) return doc;
  const copy = structuredClone(doc);
  if (mutant === 'openapi-not-closed') delete copy.components?.schemas?.PublicEncounterSummary?.additionalProperties;
  if (mutant === 'openapi-version-wrong') copy.openapi = '3.0.3';
  if (mutant === 'openapi-info-version-wrong') copy.info.version = '1.0.0';
  // A dangling reference: the document no longer resolves.
  if (mutant === 'openapi-invalid') copy.components.schemas.PublicEncounterDetailResponse.properties.encounter = { $ref: '#/components/schemas/PublicEncounter' };
  if (mutant === 'openapi-path-missing') delete copy.paths['/external/v1/encounters/{encounter_id}/documents/{document_id}/audio'];
  if (mutant === 'openapi-operation-renamed') copy.paths['/external/v1/encounters/{encounter_id}'].get.operationId = 'getEncounter';
  if (mutant === 'openapi-status-added') {
    copy.paths['/external/v1/encounters'].get.responses['500'] = { description: 'Internal error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/PublicApiErrorResponse' } } } };
  }
  if (mutant === 'openapi-reason-enum-drift') copy.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.push('rate_limited');
  if (mutant === 'openapi-security-drift') copy.components.securitySchemes.publicApiKeyBearer.scheme = 'basic';
  if (mutant === 'openapi-nullability-dropped') copy.components.schemas.PublicEncounterSummary.properties.status = { type: 'string' };
  if (mutant === 'openapi-extra-query-parameter') copy.paths['/external/v1/encounters'].get.parameters.push({ name: 'patient_id', in: 'query', required: false, schema: { type: 'string' } });
  if (mutant === 'openapi-anonymous-audio') copy.paths['/external/v1/encounters/{encounter_id}/documents/{document_id}/audio'].get.security = [];
  if (mutant === 'openapi-drift-limit-max') {
    for (const p of copy.paths?.['/external/v1/encounters']?.get?.parameters ?? []) {
      if (p?.name === 'limit' && p.schema) p.schema.maximum = 200;
    }
  }
  // Variants (area 'openapi'): the same contract written another way, applied after any mutant.
  return applyOpenapiVariants(copy, variants);
}

// ---------------------------------------------------------------- the server

class App {
  readonly repo: Repo;
  readonly digestKey: Buffer;
  readonly dummyDigest: Buffer;
  readonly signer = new AudioSigner();
  readonly options: ServerOptions;
  contract: Record<string, unknown> | null = null;
  constructor(options: ServerOptions) {
    this.options = options;
    this.repo = new Repo(options.pool);
    this.digestKey = options.digestKey;
    this.dummyDigest = digestToken(options.digestKey, crypto.randomBytes(16).toString('hex'));
    this.loadContract();
  }

  /** Read at startup; while the file is absent the route answers 503 and retries on the next request. */
  loadContract(): void {
    try {
      this.contract = JSON.parse(fs.readFileSync(this.options.openapiPath, 'utf8'));
    } catch {
      this.contract = null;
    }
  }

  /**
   * Switchboard headers count only with the right token. A reference started WITH a token (sandbox, meta-suites)
   * refuses a switch header that comes without it (400 switchboard_token_required) or with a wrong one (403
   * switchboard_token_invalid), so a partner's typo never passes silently as a normal 200. A reference started
   * WITHOUT a token ignores them as if absent: a production-like deployment must not reveal that a switchboard exists.
   * A token alone, with no switch header, switches nothing and is ignored either way.
   */
  switchboard(req: http.IncomingMessage): { faults: Set<FaultName>; mutant: MutantName | null; variants: Set<VariantName> } | { refused: number; error: string; message: string } {
    const token = this.options.switchboardToken;
    const given = req.headers['x-switchboard-token'];
    const none = { faults: new Set<FaultName>(), mutant: this.options.defaultMutant, variants: new Set<VariantName>() };
    if (token === null) return none;
    // The headers that switch something on; x-switchboard-token is the key to them.
    const switches = ['x-switchboard-fault', 'x-switchboard-mutant', 'x-switchboard-variant'].filter((h) => { const v = req.headers[h]; return typeof v === 'string' && v.trim() !== ''; });
    const tokenOk = typeof given === 'string' && crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), crypto.createHash('sha256').update(token).digest());
    if (!tokenOk) {
      if (switches.length === 0) return none;
      return typeof given === 'string'
        ? { refused: 403, error: 'switchboard_token_invalid', message: `${switches.join(', ')} sent with a wrong x-switchboard-token; use the token this sandbox was started with (printed by its guide)` }
        : { refused: 400, error: 'switchboard_token_required', message: `${switches.join(', ')} needs x-switchboard-token: the token this sandbox was started with (printed by its guide)` };
    }
    // With the right token, an unknown switch name is refused so that a typo does not pass silently.
    const rejected = (message: string) => ({ refused: 400, error: 'switchboard_rejected', message });
    const faults = new Set<FaultName>();
    const faultHeader = req.headers['x-switchboard-fault'];
    for (const name of (typeof faultHeader === 'string' ? faultHeader : '').split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!isFaultName(name)) return rejected(`unknown fault "${name}"`);
      faults.add(name);
    }
    const mutantHeader = req.headers['x-switchboard-mutant'];
    let mutant = none.mutant;
    if (typeof mutantHeader === 'string' && mutantHeader.trim() !== '') {
      if (!isMutantName(mutantHeader.trim())) return rejected(`unknown mutant "${mutantHeader.trim()}"`);
      mutant = mutantHeader.trim() as MutantName;
    }
    const variants = new Set<VariantName>();
    const variantHeader = req.headers['x-switchboard-variant'];
    for (const name of (typeof variantHeader === 'string' ? variantHeader : '').split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!isVariantName(name)) return rejected(`unknown variant "${name}"`);
      variants.add(name);
    }
    return { faults, mutant, variants };
  }

  /**
   * Mutant raw-space-target-lenient: a lenient front end that reads the request target up to the LAST space of
   * the request line, drops the spaces inside it and forwards the request to this server. The mutant is read
   * from the raw head (the request never reached the parser), with the same token rule as switchboard().
   */
  repairRequestLine(raw: Buffer | undefined, socket: stream.Duplex, server: http.Server): boolean {
    const token = this.options.switchboardToken;
    const addr = server.address();
    if (!raw || token === null || addr === null || typeof addr === 'string') return false;
    const lines = raw.toString('latin1').split('\r\n\r\n')[0].split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const given = headers['x-switchboard-token'] ?? '';
    const same = crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), crypto.createHash('sha256').update(token).digest());
    const words = lines[0].split(' ');
    if (!same || headers['x-switchboard-mutant'] !== 'raw-space-target-lenient' || words.length < 4) return false;
    const forward = http.request({ host: addr.address, port: addr.port, method: words[0], path: words.slice(1, -1).join(''), headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${res.statusCode} Repaired\r\ncontent-type: ${res.headers['content-type'] ?? 'application/json'}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
      });
    });
    forward.on('error', () => socket.destroy());
    forward.end();
    return true;
  }

  origin(req: http.IncomingMessage): string {
    const host = req.headers.host;
    if (host && /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$/.test(host)) return `http://${host}`;
    return this.options.fallbackOrigin;
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const rawQuery = q === -1 ? '' : target.slice(q + 1);
    const method = req.method ?? 'GET';
    const sw = this.switchboard(req);
    if ('refused' in sw) return sendJson(res, sw.refused, { error: sw.error, message: sw.message });
    const mutant = sw.mutant;

    if (path === '/openapi/v1/openapi.json') {
      if (method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' }, { allow: 'GET' });
      if (!this.contract) this.loadContract();
      if (!this.contract) return sendJson(res, 503, { error: 'contract_unavailable', message: 'fixtures/contract/openapi.json is not available yet' });
      const docType = mutant === 'wrong-content-type' ? 'text/plain; charset=utf-8' : openapiContentType(sw.variants);
      return sendJson(res, 200, servedContract(this.contract, mutant, sw.variants), docType ? { 'content-type': docType } : {}, sw.variants);
    }
    if (path.startsWith(STORAGE_PREFIX)) return this.serveAudio(method, path, rawQuery, sw.faults, res, mutant);
    if (path.startsWith('/__sandbox/')) return this.serveSandbox(req, method, path, mutant, res);
    if (path !== '/external/v1' && !path.startsWith('/external/v1/')) {
      // Outside the public API: not governed by the contract, so a plain JSON 404 (no reason_code).
      return sendJson(res, 404, { error: 'not_found', message: 'no such path; the public API lives under /external/v1' });
    }
    // Variant front-proxy-outside-routes: a path with a dot segment, an encoded slash or backslash or a NUL names none of
    // the five routes; a front proxy (nginx) refuses it with its own HTML page before the service sees it.
    if (sw.variants.has('front-proxy-outside-routes') && path.split('/').some(outsideRouteSegment)) {
      const page = '<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
      return void res.writeHead(400, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page), connection: 'close' }).end(page);
    }

    // Variant non-get-as-plain-404: a front end that routes only GET (and HEAD) answers any other method with its own
    // 404 before the service sees it (CONTRACT-NON-GET-METHODS leaves the answer open; nothing changes either way).
    if (method !== 'GET' && method !== 'HEAD' && sw.variants.has('non-get-as-plain-404')) return sendJson(res, 404, { error: 'not_found', message: `no ${method} route here` }, {}, sw.variants);
    let op: Operation | undefined;
    let params: string[] = [];
    for (const candidate of OPERATIONS) {
      const m = candidate.path.exec(path);
      if (m) {
        op = candidate;
        params = m.slice(1).map(decodeSegment);
        break;
      }
    }
    const ctx: Ctx = { req, method, op, params, pairs: parseRawQuery(rawQuery, mutant), faults: sw.faults, mutant, variants: sw.variants, origin: this.origin(req) };
    try {
      for (const stage of pipelineFor(mutant)) await STAGES[stage](ctx, this);
      // Mutant non-get-answers-204: a DELETE that got past the method check is answered 204 and changes nothing.
      if (mutant === 'non-get-answers-204' && method === 'DELETE') return void res.writeHead(204, { 'cache-control': 'no-store' }).end();
      const { body, resourceIds } = await op!.respond(ctx, this);
      // Queued, written within a few milliseconds (and flushed at shutdown): the 200 does not wait for it.
      this.options.disclosures.record(op!.id, ctx.key!.organization_id!, ctx.key!.key_id, resourceIds);
      const sent = sw.variants.has('null-optional-fields-omitted') ? dropNulls(body) : body;
      sendJson(res, 200, sent, mutant === 'wrong-content-type' ? { 'content-type': 'text/plain; charset=utf-8' } : {}, sw.variants);
    } catch (e) {
      this.sendError(res, e, mutant, sw.variants);
    }
  }

  sendError(res: http.ServerResponse, e: unknown, mutant: MutantName | null, variants: Variants = NO_VARIANTS): void {
    let err: ApiError;
    if (e instanceof ApiError) err = e;
    else if (isDatabaseUnavailable(e)) err = new ApiError('digest_key_unavailable', null, 'the key and data store is unreachable');
    else {
      // A bug, not a contract outcome: say so honestly (500 is not in the contract, so a harness will flag it).
      process.stderr.write(`reference-impl: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      return sendJson(res, 500, { error: 'public_api_internal_error', reason_code: 'internal_error', message: 'Internal error', field: null });
    }
    if (mutant === 'category-401-wrong' && toErrorBody(err).status === 401) err.categoryOverride = 'unauthorized';
    if (mutant === 'category-403-wrong' && toErrorBody(err).status === 403) err.categoryOverride = 'forbidden';
    if (mutant === 'category-400-wrong' && toErrorBody(err).status === 400) err.categoryOverride = 'bad_request';
    if (mutant === 'category-422-wrong' && toErrorBody(err).status === 422) err.categoryOverride = 'validation_failed';
    if (mutant === 'category-503-wrong' && toErrorBody(err).status === 503) err.categoryOverride = 'unavailable';
    // Variant error-404-category-not-found: §7.1 shows no category for 404; another string is as good.
    if (variants.has('error-404-category-not-found') && toErrorBody(err).status === 404) err.categoryOverride = 'not_found';
    const { status, body } = toErrorBody(err, variants);
    const out: Record<string, unknown> = { ...body };
    if (mutant === 'field-403-not-null' && status === 403) out.field = 'authorization';
    if (mutant === 'extra-field-error') out.details = { hint: 'undeclared field' };
    const headers: Record<string, string> = status === 405 ? { allow: 'GET' } : status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    if (mutant === 'error-body-not-json') {
      // Labelled application/json, but the body is plain text.
      const text = `${status} ${String(out.reason_code)}: ${String(out.message)}`;
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
      return;
    }
    sendJson(res, status, out, headers, variants);
  }

  /**
   * Webhook sandbox control, outside /external/v1 and outside the contract: activate a subscription for the
   * sandbox organization (the switchboard mutant of this request sticks to it), deactivate it, and finalize a
   * transcript so that a recording.transcript_ready event is produced on demand. Needs the switchboard token.
   */
  async serveSandbox(req: http.IncomingMessage, method: string, path: string, mutant: MutantName | null, res: http.ServerResponse): Promise<void> {
    const token = this.options.switchboardToken;
    const orgId = this.options.sandboxOrganizationId;
    // Without a token the routes do not exist: the same 404 as any path outside the API, so a production-like
    // reference does not reveal that sandbox control (or a switchboard) exists.
    if (token === null || !orgId) return sendJson(res, 404, { error: 'not_found', message: 'no such path; the public API lives under /external/v1' });
    const given = req.headers['x-switchboard-token'];
    const a = crypto.createHash('sha256').update(typeof given === 'string' ? given : '').digest();
    if (!crypto.timingSafeEqual(a, crypto.createHash('sha256').update(token).digest())) {
      return sendJson(res, 403, { error: 'sandbox_forbidden', message: 'x-switchboard-token is missing or wrong' });
    }
    try {
      const sub = /^\/__sandbox\/webhooks\/subscriptions\/([A-Za-z0-9_]+)$/.exec(path);
      if (path === '/__sandbox/webhooks/subscriptions' && method === 'POST') {
        const input = parseSubscriptionInput(await readJson(req));
        return sendJson(res, 201, await activateSubscription(this.options.pool, orgId, input, mutant));
      }
      if (sub && method === 'DELETE') {
        const found = await deactivateSubscription(this.options.pool, sub[1]);
        return found ? void res.writeHead(204).end() : sendJson(res, 404, { error: 'not_found', message: 'no such subscription' });
      }
      if (path === '/__sandbox/transcripts/finalize' && method === 'POST') {
        const out = await finalizeTranscript(this.options.pool, orgId, await readJson(req));
        this.options.onWebhookEvent?.();
        return sendJson(res, 202, out);
      }
      // The worker's schedule for one event: attempts, last result, next attempt (tests watch retries without guessing).
      const ev = /^\/__sandbox\/webhooks\/events\/([A-Za-z0-9_]+)\/deliveries$/.exec(path);
      if (ev && method === 'GET') return sendJson(res, 200, await eventDeliveries(this.options.pool, orgId, ev[1]));
      return sendJson(res, 404, { error: 'not_found', message: 'no such sandbox route' });
    } catch (e) {
      if (e instanceof WebhookInputError) return sendJson(res, e.status, { error: 'sandbox_bad_request', message: e.message });
      throw e;
    }
  }

  async serveAudio(method: string, path: string, rawQuery: string, faults: Set<FaultName>, res: http.ServerResponse, mutant: MutantName | null = null): Promise<void> {
    if (method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' }, { allow: 'GET' });
    // Mutant audio-storage-ignores-expiry: the expiry is checked against the epoch, so an expired URL is served.
    const verdict = this.signer.verify(path, rawQuery, mutant === 'audio-storage-ignores-expiry' ? 0 : Date.now());
    if ('refused' in verdict) return sendJson(res, 403, { error: 'audio_url_refused', message: verdict.refused === 'expired' ? 'the audio URL has expired' : 'the audio URL signature is not valid' });
    if (faults.has('audio_storage_unavailable')) return sendJson(res, 503, { error: 'audio_storage_unavailable', message: 'audio storage is temporarily unavailable' });
    const object = await this.repo.getAudioObject(verdict.storageKey);
    if (!object) return sendJson(res, 404, { error: 'audio_not_found', message: 'audio object not found' });
    res.writeHead(200, { 'content-type': object.content_type, 'content-length': object.bytes.length, 'cache-control': 'no-store' });
    res.end(object.bytes);
  }
}

/** A raw path segment a front proxy would not pass on as one segment: a dot segment, an encoded slash or backslash, a NUL. */
function outsideRouteSegment(raw: string): boolean {
  return /%2f|%5c|%00/i.test(raw) || /^\.\.?(;.*)?$/.test(decodeSegment(raw));
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // matches no identifier → *_not_found at lookup
  }
}

function isDatabaseUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return (typeof code === 'string' && (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND)$/.test(code) || code.startsWith('08') || code === '57P01' || code === '57P03'))
    || /timeout|Connection terminated|connect/i.test(e.message);
}

/** A small JSON request body (sandbox control only). */
function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 16 * 1024) {
        reject(new WebhookInputError(413, 'body larger than 16 KiB'));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch {
        reject(new WebhookInputError(400, 'body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, v: Variants = NO_VARIANTS): void {
  if (v.size === 0) {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
    return;
  }
  sendWithVariants(res, status, body, headers, v);
}

/** Reverses the member order of every object (variant json-key-order-reversed). */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, x]) => [k, reverseKeys(x)]));
}

/** The same answer as sendJson, written the way the variants of the areas http and json choose. */
function sendWithVariants(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string>, v: Variants): void {
  const value = v.has('json-key-order-reversed') ? reverseKeys(body) : body;
  let text = v.has('json-pretty-printed') ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value);
  if (v.has('json-escaped-text')) text = text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replaceAll('/', '\\/');
  const isError = status >= 400 && status !== 405;
  let contentType = extra['content-type'] ?? (isError && v.has('http-error-json-suffix') ? 'application/vnd.clinical-encounter.error+json' : 'application/json');
  if (extra['content-type'] === undefined && v.has('http-content-type-charset')) contentType += '; charset=utf-8';
  const headers: Record<string, string | number> = { ...extra, 'content-type': contentType, 'cache-control': 'no-store' };
  if (v.has('http-extra-headers')) {
    Object.assign(headers, { 'x-request-id': crypto.randomUUID(), vary: 'Accept-Encoding', 'strict-transport-security': 'max-age=63072000', etag: `"${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}"`, 'x-content-type-options': 'nosniff' });
    if (status === 401) headers['www-authenticate'] = 'Bearer realm="external-v1", error="invalid_token"';
  }
  if (v.has('http-connection-close')) headers.connection = 'close';
  const chunked = v.has('http-chunked');
  if (!chunked) headers['content-length'] = Buffer.byteLength(text);
  // Variant http-header-casing: names written in other cases on the wire (RFC 9110 §5.1: case-insensitive).
  const named = v.has('http-header-casing')
    ? Object.fromEntries(Object.entries(headers).map(([k, x], i) => [i % 2 === 0 ? k.toUpperCase() : k.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()), x]))
    : headers;
  res.writeHead(status, named);
  if (!chunked) return void res.end(text);
  // Two chunks at least, so the framing is really chunked (node:http chooses it when no content-length is set).
  const half = Math.floor(text.length / 2);
  res.write(text.slice(0, half));
  res.end(text.slice(half));
}

export function createServer(options: ServerOptions): http.Server {
  const app = new App(options);
  const server = http.createServer((req, res) => {
    app.handle(req, res).catch((e) => {
      // Last line of defence: every request gets an answer.
      if (!res.headersSent) app.sendError(res, e, null);
      else res.destroy();
    });
  });
  // Malformed HTTP (bad request line, oversized headers…): answer 400 JSON when the socket is still writable.
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    if (app.repairRequestLine(err.rawPacket, socket, server)) return;
    const text = JSON.stringify({ error: 'bad_request', message: 'malformed HTTP request' });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}
