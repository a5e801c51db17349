// What changed between two conformance reports (conformance.json): checks newly failing, fixed, still
// failing, newly not verified, and changes of scope (verdict, subject, filter, declared out-of-scope parts,
// the specification, contract and catalog digests, the target, checks added or dropped). Pure: two reports
// in, a comparison and its text or Markdown out. `conformance diff` prints it; `run --baseline` gates on it.
import { describeFilter, isPartial, VERDICT_LABEL, type ConformanceReport, type ReportedOutcome } from './model.ts';
import { mdText } from './summary.ts';
import { oneLine } from '../record/redact.ts';

/** The fields of a report a comparison reads (an older report may lack the newer ones). */
export type ComparableReport = Pick<ConformanceReport, 'verdict' | 'verdictReason' | 'checks'> & {
  run: Partial<ConformanceReport['run']> & Pick<ConformanceReport['run'], 'startedAt'>;
  scope?: ConformanceReport['scope'];
  coverage?: Partial<ConformanceReport['coverage']>;
};

/** One check id as the comparison sees it: its worst outcome over its records, and what it said. */
export interface CheckState { id: string; outcome: ReportedOutcome; title: string; detail: string | null; requirements: string[] }

export interface ReportDiff {
  newlyFailing: CheckState[];
  fixed: CheckState[];
  stillFailing: CheckState[];
  /** Failing before, not run at all now (neither fixed nor failing: unknown). */
  failingNotRun: CheckState[];
  newlyNotVerified: CheckState[];
  /** Plain sentences, one per change of scope. */
  scope: string[];
  old: { verdict: string; startedAt: string };
  new: { verdict: string; startedAt: string };
}

// Worst first: a check recorded twice (two shards, two projects) is as bad as its worst record.
const RANK: ReportedOutcome[] = ['fail', 'waived', 'warning', 'not_verified', 'informational', 'pass'];

/** A failure, waived or not: what a baseline records as known. */
export const isFailure = (o: ReportedOutcome | undefined) => o === 'fail' || o === 'waived';

export function checkStates(report: Pick<ComparableReport, 'checks'>): Map<string, CheckState> {
  const out = new Map<string, CheckState>();
  for (const c of report.checks) {
    const prev = out.get(c.id);
    if (!prev || RANK.indexOf(c.outcome) < RANK.indexOf(prev.outcome)) {
      out.set(c.id, { id: c.id, outcome: c.outcome, title: c.title, detail: c.detail ?? null, requirements: [...c.requirements] });
    }
  }
  return out;
}

const label = (v: string) => (VERDICT_LABEL as Record<string, string>)[v] ?? v;

