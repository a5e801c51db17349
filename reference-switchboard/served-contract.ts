// The OpenAPI variants of the reference's served document (GET /openapi/v1/openapi.json): each rewrites the
// contract in a way the specification allows, without changing what it means (names and justifications in
// variants.ts, area 'openapi'). They compose: several may be on at once, and are applied in a fixed order.
// Pure functions over a copy of fixtures/contract/openapi.json, applied at the reference's named point
// servedContract (overrides.ts); nothing here imports the harness (the error categories are the reference's own).

import { CATEGORY } from '../reference-impl/errors.ts';

type Json = Record<string, any>;

// The order is the order of application, also when the reference chains them one override per variant (overrides.ts):
// the open choices first, as they address the contract's own component names and layout.
export const OPENAPI_VARIANTS = [
  // The catalog's open choices and the §2 tables as written (judge/open-choices.ts judges between them).
  'openapi-content-subfields-required', 'openapi-summary-nulls-unencoded', 'openapi-other-summaries-null',
  'openapi-rate-limit-documented', 'openapi-datetime-whole-seconds', 'openapi-errors-pinned-per-response',
  'openapi-no-webhook', 'openapi-nullable-anyof', 'openapi-closed-by-unevaluated', 'openapi-allof-wrappers',
  'openapi-renamed-components', 'openapi-inlined-schemas', 'openapi-shared-responses', 'openapi-other-operation-ids',
  'openapi-json-media-parameters', 'openapi-harmless-additions', 'openapi-base-path-in-servers', 'openapi-keys-reordered',
  'openapi-oai-media-type',
] as const;
export type OpenapiVariant = (typeof OPENAPI_VARIANTS)[number];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function walk(node: unknown, fn: (n: Json) => void): void {
  if (Array.isArray(node)) for (const n of node) walk(n, fn);
  else if (node && typeof node === 'object') {
    fn(node as Json);
    for (const v of Object.values(node as Json)) walk(v, fn);
  }
}

function mapTree(node: unknown, fn: (n: Json) => Json): unknown {
  if (Array.isArray(node)) return node.map((n) => mapTree(n, fn));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) out[k] = mapTree(v, fn);
  return fn(out);
}

function operations(doc: Json): Json[] {
  return Object.values((doc.paths ?? {}) as Json).flatMap((item) => METHODS.map((m) => (item as Json)[m]).filter(Boolean));
}

/** `type: [X, 'null']` (with an enum listing null) becomes `anyOf: [{type: X, …}, {type: 'null'}]`. */
function nullableAsAnyOf(schema: Json): Json {
  if (!Array.isArray(schema.type) || !schema.type.includes('null') || schema.type.length !== 2) return schema;
  const { type, enum: values, description, ...rest } = schema;
  const other: Json = { type: (type as string[]).find((t) => t !== 'null'), ...rest };
  if (Array.isArray(values)) other.enum = values.filter((v: unknown) => v !== null);
  return { ...(description ? { description } : {}), anyOf: [other, { type: 'null' }] };
}

/** Every `$ref` replaced by a copy of its target (the contract has no cycles); components.schemas dropped. */
function inline(doc: Json): void {
  const resolve = (ref: string): unknown => ref.slice(2).split('/').reduce<any>((n, k) => n?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  const expand = (node: unknown, depth: number): unknown => {
    if (depth > 40) throw new Error('inline: too deep');
    if (Array.isArray(node)) return node.map((n) => expand(n, depth + 1));
    if (!node || typeof node !== 'object') return node;
    const n = node as Json;
    if (typeof n.$ref === 'string' && n.$ref.startsWith('#/components/schemas/')) {
      const { $ref, ...siblings } = n;
      return { ...(expand(structuredClone(resolve($ref)), depth + 1) as Json), ...siblings };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(n)) out[k] = k === 'discriminator' ? { propertyName: (v as Json).propertyName } : expand(v, depth + 1);
    return out;
  };
  doc.paths = expand(doc.paths, 0);
  if (doc.webhooks) doc.webhooks = expand(doc.webhooks, 0);
  delete doc.components.schemas;
}

function reorder(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(reorder);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const k of Object.keys(node as Json).sort().reverse()) out[k] = reorder((node as Json)[k]);
  return out;
}

