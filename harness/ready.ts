// Waiting for the reference `conformance run` starts while the runner loads: the CLI names a file
// (CONFORMANCE_WAIT_READY) and writes `ready` into it once the reference is ready, or the reason it failed.
// The workers wait for it in their `target` fixture, not global setup: they start (load the suites, compile
// the contract) while PostgreSQL and the reference start, and no check runs before the reference is ready.
import fs from 'node:fs';

export const WAIT_READY_MS = 200_000;

/** Resolves once `file` says `ready`; throws its text (the reason the reference did not start) otherwise. */
export async function waitForReady(file: string, timeoutMs = WAIT_READY_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the reference implementation was not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const text = fs.readFileSync(file, 'utf8');
  if (text !== 'ready') throw new Error(text);
}
