// What a CI system shows of a run, by the conventions CI systems read: the Markdown job summary GitHub
// Actions renders from $GITHUB_STEP_SUMMARY (verdict, scope, counts, the failing checks with their
// requirements and the HTML report's anchor) and GitHub's `::error` workflow commands, one per failing
// check. Pure renderers of the report model: the CLI decides where they go (cli/common.ts publishToCi).
import { checkAnchors, describeFilter, VERDICT_LABEL, type ConformanceReport, type ReportCheck } from './model.ts';

/** The HTML report's file name (reports/write.ts REPORT_FILES.html; tests keep them equal). */
const HTML = 'conformance.html';
/** A job summary is capped at 1 MiB by GitHub; the failures listed are capped well below that. */
export const SUMMARY_MAX_FAILURES = 100;
/** GitHub shows at most 10 error annotations per step: the first ones, then one naming the rest. */
export const MAX_ANNOTATIONS = 10;

const VERDICT_ICON: Record<string, string> = { conformant: '✅', not_conformant: '❌', incomplete: '⚠️', partial: 'ℹ️' };

/** Text for a Markdown table cell or line: HTML-escaped, pipes escaped, on one line. */
export function mdText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ').trim();
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** The failing checks (un-waived `fail`, and `warning` under --strict) with their HTML anchors, in report order. */
export function failingChecks(report: ConformanceReport): { check: ReportCheck; anchor: string }[] {
  const anchors = checkAnchors(report.checks);
  const strict = report.run.strict === true;
  return report.checks.map((check, i) => ({ check, anchor: anchors[i] }))
    .filter(({ check }) => check.outcome === 'fail' || (strict && check.outcome === 'warning'));
}

/**
 * Where a reader of the job summary finds the reports: the workflow run's page (its artifacts are listed there), from
 * GitHub's own variables; undefined outside GitHub Actions. A link into the HTML report would be relative to
 * nothing on GitHub: the summary names the anchor as text instead.
 */
export function runPageUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: id } = env;
  return server && repo && id ? `${server.replace(/\/+$/, '')}/${repo}/actions/runs/${id}` : undefined;
}

