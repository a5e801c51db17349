// Runs one check outside Playwright (the `conformance webhook` command, library callers) with the
// same outcome rules as runCheck in engine/evaluate.ts: CheckFailure → fail, NotVerified →
// not_verified, observe() → informational, any other error → fail as a harness error. The record's
// detail and evidence are redacted; the evidence stays typed exchanges (never JSON to parse back).
import { evaluateCheck } from './evaluate.ts';
import { evidenceExchanges, type CheckDef, type CheckRecord, type Exchange } from '../record/record.ts';
import type { CheckScope } from '../record/record.ts';

export interface StandaloneRecord extends CheckRecord {
  /** The exchanges the check recorded, trimmed and redacted (empty when none). */
  evidence: Exchange[];
}

export async function runStandalone(def: CheckDef, body: (scope: CheckScope) => Promise<void>): Promise<StandaloneRecord> {
  const { rec, exchanges } = await evaluateCheck(def, body);
  return { ...rec, evidence: evidenceExchanges(exchanges) };
}

/** A declared check as the standalone runner runs it: one observation of its subject, one scope. */
export interface RunnableCheck<O> extends CheckDef {
  run(observation: O, scope: CheckScope): Promise<void>;
}

/** Ended by a runner's `stop` callback (e.g. the subject stopped answering); its message says why. */
export class RunStopped extends Error {}

/**
 * The one loop of the standalone runs (the receiver's, the sender's under `conformance webhook sender`): every check in
 * order on the same observation, one record each, handed to `onResult` as it ends. `stop` sees the records so far
 * after each check; a reason it returns ends the run with RunStopped.
 */
export async function runChecks<O>(checks: readonly RunnableCheck<O>[], observation: O | (() => O), onResult?: (r: StandaloneRecord) => void, stop?: (sofar: StandaloneRecord[]) => string | undefined): Promise<StandaloneRecord[]> {
  const out: StandaloneRecord[] = [];
  for (const c of checks) {
    const r = await runStandalone(c, (scope) => c.run(typeof observation === 'function' ? (observation as () => O)() : observation, scope));
    out.push(r);
    onResult?.(r);
    const why = stop?.(out);
    if (why !== undefined) throw new RunStopped(why);
  }
  return out;
}
