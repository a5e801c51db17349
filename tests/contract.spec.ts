// Tests of the executable contract fixtures/contract/openapi.json against the specification's own text.
// Lists (reason codes, scopes, per-route errors, field tables) are parsed from the spec, never retyped here.
// Reads fixtures and the spec only; imports nothing from harness/ or reference-impl/.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import {
  authenticationReasons, backticked, endpoints, fieldTables, readSpecText, reasonCodeEnumeration, section,
  statusReasonTable, tables,
} from './helpers/spec-text.ts';

// ajv-formats is CommonJS; under nodenext its default import is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

const CONTRACT_PATH = path.resolve(import.meta.dirname, '../fixtures/contract/openapi.json');
import { SPEC_PATH } from '../fixtures/paths.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };
type Parameter = { name: string; in: string; required?: boolean; schema: Schema; description?: string };
type MediaType = { schema: Schema };
type Response = { description: string; content?: Record<string, MediaType>; headers?: Record<string, { schema: Schema }>; 'x-reason-codes'?: string[] };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response>;
  security?: Array<Record<string, string[]>>;
  'x-required-scopes'?: string[];
  'x-route-group'?: string;
  [extension: `x-${string}`]: Json | undefined;
};
type OpenApiDoc = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Record<string, string>> };
};

const readContract = (): OpenApiDoc => JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as OpenApiDoc;
const contract = readContract();
const spec = readSpecText(SPEC_PATH);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of `paths` (or `webhooks`), with its path and method. */
function operations(items: Record<string, Record<string, Operation>>): Array<{ path: string; method: string; op: Operation }> {
  return Object.entries(items).flatMap(([p, item]) =>
    Object.entries(item).filter(([m]) => HTTP_METHODS.includes(m)).map(([method, op]) => ({ path: p, method, op })));
}

const restOperations = operations(contract.paths);

function operationByPath(p: string, method = 'get'): Operation {
  const op = contract.paths[p]?.[method];
  if (!op) throw new Error(`contract: no ${method} ${p}`);
  return op;
}

const errorStatuses = (op: Operation): number[] =>
  Object.keys(op.responses).filter(s => /^[45]\d\d$/.test(s)).map(Number).sort((a, b) => a - b);

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

// ---------------------------------------------------------------------------------------------------------------
// ajv over the OpenAPI document. Copy this recipe (until it moves to harness/):
//  - Ajv2020 with strict: true (never off), allErrors, discriminator: true, plus ajv-formats.
//  - addSchema(the whole document, 'openapi.json') so component $refs resolve; compile
//    { $ref: 'openapi.json#/components/schemas/Name' } per schema.
//  - Strict mode rejects the document's root because `openapi`, `info`, `paths`, ... are unknown keywords
//    ('strict mode: unknown keyword: "openapi"'); register them as annotation-only keywords (addVocabulary).
//    Keywords below the root (x-* extensions in operations, for example) are never compiled as schemas.
//  - ajv's discriminator throws "discriminator: mapping is not supported", so the document given to ajv is a
//    copy with discriminator.mapping removed. ajv derives the same mapping from each branch's schema_type const;
//    the test "discriminator mapping agrees with the branch consts" proves nothing is lost by removing it.
//  - strictTypes requires `type: "object"` next to `discriminator` (the `document` property declares it).
//  - ajv caches compiled schemas by object identity: build one Ajv per document and reuse the compiled functions.
// ---------------------------------------------------------------------------------------------------------------
const CONTRACT_ID = 'openapi.json';
const OPENAPI_ROOT_KEYWORDS = [
  'openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags', 'externalDocs',
];

function withoutDiscriminatorMappings(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutDiscriminatorMappings);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'discriminator' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const { mapping: _mapping, ...rest } = value;
      out[key] = rest;
    } else {
      out[key] = withoutDiscriminatorMappings(value);
    }
  }
  return out;
}

function createContractAjv(doc: OpenApiDoc): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true });
  addFormats(ajv);
  ajv.addVocabulary(OPENAPI_ROOT_KEYWORDS);
  ajv.addSchema(withoutDiscriminatorMappings(doc as unknown as Json) as Schema, CONTRACT_ID);
  return ajv;
}

const ajv = createContractAjv(contract);
const compiled = new Map<string, ValidateFunction>();

