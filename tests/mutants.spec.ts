// The mutant meta-suite: every mutant of the reference switchboard is switched on in turn and the
// checks the matrix names for it must fail; every conformance check must be named by some mutant.
// The score (caught / total), survivors and unproven checks go to <out>/mutation.json for the reports.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { loadMatrix, matches, type Matrix } from './mutants/matrix.ts';
import type { ReferenceHandle } from '../engine/reference/process.ts';
import { MUTANTS } from '../reference-switchboard/mutants.ts';
import { listCheckIds, OUT_DIR as outDir, runMetaChild, sandbox, type Collected } from './helpers/meta-suite.ts';

const matrix: Matrix = await loadMatrix();

test.describe.configure({ mode: 'serial' });

let outcomes: Collected[] = [];
let ref: ReferenceHandle | undefined;
let childLog = '';

test.beforeAll(async () => {
  test.setTimeout(600_000);
  const box = await sandbox();
  ref = box.ref;
  ({ outcomes, log: childLog } = await runMetaChild('tests/mutants/playwright.mutants.config.ts', box, 'mutantsMatrix', matrix, 'cec-mutants-'));
});

test.afterAll(async () => {
  await ref?.stop();
});

for (const [mutant, patterns] of Object.entries(matrix)) {
  test(`mutant ${mutant} is caught by the checks it names`, async () => {
    const mine = outcomes.filter((o) => o.mutant === mutant);
    for (const p of patterns) {
      const hit = mine.filter((o) => matches(p, o.id));
      expect(hit.length, `no check matching ${p} ran against mutant ${mutant}\n${childLog}`).toBeGreaterThan(0);
      for (const o of hit) expect(o.outcome, `${o.id} should fail against mutant ${mutant}: ${o.detail ?? ''}`).toBe('fail');
    }
  });
}

test('every mutant of the switchboard is in the matrix, and nothing else is', () => {
  expect(Object.keys(matrix).sort()).toEqual(Object.keys(MUTANTS).sort());
});

test('every conformance check is shown to fail against at least one mutant; mutation.json is written', async () => {
  const ids = await listCheckIds();
  expect(ids.length).toBeGreaterThan(0);
  const named = Object.values(matrix).flat();
  // Receiver checks judge a partner's receiver, which no service mutant can reach: they are proven
  // by the deliberately broken receivers of tests/webhook-receiver-suite.spec.ts instead.
  const provenElsewhere = (id: string) => id.startsWith('webhook-receiver-');
  const unproven = ids.filter((id) => !provenElsewhere(id) && !named.some((p) => matches(p, id)));
  const caught = Object.keys(matrix).filter((m) => outcomes.some((o) => o.mutant === m && o.outcome === 'fail'));
  const survivors = Object.keys(MUTANTS).filter((m) => !caught.includes(m));
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'mutation.json'), JSON.stringify({ total: Object.keys(MUTANTS).length, caught: caught.length, score: caught.length / Math.max(1, Object.keys(MUTANTS).length), survivors, unproven }, null, 2));
  expect(unproven, 'checks that no mutant is expected to fail').toEqual([]);
  expect(survivors, 'mutants no check caught').toEqual([]);
});
