// The contract validators compiled from fixtures/contract/openapi.json: closed schemas reject extra
// properties, enums and discriminators hold, formats are checked, and the operation table is read
// from the document. The validators of our fixed schemas kept as code (fixtures/schema-code.ts) judge as compiling does.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { validateAgainst, schemaValidator, responseSchemaName, operations, operation, reasonCodeEnum, formatErrors, contractDocument, contractSchemaSet, type OperationId } from '../judge/contract.ts';
import { REASONS_BY_STATUS } from '../judge/assertions.ts';
import { dereference, samplesFor } from '../judge/openapi-meaning.ts';
import { fixedSchemas, keptCodeFolder, type FixedSchemas } from '../fixtures/schema-code.ts';
import { profileSchemaSet } from '../profile/profile.ts';

const PROFILE_SCHEMA = path.resolve(import.meta.dirname, '../fixtures/profiles/profile.schema.json');

const TS = '2025-03-04T05:06:07Z';

function errorBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: 'api_key_validation_failed', reason_code: 'invalid_limit', message: 'limit must be an integer between 1 and 100', field: 'limit', ...over };
}

function clinical(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { document_id: 'd1', encounter_id: 'e1', schema_type: 'document', content: { format: 'markdown', text: '# Note' }, created_at: TS, updated_at: TS, title: 'SOAP note', status: null, workflow_variant: null, ...over };
}

function ambient(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { document_id: 'd2', encounter_id: 'e1', schema_type: 'ambient_transcript', created_at: TS, updated_at: TS, title: null, status: 'final', workflow_variant: 'ambient', audio_duration_seconds: 312.5, ...over };
}

function encounter(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    encounter_id: 'e1',
    organization_id: 'o1',
    created_at: TS,
    updated_at: TS,
    date_of_service: null,
    encounter_type: 'ambient',
    status: 'completed',
    patient: { patient_id: 'p1', first_name: 'Ada', last_name: null, date_of_birth: '1980-02-29' },
    documents: [{ document_id: 'd1', schema_type: 'document', title: 'Note', status: null, workflow_variant: null, audio_duration_seconds: null }],
    ...over,
  };
}

test.describe('PublicApiErrorResponse', () => {
  test('a valid error body is accepted, with field a string or null', () => {
    expect(validateAgainst('PublicApiErrorResponse', errorBody())).toBeUndefined();
    expect(validateAgainst('PublicApiErrorResponse', errorBody({ field: null }))).toBeUndefined();
  });

  test('an extra property is rejected and named', () => {
    expect(validateAgainst('PublicApiErrorResponse', errorBody({ details: [] }))).toBe("(root) must NOT have additional properties 'details'");
  });

  test('the reason_code enum is exactly the 27 codes of the spec', () => {
    expect(reasonCodeEnum()).toHaveLength(27);
    expect(new Set(reasonCodeEnum()).size).toBe(27);
    expect([...reasonCodeEnum()].sort()).toEqual(Object.values(REASONS_BY_STATUS).flat().sort());
  });

  for (const bad of ['not_a_reason', 'INVALID_LIMIT', '']) {
    test(`a reason_code outside the enum is rejected: ${JSON.stringify(bad)}`, () => {
      expect(validateAgainst('PublicApiErrorResponse', errorBody({ reason_code: bad }))).toMatch(/^\/reason_code must be equal to one of the allowed values/);
    });
  }

  test('a missing field property is rejected (it is required, even when null)', () => {
    const body = errorBody();
    delete body.field;
    expect(validateAgainst('PublicApiErrorResponse', body)).toBe("(root) must have required property 'field'");
  });

  test('wrong types are rejected', () => {
    expect(validateAgainst('PublicApiErrorResponse', errorBody({ field: 1 }))).toMatch(/\/field must be string,null/);
    expect(validateAgainst('PublicApiErrorResponse', errorBody({ message: null }))).toMatch(/\/message must be string/);
    expect(validateAgainst('PublicApiErrorResponse', [])).toMatch(/must be object/);
  });
});

