// The meaning judges of the served OpenAPI document (judge/openapi-meaning.ts) on fabricated documents:
// the contract itself and every rewrite the specification allows (the reference's OpenAPI variants, alone and
// all together) give no difference; each drift from what the specification fixes is found by the judge meant
// for it, with a detail that names it.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import {
  agreement, closednessDiffs, dereference, infoVersionDiffs, isJsonMediaType, judgingContract, openapiVersionDiffs, operationNameDiffs, operationsByRoute,
  parameterDiffs, PARSER_OPTIONS, pathDiffs, reasonCodeDiffs, responsePairs, samplesFor, schemaDiffs, SchemaJudge, securityDiffs, statusDiffs, type Json, type JudgingContract,
} from '../judge/openapi-meaning.ts';
import { CONTRACT_PATH } from '../judge/contract.ts';
import { applyOpenapiVariants, OPENAPI_VARIANTS } from '../reference-switchboard/served-contract.ts';
import { VARIANTS, type VariantName } from '../reference-switchboard/variants.ts';
import { ruleFor } from '../reference-switchboard/overrides.ts';
import type { MutantName } from '../reference-switchboard/mutants.ts';

/**
 * Every openapi variant, but those under which `mutant` changes nothing a body can show: a drift of the shared error
 * schema's reason enum is refused anyway where each error response pins its own reasons.
 */
const MASKED_BY: Record<string, string[]> = { 'openapi-reason-enum-drift': ['openapi-errors-pinned-per-response'] };
const unmasked = (mutant: string): string[] => OPENAPI_VARIANTS.filter((v) => !(MASKED_BY[mutant] ?? []).includes(v));
import { MATRIX as CONTRACT_MATRIX } from './mutants/matrix/contract.ts';

const CONTRACT = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as Json;
const LIST = '/external/v1/encounters';
const ENC = '/external/v1/encounters/{encounter_id}';
const AUDIO = '/external/v1/encounters/{encounter_id}/documents/{document_id}/audio';
const DOC = '/external/v1/encounters/{encounter_id}/documents/{document_id}';

type Judged = Record<'version' | 'info' | 'valid' | 'paths' | 'operations' | 'security' | 'statuses' | 'parameters' | 'schemas' | 'closed' | 'reasons', string[]>;

let contractDeref: Json;
let judging: JudgingContract;
test.beforeAll(async () => {
  contractDeref = await dereference(CONTRACT);
  judging = await judgingContract(CONTRACT);
});

/** Every judge on one served document (as the suite runs them). */
async function judgeAll(served: Json): Promise<Judged> {
  const judge = new SchemaJudge();
  let valid: string[] = [];
  try {
    await SwaggerParser.validate(structuredClone(served) as any, PARSER_OPTIONS as any);
  } catch (e) {
    valid = [(e as Error).message.split('\n')[0]!];
  }
  let deref: Json | undefined;
  let derefError: string[] = [];
  try {
    deref = await dereference(served);
  } catch (e) {
    derefError = [`cannot be dereferenced: ${(e as Error).message}`];
  }
  const withDeref = async (f: (d: Json) => string[] | Promise<string[]>) => (deref ? f(deref) : derefError);
  return {
    version: openapiVersionDiffs(served),
    info: infoVersionDiffs(served),
    valid,
    paths: pathDiffs(CONTRACT, served),
    operations: operationNameDiffs(CONTRACT, served),
    security: securityDiffs(CONTRACT, served),
    statuses: statusDiffs(CONTRACT, served),
    parameters: await withDeref((d) => parameterDiffs(judge, judging, d)),
    schemas: await withDeref((d) => schemaDiffs(judge, judging, d)),
    closed: await withDeref((d) => closednessDiffs(judge, judging, d)),
    reasons: await withDeref((d) => reasonCodeDiffs(judge, judging, d)),
  };
}

const CLEAN: Judged = { version: [], info: [], valid: [], paths: [], operations: [], security: [], statuses: [], parameters: [], schemas: [], closed: [], reasons: [] };

function drift(f: (d: Json) => void): Json {
  const copy = structuredClone(CONTRACT);
  f(copy);
  return copy;
}

