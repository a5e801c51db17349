// One runner for everything: `unit` (the project's own tests, including the mutant matrix) and
// `conformance` (the black-box suites of suites/ and the fast-check properties of properties/, against the
// target of CONFORMANCE_PROFILE; without one, global setup starts the reference on embedded PostgreSQL).
// The same file, compiled to JavaScript, is the configuration of the npm package (dist/playwright.config.js):
// there every module it names is `.js`, and there is no tests/ folder (the package ships no unit tests).
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { setting } from './engine/config.ts';
import { runPlan } from './engine/plan.ts';
import { setEvidenceMode } from './record/redact.ts';

// The runner and every worker load this file: the evidence mode of the run's plan holds in each of them (record/redact.ts).
setEvidenceMode(runPlan().evidence === 'full' ? 'full' : undefined);

const outDir = setting('out') ?? 'reports/out';
const terse = setting('progress') === 'terse';
/** `ts` in a clone, `js` in the npm package. */
const ext = path.extname(import.meta.filename).slice(1);

export default defineConfig({
  globalSetup: `./cli/global-setup.${ext}`,
  fullyParallel: true,
  workers: Number(setting('workers') ?? 2),
  timeout: 60_000,
  forbidOnly: !!process.env.CI,
  outputDir: `${outDir}/test-results`,
  reporter: [
    // `conformance run` asks for terse progress (one line per failing check); otherwise the runner's own.
    terse ? [`./reports/progress-reporter.${ext}`] : [process.env.CI ? 'line' : 'list'],
    [`./reports/conformance-reporter.${ext}`, { outDir }],
    // `conformance run` prints the check counts and the verdict once itself; the test-count line is for `npm test` and CI.
    ...(terse ? [] : [[`./reports/summary-reporter.${ext}`] as [string]]),
  ],
  projects: [
    ...(fs.existsSync(path.join(import.meta.dirname, 'tests')) ? [{ name: 'unit', testDir: 'tests' }] : []),
    // Suites and properties in one project: they share worker processes (a second project would start its own
    // workers only after the first one's tests ran out, about a second of a cold run).
    // One test file, suites/run.spec: it loads every suite and property and plans the run's tests (engine/planner.ts).
    { name: 'conformance', testDir: '.', testMatch: [`engine/playwright/run.spec.${ext}`] },
    // The checks of a condition the profile switches on and off by a command (engine/switched.ts): after every other
    // check, one worker, nothing else in flight. Without such a condition it has no test.
    { name: 'conformance-switched', testDir: '.', testMatch: [`engine/playwright/switched.spec.${ext}`], dependencies: ['conformance'], workers: 1, fullyParallel: false },
  ],
});
