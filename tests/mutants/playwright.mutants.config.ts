// Runs each mutant's named checks against the reference sandbox with that mutant switched on: one
// Playwright project per mutant, each selecting only the checks the matrix says it must break.
// Started by tests/mutants.spec.ts as a child process with CONFORMANCE_PROFILE and
// CONFORMANCE_SWITCHBOARD_TOKEN set and CONFORMANCE_MUTANTS_MATRIX naming a JSON dump of the matrix.
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { grepFor, type Matrix } from './matrix.ts';

const matrix = JSON.parse(fs.readFileSync(process.env.CONFORMANCE_MUTANTS_MATRIX!, 'utf8')) as Matrix;
const root = path.resolve(import.meta.dirname, '../..');

export default defineConfig<{}, { mutant: string | undefined }>({
  testDir: root,
  testMatch: ['suites/**/*.spec.ts', 'properties/**/*.spec.ts'],
  fullyParallel: true,
  workers: 2,
  timeout: 60_000,
  retries: 0,
  outputDir: path.join(process.env.CONFORMANCE_OUT!, 'test-results'),
  reporter: [['./../../reports/conformance-reporter.ts', { outDir: process.env.CONFORMANCE_OUT }], ['dot']],
  projects: Object.entries(matrix).map(([mutant, checks]) => ({
    name: `mutant:${mutant}`,
    grep: grepFor(checks),
    use: { mutant },
  })),
});