test.describe('PublicDocumentDetailResponse', () => {
  test('a valid clinical document is accepted (content.format may be omitted)', () => {
    expect(validateAgainst('PublicDocumentDetailResponse', { document: clinical() })).toBeUndefined();
    expect(validateAgainst('PublicDocumentDetailResponse', { document: clinical({ content: { text: null } }) })).toBeUndefined();
  });

  test('a valid ambient transcript document is accepted', () => {
    expect(validateAgainst('PublicDocumentDetailResponse', { document: ambient() })).toBeUndefined();
  });

  test('a wrong discriminator is rejected', () => {
    const out = validateAgainst('PublicDocumentDetailResponse', { document: { ...ambient(), schema_type: 'billing' } });
    expect(out).toMatch(/\/document .*schema_type/);
  });

  test('a missing discriminator is rejected', () => {
    const doc = ambient();
    delete doc.schema_type;
    expect(validateAgainst('PublicDocumentDetailResponse', { document: doc })).toBeDefined();
  });

  test('a clinical document with a non-null status is rejected', () => {
    expect(validateAgainst('PublicDocumentDetailResponse', { document: clinical({ status: 'final' }) })).toMatch(/\/document\/status must be null/);
    expect(validateAgainst('PublicDocumentDetailResponse', { document: clinical({ workflow_variant: 'ambient' }) })).toMatch(/\/document\/workflow_variant must be null/);
  });

  test('a clinical document without content is rejected; ambient-only fields on it are rejected', () => {
    const doc = clinical();
    delete doc.content;
    expect(validateAgainst('PublicDocumentDetailResponse', { document: doc })).toMatch(/required property 'content'/);
    expect(validateAgainst('PublicDocumentDetailResponse', { document: clinical({ audio_duration_seconds: 3 }) })).toMatch(/additional properties 'audio_duration_seconds'/);
  });

  test('an ambient document carrying content (transcript turns belong elsewhere) is rejected', () => {
    expect(validateAgainst('PublicDocumentDetailResponse', { document: ambient({ content: { text: 'x' } }) })).toMatch(/additional properties 'content'/);
  });

  test('an extra property on the wrapper is rejected', () => {
    expect(validateAgainst('PublicDocumentDetailResponse', { document: ambient(), encounter: {} })).toMatch(/additional properties 'encounter'/);
  });
});

test.describe('PublicEncounterSummary and friends', () => {
  test('a valid summary is accepted, including a minimal one', () => {
    expect(validateAgainst('PublicEncounterSummary', encounter())).toBeUndefined();
    expect(validateAgainst('PublicEncounterSummary', { encounter_id: 'e', organization_id: 'o', created_at: TS, updated_at: TS })).toBeUndefined();
  });

  test('an extra field is rejected and named', () => {
    expect(validateAgainst('PublicEncounterSummary', encounter({ internal_notes: 'x' }))).toBe("(root) must NOT have additional properties 'internal_notes'");
  });

  test('an extra field nested in the patient is rejected', () => {
    const e = encounter();
    (e.patient as Record<string, unknown>).ssn = '000-00-0000';
    expect(validateAgainst('PublicEncounterSummary', e)).toMatch(/\/patient must NOT have additional properties 'ssn'/);
  });

  for (const dob of ['01/02/1990', '1990-1-2', '1990-02-30', '1990-02-03T00:00:00Z', '19900203']) {
    test(`date_of_birth not YYYY-MM-DD is rejected: ${dob}`, () => {
      expect(validateAgainst('PublicPatientSummary', { patient_id: 'p', date_of_birth: dob })).toBe('/date_of_birth must match format "date"');
    });
  }

  test('date_of_birth null or a real date is accepted', () => {
    expect(validateAgainst('PublicPatientSummary', { patient_id: 'p', date_of_birth: null })).toBeUndefined();
    expect(validateAgainst('PublicPatientSummary', { patient_id: 'p', date_of_birth: '2000-02-29' })).toBeUndefined();
  });

  test('created_at must be a date-time; encounter_type must be in its enum', () => {
    expect(validateAgainst('PublicEncounterSummary', encounter({ created_at: '2025-03-04' }))).toMatch(/\/created_at must match format "date-time"/);
    expect(validateAgainst('PublicEncounterSummary', encounter({ encounter_type: 'telehealth' }))).toMatch(/\/encounter_type must be equal to one of the allowed values/);
    expect(validateAgainst('PublicEncounterSummary', encounter({ encounter_type: null }))).toBeUndefined();
  });

  test('a clinical document summary must carry null status (if/then)', () => {
    const e = encounter({ documents: [{ document_id: 'd', schema_type: 'document', status: 'final' }] });
    expect(validateAgainst('PublicEncounterSummary', e)).toMatch(/\/documents\/0\/status must be null/);
    const ok = encounter({ documents: [{ document_id: 'd', schema_type: 'ambient_transcript', status: 'final', workflow_variant: 'phone_call' }] });
    expect(validateAgainst('PublicEncounterSummary', ok)).toBeUndefined();
  });

  test('the list response is closed and requires total', () => {
    expect(validateAgainst('PublicEncounterListResponse', { items: [encounter()], limit: 50, offset: 0, total: 1 })).toBeUndefined();
    expect(validateAgainst('PublicEncounterListResponse', { items: [], limit: 50, offset: 0 })).toBe("(root) must have required property 'total'");
    expect(validateAgainst('PublicEncounterListResponse', { items: [], limit: 50, offset: 0, total: 0, next: null })).toMatch(/additional properties 'next'/);
  });
});

