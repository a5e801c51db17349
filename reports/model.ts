// The report model: a pure function from collected check outcomes (outcomes.json), the requirement
// catalog, the waivers and the run metadata to the conformance report (conformance.json). Every other
// format (JUnit, HTML, the summary line) renders this object. It aggregates recorded outcomes; it never
// re-judges a check. Nothing here touches the file system or the network.

export const CHECK_OUTCOMES = ['pass', 'fail', 'not_verified', 'informational'] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];
/** A check as reported: its recorded outcome, or `waived` when a valid waiver covers its failure. */
export type ReportedOutcome = CheckOutcome | 'waived';
export type RequirementStatus = ReportedOutcome | 'not_covered';
export const REQUIREMENT_STATUSES: readonly RequirementStatus[] = ['pass', 'fail', 'not_verified', 'informational', 'not_covered', 'waived'];

/** One check as the Playwright reporter collected it (outcomes.json `checks[]`). */
export interface CollectedCheck {
  id: string;
  requirements: string[];
  title: string;
  outcome: CheckOutcome;
  detail?: string;
  project: string;
  file: string;
  test: string;
  evidence?: unknown;
  seed?: string;
  /** Set only in the mutant meta-suite: the mutant that was on when this outcome was recorded. */
  mutant?: string;
}

/** A test that failed without recording a failing check (a crash, a property without checks, a setup error). */
export interface TestFailure {
  project: string;
  file: string;
  test: string;
  error: string;
}

/** outcomes.json: what one Playwright run (or one shard of it) collected. */
export interface OutcomesFile {
  startedAt: string;
  finishedAt: string;
  runStatus: string;
  seed: string | null;
  shard?: string | null;
  target?: { name: string; baseUrl: string } | null;
  checks: CollectedCheck[];
  testFailures?: TestFailure[];
  runErrors?: string[];
}

export interface Requirement {
  id: string;
  section: string;
  area: string;
  statement: string;
  level: 'must' | 'unspecified';
  note?: string;
  reason_codes?: string[];
}

export interface Catalog {
  spec: string;
  requirements: Requirement[];
}

export interface Waiver {
  id: string;
  reason: string;
  owner: string;
  /** Last day (UTC) on which the waiver applies, `YYYY-MM-DD`. */
  expires: string;
}

export interface MutationInput {
  total: number;
  caught: number;
  survivors: string[];
  unproven: string[];
}

export interface RunContext {
  harnessVersion: string;
  /** Reviewed reasons why a must requirement has no check (fixtures/requirements/coverage.json `notTested`). */
  notTested?: Record<string, string>;
  target: { name: string; baseUrl: string } | null;
  contractSha256: string | null;
  catalogSha256: string | null;
  catalog: Catalog | null;
  waivers: Waiver[];
  /** Set when the waiver file could not be read or validated; the run then fails. */
  waiverError?: string;
  mutation: MutationInput | null;
  /** The day the waivers are judged against, `YYYY-MM-DD` (UTC). */
  today: string;
  /** Extra warnings from loading the context (catalog missing, profile unreadable...). */
  warnings?: string[];
}

export interface ReportCheck {
  id: string;
  title: string;
  outcome: ReportedOutcome;
  /** The recorded outcome before waivers. */
  recorded: CheckOutcome;
  detail: string | null;
  requirements: string[];
  section: string | null;
  area: string | null;
  project: string;
  file: string;
  test: string;
  seed: string | null;
  waiver: Waiver | null;
  evidence: unknown;
}

export interface ReportRequirement {
  id: string;
  section: string;
  area: string;
  statement: string;
  level: 'must' | 'unspecified';
  status: RequirementStatus;
  checks: string[];
  note?: string;
}

export interface Summary {
  pass: number;
  fail: number;
  not_verified: number;
  informational: number;
  waived: number;
}

export interface ConformanceReport {
  reportVersion: 1;
  verdict: 'conformant' | 'not_conformant';
  run: {
    harnessVersion: string;
    spec: string | null;
    target: { name: string; baseUrl: string } | null;
    startedAt: string;
    finishedAt: string;
    runStatus: string;
    seeds: string[];
    shards: string[];
    contractSha256: string | null;
    catalogSha256: string | null;
  };
  summary: Summary;
  requirements: ReportRequirement[];
  checks: ReportCheck[];
  coverage: { mustTotal: number; mustCovered: number; uncovered: string[]; notTested: Record<string, string> };
  mutation: { score: number | null; caught: number; total: number; survivors: string[]; unproven: string[] } | null;
  waivers: { applied: (Waiver & { checks: string[] })[]; expired: Waiver[]; unmatched: (Waiver & { why: string })[] };
  /** Reasons the run fails besides failing checks (expired waivers, tests failing outside checks...). */
  problems: string[];
  warnings: string[];
}

