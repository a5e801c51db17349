// The variant meta-suite, the dual of the mutant matrix: every variant of the reference switchboard (a
// legitimate choice the specification allows) is switched on, in bundles of compatible variants, and every
// conformance check must end without a `fail` against it. A check that fails on a variant is stricter than the
// specification. The result goes to <out>/variants.json for the reports.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import type { ReferenceHandle } from '../engine/reference/process.ts';
import { VARIANTS } from '../reference-switchboard/variants.ts';
import { bundleProfiles, failsOf, makeBundles, serviceVariants, summarize, type Bundles } from './variants/bundles.ts';
import { setting } from '../engine/config.ts';
import { listCheckIds, OUT_DIR as outDir, runMetaChild, sandbox, type Collected } from './helpers/meta-suite.ts';
import { loadCatalog } from '../reports/context.ts';

const names = serviceVariants();
const bundles: Bundles = makeBundles(names, VARIANTS, setting('variantsSingle') === '1');
const bundlesOf = (variant: string) => Object.entries(bundles).filter(([, vs]) => vs.includes(variant)).map(([b]) => b);

test.describe.configure({ mode: 'serial' });

let outcomes: Collected[] = [];
let ref: ReferenceHandle | undefined;
let childLog = '';
let seconds = 0;

test.beforeAll(async () => {
  test.setTimeout(900_000);
  const box = await sandbox();
  ref = box.ref;
  const started = Date.now();
  ({ outcomes, log: childLog } = await runMetaChild('tests/variants/playwright.variants.config.ts', box, 'variantsSet', bundles, 'cec-variants-', { variantsProfiles: bundleProfiles(bundles) }));
  seconds = Math.round((Date.now() - started) / 1000);
  // Written before any test judges, so a serial run that stops at the first failing variant still reports all.
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'variants.json'), JSON.stringify({ ...summarize(names, bundles, outcomes), variants: names, bundles, seconds }, null, 2));
});

test.afterAll(async () => {
  await ref?.stop();
});

const failingChecks = (variant: string): Collected[] => failsOf(variant, bundles, outcomes);

test('every variant names the clause that allows it and why', () => {
  for (const [name, v] of Object.entries(VARIANTS) as [string, { area: string; clause: string; justification: string; excludes?: readonly string[] }][]) {
    expect(v.area.trim(), `${name}: area`).not.toBe('');
    expect(v.clause.trim(), `${name}: clause`).not.toBe('');
    expect(v.justification.trim().length, `${name}: justification`).toBeGreaterThan(10);
    for (const other of v.excludes ?? []) expect(Object.hasOwn(VARIANTS, other), `${name} excludes an unknown variant ${other}`).toBe(true);
  }
});

test('every variant sits in a bundle without a variant it excludes; variants.json is written', () => {
  for (const [bundle, vs] of Object.entries(bundles)) {
    for (const a of vs) {
      const ex: readonly string[] = (VARIANTS as Record<string, { excludes?: readonly string[] }>)[a].excludes ?? [];
      expect(vs.filter((b) => ex.includes(b)), `${bundle} holds ${a} with a variant it excludes`).toEqual([]);
    }
  }
  for (const name of names) expect(bundlesOf(name).length, `${name} is in no bundle`).toBeGreaterThan(0);
  expect(fs.existsSync(path.join(outDir, 'variants.json'))).toBe(true);
  expect(outcomes.length, `the child run recorded no outcomes\n${childLog}`).toBeGreaterThan(0);
});

// "Fails no check" means something only if the checks ran: every check of the run, under every bundle (a batch
// the child skipped, a case its selection lost, would otherwise pass here unseen).
test('every conformance check ran under every variant bundle', async () => {
  const ids = await listCheckIds();
  expect(ids.length).toBeGreaterThan(100);
  const missing: string[] = [];
  for (const bundle of Object.keys(bundles)) {
    const ran = new Set(outcomes.filter((o) => o.variant === bundle).map((o) => o.id));
    const lost = ids.filter((id) => !ran.has(id));
    if (lost.length > 0) missing.push(`${bundle}: ${lost.length} of ${ids.length} never ran (${lost.slice(0, 8).join(', ')}${lost.length > 8 ? ', …' : ''})`);
  }
  expect(missing, childLog).toEqual([]);
});

for (const variant of names) {
  test(`variant ${variant} fails no check`, async () => {
    const ran = outcomes.filter((o) => o.variant !== undefined && bundlesOf(variant).includes(o.variant));
    expect(ran.length, `no check ran with variant ${variant} (${seconds} s)\n${childLog}`).toBeGreaterThan(0);
    const failing = failingChecks(variant);
    const list = failing.map((o) => `${o.id} [${o.variant}]: ${(o.detail ?? '').slice(0, 400)}`).join('\n');
    expect(failing.length, `checks that fail a conformant target with ${variant} on (bundle ${bundlesOf(variant).join(', ')}: ${bundles[bundlesOf(variant)[0]].join(', ')}):\n${list}`).toBe(0);
  });
}

// A conformant choice must not cost a verdict either: a must requirement that some check of the bundle judges
// must be verified (a pass, or a warning) under every bundle, or a service making the choice would read
// INCOMPLETE for something it does right.
const MUST = new Set((loadCatalog()?.requirements ?? []).filter((r) => r.level === 'must').map((r) => r.id));

test('no variant bundle leaves a must requirement unverified that its checks judge', () => {
  expect(MUST.size).toBeGreaterThan(0);
  const unverified: string[] = [];
  for (const bundle of Object.keys(bundles)) {
    const verified = new Set<string>();
    const judged = new Set<string>();
    for (const o of outcomes.filter((x) => x.variant === bundle)) {
      for (const r of o.requirements ?? []) {
        if (!MUST.has(r)) continue;
        judged.add(r);
        if (o.outcome === 'pass' || o.outcome === 'warning') verified.add(r);
      }
    }
    for (const r of judged) if (!verified.has(r)) unverified.push(`${bundle}: ${r} (${outcomes.filter((x) => x.variant === bundle && (x.requirements ?? []).includes(r)).map((x) => `${x.id} ${x.outcome}`).join(', ')})`);
  }
  expect(unverified).toEqual([]);
});