test('an unknown schema name throws', () => {
  expect(() => schemaValidator('NoSuchSchema')).toThrow(/NoSuchSchema is not in the contract/);
});

test.describe('responseSchemaName', () => {
  const documentedErrors: [OperationId, number][] = [
    ['listPublicEncounters', 400], ['listPublicEncounters', 401], ['listPublicEncounters', 403], ['listPublicEncounters', 422], ['listPublicEncounters', 503],
    ['getPublicEncounter', 404], ['getPublicEncounterDocumentAudio', 400], ['getPublicEncounterDocumentAudio', 503],
  ];
  for (const [op, status] of documentedErrors) {
    test(`${op} ${status} → PublicApiErrorResponse`, () => {
      expect(responseSchemaName(op, status)).toBe('PublicApiErrorResponse');
    });
  }

  test('the success schemas', () => {
    expect(responseSchemaName('listPublicEncounters', 200)).toBe('PublicEncounterListResponse');
    expect(responseSchemaName('getPublicEncounter', 200)).toBe('PublicEncounterDetailResponse');
    expect(responseSchemaName('getPublicEncounterDocument', 200)).toBe('PublicDocumentDetailResponse');
    expect(responseSchemaName('getPublicEncounterDocumentTranscript', 200)).toBe('PublicDocumentTranscriptResponse');
    expect(responseSchemaName('getPublicEncounterDocumentAudio', 200)).toBe('PublicDocumentAudioResponse');
  });

  test('an undocumented status → undefined', () => {
    expect(responseSchemaName('listPublicEncounters', 418)).toBeUndefined();
    expect(responseSchemaName('listPublicEncounters', 404)).toBeUndefined(); // the list route documents no 404
    expect(responseSchemaName('getPublicEncounter', 422)).toBeUndefined();
    expect(responseSchemaName('getPublicEncounter', 500)).toBeUndefined();
    expect(responseSchemaName('getPublicEncounter', 201)).toBeUndefined();
  });
});

test('operations() lists the five operations with their paths, scopes and route groups', () => {
  const ops = operations().map((o) => [o.operationId, o.path, o.scopes, o.routeGroup]);
  expect(ops).toEqual([
    ['listPublicEncounters', '/external/v1/encounters', ['encounters:read', 'patients:read', 'documents:read'], 'encounters'],
    ['getPublicEncounter', '/external/v1/encounters/{encounter_id}', ['encounters:read', 'patients:read', 'documents:read'], 'encounters'],
    ['getPublicEncounterDocument', '/external/v1/encounters/{encounter_id}/documents/{document_id}', ['encounters:read', 'documents:read'], 'documents'],
    ['getPublicEncounterDocumentTranscript', '/external/v1/encounters/{encounter_id}/documents/{document_id}/transcript', ['encounters:read', 'documents:read'], 'documents'],
    ['getPublicEncounterDocumentAudio', '/external/v1/encounters/{encounter_id}/documents/{document_id}/audio', ['encounters:read', 'documents:read', 'recordings:read'], 'documents'],
  ]);
  expect(operation('listPublicEncounters').queryParams).toEqual(['limit', 'offset', 'sort_order', 'start_at', 'end_at']);
  expect(operation('getPublicEncounter').queryParams).toEqual([]);
  expect(() => operation('nope' as OperationId)).toThrow(/not in the contract/);
});

test('every reason the contract lists under a status is in the oracle table for that status', () => {
  for (const op of operations()) {
    for (const [status, reasons] of Object.entries(op.reasons)) {
      for (const r of reasons) expect(REASONS_BY_STATUS[Number(status)], `${op.operationId} ${status} ${r}`).toContain(r);
      expect(responseSchemaName(op.operationId, Number(status)), `${op.operationId} ${status}`).toBe('PublicApiErrorResponse');
    }
  }
});

