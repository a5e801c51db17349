// The report model: a pure function from collected check outcomes (outcomes.json), the requirement
// catalog, the waivers and the run metadata to the conformance report (conformance.json). Every other
// format (JUnit, HTML, the summary line) renders this object. It aggregates recorded outcomes; it never
// re-judges a check. Nothing here touches the file system or the network.

import { OUTCOMES, trimExchanges, type CheckRecord, type Exchange, type Outcome } from '../record/record.ts';

export const CHECK_OUTCOMES = OUTCOMES;
export type CheckOutcome = Outcome;
/** A check as reported: its recorded outcome, or `waived` when a valid waiver covers its failure. */
export type ReportedOutcome = CheckOutcome | 'waived';
/**
 * `not_observable`: a requirement no run can observe (a constant-time comparison, a deployment status), with its
 * reviewed reason (fixtures/requirements/not-tested.json): listed apart, never `pass`, never counted as verified.
 */
export type RequirementStatus = ReportedOutcome | 'not_covered' | 'out_of_scope' | 'not_observable';
export const REQUIREMENT_STATUSES: readonly RequirementStatus[] = ['pass', 'fail', 'warning', 'not_verified', 'informational', 'not_covered', 'waived', 'out_of_scope', 'not_observable'];
export type RequirementLevel = 'must' | 'should' | 'unspecified';
/**
 * Who a requirement binds: the `service` (the REST API and the webhook sender), the partner's webhook
 * `receiver` (§6.3/§6.4 receiver side), or a `client` of the REST API. One subject per run: `run` judges the
 * service, `webhook receiver` the receiver, `client` the client; a run's scope is its subject's requirements.
 */
import { declaration, SUBJECTS, type Subject } from '../engine/registry.ts';
import { roleOfSetting } from '../profile/profile.ts';
export { SUBJECTS, type Subject };
/** The subjects a catalog row binds (a row that names none binds the service). */
export const subjectsOf = (r: { subjects?: readonly Subject[] }): readonly Subject[] => (r.subjects && r.subjects.length ? r.subjects : ['service']);
export type Verdict = 'conformant' | 'not_conformant' | 'incomplete' | 'partial';
export const VERDICT_LABEL: Record<Verdict, string> = { conformant: 'CONFORMANT', not_conformant: 'NOT CONFORMANT', incomplete: 'INCOMPLETE', partial: 'PARTIAL' };

/** What narrowed a run: a run with any of these makes no conformance claim (PARTIAL). */
export interface RunFilter {
  grep?: string;
  requirement?: string;
  /** `I/N`, or several joined by `,` after a merge. */
  shard?: string;
}

/** A part of the contract the profile declares out of scope: a requirement id, `area:<area>` or `section:<n>`. */
export interface OutOfScope {
  part: string;
  reason: string;
  /** The requirement ids the part covers, when it is not a requirement id, area or section (a profile setting such as `webhook.delivery`). */
  requirements?: string[];
}

/** Whether a declared part covers a requirement: its own list of ids, or a requirement id, `area:` or `section:`. */
export function outOfScopeCovers(p: OutOfScope, r: Pick<Requirement, 'id' | 'area' | 'section'>): boolean {
  return p.requirements ? p.requirements.includes(r.id) : partCovers(p.part, r);
}

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
  /** Set only in the variant meta-suite: the variant (bundle) that was on. */
  variant?: string;
  /** How long the check's test took. */
  durationMs?: number;
  /** not_verified for want of a profile setting: which (engine/evaluate.ts NotVerified). */
  lacks?: string;
  /** The profile settings the check asked for (tests/check-needs.spec.ts holds them to its declared needs). */
  uses?: string[];
}

/**
 * A check judged outside Playwright (the webhook sender or receiver, a client) as the report writers take it: the
 * one conversion from a record and its evidence, for every command that judges a subject itself.
 */
