// A partner's client judged from its recorded traffic: every client check (checks/client/checks.ts) run over the
// traffic through the one evaluation of every check (engine/evaluate.ts), each record with its evidence, what would
// unlock each check not verified, and the client's scope as the report states it (checks/client/scenario.ts).
// `conformance client` only runs the client, hands its traffic here, and writes what comes back.
import { CheckFailure, type CheckRecord, type Exchange } from '../record/record.ts';
import { CLIENT_CHECKS, type ClientCheck } from '../checks/client/checks.ts';
import { outOfScopeRequirements, requirementOutOfScope, scopeNote, scopeOf } from '../checks/client/scenario.ts';
import type { ClientTraffic } from '../observe/client-traffic.ts';
import { evaluateCheckSync } from './evaluate.ts';

/** A client check's record with the exchanges it cites (as recorded: headers and bodies are redacted by the writers). */
export type ClientRecord = CheckRecord & { evidence: Exchange[] };

export interface ClientVerdicts {
  records: ClientRecord[];
  /** check id → what would let it judge (the report's "what would unlock"). */
  unlock: Record<string, string>;
  /** The client's scope as the report states it. */
  outOfScope: { part: string; reason: string }[];
  scopeNote: { label: string; notes: string[] };
}

/** One client check judged: its record and, when not verified, what would let it judge (its NotVerified's `lacks`). */
export interface JudgedClientCheck {
  check: ClientCheck;
  record: ClientRecord;
  unlock?: string;
}

/**
 * One client check run over the record through engine/evaluate.ts. What would unlock it travels beside the record, not
 * in it: the record's `lacks` names a profile setting, and the client's unlock is the words the check gave. A body that
 * breaks other than by CheckFailure or NotVerified is a harness defect, thrown, never a partner's failure.
 */
export function judgeClientCheck(check: ClientCheck, traffic: ClientTraffic): Omit<JudgedClientCheck, 'check'> {
  const { rec, exchanges, error } = evaluateCheckSync(check, (scope) => check.run(traffic, scope));
  if (error !== undefined && !(error instanceof CheckFailure)) throw error;
  const { lacks, detail, ...kept } = rec;
  const record: ClientRecord = { ...kept, ...(detail ? { detail } : {}), evidence: exchanges };
  return rec.outcome === 'not_verified' && lacks ? { record, unlock: lacks } : { record };
}

/**
 * Every client check judged over the record. A check with nothing to judge whose requirements are all outside
 * the client's scope (checks/client/scenario.ts) says so: it stays not verified, never a pass, nothing would unlock
 * it, and the report lists its requirements as out of scope.
 */
export function judgeClientChecks(traffic: ClientTraffic): JudgedClientCheck[] {
  const scope = scopeOf(traffic.scenario, traffic.exchanges);
  return CLIENT_CHECKS.map((check) => {
    const judged = { check, ...judgeClientCheck(check, traffic) };
    if (judged.record.outcome !== 'not_verified') return judged;
    const out = check.requirements.map((r) => requirementOutOfScope(r, scope));
    if (out.some((x) => x === undefined)) return judged;
    return { check, record: { ...judged.record, detail: `out of scope: ${[...new Set(out)].join('; ')} (${judged.record.detail ?? ''})` } };
  });
}

export function judgeClientTraffic(traffic: ClientTraffic): ClientVerdicts {
  const unlock: Record<string, string> = {};
  const records = judgeClientChecks(traffic).map(({ check, record, unlock: u }): ClientRecord => {
    if (u) unlock[check.id] = u;
    return record;
  });
  const scope = scopeOf(traffic.scenario, traffic.exchanges);
  return { records, unlock, outOfScope: outOfScopeRequirements(scope), scopeNote: scopeNote(scope) };
}
