// Playwright global setup: when conformance suites run without a target profile, start the reference
// implementation (embedded PostgreSQL) once for the whole run and point the suites at its profile.
// A start-up failure does not abort the run: it is recorded, so the unit tests still run and every
// conformance check fails with that one clear reason.
// Under `conformance run` the CLI starts the reference itself, while Playwright loads; it names a file
// (CONFORMANCE_WAIT_READY) that it writes once the reference is ready (`ready`) or failed (the reason):
// no worker may run a check before that.
// A run judges one subject: the suites judge the service. A partner's receiver is judged by
// `conformance webhook receiver`, a partner's client by `conformance client`; neither is started here.
// Every run gets a fresh breaker file (CONFORMANCE_BREAKER_FILE, harness/breaker.ts) shared by its
// workers; an inherited one (a run started by a test of another run) is never reused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setting, settingName } from '../harness/config.ts';
import { markProfileChecked } from '../harness/profile.ts';
import type { FullConfig } from '@playwright/test';
import { startReference } from './reference-process.ts';

type Teardown = () => Promise<void>;

const WAIT_READY_MS = 200_000;

async function waitForReady(file: string): Promise<void> {
  const deadline = Date.now() + WAIT_READY_MS;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the reference implementation was not ready within ${WAIT_READY_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const text = fs.readFileSync(file, 'utf8');
  if (text !== 'ready') throw new Error(text);
}

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
    // Validated once here, trusted by the workers for these bytes (harness/profile.ts loadProfile). A profile
    // that does not validate is left to the workers, whose fixture reports it as the setup error it is.
    const file = setting('profile');
    if (file) {
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
  const readyFile = setting('waitReady');
  // `conformance run` starts the reference itself.
  if (readyFile) return waitForReady(readyFile);
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
