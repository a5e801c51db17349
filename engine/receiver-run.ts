// Runs the receiver's checks (checks/receiver/cases.ts) against a partner's webhook receiver, one after another,
// outside Playwright: each through the engine's evaluation (engine/standalone.ts), one record each.
import { runChecks, type StandaloneRecord } from './standalone.ts';
import { RECEIVER_CASES, ReceiverContext, type ReceiverSuiteOptions } from '../checks/receiver/cases.ts';

export type ReceiverCheckResult = StandaloneRecord;

/** Thrown by runReceiverSuite when its `stop` callback ends the run (e.g. the receiver stopped answering). */
export { RunStopped as ReceiverRunStopped } from './standalone.ts';

/**
 * Plays the service against a receiver: every case in order, one CheckRecord each (redacted evidence).
 * `stop`, when given, sees the results so far after each check; a reason it returns ends the run with
 * ReceiverRunStopped (the caller decides what makes judging pointless, e.g. no answer at all).
 */
export function runReceiverSuite(opts: ReceiverSuiteOptions, onResult?: (r: ReceiverCheckResult) => void, stop?: (sofar: ReceiverCheckResult[]) => string | undefined): Promise<ReceiverCheckResult[]> {
  return runChecks(RECEIVER_CASES, new ReceiverContext(opts), onResult, stop);
}
