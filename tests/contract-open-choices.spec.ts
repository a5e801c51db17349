// Judge only what the specification decides: walks the catalog (fixtures/requirements/requirements.json) and fails
// when an `unspecified` ruling is still enforced by a judging artefact: the body validator (judge/contract.ts,
// compiled from fixtures/contract/openapi.json) or the served-document judge (judge/openapi-meaning.ts, which
// judges between the narrow and wide readings of judge/open-choices.ts). Every ruling must be classified there;
// the body rulings' probes must be accepted; the parameter and status rulings must not be judged; the prose the
// contract encodes must still be verified on bodies while a served schema may leave it out.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { OPEN_RULINGS, PROSE_RULES, openParameterValue, openStatuses, type BodyProbe } from '../judge/open-choices.ts';
import { CONTRACT_PATH, formatErrors, validateAgainst } from '../judge/contract.ts';
import { dereference, judgingContract, parameterDiffs, schemaDiffs, closednessDiffs, SchemaJudge, statusDiffs, type Json, type JudgingContract } from '../judge/openapi-meaning.ts';
import { VARIANTS } from '../reference-switchboard/variants.ts';
import { OPENAPI_VARIANTS } from '../reference-switchboard/served-contract.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONTRACT = JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as Json;
const CATALOG = (JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/requirements/requirements.json'), 'utf8')) as { requirements: { id: string; level: string }[] }).requirements;
const LEVEL = new Map(CATALOG.map((r) => [r.id, r.level]));
const LIST = '/external/v1/encounters';

let judging: JudgingContract;
test.beforeAll(async () => {
  judging = await judgingContract(CONTRACT);
});

const bodyRulings = () => Object.entries(OPEN_RULINGS).flatMap(([id, r]) => (r.kind === 'body' ? r.probes.map((p) => ({ id, p })) : []));

/** Each open-choice body the given (dereferenced) contract rejects: an `unspecified` ruling it still enforces. */
function enforced(deref: Json, judge = new SchemaJudge()): string[] {
  const out: string[] = [];
  for (const { id, p } of bodyRulings()) {
    const v = judge.compile(deref.components.schemas[p.schema]);
    if (!v(p.body)) out.push(`${id} (${p.choice}): ${formatErrors(v.errors)}`);
  }
  return out;
}

test('every unspecified ruling of the catalog is classified in judge/open-choices.ts, and nothing else is', () => {
  const unspecified = CATALOG.filter((r) => r.level === 'unspecified').map((r) => r.id).sort();
  expect(unspecified.length).toBeGreaterThan(30);
  const unclassified = unspecified.filter((id) => !(id in OPEN_RULINGS));
  expect(unclassified, 'classify these rulings in judge/open-choices.ts (how do they bear on the contract?)').toEqual([]);
  const stale = Object.keys(OPEN_RULINGS).filter((id) => LEVEL.get(id) !== 'unspecified').map((id) => `${id}: ${LEVEL.get(id) ?? 'not in the catalog'}`);
  expect(stale, 'rulings classified as open that the catalog does not rule unspecified').toEqual([]);
  for (const [id, r] of Object.entries(OPEN_RULINGS)) expect(r.why.trim().length, id).toBeGreaterThan(10);
  // The prose the contract encodes is decided (must): only a served schema may leave it out.
  for (const id of Object.keys(PROSE_RULES)) expect(LEVEL.get(id), id).toBe('must');
});

test.describe('the body validator (fixtures/contract/openapi.json) enforces no unspecified ruling', () => {
  for (const { id, p } of bodyRulings()) {
    test(`${id}: ${p.choice}`, () => {
      expect(validateAgainst(p.schema, p.body), `${p.schema} rejects an open choice`).toBeUndefined();
    });
  }
});

test('the served-document judge enforces no unspecified ruling: its wide reading, and the contract itself, accept every open-choice body', async () => {
  expect(bodyRulings().length).toBeGreaterThan(15);
  expect(enforced(judging.contract)).toEqual([]);
  expect(enforced(judging.wide)).toEqual([]);
});

test('the walk fails on a contract that still enforces a ruling: content.text required again (the contract before this fix)', async () => {
  const strict = structuredClone(CONTRACT);
  strict.components.schemas.PublicClinicalDocumentDetail.properties.content.required = ['text'];
  const found = enforced(await dereference(strict));
  expect(found.join('\n')).toMatch(/^FIELD-CLINICAL-CONTENT-SUBFIELDS \(text absent\): \/document\/content must have required property 'text'/m);
  expect(found.every((f) => f.startsWith('FIELD-CLINICAL-CONTENT-SUBFIELDS'))).toBe(true);
  // And on one that gives every status a closed list of values (FIELD-STATUS-VALUES).
  const statuses = structuredClone(CONTRACT);
  statuses.components.schemas.PublicEncounterSummary.properties.status.enum = ['open', 'signed', null];
  expect(enforced(await dereference(statuses)).join('\n')).toMatch(/^FIELD-STATUS-VALUES \(a status no list names\)/m);
});

test('the narrow reading takes each open choice the narrowest way and still accepts what the specification decides', async () => {
  const judge = new SchemaJudge();
  const detail = judge.compile(judging.narrow.components.schemas.PublicDocumentDetailResponse);
  const clinical = { document_id: 'd', encounter_id: 'e', schema_type: 'document', created_at: '2026-01-02T03:04:05Z', updated_at: '2026-01-02T03:04:05Z' };
  expect(detail({ document: { ...clinical, content: { format: 'markdown', text: null } } })).toBe(true);
  expect(detail({ document: { ...clinical, content: { text: 'x' } } })).toBe(false);
  const summary = judge.compile(judging.narrow.components.schemas.PublicEncounterDocumentSummary);
  expect(summary({ document_id: 'd', schema_type: 'billing', status: null })).toBe(true);
  expect(summary({ document_id: 'd', schema_type: 'billing', status: 'open' })).toBe(false);
  expect(summary({ document_id: 'd', schema_type: 'ambient_transcript', status: 'open', workflow_variant: 'ambient', audio_duration_seconds: 3 })).toBe(true);
  // Every body the narrow reading accepts, the contract accepts (it lies between the two readings).
  const probes: BodyProbe[] = bodyRulings().map(({ p }) => p);
  for (const p of probes) if (judge.compile(judging.narrow.components.schemas[p.schema])(p.body)) expect(validateAgainst(p.schema, p.body), p.choice).toBeUndefined();
});

test.describe('prose the contract encodes is verified on bodies and may be left out of a served schema', () => {
  for (const [id, rule] of Object.entries(PROSE_RULES)) {
    test(id, async () => {
      expect(validateAgainst(rule.violation.schema, rule.violation.body), 'the body validator must still reject a body that breaks the sentence').toMatch(/must be null/);
      // The checks that validate bodies with the fixture cite the requirement.
      const suites = fs.readdirSync(path.join(ROOT, 'checks/service')).filter((f) => f.endsWith('.ts')).map((f) => fs.readFileSync(path.join(ROOT, 'checks/service', f), 'utf8')).join('\n');
      expect(suites).toContain(`'${id}'`);
      const served = structuredClone(CONTRACT);
      rule.wide(served);
      const deref = await dereference(served);
      const judge = new SchemaJudge();
      expect(await schemaDiffs(judge, judging, deref)).toEqual([]);
      expect(await closednessDiffs(judge, judging, deref)).toEqual([]);
      const variant = OPENAPI_VARIANTS.find((v) => (VARIANTS as Record<string, { clause: string }>)[v].clause.includes(id));
      expect(variant, `an openapi variant of the switchboard leaves ${id} out`).toBeDefined();
    });
  }
});

test('each body ruling with a narrowest reading has an openapi variant that takes it, each prose rule one that leaves it out', () => {
  const clauses = OPENAPI_VARIANTS.map((v) => (VARIANTS as Record<string, { clause: string }>)[v].clause);
  for (const [id, r] of Object.entries(OPEN_RULINGS)) {
    if ((r.kind === 'body' && r.narrow) || r.kind === 'parameter' || r.kind === 'status') expect(clauses.some((c) => c.includes(id)), `${id} has no openapi variant`).toBe(true);
  }
});

test('parameter rulings: an open form is never judged, a decided form always is', async () => {
  for (const [id, r] of Object.entries(OPEN_RULINGS)) {
    if (r.kind !== 'parameter') continue;
    for (const p of r.parameters) {
      for (const v of r.examples) expect(openParameterValue(p, v), `${p}=${v}`).toBe(id);
      for (const v of ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05+05:30', '2026-01-02T03:04:05', '2026-01-02', 'not-a-date', 7]) expect(openParameterValue(p, v), `${p}=${v}`).toBeUndefined();
    }
  }
  const judge = new SchemaJudge();
  const withDates = async (schema: Json) => {
    const served = structuredClone(CONTRACT);
    for (const p of served.paths[LIST].get.parameters as Json[]) if (p.name === 'start_at' || p.name === 'end_at') p.schema = schema;
    return parameterDiffs(judge, judging, await dereference(served));
  };
  // Refusing every open form, or accepting every one, is no difference; accepting a naive date-time is.
  expect(await withDates({ type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2})$' })).toEqual([]);
  expect(await withDates({ type: 'string', pattern: '^\\d{4}-?\\d{2}-?\\d{2}[Tt ]\\d{2}(:?\\d{2}(:?\\d{2}([.,]\\d+)?)?)?([Zz]|[+-]\\d{2}(:?\\d{2})?)$' })).toEqual([]);
  expect((await withDates({ type: 'string' })).join('\n')).toMatch(/start_at: the served schema accepts "2026-01-02T03:04:05", which the contract rejects/);
});

test('status rulings: a documented open status is no difference', () => {
  const open = openStatuses();
  expect([...open.keys()]).toEqual(['429']);
  const served = structuredClone(CONTRACT);
  for (const item of Object.values(served.paths as Json)) for (const s of open.keys()) (item as Json).get.responses[s] = { description: 'Open.', content: { 'application/json': { schema: {} } } };
  expect(statusDiffs(CONTRACT, served)).toEqual([]);
});
