// One subject per run: every catalog row names the subject(s) it binds, every check cites rows of its own
// subject, every must row of a subject has a check of that subject, and the report of a run is scoped to its
// subject (rows of other subjects are neither counted nor listed). The rules are pure functions, proven on
// planted mistakes first.
import { test, expect } from '@playwright/test';
import { allDeclaredChecks } from '../engine/declared-checks.ts';
import { loadCatalog } from '../reports/context.ts';
import { readNotTested } from '../reports/coverage.ts';
import { buildReport, SUBJECTS, subjectsOf, verdictLine, type Catalog, type OutcomesFile, type RunContext, type Subject } from '../reports/model.ts';
import { NOT_TESTED_PATH } from '../fixtures/paths.ts';

type Def = { id: string; requirements: readonly string[] };

/**
 * Mistakes of the subject bindings: rows naming no known subject, checks citing rows of another subject, must rows
 * of a subject without a check of it (except the rows no run can observe, `notObservable`: those have none).
 */
export function subjectGaps(catalog: Catalog, defs: Partial<Record<Subject, readonly Def[]>>, notObservable: Record<string, string> = {}): string[] {
  const out: string[] = [];
  const byId = new Map(catalog.requirements.map((r) => [r.id, r]));
  for (const r of catalog.requirements) {
    if (!Array.isArray(r.subjects) || r.subjects.length === 0 || r.subjects.some((s) => !SUBJECTS.includes(s))) out.push(`${r.id}: subjects must be a non-empty list of ${SUBJECTS.join(', ')}`);
  }
  for (const [subject, list] of Object.entries(defs) as [Subject, Def[]][]) {
    for (const d of list) for (const id of d.requirements) {
      const r = byId.get(id);
      if (r && !subjectsOf(r).includes(subject)) out.push(`${d.id} (${subject}) cites ${id}, which binds ${subjectsOf(r).join(', ')}`);
    }
    const cited = new Set(list.flatMap((d) => d.requirements));
    for (const r of catalog.requirements) if (r.level === 'must' && subjectsOf(r).includes(subject) && !cited.has(r.id) && !(r.id in notObservable)) out.push(`${r.id}: a must of the ${subject} without a ${subject} check`);
  }
  return out.sort();
}

const CATALOG = loadCatalog()!;

test('the subject rule catches a row without subjects, a check citing another subject, and an unchecked must', () => {
  const catalog: Catalog = {
    spec: 'x',
    requirements: [
      { id: 'A', section: '1', area: 'a', statement: 's', level: 'must', subjects: ['client'] },
      { id: 'B', section: '1', area: 'a', statement: 's', level: 'must', subjects: ['service'] },
      { id: 'C', section: '1', area: 'a', statement: 's', level: 'must', subjects: [] },
      { id: 'D', section: '1', area: 'a', statement: 's', level: 'must', subjects: ['client', 'service'] },
    ],
  };
  expect(subjectGaps(catalog, { client: [{ id: 'c1', requirements: ['A', 'B'] }] })).toEqual([
    'C: subjects must be a non-empty list of service, receiver, client',
    'D: a must of the client without a client check',
    'c1 (client) cites B, which binds service',
  ]);
  expect(subjectGaps(catalog, { client: [{ id: 'c1', requirements: ['A', 'D'] }] })).toEqual(['C: subjects must be a non-empty list of service, receiver, client']);
});

test('the catalog: every row binds a subject; every subject\'s declared checks cite their own subject and cover its must rows', async () => {
  const all = await allDeclaredChecks();
  const tables = Object.fromEntries(SUBJECTS.map((s) => [s, all.filter((d) => d.subject === s)]));
  for (const s of SUBJECTS) expect(tables[s].length, s).toBeGreaterThan(10);
  expect(subjectGaps(CATALOG, tables, readNotTested(NOT_TESTED_PATH))).toEqual([]);
  const count = (s: Subject) => CATALOG.requirements.filter((r) => r.level === 'must' && subjectsOf(r).includes(s)).length;
  expect(count('service')).toBeGreaterThan(200);
  expect(count('receiver')).toBeGreaterThan(10);
  expect(count('client')).toBeGreaterThan(10);
});

// not-tested.json (rows no run can observe) may bind any subject, the receiver's constant-time comparison
// included; that no check of any subject names such a row is tests/not-observable.spec.ts.

test('a report is scoped to its subject: rows of other subjects are neither counted nor listed, and the verdict line names it', () => {
  const outcomes: OutcomesFile = {
    startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z', runStatus: 'passed', seed: null,
    checks: [{ id: 'c1', requirements: ['A'], title: 't', outcome: 'pass', project: 'client', file: 'f', test: 'c1' }],
  };
  const catalog: Catalog = {
    spec: 'x',
    requirements: [
      { id: 'A', section: '1', area: 'a', statement: 's', level: 'must', subjects: ['client'] },
      { id: 'B', section: '1', area: 'a', statement: 's', level: 'must', subjects: ['service'] },
    ],
  };
  const ctx = (subject: Subject): RunContext => ({ subject, harnessVersion: 't', target: null, contractSha256: null, catalogSha256: null, catalog, waivers: [], mutation: null, today: '2026-01-01' });
  const client = buildReport(outcomes, ctx('client'));
  expect(client.run.subject).toBe('client');
  expect(client.requirements.map((r) => r.id)).toEqual(['A']);
  expect(client.verdict).toBe('conformant');
  expect(verdictLine(client)).toBe('conformance: CONFORMANT — client: verified 1 of 1 must requirements in scope');
  const service = buildReport(outcomes, ctx('service'));
  expect(service.requirements.map((r) => r.id)).toEqual(['B']);
  expect(service.verdict).toBe('incomplete');
  expect(verdictLine(service)).toMatch(/^conformance: INCOMPLETE — service: verified 0 of 1 /);
});

test("the sender's rows outside §6 are exactly the catalog's §8 and §9 service rows whose statement names the webhook", async () => {
  const { SENDER_ROWS_OUTSIDE_6, senderRequirementIds } = await import('../checks/sender/scope.ts');
  const catalog = loadCatalog()!;
  const about = catalog.requirements
    .filter((r) => (r.section === '8' || r.section === '9') && /webhook/i.test(r.statement) && (!r.subjects?.length || r.subjects.includes('service')))
    .map((r) => r.id);
  expect([...SENDER_ROWS_OUTSIDE_6].sort()).toEqual(about.sort());
  expect(senderRequirementIds(catalog)).toEqual(expect.arrayContaining([...SENDER_ROWS_OUTSIDE_6]));
});
