// Runs every conformance check (the suites and the target-facing properties) once per variant bundle against
// the reference sandbox: one project, one Playwright run (harness/fixtures.ts does the per-bundle loop inside
// each test). Started by tests/variants.spec.ts as a child process with CONFORMANCE_PROFILE,
// CONFORMANCE_SWITCHBOARD_TOKEN and CONFORMANCE_VARIANTS_SET (a JSON file of bundles) set.
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { setting } from '../../harness/config.ts';

const root = path.resolve(import.meta.dirname, '../..');

export default defineConfig({
  testDir: root,
  testMatch: ['suites/**/*.spec.ts', 'properties/**/*.spec.ts'],
  // Same selection as the mutant meta-suite: the receiver suite judges a partner's receiver and the
  // webhook-signature properties the harness's own signer; neither talks to the service.
  testIgnore: ['suites/webhook-receiver.spec.ts', 'properties/webhook-signature.spec.ts'],
  fullyParallel: true,
  workers: 2,
  timeout: 180_000,
  retries: 0,
  outputDir: path.join(setting('out')!, 'test-results'),
  reporter: [['./../../reports/conformance-reporter.ts', { outDir: setting('out') }], ['dot']],
  projects: [{ name: 'variants' }],
});