/** Validator for a JSON pointer into the contract, e.g. '/components/schemas/PublicEncounterSummary'. */
function validatorAt(pointer: string): ValidateFunction {
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${CONTRACT_ID}#${pointer}` });
    compiled.set(pointer, validate);
  }
  return validate;
}
const componentPointer = (name: string) => `/components/schemas/${name}`;
const validatorFor = (name: string) => validatorAt(componentPointer(name));
const pointerToken = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function expectValid(name: string, data: unknown): void {
  const validate = validatorFor(name);
  const ok = validate(data);
  expect(ok, `${name} should accept ${JSON.stringify(data)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

function expectInvalid(name: string, data: unknown): void {
  expect(validatorFor(name)(data), `${name} should reject ${JSON.stringify(data)}`).toBe(false);
}

// ---------------------------------------------------------------------------------------------------------------
// Walk of every schema in the document.
// ---------------------------------------------------------------------------------------------------------------
type SchemaVisit = { schema: Schema; at: string; via: string };

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMAS = [
  'items', 'contains', 'not', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties',
  'unevaluatedItems', 'propertyNames', 'contentSchema',
];

const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

function walkSchema(schema: Schema, at: string, via: string, visit: (v: SchemaVisit) => void): void {
  visit({ schema, at, via });
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (isObject(map)) {
      for (const [name, sub] of Object.entries(map)) if (isObject(sub)) walkSchema(sub, `${at}/${key}/${pointerToken(name)}`, key, visit);
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, i) => { if (isObject(sub)) walkSchema(sub, `${at}/${key}/${i}`, key, visit); });
  }
  for (const key of SUBSCHEMAS) {
    const sub = schema[key];
    if (isObject(sub)) walkSchema(sub, `${at}/${key}`, key, visit);
  }
}

/** Every schema reachable from components.schemas and from every operation in paths and webhooks. */
function walkDocumentSchemas(doc: OpenApiDoc, visit: (v: SchemaVisit) => void): void {
  for (const [name, schema] of Object.entries(doc.components.schemas)) walkSchema(schema, componentPointer(name), 'components', visit);
  for (const [root, items] of [['/paths', doc.paths], ['/webhooks', doc.webhooks]] as const) {
    for (const { path: p, method, op } of operations(items ?? {})) {
      const at = `${root}/${pointerToken(p)}/${method}`;
      (op.parameters ?? []).forEach((param, i) => walkSchema(param.schema, `${at}/parameters/${i}/schema`, 'parameter', visit));
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        walkSchema(media.schema, `${at}/requestBody/content/${pointerToken(type)}/schema`, 'requestBody', visit);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          walkSchema(media.schema, `${at}/responses/${status}/content/${pointerToken(type)}/schema`, 'response', visit);
        }
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          walkSchema(header.schema, `${at}/responses/${status}/headers/${name}/schema`, 'header', visit);
        }
      }
    }
  }
}

const typesOf = (schema: Schema): string[] =>
  Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : [];

/**
 * Object schemas that are not closed. Two shapes are exempt, and both are still walked into:
 *  - a pure union wrapper (`type: object` with oneOf/anyOf and no properties of its own): each branch is closed;
 *  - an in-place conditional branch (reached via if/then/else, no `type`): it constrains properties of a closed
 *    parent; `additionalProperties: false` there would reject the parent's other properties.
 */
function openObjectSchemas(doc: OpenApiDoc): { open: string[]; checked: number } {
  const open: string[] = [];
  let checked = 0;
  walkDocumentSchemas(doc, ({ schema, at, via }) => {
    const declaresShape = typesOf(schema).includes('object') || 'properties' in schema;
    if (!declaresShape) return;
    const unionWrapper = !('properties' in schema) && (Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf));
    const conditional = ['if', 'then', 'else'].includes(via) && !('type' in schema);
    if (unionWrapper || conditional) return;
    checked++;
    if (schema.additionalProperties !== false) open.push(at);
  });
  return { open, checked };
}

// ---------------------------------------------------------------------------------------------------------------
// Expected facts that the spec states in prose (names the brief fixes; everything listable comes from the spec).
// ---------------------------------------------------------------------------------------------------------------
const OPERATIONS: Record<string, { path: string; group: 'encounters' | 'documents'; ok: string }> = {
  listPublicEncounters: { path: '/external/v1/encounters', group: 'encounters', ok: 'PublicEncounterListResponse' },
  getPublicEncounter: { path: '/external/v1/encounters/{encounter_id}', group: 'encounters', ok: 'PublicEncounterDetailResponse' },
  getPublicEncounterDocument: {
    path: '/external/v1/encounters/{encounter_id}/documents/{document_id}', group: 'documents', ok: 'PublicDocumentDetailResponse',
  },
  getPublicEncounterDocumentTranscript: {
    path: '/external/v1/encounters/{encounter_id}/documents/{document_id}/transcript', group: 'documents', ok: 'PublicDocumentTranscriptResponse',
  },
  getPublicEncounterDocumentAudio: {
    path: '/external/v1/encounters/{encounter_id}/documents/{document_id}/audio', group: 'documents', ok: 'PublicDocumentAudioResponse',
  },
};

const SCHEMA_NAMES = [
  'PublicEncounterSummary', 'PublicPatientSummary', 'PublicEncounterDocumentSummary', 'PublicClinicalDocumentDetail',
  'PublicAmbientTranscriptDocumentDetail', 'PublicDocumentDetailResponse', 'PublicDocumentTranscriptResponse',
  'PublicTranscript', 'PublicTranscriptTurn', 'PublicDocumentAudioResponse', 'PublicEncounterListResponse',
  'PublicEncounterDetailResponse', 'PublicApiErrorResponse', 'RecordingTranscriptReadyWebhookEvent',
  'RecordingTranscriptReadyWebhookResources',
];

const WEBHOOK_EVENT = 'recording.transcript_ready';
const WEBHOOK_VERSION = '2026-05-01';

// ---------------------------------------------------------------------------------------------------------------
// Samples
// ---------------------------------------------------------------------------------------------------------------
const T = '2026-05-01T10:00:00Z';
const clinicalSummary = { document_id: 'd-1', schema_type: 'document', title: 'Note', status: null, workflow_variant: null, audio_duration_seconds: null };
const ambientSummary = { document_id: 'd-2', schema_type: 'ambient_transcript', title: null, status: 'final', workflow_variant: 'ambient', audio_duration_seconds: 312.5 };
const patient = { patient_id: 'p-1', first_name: 'Ada', last_name: null, date_of_birth: '1980-02-29' };
const encounter = {
  encounter_id: 'e-1', organization_id: 'o-1', created_at: T, updated_at: '2026-05-01T10:05:00.123+02:00',
  date_of_service: null, encounter_type: 'ambient', status: null, patient,
  documents: [clinicalSummary, ambientSummary, { document_id: 'd-3', schema_type: 'billing' }, { document_id: 'd-4', schema_type: 'encounter_checklist' }],
};
const minimalEncounter = { encounter_id: 'e-2', organization_id: 'o-1', created_at: T, updated_at: T };
const clinicalDetail = {
  document_id: 'd-1', encounter_id: 'e-1', schema_type: 'document', content: { format: 'markdown', text: '# Note' },
  created_at: T, updated_at: T, title: 'Note', status: null, workflow_variant: null,
};
const ambientDetail = {
  document_id: 'd-2', encounter_id: 'e-1', schema_type: 'ambient_transcript', created_at: T, updated_at: T,
  title: null, status: 'final', workflow_variant: 'phone_call', audio_duration_seconds: 12,
};
const transcriptResponse = {
  document_id: 'd-2', encounter_id: 'e-1',
  transcript: { provider: 'provider-a', audio_duration_seconds: 4.5, turns: [{ speaker: 'clinician', text: 'Hello', start: 0, end: 1.25 }] },
};
const audioResponse = { audio_url: 'https://storage.example/a?sig=x', expires_at: T };
const errorBody = { error: 'public_api_bad_request', reason_code: 'unsupported_filter', message: 'Unsupported query parameter', field: 'owners' };
const webhookEvent = {
  id: 'evt-1', type: WEBHOOK_EVENT, api_version: WEBHOOK_VERSION, occurred_at: T, organization_id: 'o-1',
  resources: { encounter_id: 'e-1', document_id: 'd-2' },
};

const VALID_SAMPLES: Array<[string, string, unknown]> = [
  ['full encounter summary with all document kinds', 'PublicEncounterSummary', encounter],
  ['minimal encounter summary', 'PublicEncounterSummary', minimalEncounter],
  ['encounter summary with null type and patient, empty documents', 'PublicEncounterSummary', { ...minimalEncounter, encounter_type: null, patient: null, documents: [] }],
  ['patient summary', 'PublicPatientSummary', patient],
  ['minimal patient summary', 'PublicPatientSummary', { patient_id: 'p-2' }],
  ['clinical document summary', 'PublicEncounterDocumentSummary', clinicalSummary],
  ['ambient document summary', 'PublicEncounterDocumentSummary', ambientSummary],
  ['clinical detail', 'PublicClinicalDocumentDetail', clinicalDetail],
  ['ambient detail', 'PublicAmbientTranscriptDocumentDetail', ambientDetail],
  ['detail response, clinical', 'PublicDocumentDetailResponse', { document: clinicalDetail }],
  ['detail response, clinical content without format', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, content: { text: null } } }],
  // FIELD-CLINICAL-CONTENT-SUBFIELDS (unspecified): whether text is required inside content is not stated.
  ['detail response, clinical content without text', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, content: { format: 'markdown' } } }],
  ['detail response, clinical content empty', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, content: {} } }],
  ['detail response, ambient', 'PublicDocumentDetailResponse', { document: ambientDetail }],
  ['detail response, ambient with required fields only', 'PublicDocumentDetailResponse', { document: { document_id: 'd', encounter_id: 'e', schema_type: 'ambient_transcript', created_at: T, updated_at: T } }],
  ['transcript response', 'PublicDocumentTranscriptResponse', transcriptResponse],
  ['transcript response, no turns and no duration', 'PublicDocumentTranscriptResponse', { document_id: 'd', encounter_id: 'e', transcript: { provider: 'p', turns: [] } }],
  ['transcript', 'PublicTranscript', transcriptResponse.transcript],
  ['transcript turn', 'PublicTranscriptTurn', transcriptResponse.transcript.turns[0]],
  ['audio response', 'PublicDocumentAudioResponse', audioResponse],
  ['list response', 'PublicEncounterListResponse', { items: [encounter, minimalEncounter], limit: 50, offset: 0, total: 2 }],
  ['list response at the limits', 'PublicEncounterListResponse', { items: [], limit: 100, offset: 10000, total: 0 }],
  ['encounter detail response', 'PublicEncounterDetailResponse', { encounter }],
  ['error with a field', 'PublicApiErrorResponse', errorBody],
  ['error with field null', 'PublicApiErrorResponse', { error: 'api_key_unauthorized', reason_code: 'missing_bearer', message: 'Missing bearer', field: null }],
  ['webhook event', 'RecordingTranscriptReadyWebhookEvent', webhookEvent],
  ['webhook resources', 'RecordingTranscriptReadyWebhookResources', webhookEvent.resources],
];

const INVALID_SAMPLES: Array<[string, string, unknown]> = [
  // Closed objects, at every level.
  ['extra property on the list response', 'PublicEncounterListResponse', { items: [], limit: 50, offset: 0, total: 0, next_cursor: 'x' }],
  ['extra property on an encounter in the list', 'PublicEncounterListResponse', { items: [{ ...minimalEncounter, owner: 'u' }], limit: 50, offset: 0, total: 1 }],
  ['extra property on the patient', 'PublicEncounterDetailResponse', { encounter: { ...minimalEncounter, patient: { patient_id: 'p', phone: '1' } } }],
  ['extra property on a document summary', 'PublicEncounterSummary', { ...minimalEncounter, documents: [{ ...ambientSummary, storage_key: 'k' }] }],
  ['extra property on the clinical detail', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, audio_duration_seconds: null } }],
  ['extra property on content', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, content: { format: 'markdown', text: 'x', html: '<p>' } } }],
  ['extra property on the transcript', 'PublicDocumentTranscriptResponse', { ...transcriptResponse, transcript: { ...transcriptResponse.transcript, language: 'en' } }],
  ['extra property on a turn', 'PublicDocumentTranscriptResponse', {
    ...transcriptResponse, transcript: { provider: 'p', turns: [{ speaker: 's', text: 't', start: 0, end: 1, confidence: 0.9 }] },
  }],
  ['extra property on the audio response', 'PublicDocumentAudioResponse', { ...audioResponse, storage_key: 'k' }],
  ['extra property on the error', 'PublicApiErrorResponse', { ...errorBody, detail: 'x' }],
  ['extra property on the webhook event', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, transcript: [] }],
  ['extra property on the webhook resources', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, resources: { ...webhookEvent.resources, audio_url: 'u' } }],
  ['extra property on the detail wrapper', 'PublicDocumentDetailResponse', { document: clinicalDetail, links: {} }],
  // Document detail discrimination.
  ['clinical detail with schema_type billing', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, schema_type: 'billing' } }],
  ['clinical detail with schema_type billing (variant)', 'PublicClinicalDocumentDetail', { ...clinicalDetail, schema_type: 'billing' }],
  ['clinical detail with schema_type encounter_checklist', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, schema_type: 'encounter_checklist' } }],
  ['clinical detail with a non-null status', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, status: 'final' } }],
  ['clinical detail with a non-null workflow_variant', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, workflow_variant: 'ambient' } }],
  ['clinical detail without content', 'PublicDocumentDetailResponse', { document: { ...clinicalDetail, content: undefined } }],
  ['content format other than markdown', 'PublicClinicalDocumentDetail', { ...clinicalDetail, content: { format: 'html', text: 'x' } }],
  ['content text neither string nor null', 'PublicClinicalDocumentDetail', { ...clinicalDetail, content: { format: 'markdown', text: 7 } }],
  ['ambient detail with content', 'PublicDocumentDetailResponse', { document: { ...ambientDetail, content: { format: 'markdown', text: 'x' } } }],
  ['ambient detail with turns', 'PublicDocumentDetailResponse', { document: { ...ambientDetail, turns: [] } }],
  ['document without schema_type', 'PublicDocumentDetailResponse', { document: { ...ambientDetail, schema_type: undefined } }],
  // Clinical summaries carry null for status, workflow_variant and audio_duration_seconds (§2.3).
  ['clinical summary with a status', 'PublicEncounterDocumentSummary', { ...clinicalSummary, status: 'final' }],
  ['clinical summary with an audio duration', 'PublicEncounterDocumentSummary', { ...clinicalSummary, audio_duration_seconds: 3 }],
  // Enums, formats, types.
  ['encounter_type encounter_checklist (summary schema_type, not an encounter type)', 'PublicEncounterSummary', { ...minimalEncounter, encounter_type: 'encounter_checklist' }],
  ['workflow_variant outside the enum', 'PublicEncounterDocumentSummary', { ...ambientSummary, workflow_variant: 'dictation' }],
  ['created_at without a timezone', 'PublicEncounterSummary', { ...minimalEncounter, created_at: '2026-05-01T10:00:00' }],
  ['date_of_birth as a date-time', 'PublicPatientSummary', { patient_id: 'p', date_of_birth: T }],
  ['documents null (the array is optional, not nullable)', 'PublicEncounterSummary', { ...minimalEncounter, documents: null }],
  ['limit not an integer', 'PublicEncounterListResponse', { items: [], limit: 1.5, offset: 0, total: 0 }],
  ['turn start as a string', 'PublicTranscriptTurn', { speaker: 's', text: 't', start: '0', end: 1 }],
  ['audio response without expires_at', 'PublicDocumentAudioResponse', { audio_url: 'u' }],
  ['error with an unknown reason_code', 'PublicApiErrorResponse', { ...errorBody, reason_code: 'rate_limited' }],
  ['error without field', 'PublicApiErrorResponse', { error: 'e', reason_code: 'invalid_key', message: 'm' }],
  // Webhook event.
  ['webhook api_version other than 2026-05-01', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, api_version: '2026-06-01' }],
  ['webhook event of another type', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, type: 'endpoint.test' }],
  ['webhook id empty', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, id: '' }],
  ['webhook organization_id empty', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, organization_id: '' }],
  ['webhook resources.document_id empty', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, resources: { encounter_id: 'e', document_id: '' } }],
  ['webhook occurred_at not a date-time', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, occurred_at: 'yesterday' }],
  ['webhook without resources', 'RecordingTranscriptReadyWebhookEvent', { ...webhookEvent, resources: undefined }],
];

// JSON has no undefined: drop such keys so "without X" samples mean what they say.
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

// ---------------------------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------------------------
test.describe('contract document', () => {
  test('SwaggerParser validates the document (on a clone; the fixture is untouched)', async () => {
    const clone = structuredClone(contract);
    await SwaggerParser.validate(clone as unknown as Parameters<typeof SwaggerParser.validate>[0]);
    expect(contract).toEqual(readContract());
  });

  test('SwaggerParser rejects a dangling $ref (the validation can fail)', async () => {
    const broken = structuredClone(contract);
    broken.components.schemas.PublicEncounterDetailResponse = { $ref: '#/components/schemas/NoSuchSchema' };
    await expect(SwaggerParser.validate(broken as unknown as Parameters<typeof SwaggerParser.validate>[0])).rejects.toThrow(/NoSuchSchema/);
  });

  test('OpenAPI 3.1.0, info.version v1, the five operations on their paths', () => {
    expect(contract.openapi).toBe('3.1.0');
    expect(contract.info.version).toBe('v1');
    expect(contract.servers?.length).toBeGreaterThan(0);
    expect(sorted(Object.keys(contract.paths))).toEqual(sorted(Object.values(OPERATIONS).map(o => o.path)));
    expect(restOperations.map(o => `${o.method} ${o.path} ${o.op.operationId}`).sort()).toEqual(
      Object.entries(OPERATIONS).map(([id, o]) => `get ${o.path} ${id}`).sort());
    // The schema route is served outside /external/v1: named in the description, absent from paths.
    expect(contract.info.description).toContain('/openapi/v1/openapi.json');
    expect(Object.keys(contract.paths).filter(p => !p.startsWith('/external/v1/'))).toEqual([]);
  });

  test('the five routes and operation names match §4', () => {
    const routes = endpoints(spec);
    expect(routes).toHaveLength(5);
    for (const route of routes) {
      const op = operationByPath(route.path, route.method.toLowerCase());
      if (route.operationName !== null) expect(op.operationId, `§${route.section}`).toBe(route.operationName);
    }
    // Routes the spec names explicitly must include the list and detail routes.
    expect(routes.filter(r => r.operationName !== null).length).toBeGreaterThanOrEqual(2);
  });

  test('component schema names are exactly the contract set', () => {
    expect(sorted(Object.keys(contract.components.schemas))).toEqual(sorted(SCHEMA_NAMES));
  });

  test('the document carries no `example` keyword anywhere (strict ajv rejects it)', () => {
    const found: string[] = [];
    const walk = (node: Json, at: string): void => {
      if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${at}/${i}`));
      else if (isObject(node)) {
        for (const [k, v] of Object.entries(node)) {
          // A property *named* example would be legitimate; only keywords in schema/media/parameter objects count.
          if ((k === 'example' || k === 'examples') && !at.endsWith('/properties')) found.push(`${at}/${k}`);
          walk(v, `${at}/${pointerToken(k)}`);
        }
      }
    };
    walk(contract as unknown as Json, '');
    expect(found).toEqual([]);
  });
});

