// Renders the conformance report as JUnit XML that CI tools show well (Jenkins, GitLab, GitHub test
// reporters). One testcase per check: name = check id, classname = `conformance.section_<n>` (see
// `classname`), `time` in seconds. `fail` is a <failure> whose message names the requirement ids and the
// HTML report's anchor of the check; `not_verified` is a <skipped> with its reason; a waived failure is a
// <skipped> naming its waiver; `warning` (a should not met) and `informational` pass with a <system-out>
// note, never a failure. Requirement ids and the anchor also ride in every testcase's <system-out>,
// because neither Jenkins nor GitLab shows testcase properties. Problems (expired waivers, tests failing
// outside any check) become failing testcases too, so the JUnit view never reads greener than the exit
// code. The output is valid against the JUnit schema Jenkins reads (tests/fixtures/junit.xsd). Pure.
import { checkAnchors, type ConformanceReport, type ReportCheck } from './model.ts';

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

/**
 * Seconds per check. A test may record several checks and the reporter knows only the test's duration,
 * so that duration is shared evenly among its checks (the sum stays the real time); without it, the
 * check's recorded exchanges' durations; else 0.
 */
export function checkSeconds(checks: readonly ReportCheck[]): number[] {
  const perTest = new Map<string, number>();
  const key = (c: ReportCheck) => `${c.project}\u0000${c.file}\u0000${c.test}`;
  for (const c of checks) perTest.set(key(c), (perTest.get(key(c)) ?? 0) + 1);
  return checks.map((c) => {
    const ms = typeof c.durationMs === 'number' && Number.isFinite(c.durationMs) && c.durationMs >= 0
      ? c.durationMs / perTest.get(key(c))!
      : evidenceMs(c.evidence) ?? 0;
    return ms / 1000;
  });
}

const secs = (s: number): string => s.toFixed(3);

function testcase(c: ReportCheck, seconds: number, anchor: string): string {
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
  } else if (c.outcome === 'waived') {
    const w = c.waiver!;
    body = `      <skipped message="${xmlEscape(`waived (${w.id}, owner ${w.owner}, until ${w.expires}): ${w.reason} [${reqs}] see ${link}`)}"/>\n`;
    out = `waived failure: ${c.title}\n${detail}\n${trace}`;
  } else if (c.outcome === 'warning') {
    // A should not met: visible, never a failure (unless --strict, which the exit code carries).
    out = `WARNING (a should requirement not met): ${c.title}\n${detail}\n${trace}`;
  } else if (c.outcome === 'informational') {
    out = `informational (behaviour the specification leaves open, recorded as observed): ${detail}\n${trace}`;
  }
  return `    <testcase classname="${xmlEscape(classname(c))}" name="${xmlEscape(c.id)}" time="${secs(seconds)}">\n${body}      <system-out>${xmlEscape(out)}</system-out>\n    </testcase>`;
}

export function toJunit(report: ConformanceReport): string {
  const seconds = checkSeconds(report.checks);
  const anchors = checkAnchors(report.checks);
  const groups = new Map<string, number[]>();
  report.checks.forEach((c, i) => groups.set(classname(c), [...(groups.get(classname(c)) ?? []), i]));
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let total = 0;
  const sectionOrder = (name: string) => name.replace(/^conformance\./, '').replace(/_/g, '.');
  for (const [name, idx] of [...groups].sort(([a], [b]) => sectionOrder(a).localeCompare(sectionOrder(b), 'en', { numeric: true }))) {
    const cs = idx.map((i) => report.checks[i]);
    const f = cs.filter((c) => c.outcome === 'fail').length;
    const s = cs.filter((c) => c.outcome === 'not_verified' || c.outcome === 'waived').length;
    const time = idx.reduce((sum, i) => sum + seconds[i], 0);
    tests += cs.length;
    failures += f;
    total += time;
    suites.push(`  <testsuite name="${xmlEscape(name)}" tests="${cs.length}" failures="${f}" errors="0" skipped="${s}" time="${secs(time)}">\n${idx.map((i) => testcase(report.checks[i], seconds[i], anchors[i])).join('\n')}\n  </testsuite>`);
  }
  if (report.problems.length > 0) {
    const cases = report.problems.map((p, i) =>
      `    <testcase classname="conformance.problems" name="problem-${i + 1}" time="0.000">\n      <failure message="${xmlEscape(p)}" type="problem">${xmlEscape(p)}</failure>\n    </testcase>`);
    tests += cases.length;
    failures += cases.length;
    suites.push(`  <testsuite name="conformance.problems" tests="${cases.length}" failures="${cases.length}" errors="0" skipped="0" time="0.000">\n${cases.join('\n')}\n  </testsuite>`);
  }
  const verdict = `subject: ${report.run.subject ?? 'service'}\nverdict: ${report.verdict}${report.verdictReason ? ` (${report.verdictReason})` : ''}\nreport: ${HTML_REPORT_FILE}`;
  const notes = [verdict, ...report.warnings.map((w) => `warning: ${w}`)].join('\n');
  // <testsuites> cannot carry output itself: the verdict and the run's warnings ride on one passing testcase.
  tests += 1;
  suites.push(`  <testsuite name="conformance.run" tests="1" failures="0" errors="0" skipped="0" time="0.000">\n    <testcase classname="conformance.run" name="verdict" time="0.000">\n      <system-out>${xmlEscape(notes)}</system-out>\n    </testcase>\n  </testsuite>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="conformance" tests="${tests}" failures="${failures}" errors="0" time="${secs(total)}">\n${suites.join('\n')}\n</testsuites>\n`;
}
