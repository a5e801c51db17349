// The Playwright configuration both meta-suites' child runs share: every conformance check of suites/ and
// properties/ against the reference sandbox in one project, outcomes collected by the conformance reporter
// into CONFORMANCE_OUT. Each meta-suite names its project and narrows the selection its own way.
import path from 'node:path';
import { defineConfig, type PlaywrightTestConfig } from '@playwright/test';
import { setting, settingName } from '../../engine/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export function metaConfig(project: { name: string; grep?: RegExp }, extra: Pick<PlaywrightTestConfig, 'timeout'> = {}) {
  // The selection is of cases, not of the runner's tests (a test runs a batch of cases: engine/planner.ts):
  // it travels as CONFORMANCE_GREP, which the workers this process starts inherit.
  if (project.grep) process.env[settingName('grep')] = project.grep.source;
  return defineConfig({
    // Global setup gives this child run its own breaker file and, beside it, its own batch claims
    // (engine/planner.ts claimBatch). Without it the child inherited its parent's: two meta-suite children of
    // one `npm test` then shared claims, and the second skipped every batch the first had claimed.
    globalSetup: path.join(ROOT, 'cli/global-setup.ts'),
    testDir: ROOT,
    testMatch: ['engine/playwright/run.spec.ts'],
    fullyParallel: true,
    workers: 2,
    timeout: 120_000,
    retries: 0,
    ...extra,
    outputDir: path.join(setting('out')!, 'test-results'),
    reporter: [[path.join(ROOT, 'reports/conformance-reporter.ts'), { outDir: setting('out') }], ['dot']],
    projects: [{ name: project.name }],
  });
}
