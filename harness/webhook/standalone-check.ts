// Runs one check outside Playwright (the `conformance webhook` command, library callers) with the
// same outcome rules as runCheck in harness/checks.ts: CheckFailure → fail, NotVerified →
// not_verified, observe() → informational, any other error → fail as a harness error. The record's
// detail and evidence are redacted.
import { CheckFailure, NotVerified, defineCheck, evidenceOf } from '../checks.ts';
import type { CheckDef, CheckRecord, CheckScope, Exchange } from '../checks.ts';
import { redact } from '../redact.ts';

export interface StandaloneRecord extends CheckRecord {
  /** Redacted JSON of the exchanges the check recorded ('[]' when none). */
  evidence: string;
}

export async function runStandalone(def: CheckDef, body: (scope: CheckScope) => Promise<void>): Promise<StandaloneRecord> {
  defineCheck(def);
  const exchanges: Exchange[] = [];
  let observed: string | undefined;
  const scope: CheckScope = {
    need(value, what) {
      if (value === undefined || value === null) throw new NotVerified(`profile lacks ${what}`);
      return value;
    },
    observe(text) {
      observed = observed ? `${observed}; ${text}` : text;
    },
    record(ex) {
      exchanges.push(ex);
    },
  };
  let rec: CheckRecord;
  try {
    await body(scope);
    rec = observed !== undefined ? { ...def, outcome: 'informational', detail: redact(observed) } : { ...def, outcome: 'pass' };
  } catch (e) {
    if (e instanceof NotVerified) rec = { ...def, outcome: 'not_verified', detail: redact(e.message) };
    else rec = { ...def, outcome: 'fail', detail: redact(e instanceof CheckFailure ? e.message : `harness error: ${(e as Error)?.message ?? String(e)}`) };
  }
  return { ...rec, evidence: evidenceOf(exchanges) };
}