export function collectedOf(rec: CheckRecord & { evidence: readonly Exchange[] }, where: { project: string; file: string }): CollectedCheck {
  return {
    id: rec.id, requirements: rec.requirements, title: rec.title, outcome: rec.outcome, ...(rec.detail ? { detail: rec.detail } : {}),
    project: where.project, file: where.file, test: rec.id, evidence: rec.evidence, ...(rec.lacks ? { lacks: rec.lacks } : {}),
  };
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
  /** What narrowed the run (grep, requirement), recorded by the CLI. */
  filter?: RunFilter | null;
}

export interface Requirement {
  id: string;
  section: string;
  area: string;
  statement: string;
  level: RequirementLevel;
  subjects?: Subject[];
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

export interface VariantInput {
  total: number;
  passed: number;
  failing: Record<string, string[]>;
}

export interface RunContext {
  harnessVersion: string;
  /** What the run judges (default `service`): its scope is the catalog rows that bind it. */
  subject?: Subject;
  /** SHA-256 of the project's copy of the specification (fixtures/spec/). */
  specSha256?: string | null;
  /** The specification's title (its first heading). */
  specTitle?: string | null;
  /** The command line that started the run, secrets out (cli/main.ts records it). */
  command?: string[] | null;
  /** SHA-256 of the target profile with its secret values left out (reports/context.ts profileSha256). */
  profileSha256?: string | null;
  /** The run judged the bundled sandbox (a reference the harness started itself), not a service. */
  sandbox?: boolean;
  /** Why the mutation and variant scores are absent when no result was found (null: no reason known). */
  scoresAbsent?: string | null;
  /** Parts of the contract the profile declares out of scope, each with its reason. */
  outOfScope?: OutOfScope[];
  /**
   * What the run's scope is, when the profile or command declares it (`REST API; webhook delivery declared not
   * activated`, `webhook sender`): it leads the verdict reason, so the verdict line and every report say it.
   */
  scopeLabel?: string;
  /** --strict: a warning (a `should` not met) fails the run. */
  strict?: boolean;
  /** The variant meta-suite's result (variants.json), when measured. */
  variants?: VariantInput | null;
  /**
   * Reviewed reasons why a requirement can be observed by no run (fixtures/requirements/not-tested.json): such a
   * requirement is listed as not observable, whatever checks name it, and never counted as verified.
   */
  notTested?: Record<string, string>;
  /** How the verdict names the scope when the subject's own declaration (or traffic) set it: `in its declared scope`, and notes such as `audio not used`. */
  scopeNote?: { label: string; notes: string[] };
  /** check id → what would let it judge, declared by checks that need no profile role (the client's): "what would unlock". */
  unlock?: Record<string, string>;
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
  /** How long the check's test took (null when not recorded). */
  durationMs: number | null;
  /** not_verified for want of a profile setting: which (`credentials.no_scopes`); null otherwise. */
  lacks: string | null;
}

export interface ReportRequirement {
  id: string;
  section: string;
  area: string;
  statement: string;
  level: RequirementLevel;
  status: RequirementStatus;
  checks: string[];
  /** How many of its checks ended in each outcome. */
  counts: Partial<Record<ReportedOutcome, number>>;
  /** Why it is out of scope, when the profile says so. */
  outOfScope?: string;
  /** Why no run can observe it (status `not_observable`). */
  notObservable?: string;
  note?: string;
}

export interface Summary {
  pass: number;
  fail: number;
  not_verified: number;
  informational: number;
  warning: number;
  waived: number;
}

/** A profile role (or setting) whose absence left checks not verified. */
export interface MissingRole {
  role: string;
  kind: 'credential' | 'resource' | 'fault' | 'webhook' | 'client' | 'other';
  checks: number;
  requirements: number;
}

export interface ConformanceReport {
  reportVersion: 1;
  verdict: Verdict;
  /** One line: why this verdict. */
  verdictReason: string;
  run: {
    /** What this run judged: its scope and verdict are this subject's alone. */
    subject: Subject;
    harnessVersion: string;
    spec: string | null;
    /** The specification's title, beside its SHA-256: what the run judged against. */
    specTitle: string | null;
    specSha256: string | null;
    /** The command line that started the run, secrets out; null when not started by the CLI. */
    command: string[] | null;
    /** SHA-256 of the target profile with secret values left out (the same profile gives the same digest whatever its keys). */
    profileSha256: string | null;
    /** The bundled sandbox was judged, not a service (set only then). */
    sandbox?: true;
    /** What narrowed the run; null for a full run. */
    filter: RunFilter | null;
    strict: boolean;
    target: { name: string; baseUrl: string } | null;
    startedAt: string;
    finishedAt: string;
    seeds: string[];
    shards: string[];
    contractSha256: string | null;
    catalogSha256: string | null;
  };
  summary: Summary;
  requirements: ReportRequirement[];
  checks: ReportCheck[];
  coverage: {
    mustTotal: number;
    /** Must requirements not declared out of scope. */
    mustInScope: number;
    /** Must requirements in scope whose checks all ran and passed (or are waived). */
    mustVerified: number;
    /** Must requirements in scope that were not verified (not covered, not verified, informational only). */
    mustNotVerified: string[];
    mustCovered: number;
    uncovered: string[];
    notTested: Record<string, string>;
    /** Requirements of this subject that no run can observe, each with why: listed apart, never counted as verified. */
    notObservable: { id: string; reason: string }[];
    outOfScope: { id: string; reason: string }[];
  };
  scope: { outOfScope: (OutOfScope & { requirements: string[] })[]; declared?: string | null };
  mutation: { score: number | null; caught: number; total: number; survivors: string[]; unproven: string[] } | null;
  variants: { total: number; passed: number; failing: Record<string, string[]> } | null;
  /** Why each score is absent, in a plain sentence (null when it was measured). */
  scoreNotes: { mutation: string | null; variants: string | null };
  missingRoles: MissingRole[];
  waivers: { applied: (Waiver & { checks: string[] })[]; expired: Waiver[]; unmatched: (Waiver & { why: string })[] };
  /** Reasons the run fails besides failing checks (expired waivers, tests failing outside checks...). */
  problems: string[];
  warnings: string[];
}

/** Trims recorded evidence to the exchange fields (owned by record/record.ts). */
export const sanitizeEvidence = trimExchanges;

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
  if (outcomes.includes('warning')) return 'warning';
  if (outcomes.every((o) => o === 'informational')) return 'informational';
  return 'pass';
}

