// The variant meta-suite, the dual of the mutant matrix: every variant of the reference switchboard (a
// legitimate choice the specification allows) is switched on, in bundles of compatible variants, and every
// conformance check must end without a `fail` against it. A check that fails on a variant is stricter than the
// specification. The result goes to <out>/variants.json for the reports.
import { test, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../cli/reference-process.ts';
import { VARIANTS } from '../reference-impl/variants.ts';
import { failsOf, makeBundles, serviceVariants, summarize, type Bundles } from './variants/bundles.ts';

const root = path.resolve(import.meta.dirname, '..');
const playwrightCli = path.join(root, 'node_modules/@playwright/test/cli.js');
const outDir = process.env.CONFORMANCE_OUT ?? path.join(root, 'reports/out');

interface Collected { id: string; outcome: string; variant?: string; detail?: string }

const names = serviceVariants();
const bundles: Bundles = makeBundles(names, VARIANTS, process.env.CONFORMANCE_VARIANTS_SINGLE === '1');
const bundlesOf = (variant: string) => Object.entries(bundles).filter(([, vs]) => vs.includes(variant)).map(([b]) => b);

function runChild(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [playwrightCli, ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test.describe.configure({ mode: 'serial' });

let outcomes: Collected[] = [];
let ref: ReferenceHandle | undefined;
let childLog = '';
let seconds = 0;

test.beforeAll(async () => {
  test.setTimeout(900_000);
  let profile = process.env.CONFORMANCE_PROFILE;
  let token = process.env.CONFORMANCE_SWITCHBOARD_TOKEN;
  if (!profile || !token) {
    ref = await startReference();
    profile = ref.profilePath;
    token = ref.switchboardToken;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-variants-'));
  const setFile = path.join(work, 'variants.json');
  fs.writeFileSync(setFile, JSON.stringify(bundles));
  const started = Date.now();
  const res = await runChild(['test', '-c', 'tests/variants/playwright.variants.config.ts'], {
    CONFORMANCE_PROFILE: profile, CONFORMANCE_SWITCHBOARD_TOKEN: token, CONFORMANCE_VARIANTS_SET: setFile, CONFORMANCE_OUT: work,
  });
  seconds = Math.round((Date.now() - started) / 1000);
  childLog = `${res.stdout.slice(-3000)}\n${res.stderr.slice(-3000)}`;
  const file = path.join(work, 'outcomes.json');
  outcomes = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')).checks as Collected[]) : [];
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

for (const variant of names) {
  test(`variant ${variant} fails no check`, async () => {
    const ran = outcomes.filter((o) => o.variant !== undefined && bundlesOf(variant).includes(o.variant));
    expect(ran.length, `no check ran with variant ${variant} (${seconds} s)\n${childLog}`).toBeGreaterThan(0);
    const failing = failingChecks(variant);
    const list = failing.map((o) => `${o.id} [${o.variant}]: ${(o.detail ?? '').slice(0, 400)}`).join('\n');
    expect(failing.length, `checks that fail a conformant target with ${variant} on (bundle ${bundlesOf(variant).join(', ')}: ${bundles[bundlesOf(variant)[0]].join(', ')}):\n${list}`).toBe(0);
  });
}