test.describe('media types', () => {
  for (const ct of ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.oai.openapi+json;version=3.1.0', 'application/problem+json', ' application/json ;q=1']) {
    test(`${JSON.stringify(ct)} is JSON`, () => expect(isJsonMediaType(ct)).toBe(true));
  }
  for (const ct of ['text/plain', 'text/json', 'application/jsonx', 'application/xml', '*/*', '', undefined]) {
    test(`${JSON.stringify(ct)} is not JSON`, () => expect(isJsonMediaType(ct)).toBe(false));
  }
});

test.describe('a rewrite with the same meaning gives no difference', () => {
  test('the contract judged against itself', async () => {
    expect(await judgeAll(CONTRACT)).toEqual(CLEAN);
  });

  test('every openapi variant of the switchboard is implemented by served-contract.ts, and nothing else', () => {
    const declared = Object.entries(VARIANTS as Record<string, { area: string }>).filter(([, v]) => v.area === 'openapi').map(([k]) => k).sort();
    expect(declared).toEqual([...OPENAPI_VARIANTS].sort());
    expect(declared.length).toBeGreaterThanOrEqual(8);
  });

  for (const v of OPENAPI_VARIANTS) {
    test(`variant ${v}`, async () => {
      const served = applyOpenapiVariants(structuredClone(CONTRACT), new Set([v]));
      expect(await judgeAll(served)).toEqual(CLEAN);
    });
  }

  test('every variant at once', async () => {
    const served = applyOpenapiVariants(structuredClone(CONTRACT), new Set(OPENAPI_VARIANTS));
    // The rewrite really differs in spelling: no component schemas, other names, other paths.
    expect(served.components.schemas).toBeUndefined();
    expect(Object.keys(served.paths)).toContain('/encounters');
    expect(await judgeAll(served)).toEqual(CLEAN);
  });

  test('a 4XX range and a default response document the statuses they cover', async () => {
    const served = drift((d) => {
      const r = d.paths[ENC].get.responses;
      r['4XX'] = r['400'];
      for (const s of ['400', '401', '403', '404']) delete r[s];
      r.default = { description: 'Anything else.' };
    });
    const j = await judgeAll(served);
    expect(j.statuses).toEqual([]);
    expect(j.schemas).toEqual([]);
  });

  test('free text narrowed the way the spec leaves open is not a difference: audio_url as a URI, lengths, an enum of status values', async () => {
    const served = drift((d) => {
      d.components.schemas.PublicDocumentAudioResponse.properties.audio_url.format = 'uri';
      d.components.schemas.PublicTranscriptTurn.properties.text.maxLength = 20000;
      d.components.schemas.PublicEncounterSummary.properties.encounter_id.minLength = 1;
      d.components.schemas.PublicEncounterSummary.properties.status = { type: ['string', 'null'], enum: ['open', 'signed', 'completed', null] };
    });
    const j = await judgeAll(served);
    expect(j.schemas).toEqual([]);
    expect(j.closed).toEqual([]);
  });

  test('a free-text refinement does not hide a real drift beside it: audio_url as a URI with expires_at open to any string', async () => {
    const served = drift((d) => {
      d.components.schemas.PublicDocumentAudioResponse.properties.audio_url.format = 'uri';
      delete d.components.schemas.PublicDocumentAudioResponse.properties.expires_at.format;
    });
    expect((await judgeAll(served)).schemas.join('\n')).toMatch(/accepts \/expires_at = "not-a-date", which the contract rejects/);
  });

  test('a server URL with variables carries the base path (their defaults are used)', async () => {
    const served = drift((d) => {
      d.servers = [{ url: '{scheme}://api.example.test/{base}', variables: { scheme: { default: 'https', enum: ['https'] }, base: { default: 'external/v1' } } }];
      d.paths = Object.fromEntries(Object.entries(d.paths).map(([p, item]) => [p.replace('/external/v1', ''), item]));
    });
    expect(await judgeAll(served)).toEqual(CLEAN);
  });

  test('a narrower documented range of a response value (limit 1..100 in the list body) is not a difference', async () => {
    const served = drift((d) => Object.assign(d.components.schemas.PublicEncounterListResponse.properties.limit, { minimum: 1, maximum: 100 }));
    expect((await judgeAll(served)).schemas).toEqual([]);
  });
});

