// The example receiver's own payload check (§6.1): the body schema of the `recording.transcript_ready`
// webhook, taken from the contract (fixtures/contract/openapi.json, `webhooks` → request body) and compiled
// once with ajv, strict mode on. It imports fixtures/ only: the harness has its own validator on purpose
// (see verify.ts for why the two sides share no code).
import fs from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { CONTRACT_PATH } from '../fixtures/paths.ts';

const WEBHOOK = 'recording.transcript_ready';
const COMPONENT_REF = /^#\/components\/schemas\/([^/]+)$/;
// OpenAPI annotations that are not JSON Schema keywords; accepted as annotations so strict mode can stay on.
const ANNOTATIONS = ['example', 'xml', 'externalDocs', 'discriminator'];

// ajv and ajv-formats are CommonJS modules with `exports.default`; under Node ESM the default import is
// the module object itself. Take `.default` when present.
type AjvCtor = typeof import('ajv/dist/2020.js').default;
type FormatsFn = typeof import('ajv-formats').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as AjvCtor;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsFn }).default ?? addFormatsModule) as FormatsFn;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The webhook body schema as one standalone JSON Schema: every component it references (transitively)
 * copied under `$defs`, with `#/components/schemas/X` rewritten to `#/$defs/X`. Vendor extensions
 * (`x-…`) are dropped: they describe, they do not constrain.
 */
export function webhookBodySchema(contract: { webhooks?: Record<string, unknown>; components?: { schemas?: Record<string, Json> } }): Record<string, Json> {
  const op = (contract.webhooks?.[WEBHOOK] as { post?: { requestBody?: { content?: Record<string, { schema?: Json }> } } } | undefined)?.post;
  const root = op?.requestBody?.content?.['application/json']?.schema;
  if (root === undefined) throw new Error(`the contract has no application/json body for the ${WEBHOOK} webhook`);
  const components = contract.components?.schemas ?? {};
  const defs: Record<string, Json> = {};
  const pending: string[] = [];
  const rewrite = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, Json> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) continue;
      const m = key === '$ref' && typeof value === 'string' ? COMPONENT_REF.exec(value) : null;
      if (m) {
        if (!(m[1] in components)) throw new Error(`the contract references a missing schema ${m[1]}`);
        if (!(m[1] in defs) && !pending.includes(m[1])) pending.push(m[1]);
        out.$ref = `#/$defs/${m[1]}`;
      } else {
        out[key] = rewrite(value);
      }
    }
    return out;
  };
  const schema = rewrite(root) as Record<string, Json>;
  while (pending.length > 0) {
    const name = pending.shift()!;
    defs[name] = null; // reserved before the walk, so a self-reference is not queued again
    defs[name] = rewrite(components[name]);
  }
  return { ...schema, $defs: defs };
}

let validate: ValidateFunction | undefined;

function compiled(): ValidateFunction {
  if (validate) return validate;
  const contract = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8'));
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  ajv.addVocabulary(ANNOTATIONS);
  validate = ajv.compile(webhookBodySchema(contract));
  return validate;
}

export type EventCheck = { ok: true } | { ok: false; errors: string };

/** Validates a parsed body. The error text names paths and keywords only, never the values received. */
export function checkEventBody(value: unknown): EventCheck {
  const v = compiled();
  if (v(value)) return { ok: true };
  const errors = (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.keyword}`).join('; ');
  return { ok: false, errors };
}