/** Whether a declared out-of-scope part names this requirement: its id, `area:<area>` or `section:<n>` (and its subsections). */
export function partCovers(part: string, r: Pick<Requirement, 'id' | 'area' | 'section'>): boolean {
  if (part === r.id) return true;
  if (part.startsWith('area:')) return part.slice(5) === r.area;
  if (part.startsWith('section:')) {
    const n = part.slice(8).replace(/^§/, '');
    return r.section === n || r.section.startsWith(`${n}.`);
  }
  return false;
}

/** A run narrowed by a filter, or by shards that do not add up to the whole run, makes no conformance claim. */
export function isPartial(filter: RunFilter | null | undefined, shards: string[]): boolean {
  if (filter?.grep !== undefined || filter?.requirement !== undefined) return true;
  if (shards.length === 0) return false;
  const parsed = shards.map((s) => /^([0-9]+)\/([0-9]+)$/.exec(s)).filter((m): m is RegExpExecArray => m !== null);
  if (parsed.length !== shards.length) return true;
  const total = Number(parsed[0][2]);
  if (parsed.some((m) => Number(m[2]) !== total)) return true;
  const seen = new Set(parsed.map((m) => Number(m[1])));
  for (let i = 1; i <= total; i++) if (!seen.has(i)) return true;
  return false;
}

/**
 * The profile role (or setting path) a not_verified check lacks, as missingRoles names it: a credential, resource
 * or fault by its role name (`no_scopes`), any other setting by its path (`webhook.sandboxControlUrl`). Read from the
 * record's `lacks` (engine/evaluate.ts NotVerified), never from the words of its detail.
 */