test.describe('a drift from what the specification fixes is found', () => {
  const cases: { name: string; judge: keyof Judged; detail: RegExp; f: (d: Json) => void }[] = [
    // the drifts of the reference's openapi-* mutants
    { name: 'openapi 3.0.3', judge: 'version', detail: /openapi "3\.0\.3"/, f: (d) => (d.openapi = '3.0.3') },
    { name: 'info.version 1.0.0', judge: 'info', detail: /info\.version "1\.0\.0"/, f: (d) => (d.info.version = '1.0.0') },
    { name: 'a dangling $ref', judge: 'schemas', detail: /cannot be dereferenced/, f: (d) => (d.components.schemas.PublicEncounterDetailResponse.properties.encounter = { $ref: '#/components/schemas/PublicEncounter' }) },
    { name: 'a dangling $ref (validity)', judge: 'valid', detail: /PublicEncounter|resolve|Error/i, f: (d) => (d.components.schemas.PublicEncounterDetailResponse.properties.encounter = { $ref: '#/components/schemas/PublicEncounter' }) },
    { name: 'the audio route missing', judge: 'paths', detail: /GET \/external\/v1\/encounters\/\{encounter_id\}\/documents\/\{document_id\}\/audio is not described/, f: (d) => delete d.paths[AUDIO] },
    { name: 'getPublicEncounter renamed', judge: 'operations', detail: /operationId "getEncounter", the specification names it getPublicEncounter/, f: (d) => (d.paths[ENC].get.operationId = 'getEncounter') },
    { name: 'a 500 documented on the list route', judge: 'statuses', detail: /GET \/external\/v1\/encounters 500: documented, but §4 gives this route no such status/, f: (d) => (d.paths[LIST].get.responses['500'] = structuredClone(d.paths[LIST].get.responses['503'])) },
    { name: 'rate_limited added to the reason enum', judge: 'reasons', detail: /accepts \/reason_code = "rate_limited", which the contract rejects/, f: (d) => d.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.push('rate_limited') },
    { name: 'rate_limited added to the reason enum (schemas)', judge: 'schemas', detail: /rate_limited/, f: (d) => d.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.push('rate_limited') },
    { name: 'the bearer scheme as basic', judge: 'security', detail: /scheme "basic", not bearer/, f: (d) => (d.components.securitySchemes.publicApiKeyBearer.scheme = 'basic') },
    { name: 'limit maximum 200', judge: 'parameters', detail: /parameter limit: the served schema accepts 101, which the contract rejects/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'limit').schema.maximum = 200) },
    { name: 'PublicEncounterSummary open', judge: 'closed', detail: /\/items\/0 with an undeclared property/, f: (d) => delete d.components.schemas.PublicEncounterSummary.additionalProperties },
    { name: 'PublicEncounterSummary open (schemas)', judge: 'schemas', detail: /undeclared property/, f: (d) => delete d.components.schemas.PublicEncounterSummary.additionalProperties },
    // further drifts, one per thing the specification fixes
    { name: 'a reason code dropped', judge: 'reasons', detail: /rejects \/reason_code = "expired_key", which the contract accepts/, f: (d) => (d.components.schemas.PublicApiErrorResponse.properties.reason_code.enum = d.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.filter((c: string) => c !== 'expired_key')) },
    { name: 'field no longer required in the error body', judge: 'schemas', detail: /accepts \/field left out, which the contract rejects/, f: (d) => (d.components.schemas.PublicApiErrorResponse.required = ['error', 'reason_code', 'message']) },
    { name: 'documents made required in the encounter summary', judge: 'schemas', detail: /rejects instance .*which the contract accepts/, f: (d) => d.components.schemas.PublicEncounterSummary.required.push('documents') },
    { name: 'status no longer nullable', judge: 'schemas', detail: /rejects instance .*which the contract accepts \(the served schema: \/(encounter|items\/0)\/status must be string\)/, f: (d) => (d.components.schemas.PublicEncounterSummary.properties.status = { type: 'string' }) },
    { name: 'nullable written the OpenAPI 3.0 way (nullable: true means nothing in 3.1)', judge: 'schemas', detail: /rejects instance .*which the contract accepts \(the served schema: \/(encounter|items\/0)\/status must be string\)/, f: (d) => (d.components.schemas.PublicEncounterSummary.properties.status = { type: 'string', nullable: true }) },
    { name: 'patient no longer nullable (the null branch of anyOf dropped)', judge: 'schemas', detail: /rejects instance .*which the contract accepts \(the served schema: \/(encounter|items\/0)\/patient must be object\)/, f: (d) => (d.components.schemas.PublicEncounterSummary.properties.patient = { $ref: '#/components/schemas/PublicPatientSummary' }) },
    { name: 'an encounter_type value dropped', judge: 'schemas', detail: /encounter_type = "checklist"/, f: (d) => d.components.schemas.PublicEncounterSummary.properties.encounter_type.enum.splice(4, 1) },
    { name: 'the ambient variant of document detail dropped', judge: 'schemas', detail: /ambient_transcript/, f: (d) => d.components.schemas.PublicDocumentDetailResponse.properties.document.oneOf.pop() },
    { name: 'the clinical-summary nulls extended to ambient summaries', judge: 'schemas', detail: /rejects .*which the contract accepts/, f: (d) => (d.components.schemas.PublicEncounterDocumentSummary.if.properties.schema_type = { enum: ['document', 'ambient_transcript'] }) },
    { name: 'content.text dropped from a closed content', judge: 'schemas', detail: /rejects .*which the contract accepts \(the served schema: \/document\/content must NOT have additional properties\)/, f: (d) => delete d.components.schemas.PublicClinicalDocumentDetail.properties.content.properties.text },
    { name: 'content.text no longer nullable', judge: 'schemas', detail: /rejects .*which the contract accepts \(the served schema: \/document\/content\/text must be string\)/, f: (d) => (d.components.schemas.PublicClinicalDocumentDetail.properties.content.properties.text.type = 'string') },
    { name: 'content open', judge: 'closed', detail: /\/document\/content with an undeclared property/, f: (d) => delete d.components.schemas.PublicClinicalDocumentDetail.properties.content.additionalProperties },
    { name: 'start_at documented with Z only', judge: 'parameters', detail: /start_at: the served schema rejects "2026-01-02T03:04:05\+05:30", which the contract accepts/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'start_at').schema.pattern = 'Z$') },
    { name: 'created_at loses its date-time format', judge: 'schemas', detail: /created_at = "not-a-date"/, f: (d) => delete d.components.schemas.PublicEncounterSummary.properties.created_at.format },
    { name: 'transcript turns open', judge: 'closed', detail: /\/transcript\/turns\/0 with an undeclared property/, f: (d) => delete d.components.schemas.PublicTranscriptTurn.additionalProperties },
    { name: 'the webhook event open (when described)', judge: 'closed', detail: /webhook recording\.transcript_ready/, f: (d) => delete d.components.schemas.RecordingTranscriptReadyWebhookEvent.additionalProperties },
    { name: 'the only webhook under another name, its event open', judge: 'closed', detail: /webhook recording\.transcript_ready POST application\/json: the served schema accepts \(root\) with an undeclared property/, f: (d) => { d.webhooks = { transcriptReady: d.webhooks['recording.transcript_ready'] }; delete d.components.schemas.RecordingTranscriptReadyWebhookEvent.additionalProperties; } },
    { name: 'a server base path that moves the routes', judge: 'paths', detail: /GET \/external\/v1\/encounters is not described/, f: (d) => (d.servers = [{ url: 'https://api.example.test/v2' }]) },
    { name: 'a path renamed under /external/v1', judge: 'paths', detail: /GET \/external\/v1\/visits: the specification has no such route/, f: (d) => { d.paths['/external/v1/visits'] = d.paths[LIST]; delete d.paths[LIST]; } },
    { name: 'a DELETE documented on a route', judge: 'paths', detail: /DELETE \/external\/v1\/encounters\/\{encounter_id\}: §1 says no route creates, changes or deletes anything/, f: (d) => (d.paths[ENC].delete = { operationId: 'deleteEncounter', responses: { '204': { description: 'Deleted.' } } }) },
    { name: 'listPublicEncounters on another route', judge: 'operations', detail: /listPublicEncounters also names GET/, f: (d) => { d.paths[LIST].get.operationId = 'listAll'; d.paths[DOC].get.operationId = 'listPublicEncounters'; } },
    { name: 'the scheme under another name', judge: 'security', detail: /no security scheme named publicApiKeyBearer/, f: (d) => { d.components.securitySchemes.apiKey = d.components.securitySchemes.publicApiKeyBearer; delete d.components.securitySchemes.publicApiKeyBearer; walkSecurity(d, 'apiKey'); } },
    { name: 'an anonymous alternative on the list route', judge: 'security', detail: /empty security requirement/, f: (d) => d.paths[LIST].get.security.push({}) },
    { name: 'no security on the audio route', judge: 'security', detail: /requires no authentication/, f: (d) => (d.paths[AUDIO].get.security = []) },
    { name: 'a route status left out', judge: 'statuses', detail: /GET \/external\/v1\/encounters\/\{encounter_id\} 404: not documented/, f: (d) => delete d.paths[ENC].get.responses['404'] },
    { name: 'an error documented as text/plain only', judge: 'statuses', detail: /401: no JSON media type \(text\/plain\)/, f: (d) => (d.paths[LIST].get.responses['401'].content = { 'text/plain': { schema: { type: 'string' } } }) },
    { name: 'an XML alternative beside JSON', judge: 'statuses', detail: /non-JSON media type application\/xml/, f: (d) => (d.paths[LIST].get.responses['200'].content['application/xml'] = { schema: { type: 'object' } }) },
    { name: 'a 201 success', judge: 'statuses', detail: /201: documented, but §4/, f: (d) => (d.paths[LIST].get.responses['201'] = d.paths[LIST].get.responses['200']) },
    { name: 'an extra query parameter', judge: 'parameters', detail: /query parameter patient_id: the specification accepts no such key/, f: (d) => d.paths[LIST].get.parameters.push({ name: 'patient_id', in: 'query', schema: { type: 'string' } }) },
    { name: 'a query parameter on the encounter route', judge: 'parameters', detail: /\{encounter_id\} query parameter expand/, f: (d) => d.paths[ENC].get.parameters.push({ name: 'expand', in: 'query', schema: { type: 'string' } }) },
    { name: 'a required header', judge: 'parameters', detail: /header parameter X-Tenant: required/, f: (d) => d.paths[LIST].get.parameters.push({ name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }) },
    { name: 'limit required', judge: 'parameters', detail: /parameter limit: required true, the specification makes it false/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'limit').required = true) },
    { name: 'default limit 20', judge: 'parameters', detail: /parameter limit: default 20, the specification's default is 50/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'limit').schema.default = 20) },
    { name: 'offset minimum -1', judge: 'parameters', detail: /parameter offset: the served schema accepts -1/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'offset').schema.minimum = -1) },
    { name: 'sort_order takes ASC too', judge: 'parameters', detail: /sort_order: the served schema accepts "ASC"/, f: (d) => d.paths[LIST].get.parameters.find((p: Json) => p.name === 'sort_order').schema.enum.push('ASC') },
    { name: 'start_at without a format', judge: 'parameters', detail: /start_at: the served schema accepts "2026-01-02T03:04:05"/, f: (d) => delete d.paths[LIST].get.parameters.find((p: Json) => p.name === 'start_at').schema.format },
    { name: 'encounter_id as a uuid', judge: 'parameters', detail: /encounter_id: the served schema rejects "sample"/, f: (d) => (d.paths[ENC].get.parameters[0].schema.format = 'uuid') },
    { name: 'limit allowing an empty value', judge: 'parameters', detail: /allowEmptyValue true/, f: (d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'limit').allowEmptyValue = true) },
  ];

  for (const c of cases) {
    test(`${c.judge} › ${c.name}`, async () => {
      const j = await judgeAll(drift(c.f));
      expect(j[c.judge].join('\n')).toMatch(c.detail);
    });
  }

  test('a drift survives every rewrite: rate_limited under all variants at once is still found', async () => {
    // Every variant but the one that pins each error response's reasons: under it the shared enum's extra value is
    // refused by every response, so the document means what the contract means (the next test drifts a pinned one).
    const served = applyOpenapiVariants(drift((d) => d.components.schemas.PublicApiErrorResponse.properties.reason_code.enum.push('rate_limited')), new Set(unmasked('openapi-reason-enum-drift')));
    expect((await judgeAll(served)).reasons.join('\n')).toMatch(/rate_limited/);
  });

  test('error responses pinned per route and status agree; a reason left out of one of them, or another category, is found', async () => {
    const pinned = applyOpenapiVariants(structuredClone(CONTRACT), new Set(['openapi-errors-pinned-per-response']));
    expect(await judgeAll(pinned)).toEqual(CLEAN);
    const pinOf = (d: Json, status: string) => d.paths[LIST].get.responses[status].content['application/json'].schema.allOf[1].properties;
    const dropped = structuredClone(pinned);
    pinOf(dropped, '422').reason_code.enum = pinOf(dropped, '422').reason_code.enum.filter((r: string) => r !== 'invalid_sort');
    expect((await judgeAll(dropped)).reasons.join('\n')).toMatch(/422 application\/json: the served schema rejects .*invalid_sort/);
    const category = structuredClone(pinned);
    pinOf(category, '422').error.const = 'validation_failed';
    expect((await judgeAll(category)).schemas.join('\n')).toMatch(/422 application\/json: the served schema rejects/);
  });

  test('an open encounter summary under all variants at once (closedness written as unevaluatedProperties) is still found', async () => {
    const served = applyOpenapiVariants(drift((d) => delete d.components.schemas.PublicEncounterSummary.additionalProperties), new Set(OPENAPI_VARIANTS));
    expect((await judgeAll(served)).closed.length).toBeGreaterThan(0);
  });
});

