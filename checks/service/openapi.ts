// §1 and §9: the machine-readable schema served at /openapi/v1/openapi.json, judged by meaning
// (judge/openapi-meaning.ts), never by spelling. Checked is only what the specification fixes: JSON
// (any JSON media type), OpenAPI 3.1.0 with info.version v1, a valid document (swagger-parser), the five
// routes with GET under /external/v1, the operation names of §4.1 and §4.2 (the other three are free), the
// HTTP bearer scheme publicApiKeyBearer (§5.1), each route's statuses (§4), and each schema by what it
// accepts and rejects compared with the harness contract (fixtures/contract/openapi.json). Component names,
// `$ref` layout, key order, annotations and the webhook's presence (the spec does not require it in the REST
// document) never count; nor do the catalog's open choices, nor the prose the body checks verify (a served
// schema is judged between the two readings of judge/open-choices.ts).
import { suite } from '../../engine/declare.ts';
import { describe, fail } from '../../judge/assertions.ts';
import { contractDocument, validateAgainst } from '../../judge/contract.ts';
import {
  closednessDiffs, dereference, infoVersionDiffs, isJsonMediaType, judgingContract, openapiVersionDiffs, operationNameDiffs, parameterDiffs,
  pathDiffs, reasonCodeDiffs, schemaDiffs, SchemaJudge, securityDiffs, statusDiffs, type Json, type JudgingContract,
} from '../../judge/openapi-meaning.ts';
import { validateDocument } from '../../judge/openapi-valid.ts';
import type { CheckScope, Exchange } from '../../record/record.ts';
import type { CheckApi } from '../../observe/target.ts';

const check = suite(import.meta.filename);

const OPENAPI_PATH = '/openapi/v1/openapi.json';
const MAX_LISTED = 40;

/** Requires an answer labelled with a JSON media type (application/json, parameters, any +json) that parses. */
function expectJsonDocument(ex: Exchange): unknown {
  if (ex.error) fail('No response from target', `${ex.error.kind}: ${ex.error.message}`);
  const r = ex.response!;
  const ct = r.headers['content-type'];
  if (!isJsonMediaType(ct)) fail('The OpenAPI document is not labelled with a JSON media type', `status ${r.status}, content-type ${JSON.stringify(ct ?? '')}`);
  try {
    return JSON.parse(r.body);
  } catch (e) {
    fail('The OpenAPI document is not valid JSON', `status ${r.status}: ${(e as Error).message}`);
  }
}

/**
 * Fetches the served document. The spec does not say whether it needs a key (OPENAPI-SERVED-AUTH):
 * it is fetched without one first; a 401 (with a valid error body) is followed by a fetch with the
 * full key, and `onAuth` records it.
 */
async function served(api: CheckApi, onAuth?: (text: string) => void): Promise<Json> {
  let ex = await api.get(OPENAPI_PATH, { as: 'none', shared: true });
  if (ex.response?.status === 401) {
    const body = expectJsonDocument(ex);
    const invalid = validateAgainst('PublicApiErrorResponse', body);
    if (invalid) fail('The 401 for the OpenAPI document does not match PublicApiErrorResponse', invalid);
    onAuth?.(`the OpenAPI document needs a bearer key: without one it answered 401 ${(body as Json).reason_code}; fetched with the full key`);
    ex = await api.get(OPENAPI_PATH, { as: 'full', shared: true });
  }
  if (ex.response && ex.response.status !== 200) fail('The OpenAPI document is not served', describe(ex));
  const doc = expectJsonDocument(ex);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) fail('The OpenAPI document is not a JSON object', describe(ex));
  return doc as Json;
}

function report(title: string, diffs: string[]): void {
  if (diffs.length === 0) return;
  const listed = diffs.slice(0, MAX_LISTED).join('; ');
  fail(title, `${diffs.length} difference(s): ${listed}${diffs.length > MAX_LISTED ? `; … (+${diffs.length - MAX_LISTED} more)` : ''}`);
}

let judging: Promise<JudgingContract> | undefined;
/** The contract in its three readings, every $ref resolved, once per worker. */
function contractDereferenced(): Promise<JudgingContract> {
  judging ??= judgingContract(contractDocument());
  return judging;
}