export function lackedRole(lacks: string | null | undefined): { role: string; kind: MissingRole['kind'] } | undefined {
  if (!lacks) return undefined;
  const named = roleOfSetting(lacks);
  if (!named) return { role: lacks, kind: 'other' };
  return named.kind === 'webhook' ? { role: lacks, kind: 'webhook' } : named;
}

/** Groups not-verified checks by the profile role or setting whose absence the check named. */
function missingRolesOf(checks: { id: string; outcome: ReportedOutcome; lacks: string | null; requirements: string[] }[], unlock: Record<string, string> = {}): MissingRole[] {
  const byRole = new Map<string, { kind: MissingRole['kind']; checks: Set<string>; reqs: Set<string> }>();
  for (const c of checks) {
    if (c.outcome !== 'not_verified') continue;
    const declared = unlock[c.id];
    if (declared !== undefined) {
      const entry = byRole.get(declared) ?? { kind: 'client' as const, checks: new Set<string>(), reqs: new Set<string>() };
      entry.checks.add(c.id);
      for (const r of c.requirements) entry.reqs.add(r);
      byRole.set(declared, entry);
      continue;
    }
    const lacked = lackedRole(c.lacks);
    if (!lacked) continue;
    const { role, kind } = lacked;
    const entry = byRole.get(role) ?? { kind, checks: new Set<string>(), reqs: new Set<string>() };
    entry.checks.add(c.id);
    for (const r of c.requirements) entry.reqs.add(r);
    byRole.set(role, entry);
  }
  return [...byRole].map(([role, e]) => ({ role, kind: e.kind, checks: e.checks.size, requirements: e.reqs.size }))
    .sort((a, b) => b.checks - a.checks || a.role.localeCompare(b.role));
}

/**
 * Builds the report. A waiver (by check id or requirement id) turns the matching *failing* checks into
 * `waived`; it never hides them. An expired waiver waives nothing and is a problem; a waiver that
 * matches no failing check is a warning (stale or misspelt).
 */
