// Waiting for the target `conformance run` is preparing while the runner loads: the CLI names a file
// (CONFORMANCE_WAIT_READY) and writes `ready` into it once the target may be used (the reference it started is
// ready, or the target it was given passed the profile's validation and the preflight), or the reason it may
// not. The workers wait for it in their `target` fixture, not global setup: they start (load the suites, compile
// the contract) meanwhile, and no check runs before the target is ready.
// `ready <sha256>` also names the bytes of the profile the CLI validated: this process then trusts them as the
// CLI's children trust CONFORMANCE_PROFILE_SHA256 (profile/profile.ts loadProfile), instead of compiling the
// profile's schema once more in every worker.
import fs from 'node:fs';
import { setting, settingName } from './config.ts';

export const WAIT_READY_MS = 200_000;

/**
 * `ready` (with the validated profile's digest, if given, and the checks to keep in flight for this target, if the
 * CLI measured it far away: `in-flight=N`), the reason the target may not be used, or not yet written. The advice
 * is taken only where the user set no --in-flight: it raises the lanes of the batches planned with the default.
 */
export function readyState(file: string): { ready: true } | { ready: false; reason: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^ready(?: ([0-9a-f]{64}))?(?: in-flight=([1-9][0-9]{0,2}))?$/.exec(text);
  if (!m) return { ready: false, reason: text };
  if (m[1]) process.env[settingName('profileChecked')] = m[1];
  if (m[2] && setting('inFlight') === undefined) process.env[settingName('inFlight')] = m[2];
  return { ready: true };
}

/** Resolves once `file` says `ready`; throws its text (the reason the target may not be used) otherwise. */
export async function waitForReady(file: string, timeoutMs = WAIT_READY_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Written whole by a rename, so never seen half-written.
    const state = readyState(file);
    if (state?.ready) return;
    if (state) throw new Error(state.reason);
    if (Date.now() > deadline) throw new Error(`the target was not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Writes the ready file whole (a rename), so a reader never sees half of it. */
export function writeReady(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}
