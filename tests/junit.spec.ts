// JUnit that CI tools show well (reports/junit.ts): valid against tests/fixtures/junit.xsd (the JUnit
// schema Jenkins validates against, as GitLab reads it too), classnames with exactly one dot so Jenkins
// cannot split a section number, `time` on every testcase, requirement ids and the HTML anchor of the
// check in each failure message, warnings as passing testcases with output. No XSD validator ships on
// npm without a native or wasm build step, so this file carries a small XML parser and an interpreter
// of the XSD subset the schema uses; a test shows the validator rejecting what Jenkins would reject.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { classname, toJunit, HTML_REPORT_FILE } from '../reports/junit.ts';
import { toHtml } from '../reports/html.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { buildReport, type CollectedCheck, type ConformanceReport } from '../reports/model.ts';
import { check, context, defaultChecks, outcomes, waiver } from './helpers/report-data.ts';

const XSD = path.resolve(import.meta.dirname, 'fixtures/junit.xsd');

// ---- a small, strict XML parser (elements, attributes, text, comments, the XML declaration) ----

interface XmlNode { name: string; attrs: Record<string, string>; children: XmlNode[]; text: string }

function decode(s: string, where: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);|&/g, (m, ent: string | undefined) => {
    if (!ent) throw new Error(`bare & in ${where}`);
    if (ent.startsWith('#x')) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (ent.startsWith('#')) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (!(ent in named)) throw new Error(`unknown entity &${ent}; in ${where}`);
    return named[ent];
  });
}

export function parseXml(xml: string): XmlNode {
  let i = 0;
  const stack: XmlNode[] = [{ name: '#document', attrs: {}, children: [], text: '' }];
  while (i < xml.length) {
    if (xml.startsWith('<?', i)) { i = xml.indexOf('?>', i) + 2; continue; }
    if (xml.startsWith('<!--', i)) { i = xml.indexOf('-->', i) + 3; continue; }
    if (xml.startsWith('</', i)) {
      const end = xml.indexOf('>', i);
      const name = xml.slice(i + 2, end).trim();
      const open = stack.pop()!;
      if (open.name !== name) throw new Error(`</${name}> closes <${open.name}>`);
      i = end + 1;
      continue;
    }
    if (xml[i] === '<') {
      const m = /^<([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"<]*")*)\s*(\/?)>/.exec(xml.slice(i));
      if (!m) throw new Error(`malformed tag at ${i}: ${xml.slice(i, i + 60)}`);
      const attrs: Record<string, string> = {};
      for (const a of m[2].matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) {
        if (a[1] in attrs) throw new Error(`duplicate attribute ${a[1]} on <${m[1]}>`);
        attrs[a[1]] = decode(a[2], `attribute ${a[1]} of <${m[1]}>`);
      }
      const node: XmlNode = { name: m[1], attrs, children: [], text: '' };
      stack.at(-1)!.children.push(node);
      if (!m[3]) stack.push(node);
      i += m[0].length;
      continue;
    }
    const next = xml.indexOf('<', i);
    const end = next < 0 ? xml.length : next;
    const raw = xml.slice(i, end);
    if (raw.includes('>') && /\]\]>/.test(raw)) throw new Error(']]> in text');
    stack.at(-1)!.text += decode(raw, `text of <${stack.at(-1)!.name}>`);
    i = end;
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  const roots = stack[0].children;
  if (roots.length !== 1) throw new Error(`expected one root element, got ${roots.length}`);
  if (stack[0].text.trim()) throw new Error('text outside the root element');
  return roots[0];
}

// ---- an interpreter of the XSD subset in tests/fixtures/junit.xsd ----

interface ElementRule { textOnly: boolean; mixed: boolean; children: Set<string>; attrs: Map<string, { required: boolean; pattern: RegExp | null }> }

function descendants(n: XmlNode): XmlNode[] {
  return n.children.flatMap((c) => [c, ...descendants(c)]);
}

export function loadXsd(text: string): Map<string, ElementRule> {
  const schema = parseXml(text);
  const patterns = new Map<string, RegExp>();
  for (const st of schema.children.filter((c) => c.name === 'xs:simpleType')) {
    const p = descendants(st).find((d) => d.name === 'xs:pattern');
    if (p) patterns.set(st.attrs.name, new RegExp(`^(?:${p.attrs.value})$`));
  }
  const rules = new Map<string, ElementRule>();
  for (const el of schema.children.filter((c) => c.name === 'xs:element')) {
    const ct = el.children.find((c) => c.name === 'xs:complexType');
    const attrs = new Map<string, { required: boolean; pattern: RegExp | null }>();
    const all = ct ? descendants(ct) : [];
    for (const a of all.filter((d) => d.name === 'xs:attribute')) {
      const type = a.attrs.type ?? 'xs:string';
      if (type !== 'xs:string' && !patterns.has(type)) throw new Error(`unknown type ${type}`);
      attrs.set(a.attrs.name, { required: a.attrs.use === 'required', pattern: patterns.get(type) ?? null });
    }
    rules.set(el.attrs.name, {
      textOnly: !ct && el.attrs.type === 'xs:string', mixed: ct?.attrs.mixed === 'true',
      children: new Set(all.filter((d) => d.name === 'xs:element').map((d) => d.attrs.ref)), attrs,
    });
  }
  return rules;
}

