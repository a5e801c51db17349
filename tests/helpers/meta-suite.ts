// What the two meta-suites (tests/mutants.spec.ts, tests/variants.spec.ts) share: the sandbox they switch
// entries on (the enclosing run's, or a reference started here), and one child Playwright run of the
// conformance checks whose outcomes.json they then judge. The judging stays in each suite.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../../engine/reference/process.ts';
import { setting, settingName } from '../../engine/config.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const PLAYWRIGHT_CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

/** Where the meta-suite writes its score (mutation.json, variants.json) for the reports. */
export const OUT_DIR = setting('out') ?? path.join(ROOT, 'reports/out');

/** One outcome of the child run, tagged with the switchboard entry that was on. */
export interface Collected { id: string; outcome: string; requirements?: string[]; mutant?: string; variant?: string; detail?: string }

export function runPlaywrightChild(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PLAYWRIGHT_CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The enclosing sandbox (profile and token in the environment), or a reference started here (`ref` to stop). */
export async function sandbox(): Promise<{ profile: string; token: string; ref?: ReferenceHandle }> {
  const profile = setting('profile');
  const token = setting('switchboardToken');
  if (profile && token) return { profile, token };
  const ref = await startReference();
  return { profile: ref.profilePath, token: ref.switchboardToken!, ref };
}

/**
 * Runs the conformance checks once under a meta-suite config with its switchboard file (`key` names the
 * setting that carries it), and returns the tagged outcomes and the tail of the child's output.
 */
/**
 * The seed every property draws with against a mutant, unless --seed (CONFORMANCE_SEED) is given: a property
 * draws at random, and against a mutant whose defect few draws touch (surrounding whitespace: about one run in a
 * thousand draws none in 100 cases) a proof that depends on the run's seed fails now and then. With one seed the
 * proof is the same every time, and replayable. Variants keep the run's own seed: there a draw that fails a
 * legitimate choice is a finding, whatever seed found it.
 */
export const MUTANT_SEED = 20261127;

export async function runMetaChild(config: string, box: { profile: string; token: string }, key: 'mutantsMatrix' | 'variantsSet', data: unknown, prefix: string, extra: Partial<Record<'variantsProfiles', unknown>> = {}): Promise<{ outcomes: Collected[]; log: string }> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const file = path.join(work, `${key}.json`);
  fs.writeFileSync(file, JSON.stringify(data));
  const env: NodeJS.ProcessEnv = { [settingName('profile')]: box.profile, [settingName('switchboardToken')]: box.token, [settingName(key)]: file, [settingName('out')]: work };
  if (key === 'mutantsMatrix' && setting('seed') === undefined) env[settingName('seed')] = String(MUTANT_SEED);
  for (const [k, v] of Object.entries(extra) as ['variantsProfiles', unknown][]) {
    const f = path.join(work, `${k}.json`);
    fs.writeFileSync(f, JSON.stringify(v));
    env[settingName(k)] = f;
  }
  const res = await runPlaywrightChild(['test', '-c', config], env);
  const out = path.join(work, 'outcomes.json');
  const outcomes = fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')).checks as Collected[]) : [];
  return { outcomes, log: `${res.stdout.slice(-3000)}\n${res.stderr.slice(-3000)}` };
}

/** Every check id of the conformance suites and target-facing properties: by convention, case titles. */
export async function listCheckIds(): Promise<string[]> {
  // A runner test runs a batch of cases (engine/planner.ts): the cases themselves are what the suites declare
  // while the runner lists them (CONFORMANCE_CASES_OUT); their titles are the check ids.
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cec-cases-')), 'cases.tsv');
  await runPlaywrightChild(['test', '--list', '--project=conformance'], { CONFORMANCE_PROFILE: '/dev/null', CONFORMANCE_CASES_OUT: file });
  const ids = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t')[1]);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return [...new Set(ids)].sort();
}