test.describe('closed schemas', () => {
  test('every object schema in the document has additionalProperties: false', () => {
    const { open, checked } = openObjectSchemas(contract);
    expect(open).toEqual([]);
    // 15 components plus the inline clinical `content` object: the walk really reached them.
    expect(checked).toBeGreaterThanOrEqual(SCHEMA_NAMES.length + 1);
  });

  test('the walk finds an open schema nested in oneOf, items and webhooks (the check can fail)', () => {
    const cases: Array<[string, (d: OpenApiDoc) => void]> = [
      ['content inside a oneOf branch', d => {
        const content = d.components.schemas.PublicClinicalDocumentDetail.properties as Schema;
        delete (content.content as Schema).additionalProperties;
      }],
      ['inline object in array items', d => {
        (d.components.schemas.PublicTranscript.properties as Schema).turns = { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } };
      }],
      ['inline webhook body', d => {
        d.webhooks[WEBHOOK_EVENT].post.requestBody!.content['application/json'].schema = { type: 'object', properties: {} };
      }],
      ['inline response schema in paths', d => {
        operationByPathIn(d, OPERATIONS.getPublicEncounter.path).responses['200'].content!['application/json'].schema = {
          oneOf: [{ type: 'object', properties: { x: { type: 'string' } } }],
        };
      }],
    ];
    for (const [name, mutate] of cases) {
      const doc = structuredClone(contract);
      mutate(doc);
      expect(openObjectSchemas(doc).open, name).not.toEqual([]);
    }
  });
});

