// One runner for everything: `unit` (the project's own tests, including the mutant matrix) and
// `conformance` (the black-box suites of suites/ and the fast-check properties of properties/, against the
// target of CONFORMANCE_PROFILE; without one, global setup starts the reference on embedded PostgreSQL).
import { defineConfig } from '@playwright/test';
import { setting } from './harness/config.ts';

const outDir = setting('out') ?? 'reports/out';
const terse = setting('progress') === 'terse';

export default defineConfig({
  globalSetup: './cli/global-setup.ts',
  fullyParallel: true,
  workers: Number(setting('workers') ?? 2),
  timeout: 60_000,
  forbidOnly: !!process.env.CI,
  outputDir: `${outDir}/test-results`,
  reporter: [
    // `conformance run` asks for terse progress (one line per failing check); otherwise the runner's own.
    terse ? ['./reports/progress-reporter.ts'] : [process.env.CI ? 'line' : 'list'],
    ['./reports/conformance-reporter.ts', { outDir }],
    // `conformance run` prints the check counts and the verdict once itself; the test-count line is for `npm test` and CI.
    ...(terse ? [] : [['./reports/summary-reporter.ts'] as [string]]),
  ],
  projects: [
    { name: 'unit', testDir: 'tests' },
    // Suites and properties in one project: they share worker processes (a second project would start its own
    // workers only after the first one's tests ran out, about a second of a cold run).
    { name: 'conformance', testDir: '.', testMatch: ['suites/**/*.spec.ts', 'properties/**/*.spec.ts'] },
  ],
});