/** The Markdown job summary of a run. `extra` lines (a baseline comparison) are added before the failures. */
export function stepSummary(report: ConformanceReport, extra: string[] = [], env: NodeJS.ProcessEnv = process.env): string {
  const page = runPageUrl(env);
  const where = page ? `[the run's artifacts](${page}#artifacts)` : 'the run\'s report folder';
  const s = report.summary;
  const run = report.run;
  const label = VERDICT_LABEL[report.verdict] ?? String(report.verdict).toUpperCase();
  const cov = report.coverage;
  const lines: string[] = [
    `## ${VERDICT_ICON[report.verdict] ?? ''} Conformance: ${label} — ${run.subject ?? 'service'}`.replace('##  ', '## '),
    '',
    `**${mdText(report.verdictReason)}**`,
    '',
    `| | |`,
    `|---|---|`,
    `| Target | ${run.target ? `${mdText(run.target.name)} — ${code(run.target.baseUrl)}` : 'unknown'} |`,
    `| Scope | ${mdText(describeFilter(run.filter))}; verified ${cov.mustVerified} of ${cov.mustInScope} must requirements in scope${cov.mustInScope !== cov.mustTotal ? ` (${cov.mustTotal} in the catalog)` : ''}${report.scope.outOfScope.length ? `; declared out of scope: ${report.scope.outOfScope.map((p) => `${code(p.part)} (${mdText(p.reason)})`).join(', ')}` : ''} |`,
    `| Checks | ${s.pass} passed · ${s.fail} failed · ${s.warning ?? 0} warnings · ${s.not_verified} not verified · ${s.informational} informational · ${s.waived} waived |`,
    `| Specification | ${mdText(String((run as { specTitle?: string | null }).specTitle ?? run.spec ?? 'unknown'))}${run.specSha256 ? ` (SHA-256 ${code(run.specSha256.slice(0, 12))}…)` : ''} |`,
    `| Harness | ${mdText(run.harnessVersion)} |`,
    '',
  ];
  if (extra.length) lines.push(...extra, '');
  if (report.problems.length) {
    lines.push(`### Problems (${report.problems.length})`, '', ...report.problems.slice(0, SUMMARY_MAX_FAILURES).map((p) => `- ${mdText(p)}`), '');
  }
  // Waivers the owners must act on: expired (a problem already) and stale (matching nothing in this run).
  const w = report.waivers;
  if (w.expired.length || w.unmatched.length) {
    lines.push(`### Waivers to review (${w.expired.length + w.unmatched.length})`, '');
    for (const x of w.expired) lines.push(`- ${code(x.id)} (owner ${mdText(x.owner)}): expired on ${mdText(x.expires)}; it waives nothing`);
    for (const x of w.unmatched) lines.push(`- ${code(x.id)} (owner ${mdText(x.owner)}): stale, ${mdText(x.why)}`);
    lines.push('');
  }
  const failing = failingChecks(report);
  if (failing.length) {
    lines.push(`### Failing checks (${failing.length})`, '', '| Check | Requirements | What failed | In the HTML report |', '|---|---|---|---|');
    for (const { check, anchor } of failing.slice(0, SUMMARY_MAX_FAILURES)) {
      const what = `${check.title}${check.detail ? `: ${check.detail}` : ''}`;
      lines.push(`| ${code(check.id)} | ${check.requirements.map(code).join(' ') || 'none'} | ${mdText(what.length > 300 ? `${what.slice(0, 299)}…` : what)} | ${code(`#${anchor}`)} |`);
    }
    if (failing.length > SUMMARY_MAX_FAILURES) lines.push('', `… and ${failing.length - SUMMARY_MAX_FAILURES} more in ${HTML}.`);
    lines.push('');
  }
  if (report.verdict === 'incomplete' && cov.mustNotVerified.length) {
    const roles = report.missingRoles.slice(0, 5).map((r) => code(r.role)).join(', ');
    lines.push(`${cov.mustNotVerified.length} must requirement${cov.mustNotVerified.length === 1 ? '' : 's'} in scope not verified${roles ? `; the profile would need: ${roles}${report.missingRoles.length > 5 ? ', …' : ''}` : ''}.`, '');
  }
  lines.push(`Reports: ${HTML} (open it and go to an anchor above), conformance.json, junit.xml, in ${where}.`, '');
  return `${lines.join('\n')}\n`;
}

/** Escapes the data of a GitHub workflow command (`%`, CR, LF). */
function commandData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes a property of a GitHub workflow command (also `:` and `,`). */
function commandProperty(s: string): string {
  return commandData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::error title=…::…` lines: one per failing check (the first MAX_ANNOTATIONS), one per problem, one for the verdict. */
export function githubAnnotations(report: ConformanceReport): string[] {
  const out: string[] = [];
  const failing = failingChecks(report);
  for (const { check, anchor } of failing.slice(0, MAX_ANNOTATIONS)) {
    const title = `conformance: ${check.id} [${check.requirements.join(', ') || 'no requirement'}]`;
    out.push(`::error title=${commandProperty(title)}::${commandData(`${check.title}${check.detail ? `\n${check.detail}` : ''}\nsee ${HTML}#${anchor}`)}`);
  }
  if (failing.length > MAX_ANNOTATIONS) out.push(`::error title=${commandProperty('conformance: more failing checks')}::${commandData(`${failing.length - MAX_ANNOTATIONS} more failing checks: see ${HTML}`)}`);
  for (const p of report.problems.slice(0, 5)) out.push(`::error title=${commandProperty('conformance: problem')}::${commandData(p)}`);
  for (const x of report.waivers.unmatched.slice(0, 5)) out.push(`::warning title=${commandProperty(`conformance: stale waiver ${x.id}`)}::${commandData(`waiver ${x.id} (owner ${x.owner}) is stale: ${x.why}; remove it or correct its pattern`)}`);
  if (report.verdict !== 'conformant') {
    const label = VERDICT_LABEL[report.verdict] ?? report.verdict;
    const kind = report.verdict === 'not_conformant' ? 'error' : 'warning';
    out.push(`::${kind} title=${commandProperty(`conformance: ${label}`)}::${commandData(`${label} — ${report.run.subject ?? 'service'}: ${report.verdictReason}`)}`);
  }
  return out;
}
