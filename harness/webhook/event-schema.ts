// Validates a parsed webhook body against the closed `RecordingTranscriptReadyWebhookEvent` schema of
// fixtures/contract/openapi.json. The document is read and compiled once per process, strict mode on.
// It never reads the reference implementation: the contract file is the only source of truth.
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

export const CONTRACT_PATH = path.resolve(import.meta.dirname, '../../fixtures/contract/openapi.json');
export const WEBHOOK_EVENT_SCHEMA_REF = 'openapi.json#/components/schemas/RecordingTranscriptReadyWebhookEvent';

// ajv and ajv-formats are CommonJS with `exports.default`; under Node ESM the default import is the
// module object itself, which TypeScript (nodenext) types as the namespace. Take `.default` when present.
type AjvCtor = typeof import('ajv/dist/2020.js').default;
type FormatsFn = typeof import('ajv-formats').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as AjvCtor;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsFn }).default ?? addFormatsModule) as FormatsFn;

// OpenAPI 3.1 document-level fields and OpenAPI-only schema annotations. Adding the whole document
// as a schema makes Ajv see these as keywords; they are registered as annotations (no validation)
// so that strict mode can stay on for everything else.
const OPENAPI_KEYWORDS = [
  'openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags',
  'externalDocs', 'discriminator', 'xml', 'example',
] as const;

function collectExtensionKeys(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectExtensionKeys(item, into);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) into.add(key);
      collectExtensionKeys(value, into);
    }
  }
}

let compiled: ValidateFunction | undefined;

/** The compiled validator for the webhook event (compiled on first use, then reused). */
export function webhookEventValidator(): ValidateFunction {
  if (compiled) return compiled;
  const doc: unknown = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8'));
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const extensions = new Set<string>();
  collectExtensionKeys(doc, extensions);
  for (const keyword of [...OPENAPI_KEYWORDS, ...extensions]) {
    if (!ajv.getKeyword(keyword)) ajv.addKeyword(keyword);
  }
  ajv.addSchema(doc as object, 'openapi.json');
  compiled = ajv.compile({ $ref: WEBHOOK_EVENT_SCHEMA_REF });
  return compiled;
}

export type SchemaCheck = { ok: true } | { ok: false; errors: string };

/** Validates a parsed body; the error text names instance paths and keywords, never values. */
export function checkWebhookEvent(value: unknown): SchemaCheck {
  const validate = webhookEventValidator();
  if (validate(value)) return { ok: true };
  const errors = (validate.errors ?? [])
    .map(e => `${e.instancePath || '/'} ${e.keyword}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : ''}`)
    .join('; ');
  return { ok: false, errors };
}
