// Playwright global setup: when conformance suites run without a target profile, start the reference
// implementation (embedded PostgreSQL) once for the whole run and point the suites at its profile.
// A start-up failure does not abort the run: it is recorded, so the unit tests still run and every
// conformance check fails with that one clear reason.
// Under `conformance run` the CLI starts the reference itself, while Playwright loads; it names a file
// (CONFORMANCE_WAIT_READY) that it writes once the reference is ready (`ready`) or failed (the reason):
// the workers wait for it (observe/ready.ts), so they start while the reference does, and no check runs
// before it is ready.
// A run judges one subject: the suites judge the service. A partner's receiver is judged by
// `conformance webhook receiver`, a partner's client by `conformance client`; neither is started here.
// Every run gets a fresh breaker file (CONFORMANCE_BREAKER_FILE, observe/breaker.ts) shared by its
// workers; an inherited one (a run started by a test of another run) is never reused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setting, settingName } from '../engine/config.ts';
import { markProfileChecked } from '../engine/plan.ts';
import type { FullConfig } from '@playwright/test';
import { startReference } from '../engine/reference/process.ts';

type Teardown = () => Promise<void>;

/** Makes this run's breaker file; returns how to remove it. */
function freshBreaker(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-breaker-'));
  const file = path.join(dir, 'breaker');
  fs.writeFileSync(file, '');
  process.env[settingName('breakerFile')] = file;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}

export default async function globalSetup(config: FullConfig): Promise<(() => Promise<void>) | void> {
  const removeBreaker = freshBreaker();
  let teardown: (() => Promise<void>) | void;
  try {
    teardown = await setup(config);
    // Validated once here, trusted by the workers for these bytes (profile/profile.ts loadProfile). A profile
    // that does not validate is left to the workers, whose fixture reports it as the setup error it is. (A
    // reference the CLI is still starting has no profile yet: each worker validates it when it is ready.)
    const file = setting('profile');
    if (file && !setting('waitReady')) {
      try {
        markProfileChecked(file);
      } catch { /* reported by the workers */ }
    }
  } catch (e) {
    removeBreaker();
    throw e;
  }
  return async () => {
    try {
      await teardown?.();
    } finally {
      removeBreaker();
    }
  };
}

async function setup(config: FullConfig): Promise<Teardown | void> {
  // `conformance run` starts the reference itself; the workers wait for it (observe/ready.ts).
  if (setting('waitReady')) return;
  if (setting('profile')) return;
  const wanted = config.projects.some((p) => p.name === 'conformance');
  if (!wanted) return;
  try {
    const ref = await startReference({ db: (setting('db') as 'embedded' | undefined) ?? 'embedded' });
    process.env[settingName('profile')] = ref.profilePath;
    process.env[settingName('referencePid')] = String(ref.child.pid);
    // The mutant meta-suite reuses this sandbox: it switches mutants per request with this token.
    process.env[settingName('switchboardToken')] = ref.switchboardToken;
    process.env[settingName('sandbox')] = '1';
    return () => ref.stop().then(() => undefined);
  } catch (e) {
    process.env[settingName('setupError')] = `reference implementation did not start: ${(e as Error).message}`;
  }
}
