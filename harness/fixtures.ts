// Playwright fixtures for the conformance suites: the target (worker-scoped, from the profile named
// by CONFORMANCE_PROFILE) and `check`, which runs one named check against it and records its outcome.
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
import { test as base } from '@playwright/test';
import { setting, settingName } from './config.ts';
import { loadProfile } from './profile.ts';
import { Target, CheckApi } from './target.ts';
import { matchesPattern, runCheck, type CheckDef, type CheckRecord, type CheckScope } from './checks.ts';
import { registerSecret } from './redact.ts';
import type { Capture } from './webhook/sender-suite.ts';

export type CheckBody = (api: CheckApi, scope: CheckScope) => Promise<void>;


function mutantsFor(id: string, matrix: Record<string, string[]>): string[] {
  return Object.entries(matrix).filter(([, ps]) => ps.some((p) => matchesPattern(p, id))).map(([m]) => m);
}

/** How long the sender suite's listener holds a "timeout" answer past the sender's own timeout. */
export const SENDER_TIMEOUT_MS = 500;

interface WorkerFixtures {
  target: Target;
  mutantMatrix: Record<string, string[]> | undefined;
  /** Variant bundles (variant mode), or undefined. */
  variantBundles: Record<string, string[]> | undefined;
  /** The webhook listener of the sender suite (suites/webhook-sender.spec.ts). */
  capture: Capture;
}

// Every suite and property uses this one `test`, so all share one worker pool per project; the webhook
// fixtures are imported lazily, when a test asks for them. (A separate `test.extend` per file would
// give each file its own worker processes.)
export const test = base.extend<{ check: (def: CheckDef, body: CheckBody) => Promise<CheckRecord> }, WorkerFixtures>({
  capture: [
    async ({}, use) => {
      const { Capture } = await import('./webhook/sender-suite.ts');
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
  target: [
    async ({}, use) => {
      const file = setting('profile');
      if (!file) {
        throw new Error(setting('setupError') ?? `${settingName('profile')} is not set: run through \`conformance run\` or \`npm test\``);
      }
      await use(new Target(loadProfile(file)));
    },
    { scope: 'worker' },
  ],
  check: async ({ target, mutantMatrix, variantBundles }, use, testInfo) => {
    if (variantBundles) {
      const token = setting('switchboardToken');
      if (!token) throw new Error(`variant mode needs ${settingName('switchboardToken')}`);
      registerSecret(token);
      await use(async (def, body) => {
        let last: CheckRecord | undefined;
        for (const [variant, names] of Object.entries(variantBundles)) {
          const headers = { ...target.profile.requestHeaders, 'x-switchboard-token': token, 'x-switchboard-variant': names.join(',') };
          const varied = new Target({ ...target.profile, requestHeaders: headers });
          last = await runCheck(testInfo, def, (scope) => body(new CheckApi(varied, scope), scope), { variant });
        }
        return last ?? { ...def, outcome: 'not_verified', detail: 'no variant bundle given' };
      });
      return;
    }
    if (!mutantMatrix) {
      await use((def, body) => runCheck(testInfo, def, (scope) => body(new CheckApi(target, scope), scope)));
      return;
    }
    const token = setting('switchboardToken');
    if (!token) throw new Error(`mutant mode needs ${settingName('switchboardToken')}`);
    registerSecret(token);
    await use(async (def, body) => {
      let last: CheckRecord | undefined;
      for (const mutant of mutantsFor(def.id, mutantMatrix)) {
        const headers = { ...target.profile.requestHeaders, 'x-switchboard-token': token, 'x-switchboard-mutant': mutant };
        const mutated = new Target({ ...target.profile, requestHeaders: headers });
        last = await runCheck(testInfo, def, (scope) => body(new CheckApi(mutated, scope), scope), { mutant });
      }
      return last ?? { ...def, outcome: 'not_verified', detail: 'no mutant names this check' };
    });
  },
});

export { expect } from '@playwright/test';
