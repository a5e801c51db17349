// A partner's client judged from its recorded traffic: every client check (checks/client/checks.ts) over the
// traffic, each judgement as a record with its evidence, what would unlock each check not verified, and the
// client's scope as the report states it (checks/client/scenario.ts). `conformance client` only runs the client,
// hands its traffic here, and writes what comes back.
import type { CheckRecord, Exchange } from '../record/record.ts';
import { judgeClientChecks } from '../checks/client/checks.ts';
import { outOfScopeRequirements, scopeNote, scopeOf } from '../checks/client/scenario.ts';
import type { ClientExchange, ClientTraffic } from '../observe/client-traffic.ts';

/** A client check's record with the exchanges it cites. */
export type ClientRecord = CheckRecord & { evidence: Exchange[] };

export interface ClientVerdicts {
  records: ClientRecord[];
  /** check id → what would let it judge (the report's "what would unlock"). */
  unlock: Record<string, string>;
  /** The client's scope as the report states it. */
  outOfScope: { part: string; reason: string }[];
  scopeNote: { label: string; notes: string[] };
}

/** An exchange of the record as report evidence (headers and bodies are redacted by the writers). */
function evidenceOf(e: ClientExchange): Exchange {
  return {
    request: { method: e.method, target: e.target, headers: e.headers, ...(e.role ? { credentialRole: e.role } : {}) },
    response: { status: e.status, headers: e.injected ? { 'x-conformance-injected': e.injected } : {}, body: e.kind === 'api' ? e.body.slice(0, 4000) : '', bodyBytes: Buffer.byteLength(e.body), durationMs: e.durationMs },
  };
}

export function judgeClientTraffic(traffic: ClientTraffic): ClientVerdicts {
  const unlock: Record<string, string> = {};
  const records = judgeClientChecks(traffic).map(({ check: c, judgement: j }): ClientRecord => {
    if (j.outcome === 'not_verified' && j.unlock) unlock[c.id] = j.unlock;
    return { id: c.id, title: c.title, requirements: [...c.requirements], outcome: j.outcome, ...(j.detail ? { detail: j.detail } : {}), evidence: j.evidence.map(evidenceOf) };
  });
  const scope = scopeOf(traffic.scenario, traffic.exchanges);
  return { records, unlock, outOfScope: outOfScopeRequirements(scope), scopeNote: scopeNote(scope) };
}
