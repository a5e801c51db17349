// Renders the conformance report as JUnit XML for CI systems: one testcase per check (classname = spec
// section, else area, else project; name = check id), the requirement ids as properties. `fail` is a
// <failure>, `not_verified` a <skipped>, a waived failure a <skipped> naming its waiver, `informational`
// a pass with a system-out note. Problems (expired waivers, tests failing outside any check) become
// failing testcases too, so the JUnit view never reads greener than the exit code. Pure: string out.
import type { ConformanceReport, ReportCheck } from './model.ts';

/** Escapes text for XML attributes and content, dropping characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function classname(c: ReportCheck): string {
  return c.section ? `§${c.section}` : c.area ?? c.project;
}

function testcase(c: ReportCheck): string {
  const props = c.requirements.map((r) => `        <property name="requirement" value="${xmlEscape(r)}"/>`).join('\n');
  const head = `    <testcase classname="${xmlEscape(classname(c))}" name="${xmlEscape(c.id)}" file="${xmlEscape(c.file)}">\n      <properties>\n${props}\n      </properties>\n`;
  const detail = c.detail ?? '';
  let body = '';
  if (c.outcome === 'fail') {
    body = `      <failure message="${xmlEscape(c.title)}" type="non_conformance">${xmlEscape(detail)}</failure>\n`;
  } else if (c.outcome === 'not_verified') {
    body = `      <skipped message="${xmlEscape(`not verified: ${detail}`)}"/>\n`;
  } else if (c.outcome === 'waived') {
    const w = c.waiver!;
    body = `      <skipped message="${xmlEscape(`waived (${w.id}, owner ${w.owner}, until ${w.expires}): ${w.reason}`)}"/>\n`
      + `      <system-out>${xmlEscape(`waived failure: ${c.title}\n${detail}`)}</system-out>\n`;
  } else if (c.outcome === 'informational') {
    body = `      <system-out>${xmlEscape(`informational (unspecified behaviour, recorded as observed): ${detail}`)}</system-out>\n`;
  }
  return `${head}${body}    </testcase>`;
}

export function toJunit(report: ConformanceReport): string {
  const groups = new Map<string, ReportCheck[]>();
  for (const c of report.checks) groups.set(classname(c), [...(groups.get(classname(c)) ?? []), c]);
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let skipped = 0;
  for (const [name, cs] of [...groups].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))) {
    const f = cs.filter((c) => c.outcome === 'fail').length;
    const s = cs.filter((c) => c.outcome === 'not_verified' || c.outcome === 'waived').length;
    tests += cs.length;
    failures += f;
    skipped += s;
    suites.push(`  <testsuite name="${xmlEscape(name)}" tests="${cs.length}" failures="${f}" errors="0" skipped="${s}">\n${cs.map(testcase).join('\n')}\n  </testsuite>`);
  }
  if (report.problems.length > 0) {
    const cases = report.problems.map((p, i) =>
      `    <testcase classname="conformance.problems" name="problem-${i + 1}">\n      <failure message="${xmlEscape(p)}" type="problem">${xmlEscape(p)}</failure>\n    </testcase>`);
    tests += cases.length;
    failures += cases.length;
    suites.push(`  <testsuite name="conformance.problems" tests="${cases.length}" failures="${cases.length}" errors="0" skipped="0">\n${cases.join('\n')}\n  </testsuite>`);
  }
  if (report.warnings.length > 0) {
    // <testsuites> cannot carry output itself; warnings ride on one passing testcase.
    tests += 1;
    suites.push(`  <testsuite name="conformance.warnings" tests="1" failures="0" errors="0" skipped="0">\n    <testcase classname="conformance.warnings" name="warnings">\n      <system-out>${xmlEscape(report.warnings.map((w) => `warning: ${w}`).join('\n'))}</system-out>\n    </testcase>\n  </testsuite>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="conformance" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">\n${suites.join('\n')}\n</testsuites>\n`;
}