// Judge only what the specification decides (judge/open-choices.ts): the catalog's open choices and the prose
// the body checks verify never count, either way; closedness is judged from closedness samples alone.
test.describe('open choices, prose and closedness', () => {
  const summary = (d: Json) => d.components.schemas.PublicEncounterDocumentSummary;
  const content = (d: Json) => d.components.schemas.PublicClinicalDocumentDetail.properties.content;

  test('the summary typed exactly as the §2.3 table (the nulls sentence not encoded), every object closed: no difference, and nothing open', async () => {
    const served = drift((d) => { delete summary(d).if; delete summary(d).then; });
    const j = await judgeAll(served);
    expect(j.schemas).toEqual([]);
    expect(j.closed).toEqual([]);
  });

  test('content with text optional, required, or both subfields required: no difference', async () => {
    for (const required of [undefined, ['text'], ['format'], ['format', 'text']]) {
      const served = drift((d) => (required ? (content(d).required = required) : delete content(d).required));
      expect(await judgeAll(served), JSON.stringify(required)).toEqual(CLEAN);
    }
  });

  test('a difference about nulls alone is an agreement difference, never evidence of an open object', async () => {
    // Every object closed; only the nullability of a summary's status differs (the false "open object schemas").
    const served = drift((d) => (summary(d).properties.status = { type: 'string' }));
    const j = await judgeAll(served);
    expect(j.schemas.join('\n')).toMatch(/status must be string/);
    expect(j.closed).toEqual([]);
  });

  test('the same nulls difference under every rewrite at once (closed by unevaluatedProperties, inlined, renamed): nothing open', async () => {
    const served = applyOpenapiVariants(drift((d) => (summary(d).properties.status = { type: 'string' })), new Set(OPENAPI_VARIANTS));
    const j = await judgeAll(served);
    expect(j.schemas.length).toBeGreaterThan(0);
    expect(j.closed).toEqual([]);
  });

  test('a really open schema fails closedness, also beside a nulls difference', async () => {
    const served = drift((d) => {
      summary(d).properties.status = { type: 'string' };
      delete d.components.schemas.PublicPatientSummary.additionalProperties;
    });
    const j = await judgeAll(served);
    expect(j.closed.join('\n')).toMatch(/\/patient with an undeclared property "x_undeclared_property", which the contract rejects \(the object is closed by §2\)/);
    expect(j.closed.join('\n')).not.toMatch(/status/);
  });

  test('an object opened by additionalProperties: true is found as surely as one without the keyword', async () => {
    const served = drift((d) => (content(d).additionalProperties = true));
    expect((await judgeAll(served)).closed.join('\n')).toMatch(/\/document\/content with an undeclared property/);
  });

  test('a documented 429 is free (LIMIT-RATE-LIMITS); a documented 500 is not', async () => {
    const with429 = drift((d) => (d.paths[LIST].get.responses['429'] = { description: 'Too many requests.', content: { 'application/json': { schema: { type: 'object' } } } }));
    expect(await judgeAll(with429)).toEqual(CLEAN);
    const with500 = drift((d) => (d.paths[LIST].get.responses['500'] = { description: 'Oops.', content: { 'application/json': { schema: { type: 'object' } } } }));
    expect((await judgeAll(with500)).statuses.join('\n')).toMatch(/500: documented, but §4/);
  });

  test('date parameters: open ISO forms are never judged, decided ones still are', async () => {
    const wholeSeconds = drift((d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'end_at').schema.pattern = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2})$'));
    expect((await judgeAll(wholeSeconds)).parameters).toEqual([]);
    const naive = drift((d) => (d.paths[LIST].get.parameters.find((p: Json) => p.name === 'end_at').schema = { type: 'string' }));
    expect((await judgeAll(naive)).parameters.join('\n')).toMatch(/end_at: the served schema accepts "2026-01-02T03:04:05", which the contract rejects/);
  });
});

