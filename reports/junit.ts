// Renders the conformance report as JUnit XML that CI tools show well (Jenkins, GitLab, GitHub test
// reporters), valid against the published JUnit schema of the Jenkins xUnit plugin (junit-10.xsd, vendored in
// tests/fixtures/ and checked there with libxml2's xmllint). Pure: report in, string out.
//
// - One testcase per check: name = check id, classname = `conformance.section_<n>` (see `classname`), `time`
//   the check's own measured duration. `fail` is a <failure> whose message names the requirement ids and the
//   HTML report's anchor; `not_verified`, `informational` and waived failures are <skipped> with their reason
//   (none of them is a pass); `warning` (a should not met) passes with a <system-out> note, and fails under
//   --strict, as the verdict then does.
// - The first suite, `conformance.run`, holds the `verdict` testcase: it FAILS unless the verdict is
//   CONFORMANT (NOT CONFORMANT, INCOMPLETE and PARTIAL, each with its reason), so the JUnit view never reads
//   greener than the report. Its <properties> carry the run's provenance. Problems (expired waivers, tests
//   failing outside any check) are failing testcases too.
// - Requirement ids are <property> elements: the schema allows <properties> on a testsuite only (pytest
//   documents the same limit of this schema for its record_property), so each section's suite carries one
//   `requirement:<check id>` property per requirement of each of its checks. Every testcase repeats its
//   requirement ids and anchor in <system-out>, because neither Jenkins nor GitLab shows properties.
// - Durations are real: <testsuites time> is the run's wall-clock time (finishedAt − startedAt), never the
//   sum of the checks' times (checks run concurrently in several workers, so that sum exceeds the run);
//   a section suite carries no `time` for the same reason.
import { checkAnchors, VERDICT_LABEL, type ConformanceReport, type ReportCheck } from './model.ts';

/** The HTML report's file name beside junit.xml (reports/write.ts REPORT_FILES.html; a test keeps them equal). */
export const HTML_REPORT_FILE = 'conformance.html';

/** Escapes text for XML attributes and content, dropping characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const token = (s: string): string => s.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'none';

/**
 * Jenkins splits a classname at its LAST dot into package and class (`§4.1` became package `§4`, class
 * `1`). So every classname has exactly one dot: package `conformance`, class `section_4_1` (spec section
 * 4.1), else `area_<area>`, else `project_<project>`; dots and other punctuation inside become `_`.
 * GitLab shows the classname as "suite" text, which reads the same. Check ids (the testcase names) are
 * kebab-case and are not split by anyone.
 */
export function classname(c: Pick<ReportCheck, 'section' | 'area' | 'project'>): string {
  if (c.section) return `conformance.section_${token(c.section)}`;
  if (c.area) return `conformance.area_${token(c.area)}`;
  return `conformance.project_${token(c.project)}`;
}

function evidenceMs(evidence: unknown): number | null {
  if (!Array.isArray(evidence)) return null;
  let total = 0;
  let any = false;
  for (const ex of evidence) {
    const ms = (ex as { response?: { durationMs?: unknown } } | null)?.response?.durationMs;
    if (typeof ms === 'number' && Number.isFinite(ms)) {
      total += ms;
      any = true;
    }
  }
  return any ? total : null;
}

/** Seconds of one check: its own recorded duration, else the sum of its exchanges' durations, else 0. */
export function checkSeconds(c: Pick<ReportCheck, 'durationMs' | 'evidence'>): number {
  const own = typeof c.durationMs === 'number' && Number.isFinite(c.durationMs) && c.durationMs >= 0 ? c.durationMs : null;
  return (own ?? evidenceMs(c.evidence) ?? 0) / 1000;
}

/** The run's wall-clock seconds, from its start and end (0 when either is missing or unreadable). */
export function runSeconds(run: Pick<ConformanceReport['run'], 'startedAt' | 'finishedAt'>): number {
  const ms = Date.parse(run.finishedAt) - Date.parse(run.startedAt);
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
}

