// The one test file of the conformance project: it loads every suite of suites/ and every property of
// properties/ (each registers its cases with harness/fixtures.ts `suite`), then declares the Playwright tests
// that run them (`declareRun`). One file instead of one per area lets a test run cases of many areas at once:
// the waiting suites start first (the webhook listener's alone, an audio URL's expiry beside other suites'
// checks), so a worker does not idle through a wait. Each check's record still names the suite file that
// declared it.
// Select areas or checks with the CLI's --grep (matched against "<file> <check id>"), not a file argument.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { declareRun } from '../harness/fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** `.ts` in a clone, `.js` in the npm package. */
const EXT = path.extname(import.meta.filename);
const SELF = path.basename(import.meta.filename);

for (const dir of ['suites', 'properties']) {
  const files = fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith(`.spec${EXT}`) && f !== SELF).sort();
  for (const f of files) await import(pathToFileURL(path.join(ROOT, dir, f)).href);
}

declareRun();