// The reference's own openapi-* mutants, as it serves them (its servedContract point), alone and under every openapi
// variant at once: each check its matrix row names finds a difference, so the latitude of judge/open-choices.ts
// hides no mutant.
const JUDGE_OF: Record<string, keyof Judged> = {
  'openapi-version-3-1-0': 'version', 'openapi-info-version-v1': 'info', 'openapi-document-valid': 'valid', 'openapi-paths-agree': 'paths',
  'openapi-operations-agree': 'operations', 'openapi-parameters-agree': 'parameters', 'openapi-statuses-agree': 'statuses',
  'openapi-schemas-closed': 'closed', 'openapi-schemas-agree': 'schemas', 'openapi-reason-enum-agrees': 'reasons', 'openapi-security-agrees': 'security',
};
test.describe('the reference\'s openapi mutants are still caught', () => {
  const served = (mutant: string, variants: readonly string[]) => {
    const point = ruleFor({ mutant: mutant as MutantName, variants: new Set(variants as VariantName[]) })('servedContract', (d: unknown) => d);
    return point(structuredClone(CONTRACT)) as Json;
  };
  test('no mutant, every openapi variant chained as the reference chains them (one override each): no difference', async () => {
    const point = ruleFor({ mutant: null, variants: new Set(OPENAPI_VARIANTS as readonly VariantName[]) })('servedContract', (d: unknown) => d);
    expect(await judgeAll(point(structuredClone(CONTRACT)) as Json)).toEqual(CLEAN);
  });
  for (const [mutant, checks] of Object.entries(CONTRACT_MATRIX).filter(([m]) => m.startsWith('openapi-'))) {
    test(mutant, async () => {
      // A dangling $ref does not survive openapi-inlined-schemas (the rewrite has nothing to inline): that one alone.
      for (const variants of mutant === 'openapi-invalid' ? [[]] : [[], unmasked(mutant)]) {
        const j = await judgeAll(served(mutant, variants));
        for (const id of checks) expect(j[JUDGE_OF[id]!], `${mutant} under ${variants.length} variants: ${id}`).not.toEqual([]);
      }
    });
  }
});

