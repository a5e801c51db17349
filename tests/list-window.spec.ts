// The whole-list checks judged on a bounded date window (observe/list-window.ts) stay able to fail and unable
// to fail a conformant target. The seeded organization holds about 130 encounters, below the default bound, so
// the ordinary meta-suites walk it whole; here the bound is set to 40 (CONFORMANCE_LIST_WINDOW), which makes
// every list and date-window check find and walk a window of the newest (and oldest) encounters instead:
// - against the reference, none of them fails, and their walks carry the window's bound;
// - against every list mutant, the checks the mutant matrix names among them still fail.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { loadMatrix, matches, type Matrix } from './mutants/matrix.ts';
import type { ReferenceHandle } from '../engine/reference/process.ts';
import { settingName } from '../engine/config.ts';
import { runMetaChild, type Collected } from './helpers/meta-suite.ts';
import { startReference } from '../engine/reference/process.ts';
import { runCli } from './helpers/cli-process.ts';
import { VARIANTS } from '../reference-switchboard/variants.ts';
import { makeBundles, serviceVariants, type Bundles } from './variants/bundles.ts';

const WINDOWED = /^(list-(sort|tie-breaker|order|start-at-inclusive|end-at-exclusive|total-(same|equals)|walk|items-own|excludes-other)|date-window-)/;

test.describe.configure({ mode: 'serial' });

let ref: ReferenceHandle | undefined;
let box: { profile: string; token: string };

test.beforeAll(async () => {
  test.setTimeout(120_000);
  // A reference of its own: the enclosing run's sandbox is shared with tests that make it send webhooks and
  // switch mutants meanwhile, and a bound of 40 makes the windows sensitive to any encounter added meanwhile.
  ref = await startReference();
  box = { profile: ref.profilePath, token: ref.switchboardToken! };
});

test.afterAll(async () => {
  await ref?.stop();
});

test('with --list-window 40 the list and date-window checks walk bounded windows and pass on the reference', async () => {
  test.setTimeout(300_000);
  const out = `reports/out/list-window-${process.pid}`;
  const r = await runCli(['run', '--profile', box.profile, '--grep', 'checks/service/(list|date-windows)', '--list-window', '40', '--out', out], { timeoutMs: 240_000 });
  const report = JSON.parse(fs.readFileSync(`${out}/conformance.json`, 'utf8')) as { checks: { id: string; outcome: string; evidence?: { request: { target: string } }[] }[] };
  const mine = report.checks.filter((c) => WINDOWED.test(c.id));
  expect(mine.length, r.stdout + r.stderr).toBeGreaterThan(15);
  expect(mine.filter((c) => c.outcome === 'fail').map((c) => c.id), r.stdout + r.stderr).toEqual([]);
  expect(mine.filter((c) => c.outcome === 'not_verified').map((c) => c.id)).toEqual([]);
  // The ordering checks walked the window, not the whole list: their list requests carry start_at.
  const walked = report.checks.find((c) => c.id === 'list-sort-asc-by-created-at');
  expect(walked?.evidence?.length).toBeGreaterThan(0);
  expect(walked!.evidence!.every((e) => e.request.target.includes('start_at='))).toBe(true);
});

test('with a bound of 40, every list mutant is still caught by the windowed checks the matrix names', async () => {
  test.setTimeout(600_000);
  const full = await loadMatrix();
  const matrix: Matrix = {};
  for (const [mutant, patterns] of Object.entries(full)) {
    const windowed = patterns.filter((p) => WINDOWED.test(p));
    if (windowed.length > 0) matrix[mutant] = windowed;
  }
  expect(Object.keys(matrix).length).toBeGreaterThan(10);
  process.env[settingName('listWindow')] = '40';
  let outcomes: Collected[] = [];
  let log = '';
  try {
    ({ outcomes, log } = await runMetaChild('tests/mutants/playwright.mutants.config.ts', box, 'mutantsMatrix', matrix, 'cec-list-window-'));
  } finally {
    delete process.env[settingName('listWindow')];
  }
  for (const [mutant, patterns] of Object.entries(matrix)) {
    const mine = outcomes.filter((o) => o.mutant === mutant);
    for (const p of patterns) {
      const hit = mine.filter((o) => matches(p, o.id));
      expect(hit.length, `no check matching ${p} ran against mutant ${mutant}\n${log}`).toBeGreaterThan(0);
      for (const o of hit) expect(o.outcome, `${o.id} should fail against mutant ${mutant} on a window: ${o.detail ?? ''}`).toBe('fail');
    }
  }
});

test('with a bound of 40, no variant of the switchboard fails a windowed check', async () => {
  test.setTimeout(600_000);
  const bundles: Bundles = makeBundles(serviceVariants(), VARIANTS, false);
  const env = { [settingName('listWindow')]: '40', [settingName('grep')]: 'checks/service/(list|date-windows)\\.ts' };
  Object.assign(process.env, env);
  let outcomes: Collected[] = [];
  let log = '';
  try {
    ({ outcomes, log } = await runMetaChild('tests/variants/playwright.variants.config.ts', box, 'variantsSet', bundles, 'cec-list-window-variants-'));
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
  }
  const mine = outcomes.filter((o) => WINDOWED.test(o.id));
  expect(mine.length, log).toBeGreaterThan(15 * Object.keys(bundles).length - 1);
  expect(mine.filter((o) => o.outcome === 'fail').map((o) => `${o.variant}: ${o.id}: ${o.detail ?? ''}`)).toEqual([]);
});
