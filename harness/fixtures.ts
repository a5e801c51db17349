// Playwright fixtures for the conformance suites: the target (worker-scoped, from the profile named
// by CONFORMANCE_PROFILE) and `check`, which runs one named check against it and records its outcome.
// The worker option `mutant` (used only by the mutant meta-suite, against the reference sandbox) adds
// the switchboard headers that turn one deliberate non-conformance on for every request.
import { test as base } from '@playwright/test';
import { loadProfile } from './profile.ts';
import { Target, CheckApi } from './target.ts';
import { runCheck, type CheckDef, type CheckRecord, type CheckScope } from './checks.ts';
import { registerSecret } from './redact.ts';

export type CheckBody = (api: CheckApi, scope: CheckScope) => Promise<void>;

export const test = base.extend<{ check: (def: CheckDef, body: CheckBody) => Promise<CheckRecord> }, { target: Target; mutant: string | undefined }>({
  mutant: [undefined, { scope: 'worker', option: true }],
  target: [
    async ({ mutant }, use) => {
      const file = process.env.CONFORMANCE_PROFILE;
      if (!file) {
        throw new Error(process.env.CONFORMANCE_SETUP_ERROR ?? 'CONFORMANCE_PROFILE is not set: run through `conformance run` or `npm test`');
      }
      const profile = loadProfile(file);
      if (mutant) {
        const token = process.env.CONFORMANCE_SWITCHBOARD_TOKEN;
        if (!token) throw new Error('mutant runs need CONFORMANCE_SWITCHBOARD_TOKEN');
        registerSecret(token);
        profile.requestHeaders = { ...profile.requestHeaders, 'x-switchboard-token': token, 'x-switchboard-mutant': mutant };
      }
      await use(new Target(profile));
    },
    { scope: 'worker' },
  ],
  check: async ({ target }, use, testInfo) => {
    await use((def, body) => runCheck(testInfo, def, (scope) => body(new CheckApi(target, scope), scope)));
  },
});

export { expect } from '@playwright/test';
