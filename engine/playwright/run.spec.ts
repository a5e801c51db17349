// The one test file of the conformance project: it loads every suite of suites/ and every property of
// properties/ (each registers its cases with engine/playwright/fixtures.ts `suite`), then declares the Playwright tests
// that run them (`declareRun`). One file instead of one per area lets a test run cases of many areas at once:
// the waiting suites start first (the webhook listener's alone, an audio URL's expiry beside other suites'
// checks), so a worker does not idle through a wait. Each check's record still names the suite file that
// declared it.
// Select areas or checks with the CLI's --grep (matched against "<file> <check id>"), not a file argument.
import { declareRun } from './fixtures.ts';
import { loadCheckFiles } from '../load.ts';

await loadCheckFiles();
declareRun();