const secs = (s: number): string => s.toFixed(3);
const prop = (name: string, value: string) => `      <property name="${xmlEscape(name)}" value="${xmlEscape(value)}"/>`;
const properties = (rows: string[]) => (rows.length ? `    <properties>\n${rows.join('\n')}\n    </properties>\n` : '');

function testcase(c: ReportCheck, anchor: string, strict: boolean): string {
  const link = `${HTML_REPORT_FILE}#${anchor}`;
  const reqs = c.requirements.join(', ') || 'none';
  const detail = c.detail ?? '';
  const trace = `requirements: ${reqs}\nreport: ${link}\nfile: ${c.file}${c.seed ? `\nseed: ${c.seed}` : ''}`;
  let body = '';
  let out = trace;
  if (c.outcome === 'fail') {
    const message = `${c.title} [${reqs}] see ${link}`;
    body = `      <failure message="${xmlEscape(message)}" type="non_conformance">${xmlEscape(`${detail}\n\nrequirements: ${reqs}\nreport: ${link}\nfile: ${c.file}`)}</failure>\n`;
  } else if (c.outcome === 'not_verified') {
    body = `      <skipped message="${xmlEscape(`not verified: ${detail} [${reqs}]`)}"/>\n`;
  } else if (c.outcome === 'informational') {
    // Behaviour the specification leaves open: observed and recorded, never a pass.
    body = `      <skipped message="${xmlEscape(`informational (the specification leaves this open; recorded as observed): ${detail} [${reqs}]`)}"/>\n`;
  } else if (c.outcome === 'waived') {
    const w = c.waiver!;
    body = `      <skipped message="${xmlEscape(`waived (${w.id}, owner ${w.owner}, until ${w.expires}): ${w.reason} [${reqs}] see ${link}`)}"/>\n`;
    out = `waived failure: ${c.title}\n${detail}\n${trace}`;
  } else if (c.outcome === 'warning') {
    // A should not met: visible, never a failure, except under --strict, where it fails the run.
    if (strict) body = `      <failure message="${xmlEscape(`--strict: a should requirement not met: ${c.title} [${reqs}] see ${link}`)}" type="should_not_met">${xmlEscape(`${detail}\n\n${trace}`)}</failure>\n`;
    out = `WARNING (a should requirement not met): ${c.title}\n${detail}\n${trace}`;
  }
  return `    <testcase classname="${xmlEscape(classname(c))}" name="${xmlEscape(c.id)}" time="${secs(checkSeconds(c))}">\n${body}      <system-out>${xmlEscape(out)}</system-out>\n    </testcase>`;
}

const isFailure = (c: ReportCheck, strict: boolean) => c.outcome === 'fail' || (strict && c.outcome === 'warning');
const isSkipped = (c: ReportCheck) => c.outcome === 'not_verified' || c.outcome === 'waived' || c.outcome === 'informational';

/** The run's provenance as <property> rows of the `conformance.run` suite (absent fields are left out). */
function runProperties(report: ConformanceReport): string[] {
  const run = report.run as ConformanceReport['run'] & Record<string, unknown>;
  const rows: [string, unknown][] = [
    ['verdict', report.verdict], ['subject', run.subject ?? 'service'],
    ['spec', run.specTitle ?? run.spec], ['spec.sha256', run.specSha256],
    ['harness.version', run.harnessVersion],
    ['target', run.target ? `${run.target.name} (${run.target.baseUrl})` : null],
    ['profile.sha256', run.profileSha256],
    ['command', Array.isArray(run.command) ? (run.command as string[]).join(' ') : null],
    ['started', run.startedAt], ['finished', run.finishedAt],
    ['contract.sha256', run.contractSha256], ['catalog.sha256', run.catalogSha256],
    ...(run.seeds?.length ? [['seeds', run.seeds.join(',')] as [string, unknown]] : []),
  ];
  return rows.filter(([, v]) => typeof v === 'string' && v !== '').map(([k, v]) => prop(k, v as string));
}

