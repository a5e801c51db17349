// Runs every check that some mutant names, once per such mutant, against the reference sandbox: one
// project, one Playwright run (engine/playwright/fixtures.ts does the per-mutant loop inside each test).
// Started by tests/mutants.spec.ts as a child process with CONFORMANCE_PROFILE,
// CONFORMANCE_SWITCHBOARD_TOKEN and CONFORMANCE_MUTANTS_MATRIX (a JSON dump of the matrix) set.
import fs from 'node:fs';
import { setting } from '../../engine/config.ts';
import { metaConfig } from '../helpers/meta-config.ts';
import { grepFor, type Matrix } from './matrix.ts';

const matrix = JSON.parse(fs.readFileSync(setting('mutantsMatrix')!, 'utf8')) as Matrix;

export default metaConfig({ name: 'mutants', grep: grepFor(Object.values(matrix).flat()) });