export function buildReport(outcomes: OutcomesFile, ctx: RunContext): ConformanceReport {
  const subject = ctx.subject ?? 'service';
  // The run's scope is its subject's rows; a check citing another subject's requirement is still reported.
  const catalog = ctx.catalog ? { ...ctx.catalog, requirements: ctx.catalog.requirements.filter((r) => subjectsOf(r).includes(subject)) } : null;
  const fullCatalog = ctx.catalog;
  const byReq = new Map((fullCatalog?.requirements ?? []).map((r) => [r.id, r]));
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
        project: c.project, file: c.file, test: c.test, seed: c.seed ?? null, waiver, evidence: sanitizeEvidence(c.evidence) ?? null, durationMs: c.durationMs ?? null,
        lacks: c.outcome === 'not_verified' ? c.lacks ?? null : null,
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

  const outOfScopeParts = ctx.outOfScope ?? [];
  const outOfScopeReason = (r: Requirement): string | undefined => outOfScopeParts.find((p) => outOfScopeCovers(p, r))?.reason;
  const requirements: ReportRequirement[] = (catalog?.requirements ?? []).map((r) => {
    const mine = checks.filter((c) => c.requirements.includes(r.id));
    const counts: Partial<Record<ReportedOutcome, number>> = {};
    for (const c of mine) counts[c.outcome] = (counts[c.outcome] ?? 0) + 1;
    let status = requirementStatus(mine.map((c) => c.outcome));
    // What the specification leaves open is observed, never passed: a check that passed on a decided rule it
    // shares with an open point (noting what it saw) makes the open point informational.
    if (r.level === 'unspecified' && status === 'pass') status = 'informational';
    const oos = outOfScopeReason(r);
    // Declared out of scope: listed as such, never counted as verified; a failure seen anyway stays a failure.
    if (oos !== undefined && status !== 'fail') status = 'out_of_scope';
    // Observable by no run: whatever a check names it for, its pass proves nothing about it (a receiver comparing
    // digests with `==` passes every delivery a constant-time one does). A failure seen anyway stays a failure.
    const unobservable = ctx.notTested?.[r.id];
    if (unobservable !== undefined && oos === undefined && status !== 'fail') status = 'not_observable';
    const row: ReportRequirement = {
      id: r.id, section: r.section, area: r.area, statement: r.statement, level: r.level,
      status, checks: [...new Set(mine.map((c) => c.id))], counts,
    };
    if (oos !== undefined) row.outOfScope = oos;
    if (status === 'not_observable') row.notObservable = unobservable;
    if (r.note !== undefined) row.note = r.note;
    return row;
  });
  for (const r of requirements) {
    // A check that can only show a breach (engine/registry.ts breachOnly) names such a requirement on purpose.
    const naming = r.checks.filter((id) => !declaration(id)?.breachOnly);
    if (r.status === 'not_observable' && naming.length) warnings.push(`requirement ${r.id} is observable by no run (fixtures/requirements/not-tested.json), yet check${r.checks.length === 1 ? '' : 's'} ${r.checks.join(', ')} name${r.checks.length === 1 ? 's' : ''} it: their outcomes are not counted for it`);
  }
  for (const p of outOfScopeParts) {
    if (catalog && !(catalog.requirements).some((r) => outOfScopeCovers(p, r))) warnings.push(`out-of-scope part "${p.part}" names no requirement of the catalog (use a requirement id, area:<area> or section:<n>)`);
  }

  const summary: Summary = { pass: 0, fail: 0, warning: 0, not_verified: 0, informational: 0, waived: 0 };
  for (const c of checks) summary[c.outcome]++;

  for (const f of outcomes.testFailures ?? []) problems.push(`test "${f.test}" (${f.project}, ${f.file}) failed outside any check: ${f.error}`);
  for (const e of outcomes.runErrors ?? []) problems.push(`run error: ${e}`);
  if (outcomes.runStatus === 'interrupted' || outcomes.runStatus === 'timedout') problems.push(`the run ended ${outcomes.runStatus}; its results are incomplete`);
  if (checks.length === 0) problems.push('no check ran');
  if (!catalog) warnings.push('the requirement catalog was not found: requirements and coverage are not reported');

  const must = requirements.filter((r) => r.level === 'must');
  const uncovered = must.filter((r) => r.status === 'not_covered' || (r.status === 'not_observable' && r.checks.length === 0)).map((r) => r.id);
  // A requirement with a reviewed reason why no run can observe it (fixtures/requirements/not-tested.json: an
  // operational status, a constant-time comparison) is listed, with its reason, but it is not part of what any
  // run verifies.
  const notTestable = new Set(must.filter((r) => r.status === 'not_observable').map((r) => r.id));
  const mustInScope = must.filter((r) => r.status !== 'out_of_scope' && !notTestable.has(r.id));
  const verifiedStatus = (st: RequirementStatus) => st === 'pass' || st === 'waived' || st === 'warning';
  const mustNotVerified = mustInScope.filter((r) => !verifiedStatus(r.status) && r.status !== 'fail').map((r) => r.id);
  const mustVerified = mustInScope.filter((r) => verifiedStatus(r.status)).length;

  const seeds = [...new Set([...(outcomes.seed ?? '').split(','), ...outcomes.checks.map((c) => c.seed)].filter((s): s is string => !!s))].sort();
  const shards = outcomes.shard ? outcomes.shard.split(',') : [];
  const filter: RunFilter | null = outcomes.filter || shards.length ? { ...(outcomes.filter ?? {}), ...(shards.length ? { shard: shards.join(',') } : {}) } : null;
  const strict = ctx.strict === true;

  // The verdict: any un-waived failure (or a problem) is a non-conformance, whatever the scope of the run;
  // otherwise a narrowed run claims nothing; otherwise every must requirement in scope must be verified.
  let verdict: Verdict;
  let verdictReason: string;
  if (summary.fail > 0 || problems.length > 0) {
    verdict = 'not_conformant';
    verdictReason = summary.fail > 0 ? `${summary.fail} check${summary.fail === 1 ? '' : 's'} failed` : problems[0];
  } else if (strict && summary.warning > 0) {
    verdict = 'not_conformant';
    verdictReason = `--strict: ${summary.warning} warning${summary.warning === 1 ? '' : 's'} (a should not met)`;
  } else if (isPartial(outcomes.filter, shards)) {
    verdict = 'partial';
    verdictReason = `a narrowed run (${describeFilter(filter)}) makes no conformance claim; nothing failed`;
  } else if (mustNotVerified.length > 0 || mustInScope.length === 0) {
    verdict = 'incomplete';
    verdictReason = ctx.scopeNote
      ? `verified ${mustVerified} of ${mustInScope.length} must requirements ${ctx.scopeNote.label}; nothing failed${ctx.scopeNote.notes.map((n) => `; ${n}`).join('')}`
      : `verified ${mustVerified} of ${mustInScope.length} must requirements in scope; nothing failed`;
  } else {
    verdict = 'conformant';
    const aside = [outOfScopeParts.length ? `${must.filter((r) => r.status === 'out_of_scope').length} declared out of scope` : '', notTestable.size ? `${notTestable.size} not observable by any run, listed apart` : ''].filter(Boolean);
    verdictReason = ctx.scopeNote
      ? `verified ${mustVerified} of ${mustInScope.length} must requirements ${ctx.scopeNote.label}${ctx.scopeNote.notes.map((n) => `; ${n}`).join('')}`
      : `verified ${mustVerified} of ${mustInScope.length} must requirements in scope${aside.length ? ` (${aside.join('; ')})` : ''}`;
  }
  if (ctx.scopeLabel) verdictReason = `${ctx.scopeLabel}; ${verdictReason}`;

  const m = ctx.mutation;
  const v = ctx.variants;
  return {
    reportVersion: 1,
    verdict,
    verdictReason,
    run: {
      subject,
      harnessVersion: ctx.harnessVersion, spec: catalog?.spec ?? null, specTitle: ctx.specTitle ?? null, specSha256: ctx.specSha256 ?? null,
      command: ctx.command ?? null, profileSha256: ctx.profileSha256 ?? null, filter, strict, ...(ctx.sandbox ? { sandbox: true as const } : {}),
      target: ctx.target ?? outcomes.target ?? null,
      // The runner's own status is not reported: a failing check ends its test without throwing, so the runner
      // says "passed" on a NOT CONFORMANT run; an interrupted or timed-out run is a problem above.
      startedAt: outcomes.startedAt, finishedAt: outcomes.finishedAt, seeds,
      shards, contractSha256: ctx.contractSha256, catalogSha256: ctx.catalogSha256,
    },
    summary,
    requirements,
    checks,
    coverage: {
      mustTotal: must.length, mustInScope: mustInScope.length, mustVerified, mustNotVerified,
      mustCovered: must.length - uncovered.length, uncovered,
      notTested: Object.fromEntries(uncovered.filter((id) => ctx.notTested?.[id]).map((id) => [id, ctx.notTested![id]])),
      notObservable: requirements.filter((r) => r.status === 'not_observable').map((r) => ({ id: r.id, reason: r.notObservable! })),
      outOfScope: requirements.filter((r) => r.outOfScope !== undefined).map((r) => ({ id: r.id, reason: r.outOfScope! })),
    },
    scope: {
      outOfScope: outOfScopeParts.map((p) => ({ part: p.part, reason: p.reason, requirements: (catalog?.requirements ?? []).filter((r) => outOfScopeCovers(p, r)).map((r) => r.id) })),
      declared: ctx.scopeLabel ?? null,
    },
    mutation: m ? { score: m.total > 0 ? m.caught / m.total : null, caught: m.caught, total: m.total, survivors: [...m.survivors], unproven: [...m.unproven] } : null,
    variants: v ? { total: v.total, passed: v.passed, failing: { ...v.failing } } : null,
    scoreNotes: { mutation: m ? null : scoresAbsent(subject, ctx.scoresAbsent), variants: v ? null : scoresAbsent(subject, ctx.scoresAbsent) },
    missingRoles: missingRolesOf(checks, ctx.unlock),
    waivers: { applied: [...applied].map(([w, ids]) => ({ ...w, checks: [...new Set(ids)] })), expired, unmatched },
    problems,
    warnings,
  };
}

