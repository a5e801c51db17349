// The outcome model. A check is one named unit with a stable id and the requirement ids it verifies;
// it ends in exactly one of four outcomes, recorded as a Playwright annotation `check:<outcome>` whose
// description is JSON (id, requirements, title, detail). Evidence (redacted exchanges) is attached as
// `evidence:<id>`. The reporter only collects these; it never decides an outcome.
import type { TestInfo } from '@playwright/test';
import { notePatientData, redact } from '../record/redact.ts';
import { encodeCheckAnnotation, evidenceOf, type CheckDef, type CheckRecord, type Exchange } from '../record/record.ts';
import { identity, isDeclared } from './registry.ts';

import { CheckFailure, NotVerified, type CheckScope } from '../record/record.ts';

/** A mutant-matrix pattern names a check id exactly, or every id with a prefix when it ends in `*`. */
export function matchesPattern(pattern: string, checkId: string): boolean {
  return pattern.endsWith('*') ? checkId.startsWith(pattern.slice(0, -1)) : pattern === checkId;
}

/** The outcome of running a check body, before anything is recorded anywhere. */
export interface Evaluation {
  rec: CheckRecord;
  exchanges: Exchange[];
  /** The error that made the check fail (a CheckFailure, or a harness error / hostile target). */
  error?: unknown;
}

/** A check under evaluation: the scope its body is given, and the record it ends with by how the body ended. */
interface Evaluating {
  scope: CheckScope;
  /** The body returned: pass, warning or informational, by what it said on the scope. */
  returned(): Evaluation;
  /** The body threw: not_verified, or fail (decided, or a harness error). */
  threw(e: unknown): Evaluation;
}

function startEvaluation(def: CheckDef): Evaluating {
  // One registry, one way in: a check nobody declared (engine/registry.ts) is a harness defect, not an outcome.
  if (!isDeclared(def)) throw new Error(`check ${def.id} was not declared through defineCheck (engine/registry.ts)`);
  // The record carries the check's identity alone, whatever else its declaration holds (its run, its case data).
  const ident = identity(def);
  const exchanges: Exchange[] = [];
  const uses = new Set<string>();
  // What the body said beside its verdict, by kind, each kind's texts joined in order.
  const said: Record<'observed' | 'warned' | 'noted', string[]> = { observed: [], warned: [], noted: [] };
  const text = (kind: keyof typeof said): string | undefined => (said[kind].length ? said[kind].join('; ') : undefined);
  const scope: CheckScope = {
    need(value, what, setting) {
      if (setting !== undefined) uses.add(setting);
      if (value === undefined || value === null) throw new NotVerified(`profile lacks ${what}`, setting);
      return value;
    },
    observe: (t) => void said.observed.push(t),
    warn: (t) => void said.warned.push(t),
    note: (t) => void said.noted.push(t),
    record(ex) {
      exchanges.push(ex);
    },
  };
  // A detail may quote a patient value of a body: the bodies are met first, so the detail loses it (record/redact.ts).
  const meetBodies = (): void => {
    for (const ex of exchanges) {
      notePatientData(ex.request.body);
      notePatientData(ex.response?.body);
    }
  };
  const used = (): { uses?: string[] } => (uses.size ? { uses: [...uses].sort() } : {});
  return {
    scope,
    returned() {
      if (exchanges.length > 0 && (said.observed.length || said.warned.length || said.noted.length)) meetBodies();
      const [observed, warned, noted] = [text('observed'), text('warned'), text('noted')];
      // A `should` not met outranks an observation; both outrank a pass.
      if (warned !== undefined) return { exchanges, rec: { ...ident, outcome: 'warning', detail: redact(observed ? `${warned}; observed: ${observed}` : warned), ...used() } };
      if (observed !== undefined) return { exchanges, rec: { ...ident, outcome: 'informational', detail: redact(noted ? `${observed}; ${noted}` : observed), ...used() } };
      return { exchanges, rec: noted !== undefined ? { ...ident, outcome: 'pass', detail: redact(noted), ...used() } : { ...ident, outcome: 'pass', ...used() } };
    },
    threw(e) {
      meetBodies();
      if (e instanceof NotVerified) return { exchanges, rec: { ...ident, outcome: 'not_verified', detail: redact(e.message), ...used(), ...(e.lacks !== undefined ? { lacks: e.lacks } : {}) } };
      const detail = e instanceof CheckFailure ? e.message : `harness error: ${(e as Error)?.stack ?? String(e)}`;
      return { exchanges, error: e, rec: { ...ident, outcome: 'fail', detail: redact(detail), ...used() } };
    },
  };
}