/** Every violation of the schema, as `path: problem` lines; empty when valid. */
export function validate(xml: string, rules: Map<string, ElementRule>): string[] {
  const errors: string[] = [];
  let root: XmlNode;
  try {
    root = parseXml(xml);
  } catch (e) {
    return [`not well-formed: ${(e as Error).message}`];
  }
  const walk = (n: XmlNode, where: string) => {
    const rule = rules.get(n.name);
    if (!rule) return void errors.push(`${where}: element <${n.name}> is not declared`);
    for (const [name, value] of Object.entries(n.attrs)) {
      const a = rule.attrs.get(name);
      if (!a) errors.push(`${where}: attribute ${name} is not allowed`);
      else if (a.pattern && !a.pattern.test(value)) errors.push(`${where}: ${name}="${value}" does not match ${a.pattern}`);
    }
    for (const [name, a] of rule.attrs) if (a.required && !(name in n.attrs)) errors.push(`${where}: attribute ${name} is required`);
    if (n.text.trim() && !rule.mixed && !rule.textOnly) errors.push(`${where}: text is not allowed`);
    n.children.forEach((c, i) => {
      if (rule.textOnly || !rule.children.has(c.name)) errors.push(`${where}: <${c.name}> is not allowed inside <${n.name}>`);
      else walk(c, `${where}/${c.name}[${i}]`);
    });
  };
  if (root.name !== 'testsuites' && root.name !== 'testsuite') errors.push(`root element <${root.name}> is not a JUnit root`);
  walk(root, `/${root.name}`);
  return errors;
}

const rules = loadXsd(fs.readFileSync(XSD, 'utf8'));

/** A report with every outcome, a problem, a warning, a section-less check and two checks of one test. */
function everyOutcome(): ConformanceReport {
  const checks: CollectedCheck[] = [
    ...defaultChecks().map((c) => ({ ...c, durationMs: 40 })),
    check('list-cache-control', 'warning' as CollectedCheck['outcome'], ['LIST-LIMIT-DEFAULT'], { detail: 'no cache-control header', durationMs: 30 }),
    check('list-limit-second', 'pass', ['LIST-LIMIT-DEFAULT'], { test: 'list-limit-default', durationMs: 40 }),
    check('no-catalog-entry', 'pass', ['NOT-IN-CATALOG'], { evidence: [{ request: { method: 'GET', target: '/', headers: {} }, response: { status: 200, headers: {}, body: '', bodyBytes: 0, durationMs: 7 } }] }),
  ];
  return buildReport(outcomes(checks), context({ waivers: [waiver('NOPE-1'), waiver('VERSION-HEADER', '2020-01-01')] }));
}