/**
 * Keeps only the exchange fields of recorded evidence (request, response, error). A richer object (a raw
 * response whose body Buffer serialises as an array of byte numbers) would hide its content from the
 * redaction patterns and bloat every report. Evidence of any other shape is kept as it is.
 */
export function sanitizeEvidence(evidence: unknown): unknown {
  if (!Array.isArray(evidence)) return evidence;
  return evidence.map((ex: unknown) => {
    if (!ex || typeof ex !== 'object' || !('request' in ex)) return ex;
    const { request, response, error } = ex as { request: unknown; response?: Record<string, unknown>; error?: unknown };
    const out: Record<string, unknown> = { request };
    if (response && typeof response === 'object') {
      const { status, headers, body, bodyBytes, durationMs } = response;
      out.response = { status, headers, body: typeof body === 'string' ? body : body === undefined ? undefined : '[non-text body omitted]', bodyBytes, durationMs };
    }
    if (error !== undefined) out.error = error;
    return out;
  });
}

/** A waiver applies through the end of its `expires` day (UTC). */
export function isExpired(w: Waiver, today: string): boolean {
  return w.expires < today;
}

export function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

function requirementStatus(outcomes: ReportedOutcome[]): RequirementStatus {
  if (outcomes.length === 0) return 'not_covered';
  if (outcomes.includes('fail')) return 'fail';
  if (outcomes.includes('waived')) return 'waived';
  if (outcomes.includes('not_verified')) return 'not_verified';
  if (outcomes.every((o) => o === 'informational')) return 'informational';
  return 'pass';
}

/**
 * Builds the report. A waiver (by check id or requirement id) turns the matching *failing* checks into
 * `waived`; it never hides them. An expired waiver waives nothing and is a problem; a waiver that
 * matches no failing check is a warning (stale or misspelt).
 */