test('validators are compiled once: the same function object on every call', () => {
  const a = schemaValidator('PublicEncounterSummary');
  validateAgainst('PublicEncounterSummary', encounter());
  expect(schemaValidator('PublicEncounterSummary')).toBe(a);
  expect(schemaValidator('PublicApiErrorResponse')).not.toBe(a);
});

test('formatErrors is empty for no errors and joins several', () => {
  expect(formatErrors(null)).toBe('');
  const v = schemaValidator('PublicApiErrorResponse');
  expect(v({ error: 1, reason_code: 'x', message: 'm', field: null, extra: 1 })).toBe(false);
  const text = formatErrors(v.errors);
  expect(text.split('; ').length).toBeGreaterThanOrEqual(3);
  expect(text).toContain("'extra'");
});

// A run compiles the contract's schemas and the profile's schema without checking them against the JSON Schema
// 2020-12 meta-schema (judge/contract.ts, profile/profile.ts: validateSchema off, a quarter of a second per process):
// both are fixed files of the project, checked here instead.
test('the contract schemas and the profile schema are valid JSON Schema 2020-12 (the run does not check them again)', async () => {
  const fs = await import('node:fs');
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const { CONTRACT_PATH } = await import('../judge/contract.ts');
  const meta = new Ajv2020({ strict: false });
  const doc = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as { components: { schemas: Record<string, unknown> } };
  const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'contract#/$defs/')) as unknown;
  expect(meta.validateSchema({ $id: 'contract', $defs: defs }), meta.errorsText()).toBe(true);
  const profileSchema = JSON.parse(fs.readFileSync(new URL('../fixtures/profiles/profile.schema.json', import.meta.url), 'utf8')) as unknown;
  expect(meta.validateSchema(profileSchema as object), meta.errorsText()).toBe(true);
  // And a schema that is not one is refused by that check (the check can fail).
  expect(meta.validateSchema({ type: 'no-such-type' })).toBe(false);
});

