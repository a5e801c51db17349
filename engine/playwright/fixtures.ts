// Playwright fixtures for the conformance suites: the target (worker-scoped, from the profile named
// by CONFORMANCE_PROFILE) and `checker`, which runs one named check against it and records its outcome; the
// registry of cases (`suite`) and the declaration of the run's Playwright tests (`declareRun`).
//
// A suite declares its cases with the `test` that `suite(import.meta.filename)` returns; the selection (--grep,
// --shard) keeps or drops each case as it registers, and engine/playwright/run.spec.ts, the conformance project's one test
// file, calls `declareRun`, which declares the tests the run's plan lists and runs each test's groups of cases
// (the plan, the batches, the selection and the claims: engine/planner.ts).
//
// Mutant mode (used only by the meta-suite against the reference sandbox): when
// CONFORMANCE_MUTANTS_MATRIX names a matrix file, `check` runs the check once per mutant whose
// patterns name it, each time with the switchboard headers that switch that mutant on, and records
// every outcome tagged with the mutant. One test, one worker, many mutants.
//
// Variant mode (the dual, used only by tests/variants.spec.ts): when CONFORMANCE_VARIANTS_SET names a JSON file
// of variant bundles ({ "<bundle>": ["variant", ...] }), `check` runs every check once per bundle with the
// switchboard headers that switch the bundle's variants on, and records each outcome tagged with the bundle.
import fs from 'node:fs';
import * as playwrightTest from '@playwright/test';
import { setting, settingName } from '../config.ts';
import { loadProfile } from '../../profile/profile.ts';
import { Target, CheckApi } from '../../observe/target.ts';
import { matchesPattern, recordCheck } from '../evaluate.ts';
import { NotVerified, type CheckDef, type CheckRecord, type CheckScope } from '../../record/record.ts';
import { DEFAULT_COMMAND_TIMEOUT_MS, describeEnd, flip } from '../../observe/command.ts';
import { offFailed, onFailed, plannedSwitches, switchOf } from '../switched.ts';
import { registerSecret } from '../../record/redact.ts';
import { waitForReady } from '../ready.ts';
import { registered } from '../declare.ts';
import { applyPlan, runPlan, trustedProfile } from '../plan.ts';
import { runBreaker } from '../../observe/breaker.ts';
import { claimBatch, planRun, runGroups, type Checker } from '../planner.ts';
import type { Capture } from '../../observe/capture.ts';

function mutantsFor(id: string, matrix: Record<string, string[]>): string[] {
  return Object.entries(matrix).filter(([, ps]) => ps.some((p) => matchesPattern(p, id))).map(([m]) => m);
}

/** The plan of this worker's run (engine/plan.ts), read once. */
const PLAN = runPlan();

/** How long the sender suite's listener holds a "timeout" answer past the sender's own timeout. */
export const SENDER_TIMEOUT_MS = 500;

interface WorkerFixtures {
  target: Target;
  mutantMatrix: Record<string, string[]> | undefined;
  /** Variant bundles (variant mode), or undefined. */
  variantBundles: Record<string, string[]> | undefined;
  /** Variant mode: what each bundle's variants declare in the profile (a header word), by bundle. */
  variantProfiles: Record<string, { webhook?: Record<string, unknown> }>;
  /** The webhook listener of the sender suite (engine/playwright/sender.ts). */
  capture: Capture;
}

interface BatchFixtures {
  checker: Checker;
}

// The suites need none of the browser fixtures `@playwright/test`'s `test` brings (the in-process Playwright
// driver, browser options, trace recording and context configuration: auto fixtures, set up and torn down as
// steps, each with a stack capture, for every test). Its fixture-less root, `_baseTest`, is what Playwright's own
// component-testing packages extend; exported (and typed) by the pinned @playwright/test, with `test` as the
// fallback should a later version drop it.
const base: typeof playwrightTest._baseTest = playwrightTest._baseTest ?? playwrightTest.test;

