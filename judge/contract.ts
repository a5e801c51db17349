// Contract validators from fixtures/contract/openapi.json, by ajv (2020-12 dialect, strict, formats), each compiled at
// most once per process, or loaded as the code a previous process kept (fixtures/schema-code.ts: the contract is a
// fixed file). They answer "does this body match the contract for this operation and status" with readable errors.
// Nothing here talks to a target.
import fs from 'node:fs';
import path from 'node:path';
import type { ValidateFunction, ErrorObject } from 'ajv';
import { fixedSchemas, type FixedSchemas } from '../fixtures/schema-code.ts';

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

let loaded: { doc: Json; validator: (name: string) => ValidateFunction; ops: Map<OperationId, OperationInfo> } | undefined;

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

/**
 * The contract's component schemas as the validators are made from them (fixtures/schema-code.ts): each under its
 * own name, their `$ref`s pointing inside one schema `contract`.
 */
export function contractSchemaSet(doc: Json = load().doc): FixedSchemas {
  const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'contract#/$defs/')) as Json;
  // ajv implements `discriminator` from the `const` of each oneOf branch and rejects `mapping`;
  // the mapping is redundant with those consts, so it is dropped from the compiled copy only.
  stripDiscriminatorMapping(defs);
  const ext = new Set<string>();
  collectExtensionKeys(defs, ext);
  return {
    name: 'contract',
    // validateSchema: false: the contract is a fixed file, checked against the 2020-12 meta-schema by the project's
    // tests (tests/contract.spec.ts compiles it with the meta-schema on); checking it again in every process compiled
    // the meta-schema and walked the whole contract, about a quarter of a second of a worker's CPU. Strict mode holds.
    options: { strict: true, allErrors: true, discriminator: true, validateSchema: false },
    formats: true,
    keywords: [...ext],
    schemas: [{ $id: 'contract', $defs: defs }],
    exports: Object.fromEntries(Object.keys(defs).map((name) => [name, `contract#/$defs/${name}`])),
  };
}

function load() {
  if (loaded) return loaded;
  const doc = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as Json;
  const validator = fixedSchemas(contractSchemaSet(doc));
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
  loaded = { doc, validator, ops };
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

/** The validator for a named component schema: compiled once per process, or loaded as kept code. */
export function schemaValidator(name: string): ValidateFunction {
  const { validator, doc } = load();
  if (!Object.hasOwn(doc.components.schemas, name)) throw new Error(`schema ${name} is not in the contract`);
  return validator(name);
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
