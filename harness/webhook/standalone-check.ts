// Runs one check outside Playwright (the `conformance webhook` command, library callers) with the
// same outcome rules as runCheck in harness/checks.ts: CheckFailure → fail, NotVerified →
// not_verified, observe() → informational, any other error → fail as a harness error. The record's
// detail and evidence are redacted.
import { evaluateCheck, evidenceOf } from '../checks.ts';
import type { CheckDef, CheckRecord, CheckScope } from '../checks.ts';

export interface StandaloneRecord extends CheckRecord {
  /** Redacted JSON of the exchanges the check recorded ('[]' when none). */
  evidence: string;
}

export async function runStandalone(def: CheckDef, body: (scope: CheckScope) => Promise<void>): Promise<StandaloneRecord> {
  const { rec, exchanges } = await evaluateCheck(def, body);
  return { ...rec, evidence: evidenceOf(exchanges) };
}