/** Why a score is absent: the context's reason, or what the subject implies. */
function scoresAbsent(subject: Subject, reason: string | null | undefined): string {
  if (subject !== 'service') return `Not applicable: the mutation and variant scores measure the service checks against the reference's deliberately broken (mutants) and legitimately different (variants) services; the ${subject} checks are proven able to fail by the broken ${subject}s of the harness's own tests.`;
  return reason ?? 'Not measured for this run: no mutation.json or variants.json was found beside the report (`conformance run --mutants` measures both against the reference sandbox).';
}

/** `grep x`, `requirement ID`, `shard 1/2`. */
export function describeFilter(filter: RunFilter | null | undefined): string {
  if (!filter) return 'full run';
  const parts: string[] = [];
  if (filter.grep !== undefined) parts.push(`--grep ${filter.grep}`);
  if (filter.requirement !== undefined) parts.push(`--requirement ${filter.requirement}`);
  if (filter.shard !== undefined) parts.push(`--shard ${filter.shard}`);
  return parts.join(', ') || 'full run';
}

/** The plain closing line: `conformance: N passed, N failed, N not verified, N informational[, N waived]`. */
export function summaryLine(s: Summary): string {
  return `conformance: ${s.pass} passed, ${s.fail} failed, ${s.warning ?? 0} warnings, ${s.not_verified} not verified, ${s.informational} informational${s.waived ? `, ${s.waived} waived` : ''}`;
}