export function toJunit(report: ConformanceReport): string {
  const strict = report.run.strict === true;
  const anchors = checkAnchors(report.checks);
  const groups = new Map<string, number[]>();
  report.checks.forEach((c, i) => groups.set(classname(c), [...(groups.get(classname(c)) ?? []), i]));
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;

  // The verdict first: it is what a CI view should show before anything else.
  const label = VERDICT_LABEL[report.verdict] ?? String(report.verdict).toUpperCase();
  const subject = report.run.subject ?? 'service';
  const verdictText = `${label} — ${subject}: ${report.verdictReason}`;
  const notes = [`subject: ${subject}`, `verdict: ${report.verdict} (${report.verdictReason})`, `report: ${HTML_REPORT_FILE}`, ...report.warnings.map((w) => `warning: ${w}`)].join('\n');
  const conformant = report.verdict === 'conformant';
  const why: Record<string, string> = {
    not_conformant: 'the run found a non-conformance',
    incomplete: 'nothing failed, but something in scope was not verified: no conformance claim',
    partial: 'a narrowed run (filter or shard): no conformance claim',
  };
  const verdictFailure = conformant ? '' : `      <failure message="${xmlEscape(verdictText)}" type="${xmlEscape(report.verdict)}">${xmlEscape(`${verdictText}\n${why[report.verdict] ?? ''}\nreport: ${HTML_REPORT_FILE}`)}</failure>\n`;
  const started = Date.parse(report.run.startedAt);
  const timestamp = Number.isFinite(started) ? ` timestamp="${new Date(started).toISOString().slice(0, 19)}"` : '';
  tests += 1;
  failures += conformant ? 0 : 1;
  suites.push(`  <testsuite name="conformance.run" tests="1" failures="${conformant ? 0 : 1}" errors="0" skipped="0"${timestamp}>\n${properties(runProperties(report))}    <testcase classname="conformance.run" name="verdict" time="0.000">\n${verdictFailure}      <system-out>${xmlEscape(notes)}</system-out>\n    </testcase>\n  </testsuite>`);

  const sectionOrder = (name: string) => name.replace(/^conformance\./, '').replace(/_/g, '.');
  for (const [name, idx] of [...groups].sort(([a], [b]) => sectionOrder(a).localeCompare(sectionOrder(b), 'en', { numeric: true }))) {
    const cs = idx.map((i) => report.checks[i]);
    const f = cs.filter((c) => isFailure(c, strict)).length;
    const s = cs.filter(isSkipped).length;
    tests += cs.length;
    failures += f;
    const reqProps = cs.flatMap((c) => c.requirements.map((r) => prop(`requirement:${c.id}`, r)));
    suites.push(`  <testsuite name="${xmlEscape(name)}" tests="${cs.length}" failures="${f}" errors="0" skipped="${s}">\n${properties([...new Set(reqProps)])}${idx.map((i) => testcase(report.checks[i], anchors[i], strict)).join('\n')}\n  </testsuite>`);
  }
  if (report.problems.length > 0) {
    const cases = report.problems.map((p, i) =>
      `    <testcase classname="conformance.problems" name="problem-${i + 1}" time="0.000">\n      <failure message="${xmlEscape(p)}" type="problem">${xmlEscape(p)}</failure>\n    </testcase>`);
    tests += cases.length;
    failures += cases.length;
    suites.push(`  <testsuite name="conformance.problems" tests="${cases.length}" failures="${cases.length}" errors="0" skipped="0">\n${cases.join('\n')}\n  </testsuite>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="conformance" tests="${tests}" failures="${failures}" errors="0" time="${secs(runSeconds(report.run))}">\n${suites.join('\n')}\n</testsuites>\n`;
}
