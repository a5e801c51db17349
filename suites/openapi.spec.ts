// §1 and §9: the machine-readable schema served at /openapi/v1/openapi.json. It is JSON, OpenAPI 3.1.0
// with info.version v1, valid for @apidevtools/swagger-parser, and agrees with the harness contract
// (fixtures/contract/openapi.json) aspect by aspect: each aspect is its own check whose detail lists
// every difference found. Annotation-only keywords (description, title, examples, $comment) are ignored;
// everything that constrains a value is compared.
import SwaggerParser from '@apidevtools/swagger-parser';
import { isDeepStrictEqual } from 'node:util';
import { test } from '../harness/fixtures.ts';
import { describe, expectJson, fail } from '../harness/assertions.ts';
import { contractDocument, reasonCodeEnum, validateAgainst } from '../harness/contract.ts';
import type { CheckScope } from '../harness/checks.ts';
import type { CheckApi } from '../harness/target.ts';

type Json = Record<string, any>;

const OPENAPI_PATH = '/openapi/v1/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const MAX_LISTED = 40;

/**
 * Fetches the served document. The spec does not say whether it needs a key (OPENAPI-SERVED-AUTH):
 * it is fetched without one first; a 401 (with a valid error body) is followed by a fetch with the
 * full key, and `onAuth` records it.
 */
async function served(api: CheckApi, onAuth?: (text: string) => void): Promise<Json> {
  let ex = await api.get(OPENAPI_PATH, { as: 'none' });
  if (ex.response?.status === 401) {
    const body = expectJson(ex);
    const invalid = validateAgainst('PublicApiErrorResponse', body);
    if (invalid) fail('The 401 for the OpenAPI document does not match PublicApiErrorResponse', invalid);
    onAuth?.(`the OpenAPI document needs a bearer key: without one it answered 401 ${(body as Json).reason_code}; fetched with the full key`);
    ex = await api.get(OPENAPI_PATH, { as: 'full' });
  }
  const doc = expectJson(ex);
  if (ex.response!.status !== 200) fail('The OpenAPI document is not served', describe(ex));
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) fail('The OpenAPI document is not a JSON object', describe(ex));
  return doc as Json;
}

const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', '$comment', 'externalDocs', 'summary']);
/** Keywords whose value maps names to schemas: the names are data, never annotations. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** Keywords whose value is data (not a schema): compared as they are. */
const DATA = new Set(['enum', 'const', 'default', 'required', 'discriminator']);
/** Keywords whose array value is a set. */
const SETS = new Set(['enum', 'required', 'type']);

/** A schema without annotation keywords, with set-valued keywords sorted, for comparison. */
function normalizeSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalizeSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (ANNOTATIONS.has(k)) continue;
    if (SCHEMA_MAPS.has(k) && v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, normalizeSchema(s)]));
    else if (SETS.has(k) && Array.isArray(v)) out[k] = [...v].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    else if (DATA.has(k)) out[k] = v;
    else out[k] = normalizeSchema(v);
  }
  return out;
}

