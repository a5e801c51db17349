// Playwright global setup: when conformance suites run without a target profile, start the reference
// implementation (embedded PostgreSQL) once for the whole run and point the suites at its profile.
// A start-up failure does not abort the run: it is recorded, so the unit tests still run and every
// conformance check fails with that one clear reason.
import type { FullConfig } from '@playwright/test';
import { startReference } from './reference-process.ts';

export default async function globalSetup(config: FullConfig): Promise<(() => Promise<void>) | void> {
  if (process.env.CONFORMANCE_PROFILE) return;
  const wanted = config.projects.some((p) => p.name === 'conformance');
  if (!wanted) return;
  try {
    const ref = await startReference({ db: (process.env.CONFORMANCE_DB as 'embedded' | undefined) ?? 'embedded' });
    process.env.CONFORMANCE_PROFILE = ref.profilePath;
    process.env.CONFORMANCE_REFERENCE_PID = String(ref.child.pid);
    // The mutant meta-suite reuses this sandbox: it switches mutants per request with this token.
    process.env.CONFORMANCE_SWITCHBOARD_TOKEN = ref.switchboardToken;
    process.env.CONFORMANCE_SANDBOX = '1';
    return async () => {
      await ref.stop();
    };
  } catch (e) {
    process.env.CONFORMANCE_SETUP_ERROR = `reference implementation did not start: ${(e as Error).message}`;
  }
}
