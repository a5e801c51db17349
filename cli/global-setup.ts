// Playwright global setup: when conformance suites run without a target profile, start the reference
// implementation (embedded PostgreSQL) once for the whole run and point the suites at its profile.
// A start-up failure does not abort the run: it is recorded, so the unit tests still run and every
// conformance check fails with that one clear reason.
// Under `conformance run` the CLI starts the reference itself, while Playwright loads; it names a file
// (CONFORMANCE_WAIT_READY) that it writes once the reference is ready (`ready`) or failed (the reason):
// no worker may run a check before that.
// In a sandbox run (this setup starts the reference itself, or the CLI set CONFORMANCE_SANDBOX=1) it also
// starts the example webhook receiver (cli/receiver-sandbox.ts) once for the run, in parallel with the
// reference, and hands the workers its URL, its signing secret and the URL of its follow-up count
// (CONFORMANCE_SANDBOX_RECEIVER_*, harness/config.ts); the receiver suite's worker fixture
// (harness/webhook/receiver-fixture.ts) judges it through them. A run against a target never starts it.
// Every run gets a fresh breaker file (CONFORMANCE_BREAKER_FILE, harness/breaker.ts) shared by its
// workers; an inherited one (a run started by a test of another run) is never reused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setting, settingName, type Setting } from '../harness/config.ts';
import type { FullConfig } from '@playwright/test';
import { startReference } from './reference-process.ts';
import { startReceiverSandbox } from './receiver-sandbox.ts';

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

const RECEIVER_SETTINGS: readonly Setting[] = ['sandboxReceiverUrl', 'sandboxReceiverSecret', 'sandboxReceiverCountUrl', 'sandboxReceiverError'];

/**
 * Starts the example receiver for this run's workers; never rejects: a failure is recorded for the
 * receiver suite (its checks fail with the reason) and the rest of the run goes on. Resolves to its stop.
 */
async function startSandboxReceiver(): Promise<Teardown> {
  try {
    const sandbox = await startReceiverSandbox(); // registers the secret and the API key for redaction
    try {
      process.env[settingName('sandboxReceiverCountUrl')] = await sandbox.api.countEndpoint();
    } catch (e) {
      await sandbox.close();
      throw e;
    }
    process.env[settingName('sandboxReceiverUrl')] = sandbox.url;
    process.env[settingName('sandboxReceiverSecret')] = sandbox.secret;
    return () => sandbox.close();
  } catch (e) {
    process.env[settingName('sandboxReceiverError')] = `the example webhook receiver did not start: ${(e as Error).message}`;
    return async () => undefined;
  }
}

/**
 * Whether this Playwright run may run the conformance project (the receiver suite is in it): false only
 * when the command line names projects (`--project unit`) and none of them can be `conformance`. Global
 * setup is not told the project filter; a run of the project's own tests then starts no example receiver.
 */
export function conformanceProjectSelected(argv: readonly string[] = process.argv): boolean {
  const named: string[] = [];
  argv.forEach((arg, i) => {
    if (arg.startsWith('--project=')) named.push(arg.slice('--project='.length));
    else if (arg === '--project') for (const next of argv.slice(i + 1)) {
      if (next.startsWith('-')) break;
      named.push(next);
    }
  });
  return named.length === 0 || named.some((name) => name === 'conformance' || /[*?[]/.test(name));
}

async function setup(config: FullConfig): Promise<Teardown | void> {
  // An enclosing run's receiver (a run started by a test of another run) is never this run's.
  for (const key of RECEIVER_SETTINGS) delete process.env[settingName(key)];
  const readyFile = setting('waitReady');
  if (readyFile) {
    // `conformance run` starts the reference itself; in its sandbox mode the receiver starts meanwhile.
    const receiver = setting('sandbox') === '1' ? startSandboxReceiver() : undefined;
    try {
      await waitForReady(readyFile);
    } catch (e) {
      await (await receiver)?.();
      throw e;
    }
    return receiver;
  }
  if (setting('profile')) return setting('sandbox') === '1' && conformanceProjectSelected() ? startSandboxReceiver() : undefined;
  const wanted = config.projects.some((p) => p.name === 'conformance');
  if (!wanted) return;
  const receiver = conformanceProjectSelected() ? startSandboxReceiver() : Promise.resolve(async () => undefined);
  try {
    const ref = await startReference({ db: (setting('db') as 'embedded' | undefined) ?? 'embedded' });
    process.env[settingName('profile')] = ref.profilePath;
    process.env[settingName('referencePid')] = String(ref.child.pid);
    // The mutant meta-suite reuses this sandbox: it switches mutants per request with this token.
    process.env[settingName('switchboardToken')] = ref.switchboardToken;
    process.env[settingName('sandbox')] = '1';
    const stopReceiver = await receiver;
    return async () => {
      try {
        await stopReceiver();
      } finally {
        await ref.stop();
      }
    };
  } catch (e) {
    process.env[settingName('setupError')] = `reference implementation did not start: ${(e as Error).message}`;
    await (await receiver)();
  }
}