function operationByPathIn(doc: OpenApiDoc, p: string): Operation {
  const op = doc.paths[p]?.get;
  if (!op) throw new Error(`no get ${p}`);
  return op;
}

test.describe('reason codes and errors', () => {
  const enumeration = reasonCodeEnumeration(spec);
  const table = statusReasonTable(spec);
  const auth = authenticationReasons(spec);

  test('the spec lists are read (27 reason codes, 8 authentication reasons, 6 statuses)', () => {
    expect(enumeration).toHaveLength(27);
    expect(auth).toHaveLength(8);
    expect([...table.keys()]).toEqual([400, 401, 403, 404, 422, 503]);
    // The §7.1 table and the enumeration line agree with each other, and §5 agrees with the 401 row.
    expect(sorted([...table.values()].flatMap(r => r.codes))).toEqual(sorted(enumeration));
    expect(sorted(table.get(401)!.codes)).toEqual(sorted(auth));
  });

  test('PublicApiErrorResponse.reason_code enum equals §7.1, in the spec order', () => {
    const reason = (contract.components.schemas.PublicApiErrorResponse.properties as Schema).reason_code as Schema;
    expect(reason.enum).toEqual(enumeration);
    expect(reason.type).toBe('string');
  });

  test('PublicApiErrorResponse fields equal the §7 table, all four required, closed', () => {
    const errorTable = tables(section(spec, '7')).find(t => t.header[0] === 'Field');
    expect(errorTable).toBeDefined();
    const fields = errorTable!.rows.map(r => r[0]);
    expect(fields).toHaveLength(4);
    const schema = contract.components.schemas.PublicApiErrorResponse;
    expect(sorted(Object.keys(schema.properties as Schema))).toEqual(sorted(fields));
    expect(sorted(schema.required as string[])).toEqual(sorted(fields));
    for (const [field, type] of errorTable!.rows) {
      const acceptsNull = validatorAt(`${componentPointer('PublicApiErrorResponse')}/properties/${field}`)(null);
      expect(acceptsNull, `${field}: ${type}`).toBe(/\bnull\b/.test(type));
    }
  });

  for (const route of endpoints(readSpecText(SPEC_PATH))) {
    test(`§${route.section} ${route.path}: error statuses and x-reason-codes equal the Errors line`, () => {
      const op = operationByPath(route.path);
      expect(errorStatuses(op)).toEqual([...route.errors.keys()].sort((a, b) => a - b));
      for (const [status, codes] of route.errors) {
        const response = op.responses[String(status)];
        const listed = response['x-reason-codes'] ?? [];
        expect(new Set(listed).size, `${status}: no duplicates`).toBe(listed.length);
        expect(sorted(listed), `${op.operationId} ${status}`).toEqual(sorted(codes));
        // Every code sits in its status's row of §7.1.
        const row = table.get(status);
        expect(row, `status ${status} is in §7.1`).toBeDefined();
        for (const code of listed) expect(row!.codes, `${status} ${code}`).toContain(code);
        expect(response.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/PublicApiErrorResponse' });
        expect(Object.keys(response.content ?? {})).toEqual(['application/json']);
      }
    });
  }

  test('"401 authentication reasons" means the eight §5 codes on every route', () => {
    for (const { op } of restOperations) expect(sorted(op.responses['401']['x-reason-codes'] ?? [])).toEqual(sorted(auth));
  });

  test('every status/reason pairing of §7.1 appears with that status on some route', () => {
    const used = new Set(restOperations.flatMap(({ op }) =>
      errorStatuses(op).flatMap(s => (op.responses[String(s)]['x-reason-codes'] ?? []).map(c => `${s} ${c}`))));
    const expected = [...table].flatMap(([status, row]) => row.codes.map(c => `${status} ${c}`));
    expect(sorted([...used])).toEqual(sorted(expected));
  });

  test('503 digest_key_unavailable is on every route, audio_storage_unavailable only on the audio route', () => {
    for (const { op } of restOperations) {
      const codes = op.responses['503']['x-reason-codes'] ?? [];
      expect(codes).toContain('digest_key_unavailable');
      expect(codes.includes('audio_storage_unavailable'), op.operationId).toBe(op.operationId === 'getPublicEncounterDocumentAudio');
    }
  });

  test('besides the errors, each operation answers only 200 application/json with its success schema', () => {
    for (const [id, expected] of Object.entries(OPERATIONS)) {
      const op = operationByPath(expected.path);
      expect(Object.keys(op.responses).filter(s => !/^[45]\d\d$/.test(s)), id).toEqual(['200']);
      expect(op.responses['200'].content).toEqual({ 'application/json': { schema: { $ref: `#${componentPointer(expected.ok)}` } } });
    }
  });
});

test.describe('security, scopes and route groups', () => {
  test('publicApiKeyBearer is an HTTP bearer scheme', () => {
    expect(contract.components.securitySchemes.publicApiKeyBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  test('x-required-scopes equal the §4 "Required scopes" lines, within the §5 scope list', () => {
    const known = backticked(/Scopes used: (.+?)\. /.exec(section(spec, '5'))?.[1] ?? '');
    expect(known).toHaveLength(4);
    for (const route of endpoints(spec)) {
      const op = operationByPath(route.path);
      expect(route.scopes.length, `§${route.section}`).toBeGreaterThan(0);
      expect(sorted(op['x-required-scopes'] ?? []), op.operationId).toEqual(sorted(route.scopes));
      for (const scope of op['x-required-scopes'] ?? []) expect(known).toContain(scope);
    }
  });

  test('every operation uses publicApiKeyBearer and names its route group', () => {
    for (const [id, expected] of Object.entries(OPERATIONS)) {
      const op = operationByPath(expected.path);
      expect(op.security, id).toEqual([{ publicApiKeyBearer: [] }]);
      expect(op['x-route-group'], id).toBe(expected.group);
    }
  });
});

test.describe('parameters', () => {
  test('the list route declares exactly the five §4.1 query parameters with their limits', () => {
    const op = operationByPath(OPERATIONS.listPublicEncounters.path);
    const query = (op.parameters ?? []).filter(p => p.in === 'query');
    const specNames = tables(section(spec, '4.1')).find(t => t.header[0] === 'Name')!.rows.map(r => r[0]);
    expect(sorted(query.map(p => p.name))).toEqual(sorted(specNames));
    const byName = Object.fromEntries(query.map(p => [p.name, p]));
    for (const p of query) expect(p.required ?? false, p.name).toBe(false);
    expect(byName.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    expect(byName.offset.schema).toMatchObject({ type: 'integer', minimum: 0, maximum: 10000, default: 0 });
    expect(byName.sort_order.schema).toMatchObject({ type: 'string', enum: ['asc', 'desc'], default: 'desc' });
    expect(byName.start_at.schema).toMatchObject({ type: 'string', format: 'date-time' });
    expect(byName.end_at.schema).toMatchObject({ type: 'string', format: 'date-time' });
    expect((op.parameters ?? []).filter(p => p.in !== 'query')).toEqual([]);
  });

  test('path parameters are declared as required strings; non-list routes declare no query parameters', () => {
    for (const { path: p, op } of restOperations) {
      const templated = [...p.matchAll(/\{([^}]+)\}/g)].map(m => m[1]);
      const declared = (op.parameters ?? []).filter(x => x.in === 'path');
      expect(declared.map(x => x.name), op.operationId).toEqual(templated);
      for (const x of declared) {
        expect(x.required, `${op.operationId} ${x.name}`).toBe(true);
        expect(x.schema.type).toBe('string');
      }
      if (op.operationId !== 'listPublicEncounters') {
        expect((op.parameters ?? []).filter(x => x.in !== 'path'), op.operationId).toEqual([]);
      }
    }
  });
});

test.describe('schemas follow the §2 and §6.1 field tables', () => {
  // Which schema each field table (and dotted prefix within it) describes.
  const FIELD_TABLES: Array<{ section: string; caption?: RegExp; schemas: Record<string, string> }> = [
    { section: '2.1', schemas: { '': 'PublicEncounterSummary' } },
    { section: '2.2', schemas: { '': 'PublicPatientSummary' } },
    { section: '2.3', schemas: { '': 'PublicEncounterDocumentSummary' } },
    { section: '2.4', caption: /^Clinical document/, schemas: { '': 'PublicClinicalDocumentDetail' } },
    { section: '2.4', caption: /^Ambient transcript document/, schemas: { '': 'PublicAmbientTranscriptDocumentDetail' } },
    { section: '2.5', schemas: { '': 'PublicDocumentTranscriptResponse', 'transcript.': 'PublicTranscript', 'turn.': 'PublicTranscriptTurn' } },
    { section: '2.6', schemas: { '': 'PublicDocumentAudioResponse' } },
    { section: '2.7', schemas: { '': 'PublicEncounterListResponse' } },
    { section: '6.1', schemas: { '': 'RecordingTranscriptReadyWebhookEvent', 'resources.': 'RecordingTranscriptReadyWebhookResources' } },
  ];
  // Spec type names → component schemas.
  const NAMED_TYPES: Record<string, string> = {
    'Patient summary': 'PublicPatientSummary', 'Document summary': 'PublicEncounterDocumentSummary',
    'Encounter summary': 'PublicEncounterSummary', turn: 'PublicTranscriptTurn',
  };
  const OBJECT_FIELDS: Record<string, string | null> = {
    'PublicDocumentTranscriptResponse.transcript': 'PublicTranscript',
    'RecordingTranscriptReadyWebhookEvent.resources': 'RecordingTranscriptReadyWebhookResources',
    'PublicClinicalDocumentDetail.content': null, // inline object
  };

  test('every field table of §2 and §6.1 is mapped to a schema', () => {
    for (const number of ['2.1', '2.2', '2.3', '2.4', '2.5', '2.6', '2.7', '6.1']) {
      expect(fieldTables(spec, number).length, `§${number}`).toBe(FIELD_TABLES.filter(t => t.section === number).length);
    }
  });

  for (const mapping of FIELD_TABLES) {
    const title = `§${mapping.section}${mapping.caption ? ` ${mapping.caption.source.replace('^', '')}` : ''}`;
    test(`${title}: properties, required, nullability, types, enums and formats`, () => {
      const table = fieldTables(spec, mapping.section).find(t => !mapping.caption || mapping.caption.test(t.caption));
      expect(table, title).toBeDefined();
      for (const [prefix, name] of Object.entries(mapping.schemas)) {
        const rows = table!.rows
          .filter(r => (prefix === '' ? !r.field.includes('.') : r.field.startsWith(prefix)))
          .map(r => ({ ...r, field: r.field.slice(prefix.length) }));
        expect(rows.length, `${title} ${name}`).toBeGreaterThan(0);
        const schema = contract.components.schemas[name];
        const props = schema.properties as Record<string, Schema>;
        expect(sorted(Object.keys(props)), name).toEqual(sorted(rows.map(r => r.field)));
        expect(sorted((schema.required as string[]) ?? []), `${name} required`).toEqual(sorted(rows.filter(r => r.required).map(r => r.field)));
        expect(schema.additionalProperties, name).toBe(false);
        for (const row of rows) {
          const where = `${name}.${row.field} (${row.type})`;
          const p = props[row.field];
          const pointer = `${componentPointer(name)}/properties/${pointerToken(row.field)}`;
          const nullable = /\bnull\b/.test(row.type);
          expect(validatorAt(pointer)(null), `${where} accepts null`).toBe(nullable);
          const types = typesOf(p);
          if (/date-time/.test(row.type)) expect(p.format, where).toBe('date-time');
          else if (/^date\b/.test(row.type)) expect(p.format, where).toBe('date');
          else expect(p.format, where).toBeUndefined();
          if (/^integer\b/.test(row.type)) expect(types, where).toContain('integer');
          if (/^number\b/.test(row.type)) expect(types, where).toEqual(nullable ? ['number', 'null'] : ['number']);
          if (/^string\b/.test(row.type)) expect(types, where).toEqual(nullable ? ['string', 'null'] : ['string']);
          const minLength = /min length (\d+)/.exec(row.type);
          if (minLength) expect(p.minLength, where).toBe(Number(minLength[1]));
          if (/^enum\b/.test(row.type)) {
            const values: Json[] = backticked(row.notes);
            expect(p.enum, where).toEqual(nullable ? [...values, null] : values);
          }
          const constant = /^constant `([^`]+)`/.exec(row.type);
          if (constant) expect(p.const, where).toBe(constant[1]);
          if (row.type === 'null') expect(p.type, where).toBe('null');
          const arrayOf = /^array of (.+)$/.exec(row.type);
          if (arrayOf) {
            expect(p.type, where).toBe('array');
            expect(p.items, where).toEqual({ $ref: `#${componentPointer(NAMED_TYPES[arrayOf[1]])}` });
          }
          const named = /^(Patient summary|Document summary|Encounter summary) or null$/.exec(row.type);
          if (named) expect(p.anyOf, where).toEqual([{ $ref: `#${componentPointer(NAMED_TYPES[named[1]])}` }, { type: 'null' }]);
          if (row.type === 'object') {
            const target = OBJECT_FIELDS[`${name}.${row.field}`];
            expect(target, `${where} is mapped`).not.toBeUndefined();
            if (target) expect(p, where).toEqual({ $ref: `#${componentPointer(target)}` });
            else expect(p.type, where).toBe('object');
          }
        }
      }
    });
  }

  test('§2.4 clinical content: format const markdown with default markdown, text string or null, closed', () => {
    const content = (contract.components.schemas.PublicClinicalDocumentDetail.properties as Schema).content as Schema;
    const props = content.properties as Record<string, Schema>;
    expect(content.additionalProperties).toBe(false);
    expect(sorted(Object.keys(props))).toEqual(['format', 'text']);
    expect(props.format).toMatchObject({ type: 'string', const: 'markdown', default: 'markdown' });
    expect(props.text.type).toEqual(['string', 'null']);
    // §2.4 does not say whether format or text is required inside content (FIELD-CLINICAL-CONTENT-SUBFIELDS,
    // unspecified): the contract requires neither, so a body taking either choice is valid.
    expect(content.required ?? []).toEqual([]);
  });

  test('§2.4 and §2.8 wrappers: one required field each', () => {
    const detail = contract.components.schemas.PublicDocumentDetailResponse;
    expect(detail.required).toEqual(['document']);
    expect(Object.keys(detail.properties as Schema)).toEqual(['document']);
    const encounterDetail = contract.components.schemas.PublicEncounterDetailResponse;
    expect(encounterDetail.required).toEqual(['encounter']);
    expect(encounterDetail.properties).toEqual({ encounter: { $ref: '#/components/schemas/PublicEncounterSummary' } });
  });

  test('the discriminator mapping agrees with the branch consts (so ajv may ignore it)', () => {
    const document = (contract.components.schemas.PublicDocumentDetailResponse.properties as Schema).document as Schema;
    const branches = (document.oneOf as Schema[]).map(b => String(b.$ref));
    expect(branches).toEqual(['#/components/schemas/PublicClinicalDocumentDetail', '#/components/schemas/PublicAmbientTranscriptDocumentDetail']);
    const discriminator = document.discriminator as { propertyName: string; mapping: Record<string, string> };
    expect(discriminator.propertyName).toBe('schema_type');
    const derived = Object.fromEntries(branches.map(ref => {
      const target = contract.components.schemas[ref.split('/').pop()!];
      return [String(((target.properties as Schema).schema_type as Schema).const), ref];
    }));
    expect(discriminator.mapping).toEqual(derived);
    expect(sorted(Object.keys(derived))).toEqual(['ambient_transcript', 'document']);
  });
});

test.describe('ajv (strict) over the contract', () => {
  test('every component schema compiles, and every operation\'s 200 schema compiles', () => {
    for (const name of SCHEMA_NAMES) expect(typeof validatorFor(name), name).toBe('function');
    for (const { path: p, method } of restOperations) {
      expect(typeof validatorAt(`/paths/${pointerToken(p)}/${method}/responses/200/content/application~1json/schema`)).toBe('function');
    }
  });

  test('the recipe needs its two adaptations (root keywords, mapping removal)', () => {
    const plain = new Ajv2020({ strict: true, allErrors: true, discriminator: true });
    addFormats(plain);
    plain.addSchema(contract as unknown as Schema, CONTRACT_ID);
    // The error surfaces when the first $ref into the document is compiled.
    expect(() => plain.compile({ $ref: `${CONTRACT_ID}#${componentPointer('PublicPatientSummary')}` }))
      .toThrow('strict mode: unknown keyword: "openapi"');
    const withVocabulary = new Ajv2020({ strict: true, allErrors: true, discriminator: true });
    addFormats(withVocabulary);
    withVocabulary.addVocabulary(OPENAPI_ROOT_KEYWORDS);
    withVocabulary.addSchema(contract as unknown as Schema, CONTRACT_ID);
    expect(() => withVocabulary.compile({ $ref: `${CONTRACT_ID}#${componentPointer('PublicDocumentDetailResponse')}` }))
      .toThrow(/mapping is not supported/);
  });

  for (const [what, name, sample] of VALID_SAMPLES) {
    test(`accepts ${what} (${name})`, () => expectValid(name, sample));
  }

  for (const [why, name, sample] of INVALID_SAMPLES) {
    test(`rejects ${why}`, () => {
      // Each bad sample differs from a valid one only by the named defect: the valid base passes elsewhere.
      expectInvalid(name, asJson(sample));
    });
  }

  test('operation 200 schemas validate the matching samples through paths', () => {
    const samples: Record<string, unknown> = {
      listPublicEncounters: { items: [encounter], limit: 50, offset: 0, total: 1 },
      getPublicEncounter: { encounter },
      getPublicEncounterDocument: { document: clinicalDetail },
      getPublicEncounterDocumentTranscript: transcriptResponse,
      getPublicEncounterDocumentAudio: audioResponse,
    };
    for (const { path: p, method, op } of restOperations) {
      const validate = validatorAt(`/paths/${pointerToken(p)}/${method}/responses/200/content/application~1json/schema`);
      expect(validate(samples[op.operationId]), `${op.operationId}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(validate(errorBody), op.operationId).toBe(false);
    }
  });
});

test.describe('webhook recording.transcript_ready', () => {
  const webhook = (): Operation => {
    const op = contract.webhooks?.[WEBHOOK_EVENT]?.post;
    if (!op) throw new Error('contract: no webhooks["recording.transcript_ready"].post');
    return op;
  };

  test('only the one event is defined, as a POST with a required JSON body', () => {
    expect(Object.keys(contract.webhooks)).toEqual([WEBHOOK_EVENT]);
    expect(Object.keys(contract.webhooks[WEBHOOK_EVENT]).filter(m => HTTP_METHODS.includes(m))).toEqual(['post']);
    const op = webhook();
    expect(op.requestBody?.required).toBe(true);
    expect(op.requestBody?.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/RecordingTranscriptReadyWebhookEvent' } } });
    expect(Object.keys(op.responses)).toEqual(['2XX']);
  });

  test('runtime status planned_not_generally_available, receiver correlation not confirmed', () => {
    const op = webhook();
    expect(op['x-runtime-status']).toBe('planned_not_generally_available');
    expect(spec).toContain('`planned_not_generally_available`');
    expect(op['x-receiver-correlation-status']).toBe('not_confirmed_runtime_blocked');
    expect(spec).toContain('`not_confirmed_runtime_blocked`');
  });

  test('no API keys or scopes on webhook delivery (§5.8)', () => {
    const op = webhook();
    expect(op.security).toEqual([]);
    expect(op['x-required-scopes']).toBeUndefined();
  });

  test('the five §6.2 headers are required header parameters', () => {
    const headerTable = tables(section(spec, '6.2')).find(t => t.header[0] === 'Header');
    expect(headerTable).toBeDefined();
    const params = webhook().parameters ?? [];
    expect(params.every(p => p.in === 'header' && p.required === true)).toBe(true);
    expect(sorted(params.map(p => p.name))).toEqual(sorted(headerTable!.rows.map(r => r[0])));
    expect(headerTable!.rows.every(r => r[1] === 'yes')).toBe(true);
  });

  test('header schemas: timestamp digits, v1= lowercase hex signature, version 2026-05-01', () => {
    const params = Object.fromEntries((webhook().parameters ?? []).map((p, i) => [p.name, i]));
    const at = (name: string) => validatorAt(`/webhooks/${pointerToken(WEBHOOK_EVENT)}/post/parameters/${params[name]}/schema`);
    const timestamp = at('Service-Timestamp');
    expect(timestamp('1777629600')).toBe(true);
    for (const bad of ['', '-1', '1.5', '1777629600 ', '2026-05-01T10:00:00Z']) expect(timestamp(bad), bad).toBe(false);
    const signature = at('Service-Signature');
    expect(signature(`v1=${'a1'.repeat(32)}`)).toBe(true);
    for (const bad of [`v2=${'a1'.repeat(32)}`, `v1=${'a1'.repeat(31)}`, `v1=${'A1'.repeat(32)}`, 'a1'.repeat(32), `v1=${'a1'.repeat(32)}0`]) {
      expect(signature(bad), bad).toBe(false);
    }
    const version = at('Service-Webhook-Version');
    expect(version(WEBHOOK_VERSION)).toBe(true);
    expect(version('2026-06-01')).toBe(false);
    expect(at('Service-Event-Id')('')).toBe(false);
  });
});