/**
 * The exit decision, from the report alone: 1 when any failure is un-waived, a waiver expired, a problem is
 * listed or the verdict is NOT CONFORMANT; 1 on INCOMPLETE unless --allow-incomplete; 0 on CONFORMANT and on
 * a PARTIAL run in which nothing failed.
 */
export function exitCodeFor(report: Pick<ConformanceReport, 'summary' | 'waivers' | 'problems' | 'verdict'>, opts: { allowIncomplete?: boolean } = {}): 0 | 1 {
  if (report.summary.fail > 0 || report.waivers.expired.length > 0 || report.problems.length > 0) return 1;
  if (report.verdict === 'not_conformant') return 1;
  if (report.verdict === 'incomplete') return opts.allowIncomplete ? 0 : 1;
  return 0;
}

/**
 * The anchor of each check record, in report order: `check-<id>`; a second record of the same id (two
 * projects, two shards) gets `check-<id>-2`. JUnit and the terminal link to these.
 */
export function checkAnchors(checks: readonly { id: string }[]): string[] {
  const used = new Set<string>();
  return checks.map((c) => {
    let a = `check-${c.id}`;
    for (let k = 2; used.has(a); k++) a = `check-${c.id}-${k}`;
    used.add(a);
    return a;
  });
}

/** The closing verdict line, naming the subject: `conformance: INCOMPLETE — service: verified 200 of 268 must requirements in scope; ...`. */
export function verdictLine(report: Pick<ConformanceReport, 'verdict' | 'verdictReason'> & { run?: { subject?: Subject } }): string {
  return `conformance: ${VERDICT_LABEL[report.verdict]} — ${report.run?.subject ?? 'service'}: ${report.verdictReason}`;
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
    // Shards of one run share their grep/requirement filter; shards themselves are judged from `shard`.
    filter: parts.find((p) => p.filter)?.filter ?? null,
  };
}

/**
 * The test file a runner test belongs to. A batch of checks is declared by engine/playwright/fixtures.ts on behalf of its
 * suite file, so the test's own location names fixtures.ts; the file suite above it names the suite file.
 */
export function suiteFileOf(test: { location: { file: string; line: number }; parent?: unknown }): { file: string; line?: number } {
  let s = test.parent as { type?: string; parent?: unknown; location?: { file: string } } | undefined;
  while (s && s.type !== 'file') s = s.parent as typeof s;
  const file = s?.location?.file;
  return file && file !== test.location.file ? { file } : { file: test.location.file, line: test.location.line };
}
