// JUnit that CI tools show well (reports/junit.ts), validated against the published JUnit schema of the
// Jenkins xUnit plugin (tests/fixtures/junit-10.xsd, vendored with its source and MIT licence) by libxml2's
// own xmllint compiled to WebAssembly (the xmllint-wasm devDependency: no network, no native build). The
// verdict testcase fails unless the run is CONFORMANT; informational and not-verified checks are skipped
// with their reason; requirement ids ride in <property> elements; durations are the run's own.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { classname, toJunit, HTML_REPORT_FILE } from '../reports/junit.ts';
import { toHtml } from '../reports/html.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { buildReport, type Catalog, type CollectedCheck, type ConformanceReport } from '../reports/model.ts';
import { check, context, defaultChecks, outcomes, waiver } from './helpers/report-data.ts';

const XSD = fs.readFileSync(path.resolve(import.meta.dirname, 'fixtures/junit-10.xsd'), 'utf8');

/** Every schema violation xmllint reports, as its messages; empty when valid. */
async function schemaErrors(xml: string): Promise<string[]> {
  const r = await validateXML({ xml: [{ fileName: 'junit.xml', contents: xml }], schema: [{ fileName: 'junit-10.xsd', contents: XSD }] });
  return r.valid ? [] : r.errors.map((e) => e.message);
}

/** A report with every outcome, a problem, a warning, a section-less check and two checks of one test. */
function everyOutcome(extra: Parameters<typeof context>[0] = {}): ConformanceReport {
  const checks: CollectedCheck[] = [
    ...defaultChecks().map((c) => ({ ...c, durationMs: 40 })),
    check('list-cache-control', 'warning' as CollectedCheck['outcome'], ['LIST-LIMIT-DEFAULT'], { detail: 'no cache-control header', durationMs: 30 }),
    check('list-limit-second', 'pass', ['LIST-LIMIT-DEFAULT', 'LIST-LIMIT-CANONICAL'], { test: 'list-limit-default', durationMs: 25 }),
    check('no-catalog-entry', 'pass', ['NOT-IN-CATALOG'], { evidence: [{ request: { method: 'GET', target: '/', headers: {} }, response: { status: 200, headers: {}, body: '', bodyBytes: 0, durationMs: 7 } }] }),
  ];
  return buildReport(outcomes(checks), context({ waivers: [waiver('NOPE-1'), waiver('VERSION-HEADER', '2020-01-01')], ...extra }));
}

const caseOf = (xml: string, name: string) => new RegExp(`<testcase classname="[^"]*" name="${name}"[^>]*>([\\s\\S]*?)</testcase>`).exec(xml)?.[1] ?? '';

const ALL_MUST: Catalog = { spec: 'x.md', requirements: [{ id: 'A', section: '4.1', area: 'list', statement: 'a', level: 'must' }, { id: 'B', section: '5', area: 'auth', statement: 'b', level: 'must' }] };