test('an external $ref is never followed: the harness reads no file and fetches no URL the target names', async () => {
  const served = drift((d) => (d.components.schemas.PublicEncounterDetailResponse.properties.encounter = { $ref: '/etc/passwd#/x' }));
  expect(JSON.stringify(await dereference(served))).toContain('"$ref":"/etc/passwd#/x"');
  expect((await judgeAll(served)).schemas.join('\n')).toMatch(/the served schema cannot be compiled as JSON Schema 2020-12 \(can't resolve reference \/etc\/passwd#\/x/);
});

function walkSecurity(d: Json, name: string): void {
  for (const o of operationsByRoute(d).values()) o.op.security = [{ [name]: [] }];
}

test.describe('samples', () => {
  test('every object of a base instance gets an undeclared-property sample, and the contract rejects each', () => {
    const judge = new SchemaJudge();
    const schema = contractDeref.paths[LIST].get.responses['200'].content['application/json'].schema;
    const closed = samplesFor(schema).filter((s) => s.kind === 'closedness');
    const pointers = new Set(closed.map((s) => s.pointer));
    for (const p of ['', '/items/0', '/items/0/patient', '/items/0/documents/0']) expect(pointers).toContain(p);
    const v = judge.compile(schema);
    for (const s of closed) expect(v(s.value), s.label).toBe(false);
  });

  test('the bases include an instance the contract accepts for each document detail variant', () => {
    const judge = new SchemaJudge();
    const schema = contractDeref.paths[DOC].get.responses['200'].content['application/json'].schema;
    const v = judge.compile(schema);
    const accepted = samplesFor(schema).filter((s) => s.kind === 'base' && v(s.value)).map((s) => (s.value as Json).document.schema_type);
    expect(new Set(accepted)).toEqual(new Set(['document', 'ambient_transcript']));
  });

  test('agreement names the direction of each difference', () => {
    const judge = new SchemaJudge();
    const want = { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string', enum: ['x', 'y'] } } };
    expect(agreement(judge, want, want, 'w')).toEqual([]);
    expect(agreement(judge, want, { ...want, additionalProperties: true }, 'w').join('\n')).toMatch(/^w: the served schema accepts \(root\) with an undeclared property/m);
    expect(agreement(judge, want, { ...want, properties: { a: { type: 'string', enum: ['x'] } } }, 'w').join('\n')).toMatch(/rejects \/a = "y", which the contract accepts/);
  });

  test('a served schema equal to the contract once normalised agrees without sampling; one keyword apart is sampled in full', () => {
    let compiled = 0;
    class Counting extends SchemaJudge {
      override compile(schema: unknown) {
        compiled++;
        return super.compile(schema);
      }
    }
    const want = { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'integer', minimum: 1 } } };
    // The same schema, keys in another order, an annotation the judge drops (3.0's nullable), another object.
    const same = { properties: { a: { minimum: 1, type: 'integer' } }, required: ['a'], additionalProperties: false, type: 'object', $schema: 'https://json-schema.org/draft/2020-12/schema' };
    expect(agreement(new Counting(), want, same, 'w')).toEqual([]);
    expect(compiled).toBe(0);
    const open = { ...same, additionalProperties: true };
    expect(agreement(new Counting(), want, open, 'w').join('\n')).toMatch(/the served schema accepts \(root\) with an undeclared property/);
    expect(compiled).toBe(2);
  });
});

test.describe('compiling', () => {
  test('a judge compiles each distinct schema once: the same object, or another of the same normalised text, gets the one validator', () => {
    const judge = new SchemaJudge();
    const s = { type: 'object', additionalProperties: false, properties: { a: { type: 'string', format: 'date-time' } } };
    const v = judge.compile(s);
    expect(judge.compile(s)).toBe(v);
    expect(judge.compile(structuredClone(s))).toBe(v);
    // What the judge drops before compiling (a $schema, 3.0's nullable) makes no other schema.
    expect(judge.compile({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...structuredClone(s) })).toBe(v);
    // Another key order is another text, compiled apart (ajv reports its first error in key order); it judges alike.
    const w = judge.compile({ properties: structuredClone(s.properties), additionalProperties: false, type: 'object' });
    expect(w).not.toBe(v);
    for (const x of [{ a: '2026-01-02T03:04:05Z' }, { a: 'not-a-date' }, { b: 1 }, 7]) expect(w(x)).toBe(v(x));
    // Another judge compiles its own.
    expect(new SchemaJudge().compile(s)).not.toBe(v);
    // A schema that does not compile throws every time it is asked for.
    for (let i = 0; i < 2; i++) expect(() => judge.compile({ $ref: '#/nowhere' })).toThrow(/can't resolve reference/);
    // A value JSON would spell otherwise (undefined in an array reads as null) is never taken for the other: ajv
    // refuses this one, and so does the judge, after the other was compiled.
    expect(judge.compile({ enum: [null] })(null)).toBe(true);
    expect(() => judge.compile({ enum: [undefined] })).toThrow();
  });

  test('the category of a served 404 is looked for with the judge that compares the pairs, so each served schema is compiled once', () => {
    const seen = new Set<unknown>();
    class Recording extends SchemaJudge {
      override compile(schema: unknown) {
        seen.add(schema);
        return super.compile(schema);
      }
    }
    const pairs = responsePairs(judging, contractDeref, (status) => status === '404', new Recording());
    expect(pairs.length).toBeGreaterThan(0);
    for (const p of pairs) expect(seen.has(p.served), p.where).toBe(true);
  });
});
