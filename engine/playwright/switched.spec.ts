// The one test file of the `conformance-switched` project, which runs after the `conformance` project: the checks
// that need a condition the profile gives as an on/off command (engine/switched.ts), one condition at a time, with
// nothing else in flight. Without such a condition it declares no test.
import { declareSwitched } from './fixtures.ts';
import { loadCheckFiles } from '../load.ts';

await loadCheckFiles();
declareSwitched();