test.describe('JUnit', () => {
  test('every verdict and every outcome is valid against the published junit-10.xsd', async () => {
    expect(await schemaErrors(toJunit(everyOutcome()))).toEqual([]);
    expect(await schemaErrors(toJunit(everyOutcome({ strict: true })))).toEqual([]);
    expect(await schemaErrors(toJunit(buildReport(outcomes(), context({ waivers: [waiver('LIST-LIMIT-CANONICAL')] }))))).toEqual([]);
    // An empty run, a CONFORMANT run and a PARTIAL run still write valid files.
    expect(await schemaErrors(toJunit(buildReport(outcomes([]), context())))).toEqual([]);
    const ok = [check('a', 'pass', ['A']), check('b', 'pass', ['B'])];
    expect(await schemaErrors(toJunit(buildReport(outcomes(ok), context({ catalog: ALL_MUST }))))).toEqual([]);
    expect(await schemaErrors(toJunit(buildReport(outcomes(ok, { filter: { grep: 'a' } }), context({ catalog: ALL_MUST }))))).toEqual([]);
  });

  test('the validator rejects what the schema rejects (it is not a rubber stamp)', async () => {
    const xml = toJunit(everyOutcome());
    const bad = async (from: string | RegExp, to: string) => (await schemaErrors(xml.replace(from, to))).join('\n');
    // The schema forbids <properties> inside a testcase: why requirement properties sit on the suite.
    expect(await bad('<system-out>', '<properties><property name="requirement" value="X"/></properties><system-out>')).toMatch(/properties.*not expected/);
    expect(await bad('<testcase classname=', '<testcase file="x.ts" classname=')).toMatch(/attribute 'file'.*not allowed/);
    expect(await bad(/ name="list-limit-default" /, ' ')).toMatch(/attribute 'name' is required/);
    expect(await bad(/<testsuite name="conformance\.section_5" tests="\d+" /, '<testsuite name="conformance.section_5" ')).toMatch(/attribute 'tests' is required/);
    expect(await bad('</testsuites>', '')).not.toBe('');
  });

  test('the verdict testcase fails unless CONFORMANT: NOT CONFORMANT, INCOMPLETE and PARTIAL each with its reason', async () => {
    const notConformant = toJunit(everyOutcome());
    expect(notConformant).toMatch(/<testsuites name="conformance" tests="\d+" failures="\d+"/);
    expect(caseOf(notConformant, 'verdict')).toMatch(/<failure message="NOT CONFORMANT — service: 1 check failed" type="not_conformant">/);

    const incomplete = toJunit(buildReport(outcomes([check('a', 'pass', ['A'])]), context({ catalog: ALL_MUST })));
    expect(caseOf(incomplete, 'verdict')).toContain('<failure message="INCOMPLETE — service: verified 1 of 2 must requirements in scope; nothing failed" type="incomplete">');
    // An INCOMPLETE run (exit 1) never reads failures="0".
    expect(incomplete).toMatch(/<testsuites name="conformance" tests="2" failures="1" errors="0"/);

    const partial = toJunit(buildReport(outcomes([check('a', 'pass', ['A'])], { filter: { requirement: 'A' } }), context({ catalog: ALL_MUST })));
    expect(caseOf(partial, 'verdict')).toMatch(/<failure message="PARTIAL — service: a narrowed run \(--requirement A\) makes no conformance claim; nothing failed" type="partial">/);

    const conformant = toJunit(buildReport(outcomes([check('a', 'pass', ['A']), check('b', 'pass', ['B'])]), context({ catalog: ALL_MUST })));
    expect(caseOf(conformant, 'verdict')).not.toContain('<failure');
    expect(conformant).toMatch(/<testsuites name="conformance" tests="3" failures="0" errors="0"/);
    // The verdict suite comes first and carries the run's provenance as properties.
    expect(/<testsuite name="([^"]+)"/.exec(conformant)![1]).toBe('conformance.run');
    expect(conformant).toContain('<property name="verdict" value="conformant"/>');
    expect(conformant).toContain('<property name="harness.version" value="0.1.0"/>');
  });

  test('informational and not-verified checks are skipped with their reason, never passes; a waived failure is skipped naming its waiver', () => {
    const xml = toJunit(everyOutcome());
    expect(caseOf(xml, 'auth-invalid-key-list')).toContain('<skipped message="not verified: profile lacks credential invalid_key [AUTH-401-INVALID-KEY]"/>');
    expect(caseOf(xml, 'list-order-of-ties')).toContain('<skipped message="informational (the specification leaves this open; recorded as observed): ties ordered by id ascending [LIST-ORDER-TIES]"/>');
    expect(xml).toMatch(/<testsuite name="conformance\.section_4_1" tests="5" failures="1" errors="0" skipped="1">/);
    const waived = toJunit(buildReport(outcomes(), context({ waivers: [waiver('LIST-LIMIT-CANONICAL')] })));
    expect(caseOf(waived, 'list-limit-rejects-plus-sign')).toContain('<skipped message="waived (LIST-LIMIT-CANONICAL, owner api-team, until 2026-12-31): tracked in TICKET-1 [LIST-LIMIT-CANONICAL] see conformance.html#check-list-limit-rejects-plus-sign"/>');
    expect(waived).not.toContain('type="non_conformance"');
  });

  test('a warning passes with output, and fails under --strict as the verdict does', () => {
    const warning = caseOf(toJunit(everyOutcome()), 'list-cache-control');
    expect(warning).not.toMatch(/<failure|<skipped|<error/);
    expect(warning).toContain('<system-out>WARNING (a should requirement not met): list-cache-control holds\nno cache-control header');
    const strict = toJunit(everyOutcome({ strict: true }));
    expect(caseOf(strict, 'list-cache-control')).toContain('type="should_not_met"');
  });

  test('requirement ids are <property> elements of the check\'s suite, one per requirement, keyed by check id', () => {
    const xml = toJunit(everyOutcome());
    const suite = /<testsuite name="conformance\.section_4_1"[^>]*>\n {4}<properties>\n([\s\S]*?)\n {4}<\/properties>/.exec(xml)![1];
    const props = [...suite.matchAll(/<property name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => `${m[1]}=${m[2]}`);
    expect(props).toEqual(expect.arrayContaining([
      'requirement:list-limit-rejects-plus-sign=LIST-LIMIT-CANONICAL', 'requirement:list-limit-second=LIST-LIMIT-DEFAULT',
      'requirement:list-limit-second=LIST-LIMIT-CANONICAL', 'requirement:list-cache-control=LIST-LIMIT-DEFAULT',
    ]));
    // Every testcase still carries its requirement ids in output, since CI tools do not show properties.
    expect(xml).toContain('requirements: AUTH-401-MISSING-BEARER\nreport: conformance.html#check-auth-missing-bearer-list');
  });

  test('durations are real: each check its own time, the whole the run\'s wall-clock time, never the sum of concurrent checks', () => {
    const xml = toJunit(everyOutcome());
    for (const c of [...xml.matchAll(/<testcase [^>]*>/g)].map((m) => m[0])) expect(c).toMatch(/ time="[0-9]+\.[0-9]{3}"/);
    // Two checks of one test keep their own durations (not the test's time shared out).
    expect(xml).toContain('name="list-limit-default" time="0.040"');
    expect(xml).toContain('name="list-limit-second" time="0.025"');
    // Without its own duration, the check's exchanges.
    expect(xml).toContain('name="no-catalog-entry" time="0.007"');
    // The fabricated run lasted 55 s (03:04:05 → 03:05:00); its checks add up to far less, and a real run's
    // concurrent checks to far more: the whole is the wall-clock time.
    expect(/<testsuites [^>]*time="([0-9.]+)"/.exec(xml)![1]).toBe('55.000');
    expect(xml).not.toMatch(/<testsuite name="conformance\.section[^>]* time=/);
  });

  test('a failure names its requirements and the anchor of the check in the HTML report', () => {
    const report = everyOutcome();
    const xml = toJunit(report);
    const failure = /<failure message="([^"]*)" type="non_conformance">([^<]*)<\/failure>/.exec(xml)!;
    expect(failure[1]).toBe('limit=+1 answers 400 invalid_query_parameter [LIST-LIMIT-CANONICAL] see conformance.html#check-list-limit-rejects-plus-sign');
    expect(failure[2]).toContain('Undocumented success: expected 400, got 200');
    expect(HTML_REPORT_FILE).toBe(REPORT_FILES.html);
    expect(toHtml(report)).toContain('id="check-list-limit-rejects-plus-sign"');
  });

  test('classnames have exactly one dot: package "conformance", class "section_4_1"', () => {
    const xml = toJunit(everyOutcome());
    const classnames = [...xml.matchAll(/<testcase classname="([^"]*)"/g)].map((m) => m[1]);
    for (const c of classnames) expect(c).toMatch(/^conformance\.[A-Za-z0-9_]+$/);
    expect(classnames).toContain('conformance.section_4_1');
    expect(classname({ section: '6.3.1', area: 'webhook', project: 'conformance' })).toBe('conformance.section_6_3_1');
    expect(classname({ section: null, area: 'x.y', project: 'p' })).toBe('conformance.area_x_y');
    expect(classname({ section: null, area: null, project: 'properties' })).toBe('conformance.project_properties');
    const suites = [...xml.matchAll(/<testsuite name="([^"]*)"/g)].map((m) => m[1]);
    expect(suites.indexOf('conformance.section_4_1')).toBeLessThan(suites.indexOf('conformance.section_5'));
  });

  test('problems are failing testcases; the run\'s warnings ride on the verdict', () => {
    const xml = toJunit(everyOutcome());
    expect(xml).toMatch(/<testcase classname="conformance\.problems" name="problem-1" time="0\.000">\n {6}<failure message="waiver VERSION-HEADER/);
    expect(caseOf(xml, 'verdict')).toContain('warning: waiver NOPE-1 matches nothing');
  });

  test('escapes markup and drops characters XML cannot carry', async () => {
    const xml = toJunit(buildReport(outcomes([check('x', 'fail', ['VERSION-HEADER'], { detail: 'got <b>&"\'\u0001' })]), context()));
    expect(xml).toContain('got &lt;b&gt;&amp;&quot;&apos;\uFFFD');
    expect(await schemaErrors(xml)).toEqual([]);
  });
});