/** Applies the OpenAPI variants switched on (others are ignored) to the document, in place; returns it. */
export function applyOpenapiVariants(doc: Json, on: ReadonlySet<string>): Json {
  if (on.has('openapi-no-webhook')) {
    delete doc.webhooks;
    delete doc.components.schemas.RecordingTranscriptReadyWebhookEvent;
    delete doc.components.schemas.RecordingTranscriptReadyWebhookResources;
  }
  // The open choices first: they address the contract's own component names and layout (so they must come first in
  // OPENAPI_VARIANTS too; on a document already rewritten they find nothing to change).
  const schemas = (doc.components?.schemas ?? {}) as Json;
  if (on.has('openapi-content-subfields-required') && schemas.PublicClinicalDocumentDetail) {
    // FIELD-CLINICAL-CONTENT-SUBFIELDS: a service that always sends both may document both as required.
    schemas.PublicClinicalDocumentDetail.properties.content.required = ['format', 'text'];
  }
  if (on.has('openapi-summary-nulls-unencoded') && schemas.PublicEncounterDocumentSummary) {
    // §2.3's table as written ("string or null" …); the sentence below it is not encoded (the bodies show it).
    delete schemas.PublicEncounterDocumentSummary.if;
    delete schemas.PublicEncounterDocumentSummary.then;
  }
  if (on.has('openapi-other-summaries-null') && schemas.PublicEncounterDocumentSummary?.if) {
    // FIELD-DOCSUMMARY-OTHER-TYPES-NULLS: a service whose billing and checklist summaries carry null may say so.
    schemas.PublicEncounterDocumentSummary.if.properties.schema_type = { enum: ['document', 'billing', 'encounter_checklist'] };
  }
  if (on.has('openapi-rate-limit-documented')) {
    // LIMIT-RATE-LIMITS: a service that limits its callers documents its 429 (the spec gives it no body).
    for (const op of operations(doc)) {
      op.responses['429'] = {
        description: 'Too many requests.',
        headers: { 'Retry-After': { schema: { type: 'integer', minimum: 0 } } },
        content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } } } },
      };
    }
  }
  if (on.has('openapi-datetime-whole-seconds')) {
    // LIST-DATETIME-FORMAT-DETAILS: only the extended form with whole seconds and Z or ±hh:mm is documented.
    for (const op of operations(doc)) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === 'query' && (p.name === 'start_at' || p.name === 'end_at')) p.schema = { ...p.schema, pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2})$' };
      }
    }
  }
  if (on.has('openapi-errors-pinned-per-response')) {
    // §7.1/§7.2 written into each error response, as a team documenting its own service often does: the category the
    // reference sends for the status (reference-impl/errors.ts; 404's its own, §7.1 shows none), the route's reasons
    // (x-reason-codes, §4) and each reason's field.
    const field: Record<string, Json> = { unsupported_filter: { type: 'string' }, invalid_limit: { const: 'limit' }, invalid_offset: { const: 'offset' }, invalid_sort: { const: 'sort_order' }, invalid_query: { enum: ['start_at', 'end_at'] } };
    for (const op of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        const reasons = (r as Json)['x-reason-codes'] as string[] | undefined;
        const media = (r as Json).content?.['application/json'];
        if (!reasons || !media?.schema?.$ref) continue;
        media.schema = {
          allOf: [
            { $ref: media.schema.$ref },
            { properties: { error: { const: CATEGORY[Number(status) as keyof typeof CATEGORY] }, reason_code: { enum: reasons } } },
            { oneOf: reasons.map((reason) => ({ properties: { reason_code: { const: reason }, field: field[reason] ?? { type: 'null' } } })) },
          ],
        };
      }
    }
  }
  if (on.has('openapi-nullable-anyof')) doc.components.schemas = mapTree(doc.components.schemas, nullableAsAnyOf);
  if (on.has('openapi-closed-by-unevaluated')) {
    walk(doc.components.schemas, (n) => {
      if (n.additionalProperties === false) {
        delete n.additionalProperties;
        n.unevaluatedProperties = false;
      }
    });
  }
  if (on.has('openapi-allof-wrappers')) {
    // Every reference to a component schema is wrapped: {allOf: [{$ref}], description}. allOf adds no property, so closedness holds.
    const wrap = (n: Json): Json => (typeof n.$ref === 'string' && n.$ref.startsWith('#/components/schemas/') && Object.keys(n).length === 1 ? { allOf: [{ $ref: n.$ref }], description: `See ${n.$ref.split('/').pop()}.` } : n);
    doc.paths = mapTree(doc.paths, wrap);
    doc.components.schemas = mapTree(doc.components.schemas, wrap);
  }
  if (on.has('openapi-renamed-components')) {
    const rename = (name: string) => `V1${name.replace(/^Public/, '').replace(/Response$/, 'Body')}`;
    const renamed: Json = {};
    for (const [name, s] of Object.entries(doc.components.schemas as Json)) renamed[rename(name)] = s;
    doc.components.schemas = renamed;
    const fix = (ref: string) => ref.replace(/^#\/components\/schemas\/(.+)$/, (_m, name: string) => `#/components/schemas/${rename(name)}`);
    walk(doc, (n) => {
      if (typeof n.$ref === 'string') n.$ref = fix(n.$ref);
      if (n.discriminator?.mapping) for (const [k, v] of Object.entries(n.discriminator.mapping as Json)) n.discriminator.mapping[k] = fix(v as string);
    });
  }
  if (on.has('openapi-inlined-schemas')) inline(doc);
  if (on.has('openapi-shared-responses')) {
    // Error responses and parameters moved to components and referenced: the same documents, another layout.
    doc.components.responses ??= {};
    doc.components.parameters ??= {};
    for (const op of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if (status === '200') continue;
        const name = `${op.operationId}_${status}`;
        doc.components.responses[name] = r;
        op.responses[status] = { $ref: `#/components/responses/${name}` };
      }
      op.parameters = ((op.parameters ?? []) as Json[]).map((p) => {
        const name = `${p.in}_${p.name}`;
        doc.components.parameters[name] = p;
        return { $ref: `#/components/parameters/${name}` };
      });
    }
  }
  if (on.has('openapi-other-operation-ids')) {
    // §4.3 to §4.5 give no operation name: these three may be called anything.
    const names: Json = { getPublicEncounterDocument: 'readEncounterDocument', getPublicEncounterDocumentTranscript: 'read_transcript', getPublicEncounterDocumentAudio: 'createAudioUrl' };
    for (const op of operations(doc)) if (names[op.operationId]) op.operationId = names[op.operationId];
  }
  if (on.has('openapi-json-media-parameters')) {
    // Content keys written as application/json; charset=utf-8 (success) and application/problem+json (errors).
    const rekey = (r: Json | undefined, error: boolean) => {
      if (r?.content?.['application/json']) r.content = { [error ? 'application/problem+json' : 'application/json; charset=utf-8']: r.content['application/json'] };
    };
    for (const op of operations(doc)) for (const [status, r] of Object.entries(op.responses as Json)) rekey(r as Json, status !== '200');
    for (const r of Object.values((doc.components.responses ?? {}) as Json)) rekey(r as Json, true);
  }
  if (on.has('openapi-harmless-additions')) {
    doc.info.description = 'Served by a conformant implementation, written its own way.';
    doc.info.contact = { name: 'Integration support', email: 'support@example.test' };
    doc.info.license = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
    doc.servers = [{ url: 'https://api.example.test', description: 'Production' }, { url: '/', description: 'This host' }];
    doc.tags = [...(doc.tags ?? []), { name: 'audio', description: 'Audio URLs.' }];
    doc.externalDocs = { url: 'https://docs.example.test/public-api' };
    doc.components.securitySchemes.publicApiKeyBearer.bearerFormat = 'opaque API key';
    doc.components.securitySchemes.publicApiKeyBearer.description = 'Bearer API key.';
    walk([doc.paths, doc.components.parameters], (n) => {
      if (n.in === 'query' && n.name) Object.assign(n, { style: 'form', explode: true, example: n.name === 'limit' ? 25 : undefined });
      if (n.in === 'path' && n.name) Object.assign(n, { style: 'simple', explode: false, example: 'enc_example' });
      if (n.example === undefined) delete n.example;
    });
    for (const op of operations(doc)) {
      op.summary = `${op.summary ?? ''} (v1)`;
      op.tags = [...(op.tags ?? []), 'public'];
      op['x-internal-owner'] = 'platform';
      op.responses['200'].description = 'OK.';
    }
    walk(doc.components.schemas, (n) => {
      if (n.type === 'object' && n.properties) {
        n.title ??= 'Object';
        n.examples = [];
        n.$comment = 'annotation only';
      }
    });
    doc.tags.push({ name: 'public' });
  }
  if (on.has('openapi-base-path-in-servers')) {
    // The /external/v1 prefix moved into the server URL: the same routes as a client reaches them.
    const paths: Json = {};
    for (const [p, item] of Object.entries(doc.paths as Json)) paths[p.replace(/^\/external\/v1/, '')] = item;
    doc.paths = paths;
    doc.servers = (doc.servers ?? [{ url: '/' }]).map((s: Json) => ({ ...s, url: `${String(s.url).replace(/\/$/, '')}/external/v1` }));
  }
  if (on.has('openapi-keys-reordered')) return reorder(doc) as Json;
  return doc;
}

/** The content type the document is served with: a +json media type under openapi-oai-media-type. */
export function openapiContentType(on: ReadonlySet<string>): string | undefined {
  return on.has('openapi-oai-media-type') ? 'application/vnd.oai.openapi+json;version=3.1.0' : undefined;
}
