// Runs every conformance check (the suites and the target-facing properties) once per variant bundle against
// the reference sandbox: one project, one Playwright run (engine/playwright/fixtures.ts does the per-bundle loop inside
// each test). Started by tests/variants.spec.ts as a child process with CONFORMANCE_PROFILE,
// CONFORMANCE_SWITCHBOARD_TOKEN and CONFORMANCE_VARIANTS_SET (a JSON file of bundles) set.
import { metaConfig } from '../helpers/meta-config.ts';

export default metaConfig({ name: 'variants' }, { timeout: 180_000 });