/** JSON pointers (relative to `at`) where two values differ, each with both sides. */
function differences(a: unknown, b: unknown, at: string, out: string[]): void {
  if (isDeepStrictEqual(a, b)) return;
  const isObj = (x: unknown) => x !== null && typeof x === 'object' && !Array.isArray(x);
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a as Json), ...Object.keys(b as Json)])) {
      const p = `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!(k in (b as Json))) out.push(`${p} missing from the served document (contract: ${short((a as Json)[k])})`);
      else if (!(k in (a as Json))) out.push(`${p} not in the contract (served: ${short((b as Json)[k])})`);
      else differences((a as Json)[k], (b as Json)[k], p, out);
    }
    return;
  }
  const scalars = (x: unknown) => Array.isArray(x) && x.every((v) => v === null || typeof v !== 'object');
  if (scalars(a) && scalars(b)) {
    // Lists of values (enum, required, type): name what is missing and what is extra.
    const sa = (a as unknown[]).map((v) => JSON.stringify(v));
    const sb = (b as unknown[]).map((v) => JSON.stringify(v));
    const missing = sa.filter((v) => !sb.includes(v));
    const extra = sb.filter((v) => !sa.includes(v));
    if (missing.length > 0 || extra.length > 0) {
      out.push(`${at}: ${[missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `extra ${extra.join(', ')}` : ''].filter(Boolean).join(', ')}`);
      return;
    }
  }
  out.push(`${at}: contract ${short(a)}, served ${short(b)}`);
}

function short(v: unknown): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

function report(title: string, diffs: string[]): void {
  if (diffs.length === 0) return;
  const listed = diffs.slice(0, MAX_LISTED).join('; ');
  fail(title, `${diffs.length} difference(s): ${listed}${diffs.length > MAX_LISTED ? `; … (+${diffs.length - MAX_LISTED} more)` : ''}`);
}

interface Op {
  key: string;
  method: string;
  path: string;
  op: Json;
  /** Path-item parameters merged with the operation's own (which win), keyed `in:name`. */
  parameters: Map<string, Json>;
}

function operationsOf(doc: Json): Map<string, Op> {
  const ops = new Map<string, Op>();
  for (const [p, item] of Object.entries((doc.paths ?? {}) as Json)) {
    if (!item || typeof item !== 'object') continue;
    for (const m of METHODS) {
      const op = (item as Json)[m];
      if (!op || typeof op !== 'object') continue;
      const parameters = new Map<string, Json>();
      for (const prm of [...((item as Json).parameters ?? []), ...(op.parameters ?? [])] as Json[]) parameters.set(`${prm?.in}:${prm?.name}`, prm);
      const key = typeof op.operationId === 'string' ? op.operationId : `${m.toUpperCase()} ${p}`;
      ops.set(key, { key, method: m, path: p, op, parameters });
    }
  }
  return ops;
}

async function dereferenced(doc: Json, what: string): Promise<Json> {
  try {
    return (await SwaggerParser.dereference(structuredClone(doc) as any)) as Json;
  } catch (e) {
    fail(`The ${what} cannot be dereferenced`, (e as Error).message.split('\n')[0]);
  }
}

type Body = (api: CheckApi, scope: CheckScope, doc: Json) => Promise<void> | void;

function openapiCheck(id: string, requirements: string[], title: string, body: Body): void {
  test(id, async ({ check }) => {
    await check({ id, requirements, title }, async (api, scope) => body(api, scope, await served(api)));
  });
}

// ---------------------------------------------------------------- served, version, validity

test('openapi-served-as-json', async ({ check }) => {
  await check({ id: 'openapi-served-as-json', requirements: ['OPENAPI-SERVED', 'OPENAPI-SERVED-AUTH'], title: 'GET /openapi/v1/openapi.json answers 200 application/json with a JSON object' }, async (api, scope) => {
    await served(api, (text) => scope.observe(text));
  });
});

openapiCheck('openapi-version-3-1-0', ['OPENAPI-3-1-0', 'OPENAPI-SERVED'], 'the served document declares openapi 3.1.0', (_api, _scope, doc) => {
  if (doc.openapi !== '3.1.0') fail('The served document is not OpenAPI 3.1.0', `openapi ${short(doc.openapi)}`);
});

openapiCheck('openapi-info-version-v1', ['VERSION-INFO-V1', 'OPENAPI-SERVED'], 'the served document declares info.version v1', (_api, _scope, doc) => {
  if (doc.info?.version !== 'v1') fail('The served document is not contract version v1', `info.version ${short(doc.info?.version)}`);
});

openapiCheck('openapi-document-valid', ['OPENAPI-SERVED', 'OPENAPI-3-1-0'], 'the served document is a valid OpenAPI document (swagger-parser validate)', async (_api, _scope, doc) => {
  try {
    await SwaggerParser.validate(structuredClone(doc) as any);
  } catch (e) {
    fail('The served document is not a valid OpenAPI document', (e as Error).message.split('\n').slice(0, 8).join(' '));
  }
});

// ---------------------------------------------------------------- agreement with the contract, aspect by aspect

openapiCheck('openapi-paths-agree', ['CONTRACT-BASE-ADDRESS', 'CONTRACT-ROUTE-PURPOSES', 'CONTRACT-NO-REQUEST-BODY', 'CONTRACT-FIVE-ROUTES', 'CONTRACT-GET-ONLY', 'VERSION-PATH-PREFIX-V1', 'LIST-PATH', 'ENC-PATH', 'DOC-PATH', 'TRANSCRIPT-PATH', 'AUDIO-PATH'], 'the served document has exactly the contract\'s paths and methods', (_api, _scope, doc) => {
  const routes = (d: Json) => new Set([...operationsOf(d).values()].map((o) => `${o.method.toUpperCase()} ${o.path}`));
  const want = routes(contractDocument());
  const got = routes(doc);
  const diffs = [
    ...[...want].filter((r) => !got.has(r)).map((r) => `${r} missing from the served document`),
    ...[...got].filter((r) => !want.has(r)).map((r) => `${r} not in the contract`),
  ];
  report('The served paths differ from the contract', diffs);
});

openapiCheck('openapi-operations-agree', ['OPENAPI-OPERATION-LIST', 'OPENAPI-OPERATION-ENCOUNTER', 'CONTRACT-FIVE-ROUTES'], 'every contract operationId names the same method and path in the served document, and no other operation exists', (_api, _scope, doc) => {
  const want = operationsOf(contractDocument());
  const got = operationsOf(doc);
  const diffs: string[] = [];
  for (const [id, o] of want) {
    const s = got.get(id);
    if (!s) diffs.push(`operation ${id} (${o.method.toUpperCase()} ${o.path}) missing from the served document`);
    else if (s.method !== o.method || s.path !== o.path) diffs.push(`operation ${id}: contract ${o.method.toUpperCase()} ${o.path}, served ${s.method.toUpperCase()} ${s.path}`);
  }
  for (const [id, s] of got) if (!want.has(id)) diffs.push(`operation ${id} (${s.method.toUpperCase()} ${s.path}) not in the contract`);
  report('The served operations differ from the contract', diffs);
});

openapiCheck('openapi-parameters-agree', ['LIST-QUERY-OPTIONAL', 'LIST-LIMIT-RANGE', 'LIST-LIMIT-DEFAULT', 'LIST-OFFSET-RANGE', 'LIST-OFFSET-DEFAULT', 'LIST-SORT-ORDER-ENUM', 'LIST-SORT-DEFAULT-DESC', 'LIMIT-LIMIT', 'LIMIT-OFFSET', 'ENC-PATH-PARAM', 'DOC-PATH-PARAMS'], 'every operation has the contract\'s parameters (name, in, required, schema bounds and defaults)', async (_api, _scope, doc) => {
  const want = operationsOf(await dereferenced(contractDocument(), 'contract'));
  const got = operationsOf(await dereferenced(doc, 'served document'));
  const diffs: string[] = [];
  for (const [id, o] of want) {
    const s = got.get(id);
    if (!s) {
      diffs.push(`${id}: operation missing from the served document`);
      continue;
    }
    for (const [k, p] of o.parameters) {
      const q = s.parameters.get(k);
      if (!q) {
        diffs.push(`${id} ${k}: parameter missing from the served document`);
        continue;
      }
      if ((p.required ?? false) !== (q.required ?? false)) diffs.push(`${id} ${k}: required ${p.required ?? false} in the contract, ${q.required ?? false} served`);
      const d: string[] = [];
      differences(normalizeSchema(p.schema), normalizeSchema(q.schema), `${id} ${k} schema`, d);
      diffs.push(...d);
      for (const extra of ['style', 'explode', 'allowEmptyValue', 'allowReserved', 'deprecated', 'content']) {
        if (!isDeepStrictEqual(p[extra], q[extra])) diffs.push(`${id} ${k}: ${extra} ${short(p[extra])} in the contract, ${short(q[extra])} served`);
      }
    }
    for (const k of s.parameters.keys()) if (!o.parameters.has(k)) diffs.push(`${id} ${k}: parameter not in the contract`);
  }
  report('The served parameters differ from the contract', diffs);
});

openapiCheck('openapi-statuses-agree', ['LIST-ERRORS', 'ENC-ERRORS', 'DOC-ERRORS', 'TRANSCRIPT-ERRORS', 'AUDIO-ERRORS', 'CONTRACT-JSON-RESPONSES', 'ERR-BODY-ON-FAILURE'], 'every operation lists the contract\'s response statuses, each with the same media type and schema', (_api, _scope, doc) => {
  const want = operationsOf(contractDocument());
  const got = operationsOf(doc);
  const diffs: string[] = [];
  for (const [id, o] of want) {
    const s = got.get(id);
    if (!s) {
      diffs.push(`${id}: operation missing from the served document`);
      continue;
    }
    const a = (o.op.responses ?? {}) as Json;
    const b = (s.op.responses ?? {}) as Json;
    for (const status of Object.keys(a)) {
      if (!(status in b)) {
        diffs.push(`${id} ${status}: status missing from the served document`);
        continue;
      }
      const ma = Object.keys(a[status]?.content ?? {}).sort();
      const mb = Object.keys(b[status]?.content ?? {}).sort();
      if (!isDeepStrictEqual(ma, mb)) diffs.push(`${id} ${status}: media types ${short(ma)} in the contract, ${short(mb)} served`);
      for (const media of ma.filter((m) => mb.includes(m))) {
        const d: string[] = [];
        differences(normalizeSchema(a[status].content[media].schema), normalizeSchema(b[status].content[media].schema), `${id} ${status} ${media} schema`, d);
        diffs.push(...d);
      }
    }
    for (const status of Object.keys(b)) if (!(status in a)) diffs.push(`${id} ${status}: status not in the contract`);
  }
  report('The served response statuses differ from the contract', diffs);
});

const SCHEMA_REQUIREMENTS = [
  'OPENAPI-SCHEMA-ENCOUNTER-SUMMARY', 'OPENAPI-SCHEMA-PATIENT-SUMMARY', 'OPENAPI-SCHEMA-DOCUMENT-SUMMARY', 'OPENAPI-SCHEMA-DOCUMENT-DETAIL',
  'OPENAPI-SCHEMA-TRANSCRIPT', 'OPENAPI-SCHEMA-AUDIO', 'OPENAPI-SCHEMA-LIST', 'OPENAPI-SCHEMA-ENCOUNTER-DETAIL', 'OPENAPI-SCHEMA-ERROR',
  'OPENAPI-SCHEMA-WEBHOOK-EVENT',
];

openapiCheck('openapi-schemas-agree', SCHEMA_REQUIREMENTS, 'every component schema of the contract is in the served document and equal to it (annotations aside), and there is no other', (_api, _scope, doc) => {
  const want = (contractDocument().components?.schemas ?? {}) as Json;
  const got = (doc.components?.schemas ?? {}) as Json;
  const diffs: string[] = [];
  for (const name of Object.keys(want)) {
    if (!(name in got)) diffs.push(`${name}: schema missing from the served document`);
    else differences(normalizeSchema(want[name]), normalizeSchema(got[name]), name, diffs);
  }
  for (const name of Object.keys(got)) if (!(name in want)) diffs.push(`${name}: schema not in the contract`);
  report('The served component schemas differ from the contract', diffs);
});

openapiCheck('openapi-security-agrees', ['OPENAPI-SECURITY-SCHEME', 'AUTH-BEARER-REQUIRED'], 'the served document declares the HTTP bearer scheme publicApiKeyBearer and requires it on every contract operation', (_api, _scope, doc) => {
  const contract = contractDocument();
  const diffs: string[] = [];
  const want = (contract.components?.securitySchemes ?? {}) as Json;
  const got = (doc.components?.securitySchemes ?? {}) as Json;
  for (const name of Object.keys(want)) {
    if (!(name in got)) diffs.push(`securitySchemes ${name} missing from the served document`);
    else differences(normalizeSchema(want[name]), normalizeSchema(got[name]), `securitySchemes/${name}`, diffs);
  }
  for (const name of Object.keys(got)) if (!(name in want)) diffs.push(`securitySchemes ${name} not in the contract`);
  const servedOps = operationsOf(doc);
  for (const [id, o] of operationsOf(contract)) {
    const s = servedOps.get(id);
    const security = (x: Json) => x.op.security ?? doc.security ?? null;
    const wantSecurity = o.op.security ?? contract.security ?? null;
    if (s && !isDeepStrictEqual(wantSecurity, security(s))) diffs.push(`${id}: security ${short(wantSecurity)} in the contract, ${short(security(s))} served`);
  }
  report('The served security declarations differ from the contract', diffs);
});

openapiCheck('openapi-reason-enum-agrees', ['ERR-REASON-CODE-ENUM', 'ERR-FIELD-REASON-CODE'], 'the served PublicApiErrorResponse.reason_code enum is exactly the 27 reason codes of the contract', async (_api, _scope, doc) => {
  const deref = await dereferenced(doc, 'served document');
  const servedEnum = deref.components?.schemas?.PublicApiErrorResponse?.properties?.reason_code?.enum;
  if (!Array.isArray(servedEnum)) fail('The served document has no reason_code enum on PublicApiErrorResponse', short(deref.components?.schemas?.PublicApiErrorResponse?.properties?.reason_code));
  const want = new Set(reasonCodeEnum());
  const got = new Set(servedEnum as string[]);
  const diffs = [
    ...[...want].filter((c) => !got.has(c)).map((c) => `${c} missing from the served enum`),
    ...[...got].filter((c) => !want.has(c)).map((c) => `${short(c)} not in the contract`),
  ];
  if (got.size !== servedEnum.length) diffs.push(`the served enum repeats a value (${servedEnum.length} entries, ${got.size} distinct)`);
  report('The served reason_code enum differs from the contract', diffs);
});

/** Schema locations of object schemas that are open (no additionalProperties:false nor unevaluatedProperties:false). */
function openObjects(node: unknown, at: string, out: string[]): void {
  if (Array.isArray(node)) {
    node.forEach((n, i) => openObjects(n, `${at}/${i}`, out));
    return;
  }
  if (!node || typeof node !== 'object') return;
  const s = node as Json;
  if (typeof s.$ref === 'string') return;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const isObject = types.includes('object') || ('properties' in s && s.type === undefined);
  // A pure oneOf/anyOf selects among branches that are checked themselves.
  const composition = (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) && !('properties' in s);
  const closed = s.additionalProperties === false || s.unevaluatedProperties === false;
  if (isObject && !composition && !closed) out.push(at || '(root)');
  for (const [k, v] of Object.entries(s)) {
    // Conditional subschemas (if/then/else/not) constrain values; they do not define the shape.
    if (['if', 'then', 'else', 'not', ...DATA].includes(k) || ANNOTATIONS.has(k)) continue;
    if (SCHEMA_MAPS.has(k) && v && typeof v === 'object') for (const [name, sub] of Object.entries(v)) openObjects(sub, `${at}/${k}/${name}`, out);
    else if (['items', 'prefixItems', 'additionalProperties', 'unevaluatedProperties', 'contains', 'propertyNames', 'oneOf', 'anyOf', 'allOf'].includes(k)) openObjects(v, `${at}/${k}`, out);
  }
}

openapiCheck('openapi-schemas-closed', ['CONTRACT-CLOSED-RESPONSES', 'ERR-BODY-FIELDS'], 'every object schema of the served document is closed (additionalProperties: false)', (_api, _scope, doc) => {
  const open: string[] = [];
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Json)) openObjects(schema, `#/components/schemas/${name}`, open);
  for (const o of operationsOf(doc).values()) {
    for (const [status, r] of Object.entries((o.op.responses ?? {}) as Json)) {
      for (const [media, c] of Object.entries((r?.content ?? {}) as Json)) openObjects(c?.schema, `${o.key} ${status} ${media}`, open);
    }
  }
  report('The served document has open object schemas', open.map((p) => `${p} allows undeclared properties`));
});