// Four checks judge the dereferenced served document, often at once (a batch runs its cases together): each
// distinct document is dereferenced once per worker, and one judge keeps the schemas it compiled (by identity
// of the shared tree). Keyed by the document's text, so a mutant's or variant's own document is its own entry.
const servedDerefs = new Map<string, Promise<Json>>();
let sharedJudge: SchemaJudge | undefined;
const judge = (): SchemaJudge => (sharedJudge ??= new SchemaJudge());

async function servedDereferenced(doc: Json): Promise<Json> {
  const key = JSON.stringify(doc);
  let deref = servedDerefs.get(key);
  if (!deref) {
    if (servedDerefs.size >= 16) servedDerefs.clear();
    deref = dereference(doc);
    servedDerefs.set(key, deref);
  }
  try {
    return await deref;
  } catch (e) {
    fail('The served document cannot be dereferenced', (e as Error).message);
  }
}

type Body = (api: CheckApi, scope: CheckScope, doc: Json) => Promise<void> | void;

/** The run of a check that judges the served document: the body gets it, fetched once per worker (`served`). */
function onDocument(body: Body): (api: CheckApi, scope: CheckScope) => Promise<void> {
  return async (api, scope) => body(api, scope, await served(api));
}

// ---------------------------------------------------------------- served, version, validity

check({ id: 'openapi-served-as-json', requirements: ['OPENAPI-SERVED', 'OPENAPI-SERVED-AUTH'], title: 'GET /openapi/v1/openapi.json answers 200 with a JSON object under a JSON media type (application/json, parameters or a +json suffix allowed)', run: async (api, scope) => {
  await served(api, (text) => scope.observe(text));
} });

check({ id: 'openapi-version-3-1-0', requirements: ['OPENAPI-3-1-0', 'OPENAPI-SERVED'], title: 'the served document declares openapi 3.1.0', run: onDocument((_api, _scope, doc) => {
  report('The served document is not OpenAPI 3.1.0', openapiVersionDiffs(doc));
}) });

check({ id: 'openapi-info-version-v1', requirements: ['VERSION-INFO-V1', 'OPENAPI-SERVED'], title: 'the served document declares info.version v1', run: onDocument((_api, _scope, doc) => {
  report('The served document is not contract version v1', infoVersionDiffs(doc));
}) });

check({ id: 'openapi-document-valid', requirements: ['OPENAPI-SERVED', 'OPENAPI-3-1-0'], title: 'the served document is a valid OpenAPI document (swagger-parser validate)', run: onDocument(async (_api, _scope, doc) => {
  try {
    await validateDocument(doc);
  } catch (e) {
    fail('The served document is not a valid OpenAPI document', (e as Error).message.split('\n').slice(0, 8).join(' '));
  }
}) });

// ---------------------------------------------------------------- what the specification fixes, by meaning

check({ id: 'openapi-paths-agree', requirements: ['CONTRACT-BASE-ADDRESS', 'CONTRACT-ROUTE-PURPOSES', 'CONTRACT-NO-REQUEST-BODY', 'CONTRACT-FIVE-ROUTES', 'CONTRACT-GET-ONLY', 'VERSION-PATH-PREFIX-V1', 'LIST-PATH', 'ENC-PATH', 'DOC-PATH', 'TRANSCRIPT-PATH', 'AUDIO-PATH'], title: 'the served document describes the five routes of §4 with GET (server base path joined), no other route under /external/v1 and no method that changes anything', run: onDocument((_api, _scope, doc) => {
  report('The served routes differ from the specification', pathDiffs(contractDocument(), doc));
}) });

check({ id: 'openapi-operations-agree', requirements: ['OPENAPI-OPERATION-LIST', 'OPENAPI-OPERATION-ENCOUNTER', 'CONTRACT-FIVE-ROUTES'], title: 'listPublicEncounters and getPublicEncounter (§4.1, §4.2) name the GETs of their routes and nothing else; the other three operationIds are free', run: onDocument((_api, _scope, doc) => {
  report('The served operation names differ from the specification', operationNameDiffs(contractDocument(), doc));
}) });