export function buildReport(outcomes: OutcomesFile, ctx: RunContext): ConformanceReport {
  const catalog = ctx.catalog;
  const byReq = new Map((catalog?.requirements ?? []).map((r) => [r.id, r]));
  const problems: string[] = [];
  const warnings: string[] = [...(ctx.warnings ?? [])];

  const active = ctx.waivers.filter((w) => !isExpired(w, ctx.today));
  const expired = ctx.waivers.filter((w) => isExpired(w, ctx.today));
  for (const w of expired) problems.push(`waiver ${w.id} (owner ${w.owner}) expired on ${w.expires}`);
  if (ctx.waiverError) problems.push(ctx.waiverError);

  const applied = new Map<Waiver, string[]>();
  const checks: ReportCheck[] = [...outcomes.checks]
    .sort((a, b) => a.id.localeCompare(b.id) || a.project.localeCompare(b.project) || a.test.localeCompare(b.test))
    .map((c) => {
      const first = c.requirements.map((r) => byReq.get(r)).find((r) => r !== undefined);
      let waiver: Waiver | null = null;
      if (c.outcome === 'fail') {
        waiver = active.find((w) => w.id === c.id) ?? active.find((w) => c.requirements.includes(w.id)) ?? null;
        if (waiver) applied.set(waiver, [...(applied.get(waiver) ?? []), c.id]);
      }
      return {
        id: c.id, title: c.title, outcome: waiver ? 'waived' : c.outcome, recorded: c.outcome, detail: c.detail ?? null,
        requirements: [...c.requirements], section: first?.section ?? null, area: first?.area ?? null,
        project: c.project, file: c.file, test: c.test, seed: c.seed ?? null, waiver, evidence: sanitizeEvidence(c.evidence) ?? null,
      };
    });

  const knownCheckIds = new Set(checks.map((c) => c.id));
  const unmatched: (Waiver & { why: string })[] = [];
  for (const w of active) {
    if (applied.has(w)) continue;
    const why = knownCheckIds.has(w.id) || byReq.has(w.id)
      ? 'no failing check to waive (fixed, or not run)'
      : 'names no requirement of the catalog and no check of this run';
    unmatched.push({ ...w, why });
    warnings.push(`waiver ${w.id} matches nothing: ${why}`);
  }

  const unknownReqs = new Set<string>();
  if (catalog) for (const c of checks) for (const r of c.requirements) if (!byReq.has(r)) unknownReqs.add(`${r} (check ${c.id})`);
  for (const u of [...unknownReqs].sort()) warnings.push(`check names a requirement that is not in the catalog: ${u}`);

  const requirements: ReportRequirement[] = (catalog?.requirements ?? []).map((r) => {
    const mine = checks.filter((c) => c.requirements.includes(r.id));
    const row: ReportRequirement = {
      id: r.id, section: r.section, area: r.area, statement: r.statement, level: r.level,
      status: requirementStatus(mine.map((c) => c.outcome)), checks: [...new Set(mine.map((c) => c.id))],
    };
    if (r.note !== undefined) row.note = r.note;
    return row;
  });

  const summary: Summary = { pass: 0, fail: 0, not_verified: 0, informational: 0, waived: 0 };
  for (const c of checks) summary[c.outcome]++;

  for (const f of outcomes.testFailures ?? []) problems.push(`test "${f.test}" (${f.project}, ${f.file}) failed outside any check: ${f.error}`);
  for (const e of outcomes.runErrors ?? []) problems.push(`run error: ${e}`);
  if (outcomes.runStatus === 'interrupted' || outcomes.runStatus === 'timedout') problems.push(`the run ended ${outcomes.runStatus}; its results are incomplete`);
  if (checks.length === 0) problems.push('no check ran');
  if (!catalog) warnings.push('the requirement catalog was not found: requirements and coverage are not reported');

  const must = requirements.filter((r) => r.level === 'must');
  const uncovered = must.filter((r) => r.status === 'not_covered').map((r) => r.id);

  const seeds = [...new Set([...(outcomes.seed ?? '').split(','), ...outcomes.checks.map((c) => c.seed)].filter((s): s is string => !!s))].sort();
  const m = ctx.mutation;
  return {
    reportVersion: 1,
    verdict: summary.fail === 0 && problems.length === 0 ? 'conformant' : 'not_conformant',
    run: {
      harnessVersion: ctx.harnessVersion, spec: catalog?.spec ?? null, target: ctx.target ?? outcomes.target ?? null,
      startedAt: outcomes.startedAt, finishedAt: outcomes.finishedAt, runStatus: outcomes.runStatus, seeds,
      shards: outcomes.shard ? outcomes.shard.split(',') : [], contractSha256: ctx.contractSha256, catalogSha256: ctx.catalogSha256,
    },
    summary,
    requirements,
    checks,
    coverage: {
      mustTotal: must.length, mustCovered: must.length - uncovered.length, uncovered,
      notTested: Object.fromEntries(uncovered.filter((id) => ctx.notTested?.[id]).map((id) => [id, ctx.notTested![id]])),
    },
    mutation: m ? { score: m.total > 0 ? m.caught / m.total : null, caught: m.caught, total: m.total, survivors: [...m.survivors], unproven: [...m.unproven] } : null,
    waivers: { applied: [...applied].map(([w, ids]) => ({ ...w, checks: [...new Set(ids)] })), expired, unmatched },
    problems,
    warnings,
  };
}

/** The plain closing line: `conformance: N passed, N failed, N not verified, N informational[, N waived]`. */
export function summaryLine(s: Summary): string {
  return `conformance: ${s.pass} passed, ${s.fail} failed, ${s.not_verified} not verified, ${s.informational} informational${s.waived ? `, ${s.waived} waived` : ''}`;
}

/**
 * Merges the outcomes of several shards into one run: checks concatenated (a check recorded by two
 * shards keeps both records), the earliest start, the latest end, the worst run status.
 */
export function mergeOutcomes(parts: OutcomesFile[]): OutcomesFile {
  if (parts.length === 0) throw new Error('nothing to merge');
  const rank = ['passed', 'failed', 'timedout', 'interrupted'];
  const worst = parts.map((p) => p.runStatus).sort((a, b) => rank.indexOf(b) - rank.indexOf(a))[0];
  const seeds = [...new Set(parts.map((p) => p.seed).filter((s): s is string => !!s))];
  return {
    startedAt: parts.map((p) => p.startedAt).sort()[0],
    finishedAt: parts.map((p) => p.finishedAt).sort().at(-1)!,
    runStatus: worst,
    seed: seeds.length ? seeds.join(',') : null,
    shard: parts.map((p) => p.shard).filter((s): s is string => !!s).join(',') || null,
    target: parts.find((p) => p.target)?.target ?? null,
    checks: parts.flatMap((p) => p.checks),
    testFailures: parts.flatMap((p) => p.testFailures ?? []),
    runErrors: parts.flatMap((p) => p.runErrors ?? []),
  };
}