// fixtures/schema-code.ts: the validators of the contract and of the profile's schema, kept as ajv's standalone code in
// this user's compile cache folder and loaded by later processes. The kept code must judge exactly as compiling does
// (verdict and errors, on every sample the OpenAPI judges make from the schema), and a file or folder someone else
// could have written is never loaded.
test.describe('kept code of the fixed schemas (fixtures/schema-code.ts)', () => {
  const made: string[] = [];
  const folder = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-kept-')); // mkdtemp: 0700, this user's
    made.push(dir);
    return dir;
  };
  test.afterAll(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });
  const errorsOf = (v: ValidateFunction) => JSON.stringify((v.errors ?? []).map(({ instancePath, keyword, params, message }) => ({ instancePath, keyword, params, message })));
  const kept = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.cjs'));

  /** Every sample of every named schema, judged by the loaded kept code and by a fresh compile alike. */
  function sameJudgements(set: FixedSchemas, dir: string, schemaOf: (name: string) => unknown, extra: unknown[] = []): number {
    const fromFile = fixedSchemas(set, dir);
    const compiled = fixedSchemas(set, undefined);
    let n = 0;
    for (const name of Object.keys(set.exports)) {
      const k = fromFile(name);
      const c = compiled(name);
      // Loaded, not compiled: ajv's own validators carry their schema environment, standalone code does not.
      expect((k as { schemaEnv?: unknown }).schemaEnv, name).toBeUndefined();
      expect((c as { schemaEnv?: unknown }).schemaEnv, name).toBeDefined();
      for (const value of [...samplesFor(schemaOf(name)).map((s) => s.value), ...extra]) {
        expect(k(value), `${name}: ${JSON.stringify(value).slice(0, 200)}`).toBe(c(value));
        expect(errorsOf(k), `${name}: ${JSON.stringify(value).slice(0, 200)}`).toBe(errorsOf(c));
        n++;
      }
    }
    return n;
  }

  test('the contract\'s kept code judges every sample as compiling does: the same verdict, the same errors', async () => {
    const dir = folder();
    const set = contractSchemaSet();
    fixedSchemas(set, dir)('PublicApiErrorResponse'); // compiles every validator of the set and keeps the code
    expect(kept(dir)).toHaveLength(1);
    expect(fs.statSync(path.join(dir, kept(dir)[0]!)).mode & 0o777).toBe(0o600);
    const deref = await dereference(contractDocument());
    expect(sameJudgements(set, dir, (name) => deref.components.schemas[name], [encounter(), errorBody(), { document: clinical() }, { document: ambient() }, null, [], 'x'])).toBeGreaterThan(5000);
  });

  test('the profile\'s kept code judges every sample and the example profiles as compiling does', async () => {
    const dir = folder();
    const set = profileSchemaSet();
    fixedSchemas(set, dir)('profile');
    const examples = fs.readdirSync(path.dirname(PROFILE_SCHEMA)).filter((f) => f.endsWith('.json') && f !== path.basename(PROFILE_SCHEMA)).map((f) => JSON.parse(fs.readFileSync(path.join(path.dirname(PROFILE_SCHEMA), f), 'utf8')) as unknown);
    expect(examples.length).toBeGreaterThan(0);
    const schema = JSON.parse(fs.readFileSync(PROFILE_SCHEMA, 'utf8')) as unknown;
    expect(sameJudgements(set, dir, () => schema, [...examples, {}, { name: 'x', baseUrl: 'http://x', credentials: { full: { key: 'k', keyEnv: 'K' } } }])).toBeGreaterThan(100);
  });

  test('a kept file others may write, or one that is not the code, is not loaded: the set is compiled and kept anew', () => {
    const dir = folder();
    const set = contractSchemaSet();
    fixedSchemas(set, dir)('PublicApiErrorResponse');
    const file = path.join(dir, kept(dir)[0]!);
    const check = () => {
      const v = fixedSchemas(set, dir)('PublicApiErrorResponse');
      expect((v as { schemaEnv?: unknown }).schemaEnv).toBeDefined(); // compiled, not loaded
      expect(v(errorBody())).toBe(true);
      expect(v(errorBody({ details: [] }))).toBe(false);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(kept(dir)).toEqual([path.basename(file)]);
    };
    fs.chmodSync(file, 0o666);
    check();
    fs.writeFileSync(file, 'module.exports = {};');
    check();
    fs.writeFileSync(file, 'this is not JavaScript (');
    check();
    // Another set (another option, another schema, another ajv) is another file, never the old one.
    fixedSchemas({ ...set, options: { ...set.options, allErrors: false } }, dir)('PublicApiErrorResponse');
    expect(kept(dir)).toHaveLength(2);
  });

  test('writing a kept file removes the files of the same set whose modules are gone (a temporary install), and no other', () => {
    const dir = folder();
    const gone = path.join(dir, 'contract-00000000000000000000000000000000.cjs');
    const here = path.join(dir, 'contract-11111111111111111111111111111111.cjs');
    const other = path.join(dir, 'profile-00000000000000000000000000000000.cjs');
    fs.writeFileSync(gone, `"use strict";const f = require(${JSON.stringify(path.join(dir, 'no-such-install', 'formats.js'))});`);
    fs.writeFileSync(here, `"use strict";const f = require(${JSON.stringify(PROFILE_SCHEMA)});`);
    fs.writeFileSync(other, `"use strict";const f = require(${JSON.stringify(path.join(dir, 'no-such-install', 'formats.js'))});`);
    fixedSchemas(contractSchemaSet(), dir)('PublicApiErrorResponse');
    expect(fs.existsSync(gone)).toBe(false);
    expect(fs.existsSync(here)).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
    expect(kept(dir)).toHaveLength(3);
  });

  test('the folder: none without a compile cache, none where others may write, else a subfolder closed to others', () => {
    expect(keptCodeFolder(undefined)).toBeUndefined();
    const open = folder();
    fs.chmodSync(open, 0o777);
    expect(keptCodeFolder(open)).toBeUndefined();
    const mine = folder();
    const sub = keptCodeFolder(mine)!;
    expect(sub).toBe(path.join(mine, 'ajv-standalone'));
    expect(fs.statSync(sub).mode & 0o777).toBe(0o700);
    fs.chmodSync(sub, 0o755);
    expect(keptCodeFolder(mine)).toBeUndefined();
  });

  test('without a folder, each validator is compiled when first asked for, once', () => {
    const get = fixedSchemas(contractSchemaSet(), undefined);
    expect(get('PublicEncounterSummary')).toBe(get('PublicEncounterSummary'));
    expect(() => get('NoSuchSchema')).toThrow(/no validator named NoSuchSchema/);
  });
});