export function diffReports(oldR: ComparableReport, newR: ComparableReport): ReportDiff {
  const before = checkStates(oldR);
  const after = checkStates(newR);
  const byId = (a: CheckState, b: CheckState) => a.id.localeCompare(b.id);
  const newlyFailing: CheckState[] = [];
  const stillFailing: CheckState[] = [];
  const fixed: CheckState[] = [];
  const failingNotRun: CheckState[] = [];
  const newlyNotVerified: CheckState[] = [];
  for (const [id, now] of after) {
    const was = before.get(id);
    // Un-waived failures are what a gate fails on; a waived failure that loses its waiver is newly failing.
    if (now.outcome === 'fail') (was?.outcome === 'fail' ? stillFailing : newlyFailing).push(now);
    if (now.outcome === 'not_verified' && was?.outcome !== 'not_verified') newlyNotVerified.push(now);
  }
  for (const [id, was] of before) {
    if (!isFailure(was.outcome)) continue;
    const now = after.get(id);
    if (!now) failingNotRun.push(was);
    else if (!isFailure(now.outcome)) fixed.push(now);
  }

  const scope: string[] = [];
  const o = oldR.run;
  const n = newR.run;
  if (oldR.verdict !== newR.verdict) scope.push(`verdict: ${label(oldR.verdict)} → ${label(newR.verdict)} (${newR.verdictReason})`);
  if ((o.subject ?? 'service') !== (n.subject ?? 'service')) scope.push(`subject: ${o.subject ?? 'service'} → ${n.subject ?? 'service'} (the two reports judge different things)`);
  if (describeFilter(o.filter) !== describeFilter(n.filter)) scope.push(`filter: ${describeFilter(o.filter)} → ${describeFilter(n.filter)}`);
  for (const [name, key] of [['specification', 'specSha256'], ['contract', 'contractSha256'], ['requirement catalog', 'catalogSha256'], ['profile', 'profileSha256']] as const) {
    const a = o[key];
    const b = n[key];
    if (a && b && a !== b) scope.push(`${name} changed: SHA-256 ${a.slice(0, 12)}… → ${b.slice(0, 12)}…`);
  }
  if (o.target && n.target && o.target.baseUrl !== n.target.baseUrl) scope.push(`target: ${o.target.baseUrl} → ${n.target.baseUrl}`);
  const parts = (r: ComparableReport) => new Map((r.scope?.outOfScope ?? []).map((p) => [p.part, p.reason]));
  const op = parts(oldR);
  const np = parts(newR);
  for (const [part, reason] of np) if (!op.has(part)) scope.push(`now declared out of scope: ${part} (${reason})`);
  for (const [part] of op) if (!np.has(part)) scope.push(`no longer declared out of scope: ${part}`);
  const oc = oldR.coverage;
  const nc = newR.coverage;
  if (oc?.mustInScope !== undefined && nc?.mustInScope !== undefined && (oc.mustInScope !== nc.mustInScope || oc.mustVerified !== nc.mustVerified)) {
    scope.push(`must requirements verified: ${oc.mustVerified} of ${oc.mustInScope} → ${nc.mustVerified} of ${nc.mustInScope} in scope`);
  }
  const added = [...after.keys()].filter((id) => !before.has(id));
  const dropped = [...before.keys()].filter((id) => !after.has(id));
  if (added.length) scope.push(`${added.length} check${added.length === 1 ? '' : 's'} only in the new report: ${added.slice(0, 10).join(', ')}${added.length > 10 ? ', …' : ''}`);
  if (dropped.length) scope.push(`${dropped.length} check${dropped.length === 1 ? '' : 's'} only in the old report: ${dropped.slice(0, 10).join(', ')}${dropped.length > 10 ? ', …' : ''}`);

  return {
    newlyFailing: newlyFailing.sort(byId), fixed: fixed.sort(byId), stillFailing: stillFailing.sort(byId),
    failingNotRun: failingNotRun.sort(byId), newlyNotVerified: newlyNotVerified.sort(byId), scope,
    old: { verdict: oldR.verdict, startedAt: o.startedAt }, new: { verdict: newR.verdict, startedAt: n.startedAt },
  };
}

const SECTIONS: [keyof ReportDiff, string][] = [
  ['newlyFailing', 'Newly failing'], ['fixed', 'Fixed'], ['stillFailing', 'Still failing'],
  ['failingNotRun', 'Failing before, not run now'], ['newlyNotVerified', 'Newly not verified'],
];

/** The comparison as plain text, one check per line. */
export function diffText(d: ReportDiff, names: { old: string; new: string }): string {
  const lines = [`conformance diff: ${names.old} (${label(d.old.verdict)}, ${d.old.startedAt}) → ${names.new} (${label(d.new.verdict)}, ${d.new.startedAt})`];
  for (const [key, title] of SECTIONS) {
    const list = d[key] as CheckState[];
    lines.push(`${title} (${list.length})${list.length ? ':' : ''}`);
    for (const c of list) lines.push(`  ${c.id} [${c.requirements.join(', ') || 'no requirement'}]${c.outcome === 'fail' || c.outcome === 'not_verified' ? `: ${oneLine(c.detail ?? c.title, 240)}` : ` (now ${c.outcome})`}`);
  }
  lines.push(`Scope changes (${d.scope.length})${d.scope.length ? ':' : ''}`, ...d.scope.map((s) => `  ${s}`));
  return `${lines.join('\n')}\n`;
}