/**
 * Runs a check body and decides its outcome: CheckFailure → fail, NotVerified → not_verified,
 * observe() → informational, any other error → fail as a harness error. Details are redacted.
 * Shared by runCheck (Playwright) and runStandalone (the CLI's webhook commands).
 */
export async function evaluateCheck(def: CheckDef, body: (scope: CheckScope) => Promise<void>): Promise<Evaluation> {
  const run = startEvaluation(def);
  try {
    await body(run.scope);
    return run.returned();
  } catch (e) {
    return run.threw(e);
  }
}

/**
 * evaluateCheck for a body that judges a record already made, synchronously (a client check over the client's
 * recorded traffic, engine/client-judge.ts): the same rules, the same record, at once. A body that returns a
 * promise is a harness defect (it would end after its verdict was taken): a fail with that said.
 */
export function evaluateCheckSync(def: CheckDef, body: (scope: CheckScope) => void): Evaluation {
  const run = startEvaluation(def);
  try {
    const returned: unknown = body(run.scope);
    if (returned instanceof Promise) throw new Error(`check ${def.id}: a synchronous check body returned a promise`);
    return run.returned();
  } catch (e) {
    return run.threw(e);
  }
}

/** A check's record as a unit of work of a batch: the case title it ran under and its own time. */
export interface RecordTag {
  mutant?: string;
  variant?: string;
  /** The title of the case that ran it (the check id, for most). */
  case?: string;
  /** The suite file that declared the case. */
  file?: string;
}

/** What recording a check left for the test that hosts it to do. */
export interface Recorded {
  rec: CheckRecord;
  /** A harness defect or a hostile target's doing (not a decided failure): the host must surface it. */
  problem?: Error;
  /** The run's breaker ended this check (observe/target.ts TargetStoppedAnswering). */
  breaker: boolean;
}

/**
 * Runs one check and records its outcome in the test that hosts it, without throwing or skipping: a test
 * may host many checks at once (engine/planner.ts runs a suite's cases in batches), so one check's end
 * must not end the others. The record carries the check's own duration; evidence goes in as an attachment
 * (pushed, not `attach`ed: `attach` opens a step, and a step captures a stack trace, about a millisecond each).
 */
export async function recordCheck(testInfo: TestInfo, def: CheckDef, body: (scope: CheckScope) => Promise<void>, tag: RecordTag = {}): Promise<Recorded> {
  const t0 = performance.now();
  const { rec, exchanges, error } = await evaluateCheck(def, body);
  const durationMs = Math.round((performance.now() - t0) * 10) / 10;
  const meta = tag.mutant !== undefined || tag.variant !== undefined;
  const breaker = error !== undefined && (error as Error).name === 'TargetStoppedAnswering';
  testInfo.annotations.push(encodeCheckAnnotation({ ...rec, ...tag, durationMs, ...(breaker ? { breaker: true } : {}) }));
  if (exchanges.length > 0 && !meta) {
    testInfo.attachments.push({ name: `evidence:${def.id}`, body: Buffer.from(evidenceOf(exchanges)), contentType: 'application/json' });
  }
  // A decided failure (CheckFailure) is the check's outcome; a breaker-ended check is one too (the target
  // stopped answering). Anything else is a harness defect or a hostile target's doing: recorded `fail`
  // with its stack as the detail, and handed back so the host surfaces it as a failed test.
  const problem = error === undefined || meta || breaker || error instanceof CheckFailure
    ? undefined
    : error instanceof Error ? error : new Error(String(error));
  return { rec, breaker, ...(problem ? { problem } : {}) };
}

/**
 * Runs one check as the whole of its test (the properties): records it like recordCheck, then a
 * harness error fails the test, and a not_verified check skips it. A decided failure ends the test
 * without throwing, so a failing check costs what a passing one costs (a thrown error makes Playwright
 * tear the worker down and start another); the reports judge from the recorded outcomes, and the
 * summary line of `npm test` counts a test with a failing check as failed (reports/summary-reporter.ts).
 */
export async function runCheck(testInfo: TestInfo, def: CheckDef, body: (scope: CheckScope) => Promise<void>, tag: RecordTag = {}): Promise<CheckRecord> {
  const { rec, problem } = await recordCheck(testInfo, def, body, tag);
  if (problem) throw problem;
  if (rec.outcome === 'not_verified' && tag.mutant === undefined && tag.variant === undefined) testInfo.skip(true, `not_verified: ${rec.detail}`);
  return rec;
}