test.describe('JUnit', () => {
  test('the output of every outcome is valid against tests/fixtures/junit.xsd', () => {
    const xml = toJunit(everyOutcome());
    expect(validate(xml, rules)).toEqual([]);
    const waived = toJunit(buildReport(outcomes(), context({ waivers: [waiver('LIST-LIMIT-CANONICAL')] })));
    expect(validate(waived, rules)).toEqual([]);
    // An empty run still writes a valid file.
    expect(validate(toJunit(buildReport(outcomes([]), context())), rules)).toEqual([]);
  });

  test('the validator rejects what Jenkins would reject', () => {
    const xml = toJunit(everyOutcome());
    const bad = (from: string, to: string) => validate(xml.replace(from, to), rules);
    expect(bad('<testcase classname=', '<testcase file="x.ts" classname=').join('\n')).toMatch(/attribute file is not allowed/);
    expect(bad('<testsuites name="conformance"', '<testsuites skipped="1" name="conformance"').join('\n')).toMatch(/attribute skipped is not allowed/);
    expect(bad('<system-out>', '<properties><property name="requirement" value="X"/></properties><system-out>').join('\n')).toMatch(/<properties> is not allowed inside <testcase>/);
    expect(bad('time="0.', 'time="0,').join('\n')).toMatch(/time="0,.*does not match/);
    expect(bad(' name="list-limit-default"', '').join('\n')).toMatch(/attribute name is required/);
    expect(bad('</testsuites>', '').join('\n')).toMatch(/not well-formed/);
    expect(validate('<testsuites><testsuite name="a" tests="1" failures="0" errors="0">stray text</testsuite></testsuites>', rules)).toEqual(['/testsuites/testsuite[0]: text is not allowed']);
  });

  test('classnames have exactly one dot: package "conformance", class "section_4_1"', () => {
    const xml = toJunit(everyOutcome());
    const classnames = [...xml.matchAll(/<testcase classname="([^"]*)"/g)].map((m) => m[1]);
    expect(classnames.length).toBeGreaterThan(5);
    for (const c of classnames) expect(c).toMatch(/^conformance\.[A-Za-z0-9_]+$/);
    expect(classnames).toContain('conformance.section_4_1');
    expect(classnames).toContain('conformance.section_5');
    expect(classname({ section: '6.3.1', area: 'webhook', project: 'conformance' })).toBe('conformance.section_6_3_1');
    expect(classname({ section: null, area: 'x.y', project: 'p' })).toBe('conformance.area_x_y');
    expect(classname({ section: null, area: null, project: 'properties' })).toBe('conformance.project_properties');
    // Suites follow the spec's section order (4.1 before 5, numeric).
    const suites = [...xml.matchAll(/<testsuite name="([^"]*)"/g)].map((m) => m[1]);
    expect(suites.indexOf('conformance.section_4_1')).toBeLessThan(suites.indexOf('conformance.section_5'));
  });

  test('every testcase has a time in seconds; a test\'s duration is shared among its checks', () => {
    const xml = toJunit(everyOutcome());
    const cases = [...xml.matchAll(/<testcase [^>]*>/g)].map((m) => m[0]);
    for (const c of cases) expect(c).toMatch(/ time="[0-9]+\.[0-9]{3}"/);
    // list-limit-default and list-limit-second come from one 40 ms test: 20 ms each.
    expect(xml).toContain('name="list-limit-default" time="0.020"');
    expect(xml).toContain('name="list-limit-second" time="0.020"');
    expect(xml).toContain('name="auth-missing-bearer-list" time="0.040"');
    // Without the test's duration, the check's own exchanges.
    expect(xml).toContain('name="no-catalog-entry" time="0.007"');
    const suiteTimes = [...xml.matchAll(/<testsuite [^>]*time="([0-9.]+)"/g)].reduce((s, m) => s + Number(m[1]), 0);
    const total = Number(/<testsuites [^>]*time="([0-9.]+)"/.exec(xml)![1]);
    expect(total).toBeCloseTo(suiteTimes, 3);
    expect(total).toBeCloseTo(0.04 * 5 + 0.03 + 0.007, 3);
  });

  test('a failure names its requirements and the anchor of the check in the HTML report', () => {
    const report = everyOutcome();
    const xml = toJunit(report);
    const failure = /<failure message="([^"]*)" type="non_conformance">([^<]*)<\/failure>/.exec(xml)!;
    expect(failure[1]).toBe('limit=+1 answers 400 invalid_query_parameter [LIST-LIMIT-CANONICAL] see conformance.html#check-list-limit-rejects-plus-sign');
    expect(failure[2]).toContain('Undocumented success: expected 400, got 200');
    expect(failure[2]).toContain('report: conformance.html#check-list-limit-rejects-plus-sign');
    // The anchor exists in the HTML written beside it.
    expect(HTML_REPORT_FILE).toBe(REPORT_FILES.html);
    expect(toHtml(report)).toContain('id="check-list-limit-rejects-plus-sign"');
    // Every testcase carries its requirement ids in output, since CI tools do not show properties.
    expect(xml).toContain('requirements: AUTH-401-MISSING-BEARER\nreport: conformance.html#check-auth-missing-bearer-list');
  });

  test('outcomes: warning passes with output, not verified and waived are skipped with reasons, problems fail', () => {
    const xml = toJunit(everyOutcome());
    const warning = /<testcase classname="[^"]*" name="list-cache-control"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)![1];
    expect(warning).not.toMatch(/<failure|<skipped|<error/);
    expect(warning).toContain('<system-out>WARNING (a should requirement not met): list-cache-control holds\nno cache-control header');
    expect(xml).toContain('<skipped message="not verified: profile lacks credential invalid_key [AUTH-401-INVALID-KEY]"/>');
    expect(xml).toContain('informational (behaviour the specification leaves open, recorded as observed): ties ordered by id ascending');
    expect(xml).toMatch(/<testcase classname="conformance\.problems" name="problem-1" time="0\.000">\n {6}<failure message="waiver VERSION-HEADER/);
    expect(xml).toContain('warning: waiver NOPE-1 matches nothing');
    expect(xml).toMatch(/<testsuites name="conformance" tests="10" failures="2" errors="0" time="/);

    const waived = toJunit(buildReport(outcomes(), context({ waivers: [waiver('LIST-LIMIT-CANONICAL')] })));
    expect(waived).toContain('<skipped message="waived (LIST-LIMIT-CANONICAL, owner api-team, until 2026-12-31): tracked in TICKET-1 [LIST-LIMIT-CANONICAL] see conformance.html#check-list-limit-rejects-plus-sign"/>');
    expect(waived).not.toContain('type="non_conformance"');
    expect(waived).toContain('verdict: incomplete (');
  });

  test('escapes markup and drops characters XML cannot carry', () => {
    const xml = toJunit(buildReport(outcomes([check('x', 'fail', ['VERSION-HEADER'], { detail: 'got <b>&"\'\u0001' })]), context()));
    expect(xml).toContain('got &lt;b&gt;&amp;&quot;&apos;\uFFFD');
    expect(validate(xml, rules)).toEqual([]);
  });
});