check({ id: 'openapi-parameters-agree', requirements: ['LIST-QUERY-OPTIONAL', 'LIST-LIMIT-RANGE', 'LIST-LIMIT-DEFAULT', 'LIST-OFFSET-RANGE', 'LIST-OFFSET-DEFAULT', 'LIST-SORT-ORDER-ENUM', 'LIST-SORT-DEFAULT-DESC', 'LIMIT-LIMIT', 'LIMIT-OFFSET', 'ENC-PATH-PARAM', 'DOC-PATH-PARAMS'], title: 'every route\'s parameters accept and reject what the contract\'s do (bounds, enum, date-times, ids), stated defaults agree, and no other query key or required parameter is described', run: onDocument(async (_api, _scope, doc) => {
  report('The served parameters differ from the specification', parameterDiffs(judge(), await contractDereferenced(), await servedDereferenced(doc)));
}) });

check({ id: 'openapi-statuses-agree', requirements: ['LIST-ERRORS', 'ENC-ERRORS', 'DOC-ERRORS', 'TRANSCRIPT-ERRORS', 'AUDIO-ERRORS', 'CONTRACT-JSON-RESPONSES', 'ERR-BODY-ON-FAILURE'], title: 'every route documents exactly its §4 statuses (a range such as 4XX counts for the codes it covers; default is free), each with a JSON media type and no other', run: onDocument((_api, _scope, doc) => {
  report('The served response statuses differ from the specification', statusDiffs(contractDocument(), doc));
}) });

const SCHEMA_REQUIREMENTS = [
  'OPENAPI-SCHEMA-ENCOUNTER-SUMMARY', 'OPENAPI-SCHEMA-PATIENT-SUMMARY', 'OPENAPI-SCHEMA-DOCUMENT-SUMMARY', 'OPENAPI-SCHEMA-DOCUMENT-DETAIL',
  'OPENAPI-SCHEMA-TRANSCRIPT', 'OPENAPI-SCHEMA-AUDIO', 'OPENAPI-SCHEMA-LIST', 'OPENAPI-SCHEMA-ENCOUNTER-DETAIL', 'OPENAPI-SCHEMA-ERROR',
  'OPENAPI-SCHEMA-WEBHOOK-EVENT',
];

check({ id: 'openapi-schemas-agree', requirements: SCHEMA_REQUIREMENTS, title: 'every response schema (and the webhook event, where the document describes it) accepts exactly the sample bodies the contract\'s accepts, whatever its names and $ref layout', run: onDocument(async (_api, _scope, doc) => {
  report('The served schemas accept or reject otherwise than the contract', await schemaDiffs(judge(), await contractDereferenced(), await servedDereferenced(doc)));
}) });

check({ id: 'openapi-security-agrees', requirements: ['OPENAPI-SECURITY-SCHEME', 'AUTH-BEARER-REQUIRED'], title: 'the served document declares publicApiKeyBearer as HTTP bearer and every route requires it alone (bearerFormat and descriptions are free)', run: onDocument((_api, _scope, doc) => {
  report('The served security declarations differ from the specification', securityDiffs(contractDocument(), doc));
}) });

check({ id: 'openapi-reason-enum-agrees', requirements: ['ERR-REASON-CODE-ENUM', 'ERR-FIELD-REASON-CODE'], title: 'in every error response, reason_code accepts the 27 codes of §7.1 and nothing else (the served schema\'s own literals are tried too)', run: onDocument(async (_api, _scope, doc) => {
  report('The served reason_code differs from the specification', await reasonCodeDiffs(judge(), await contractDereferenced(), await servedDereferenced(doc)));
}) });

check({ id: 'openapi-schemas-closed', requirements: ['CONTRACT-CLOSED-RESPONSES', 'ERR-BODY-FIELDS'], title: 'every object of every response body (and of the webhook event, where described) rejects an undeclared property, however closedness is written', run: onDocument(async (_api, _scope, doc) => {
  report('The served document has open object schemas', await closednessDiffs(judge(), await contractDereferenced(), await servedDereferenced(doc)));
}) });
