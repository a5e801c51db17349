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