// One `base.extend` for every suite and property, so all share one worker pool per project; the webhook
// fixtures are imported lazily, when a batch asks for them. (A separate `test.extend` per file would
// give each file its own worker processes.)
const fixtures = base.extend<BatchFixtures, WorkerFixtures>({
  capture: [
    async ({}, use) => {
      const { Capture } = await import('../../observe/capture.ts');
      // A target in a container reaches the harness through the host's gateway, not its loopback.
      const callbackHost = setting('callbackHost');
      const capture = new Capture({ holdMs: SENDER_TIMEOUT_MS + 1000, ...(callbackHost ? { host: '0.0.0.0', advertiseHost: callbackHost } : {}) });
      await capture.listen();
      await use(capture);
      await capture.close();
    },
    { scope: 'worker' },
  ],
  mutantMatrix: [
    async ({}, use) => {
      const file = setting('mutantsMatrix');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string[]>) : undefined);
    },
    { scope: 'worker' },
  ],
  variantBundles: [
    async ({}, use) => {
      const file = setting('variantsSet');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string[]>) : undefined);
    },
    { scope: 'worker' },
  ],
  variantProfiles: [
    async ({}, use) => {
      const file = setting('variantsProfiles');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { webhook?: Record<string, unknown> }>) : {});
    },
    { scope: 'worker' },
  ],
  target: [
    async ({}, use) => {
      const file = setting('profile');
      if (!file) {
        throw new Error(setting('setupError') ?? `${settingName('profile')} is not set: run through \`conformance run\` or \`npm test\``);
      }
      // A reference `conformance run` is starting meanwhile: its profile is there once it is ready.
      const ready = setting('waitReady');
      if (ready) await waitForReady(ready);
      await use(new Target(loadProfile(file, process.env, trustedProfile()), applyPlan(PLAN), [], PLAN.target));
    },
    { scope: 'worker' },
  ],
  checker: async ({ target, mutantMatrix, variantBundles, variantProfiles }, use) => {
    // Meta-suites: every check once per variant bundle, or once per mutant that names it, each with the
    // switchboard headers that switch it on; otherwise once, against the profile's target.
    const token = setting('switchboardToken');
    // One target per switch setting for the worker, as a run has one: the checks of a mutant share their reads as
    // they would against a real target, so a defect that sharing could hide shows here.
    let switchedTargets = SWITCHED.get(target);
    if (!switchedTargets) SWITCHED.set(target, (switchedTargets = new Map()));
    const runs = (def: CheckDef): { tag: { mutant?: string; variant?: string }; target: Target }[] => {
      const switched = (headers: Record<string, string>, declared: { webhook?: Record<string, unknown> } = {}) => {
        const key = JSON.stringify([headers, declared]);
        let t = switchedTargets.get(key);
        if (!t) {
          t = new Target({
            ...target.profile,
            requestHeaders: { ...target.profile.requestHeaders, 'x-switchboard-token': token!, ...headers },
            // What a service making the bundle's choices declares in its profile (the sender's header word).
            ...(declared.webhook ? { webhook: { ...target.profile.webhook, ...declared.webhook } } : {}),
          }, runBreaker(PLAN.breakerFile), [], PLAN.target);
          switchedTargets.set(key, t);
        }
        return t;
      };
      if (variantBundles) return Object.entries(variantBundles).map(([variant, names]) => ({ tag: { variant }, target: switched({ 'x-switchboard-variant': names.join(',') }, variantProfiles[variant]) }));
      if (mutantMatrix) return mutantsFor(def.id, mutantMatrix).map((mutant) => ({ tag: { mutant }, target: switched({ 'x-switchboard-mutant': mutant }) }));
      return [{ tag: {}, target }];
    };
    if (variantBundles || mutantMatrix) {
      if (!token) throw new Error(`${variantBundles ? 'variant' : 'mutant'} mode needs ${settingName('switchboardToken')}`);
      registerSecret(token);
    }
    await use((testInfo, caseTitle, sink, caseFile) => async (def, body) => {
      let last: CheckRecord | undefined;
      for (const r of runs(def)) {
        const recorded = await recordCheck(testInfo, def, (scope) => body(new CheckApi(r.target, scope), scope), { ...r.tag, case: caseTitle, ...(caseFile ? { file: caseFile } : {}) });
        sink(recorded);
        last = recorded.rec;
      }
      return last ?? { ...def, outcome: 'not_verified', detail: variantBundles ? 'no variant bundle given' : 'no mutant names this check' };
    });
  },
});

/** The switched targets of a meta-suite's worker, by base target and switch setting. */
const SWITCHED = new WeakMap<Target, Map<string, Target>>();

/** Declares the run's Playwright tests (planRun) from the cases the loaded suite files registered. */
export function declareRun(): void {
  // The checks of a condition switched on and off by a command run in the switched phase (declareSwitched), alone.
  const switches = plannedSwitches();
  for (const t of planRun(registered.filter((c) => switchOf(c.title, switches) === undefined))) {
    if (t.capture) fixtures(t.title, async ({ checker, capture }, testInfo) => runGroups(t.groups, checker, capture, testInfo, t.solo));
    else {
      fixtures(t.title, async ({ checker }, testInfo) => {
        if (t.claim !== undefined && !claimBatch(t.claim, true)) {
          testInfo.annotations.push({ type: 'batch', description: `its cases ran in an earlier test of this run, while that test waited` });
          return;
        }
        await runGroups(t.groups, checker, undefined, testInfo, t.solo, t.spare);
      });
    }
  }
}

/**
 * Declares the switched phase's tests (engine/playwright/switched.spec.ts, project `conformance-switched`, run after every other
 * check): one per condition the profile gives as a command, which switches it on, runs the checks that need it
 * against a target on which it holds for every request, and switches it off, always.
 */
export function declareSwitched(): void {
  const switches = plannedSwitches();
  for (const f of switches) {
    const cases = registered.filter((c) => switchOf(c.title, switches) === f);
    if (cases.length === 0) continue;
    fixtures(`switched ${f} (${cases.length} checks)`, async ({ target }, testInfo) => {
      const cmd = target.profile.faults![f]!.command!;
      const file = setting('profile')!;
      testInfo.setTimeout(testInfo.timeout + 2 * (cmd.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS));
      const on = await flip('on', cmd, target.profile.baseUrl, file, process.env);
      testInfo.annotations.push({ type: 'switch', description: `${f} on: ${on.code === 0 ? 'done' : describeEnd(on)} in ${on.durationMs} ms` });
      const switched = new Target(target.profile, target.breaker, [f], target.plan);
      const checker: Checker = (info, caseTitle, sink, caseFile) => async (def, body) => {
        const run = on.code === 0 ? (scope: CheckScope) => body(new CheckApi(switched, scope), scope) : () => Promise.reject(new NotVerified(onFailed(f, on), `faults.${f}`));
        const recorded = await recordCheck(info, def, run, { case: caseTitle, ...(caseFile ? { file: caseFile } : {}) });
        sink(recorded);
        return recorded.rec;
      };
      try {
        await runGroups([{ cases, lanes: 'default' }], checker, undefined, testInfo, false);
      } finally {
        const off = await flip('off', cmd, target.profile.baseUrl, file, process.env);
        testInfo.annotations.push({ type: 'switch', description: `${f} off: ${off.code === 0 ? 'done' : describeEnd(off)} in ${off.durationMs} ms` });
        if (off.code !== 0) throw new Error(offFailed(f, off));
      }
    });
  }
}

export { expect } from '@playwright/test';
