// Contract validators compiled once per process from fixtures/contract/openapi.json with ajv
// (2020-12 dialect, strict, formats). They answer "does this body match the contract for this
// operation and status" with readable errors. Nothing here talks to a target.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const CONTRACT_PATH = path.resolve(import.meta.dirname, '../fixtures/contract/openapi.json');

export type OperationId =
  | 'listPublicEncounters' | 'getPublicEncounter' | 'getPublicEncounterDocument'
  | 'getPublicEncounterDocumentTranscript' | 'getPublicEncounterDocumentAudio';

export interface OperationInfo {
  operationId: OperationId;
  path: string;
  scopes: string[];
  routeGroup: string;
  queryParams: string[];
  /** status → reason codes listed for it (error statuses only). */
  reasons: Record<string, string[]>;
  statuses: string[];
}

type Json = Record<string, any>;

let loaded: { doc: Json; ajv: Ajv2020; ops: Map<OperationId, OperationInfo> } | undefined;
const compiled = new Map<string, ValidateFunction>();

function collectExtensionKeys(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) collectExtensionKeys(n, into);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k.startsWith('x-')) into.add(k);
      collectExtensionKeys(v, into);
    }
  }
}

function stripDiscriminatorMapping(node: unknown): void {
  if (Array.isArray(node)) for (const n of node) stripDiscriminatorMapping(n);
  else if (node && typeof node === 'object') {
    const o = node as Json;
    if (o.discriminator && typeof o.discriminator === 'object') delete o.discriminator.mapping;
    for (const v of Object.values(o)) stripDiscriminatorMapping(v);
  }
}

function load() {
  if (loaded) return loaded;
  const doc = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as Json;
  // validateSchema: false: the contract is a fixed file, checked against the 2020-12 meta-schema by the project's
  // tests (tests/contract.spec.ts compiles it with the meta-schema on); checking it again in every process compiled the
  // meta-schema and walked the whole contract, about a quarter of a second of a worker's CPU. Strict mode still holds.
  const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true, validateSchema: false });
  addFormats(ajv);
  const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'contract#/$defs/')) as Json;
  // ajv implements `discriminator` from the `const` of each oneOf branch and rejects `mapping`;
  // the mapping is redundant with those consts, so it is dropped from the compiled copy only.
  stripDiscriminatorMapping(defs);
  const ext = new Set<string>();
  collectExtensionKeys(defs, ext);
  for (const k of ext) ajv.addKeyword(k);
  ajv.addSchema({ $id: 'contract', $defs: defs });
  const ops = new Map<OperationId, OperationInfo>();
  for (const [p, item] of Object.entries(doc.paths as Json)) {
    const op = (item as Json).get as Json;
    const reasons: Record<string, string[]> = {};
    for (const [status, r] of Object.entries(op.responses as Json)) if ((r as Json)['x-reason-codes']) reasons[status] = (r as Json)['x-reason-codes'];
    ops.set(op.operationId, {
      operationId: op.operationId,
      path: p,
      scopes: op['x-required-scopes'] ?? [],
      routeGroup: op['x-route-group'] ?? '',
      queryParams: ((op.parameters ?? []) as Json[]).filter((x) => x.in === 'query').map((x) => x.name),
      reasons,
      statuses: Object.keys(op.responses),
    });
  }
  loaded = { doc, ajv, ops };
  return loaded;
}

export function contractDocument(): Json {
  return load().doc;
}

export function operation(id: OperationId): OperationInfo {
  const op = load().ops.get(id);
  if (!op) throw new Error(`operation ${id} is not in the contract`);
  return op;
}

export function operations(): OperationInfo[] {
  return [...load().ops.values()];
}

/** The validator for a named component schema, compiled once. */
export function schemaValidator(name: string): ValidateFunction {
  let v = compiled.get(name);
  if (!v) {
    const { ajv, doc } = load();
    if (!doc.components.schemas[name]) throw new Error(`schema ${name} is not in the contract`);
    v = ajv.compile({ $ref: `contract#/$defs/${name}` });
    compiled.set(name, v);
  }
  return v;
}

/** The component schema name the contract gives for an operation's response status, if any. */
export function responseSchemaName(id: OperationId, status: number): string | undefined {
  const op = (Object.values(load().doc.paths) as Json[]).map((i) => i.get).find((o) => o.operationId === id);
  const r = op?.responses?.[String(status)] ?? op?.responses?.[`${String(status)[0]}XX`] ?? op?.responses?.default;
  const ref: string | undefined = r?.content?.['application/json']?.schema?.$ref;
  return ref?.replace('#/components/schemas/', '');
}

export function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : ''}`).join('; ');
}

/** Validates a value against a named schema: undefined when valid, else a readable error list. */
export function validateAgainst(name: string, value: unknown): string | undefined {
  const v = schemaValidator(name);
  return v(value) ? undefined : formatErrors(v.errors);
}

export function reasonCodeEnum(): string[] {
  return load().doc.components.schemas.PublicApiErrorResponse.properties.reason_code.enum;
}