/** The comparison as Markdown (a pull-request comment, a job summary). */
export function diffMarkdown(d: ReportDiff, names: { old: string; new: string }): string {
  const lines = [`## Conformance: what changed`, '', `\`${names.old}\` (${label(d.old.verdict)}, ${d.old.startedAt}) → \`${names.new}\` (${label(d.new.verdict)}, ${d.new.startedAt})`, ''];
  lines.push('| | checks |', '|---|---|');
  for (const [key, title] of SECTIONS) lines.push(`| ${title} | ${(d[key] as CheckState[]).length} |`);
  lines.push('');
  for (const [key, title] of SECTIONS) {
    const list = d[key] as CheckState[];
    if (!list.length) continue;
    lines.push(`### ${title} (${list.length})`, '', '| Check | Requirements | Outcome | Detail |', '|---|---|---|---|');
    for (const c of list) lines.push(`| \`${c.id}\` | ${c.requirements.map((r) => `\`${r}\``).join(' ') || 'none'} | ${c.outcome} | ${mdText(oneLine(c.detail ?? c.title, 240))} |`);
    lines.push('');
  }
  if (d.scope.length) lines.push('### Scope changes', '', ...d.scope.map((s) => `- ${mdText(s)}`), '');
  return `${lines.join('\n')}\n`;
}


/** A run judged against a baseline report: which of its failures were known, which are new, which known ones now pass. */
export interface BaselineComparison {
  /** Failing now and failing (or waived) in the baseline. */
  known: CheckState[];
  /** Failing now, not failing in the baseline: these fail the gate. */
  newFailures: CheckState[];
  /** Failing in the baseline, run now and not failing: the baseline is stale (update it). */
  stale: CheckState[];
}

export function compareToBaseline(baseline: Pick<ComparableReport, 'checks'>, report: Pick<ComparableReport, 'checks'>): BaselineComparison {
  const before = checkStates(baseline);
  const after = checkStates(report);
  const known: CheckState[] = [];
  const newFailures: CheckState[] = [];
  const stale: CheckState[] = [];
  for (const [id, now] of after) {
    if (now.outcome !== 'fail') continue;
    (isFailure(before.get(id)?.outcome) ? known : newFailures).push(now);
  }
  for (const [id, was] of before) {
    const now = after.get(id);
    if (isFailure(was.outcome) && now && !isFailure(now.outcome)) stale.push(now);
  }
  const byId = (a: CheckState, b: CheckState) => a.id.localeCompare(b.id);
  return { known: known.sort(byId), newFailures: newFailures.sort(byId), stale: stale.sort(byId) };
}

/**
 * The exit decision of a run gated on a baseline: the report's verdict is unchanged (a known failure is still
 * a non-conformance), but the gate fails only on what the baseline does not know: a new failure, a problem, an
 * expired waiver, a warning under --strict, or (unless --allow-incomplete) something in scope not verified.
 */
export function baselineExitCode(report: ConformanceReport, cmp: BaselineComparison, opts: { allowIncomplete?: boolean } = {}): 0 | 1 {
  return baselineGate(report, cmp, opts).code;
}

/** The gate's decision against a baseline and the one sentence that says why, for every combination. */
export function baselineGate(report: ConformanceReport, cmp: BaselineComparison, opts: { allowIncomplete?: boolean } = {}): { code: 0 | 1; why: string } {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  if (cmp.newFailures.length > 0) return { code: 1, why: `the gate fails: ${n(cmp.newFailures.length, 'failure')} beyond the baseline (the known ones are the baseline's)` };
  if (report.problems.length > 0) return { code: 1, why: `the gate fails: no failure beyond the baseline, but the run had a problem: ${report.problems[0]}` };
  if (report.waivers.expired.length > 0) return { code: 1, why: `the gate fails: no failure beyond the baseline, but ${n(report.waivers.expired.length, 'waiver')} expired (renew or remove ${report.waivers.expired.length === 1 ? 'it' : 'them'})` };
  if (report.run.strict && report.summary.warning > 0) return { code: 1, why: `the gate fails: no failure beyond the baseline, but --strict and ${n(report.summary.warning, 'warning')}` };
  if (report.verdict === 'partial' || isPartial(report.run.filter, report.run.shards)) return { code: 0, why: 'the gate passes: no failure beyond the baseline (a narrowed run claims nothing more)' };
  const notVerified = report.coverage.mustNotVerified.length;
  if (notVerified > 0 || report.coverage.mustInScope === 0) {
    return opts.allowIncomplete
      ? { code: 0, why: `the gate passes: no failure beyond the baseline; ${n(notVerified, 'must requirement')} in scope not verified, which --allow-incomplete accepts` }
      : { code: 1, why: `the gate fails: no failure beyond the baseline, but the run is INCOMPLETE: ${n(notVerified, 'must requirement')} in scope not verified (--allow-incomplete exits 0 on it)` };
  }
  return { code: 0, why: 'the gate passes: no failure beyond the baseline' };
}
