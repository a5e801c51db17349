// The reporter's side of the check record (record/record.ts): every annotation a worker wrote is decoded
// by the one owner of its encoding; a record that cannot be read is a harness error shown in the report,
// never silently dropped (a passing check would vanish, a failing one become "failed outside any check").
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FullConfig, FullResult, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import ConformanceReporter from '../reports/conformance-reporter.ts';
import { decodeCheckAnnotation, encodeCheckAnnotation } from '../record/record.ts';
import { withStdout } from './helpers/env.ts';

function fakeTest(title: string): TestCase {
  return {
    id: `id-${title}`, title, location: { file: path.join(process.cwd(), 'suites/fake.spec.ts'), line: 1, column: 1 },
    parent: { project: () => ({ name: 'conformance' }) }, outcome: () => 'expected',
  } as unknown as TestCase;
}

function fakeResult(annotations: { type: string; description?: string }[], status: TestResult['status'] = 'passed', attachments: { name: string; body: Buffer }[] = []): TestResult {
  return { annotations, attachments, status, duration: 12, errors: [] } as unknown as TestResult;
}

/** Runs the reporter's end (outcomes.json and every report) with its summary line kept off the terminal. */
function endRun(reporter: ConformanceReporter): void {
  withStdout(() => reporter.onEnd({ status: 'passed' } as FullResult));
}

test('encode and decode are one pair: a record survives, an unknown outcome or unreadable JSON is an error, other annotations are not records', () => {
  const rec = { id: 'a-check', requirements: ['R-1'], title: 'A rule', outcome: 'warning' as const, detail: 'quotes " and \\ backslashes', variant: 'bundle-1' };
  const a = encodeCheckAnnotation(rec);
  expect(a.type).toBe('check:warning');
  expect(decodeCheckAnnotation(a)).toEqual({ ok: true, record: rec });
  expect(decodeCheckAnnotation({ type: 'check:maybe', description: a.description })).toEqual({ ok: false, error: 'unknown check outcome "maybe"' });
  expect(decodeCheckAnnotation({ type: 'check:pass', description: '{"id":"x",' })).toMatchObject({ ok: false });
  expect(decodeCheckAnnotation({ type: 'check:pass', description: '{"title":"no id"}' })).toEqual({ ok: false, error: 'check record without id, requirements or title' });
  expect(decodeCheckAnnotation({ type: 'seed', description: '42' })).toBeNull();
});

test('an unreadable check record becomes a harness error in the report, and the readable ones are kept', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-reporter-'));
  const reporter = new ConformanceReporter({ outDir: out });
  const suite = { allTests: () => [fakeTest('good'), fakeTest('broken')] } as unknown as Suite;
  reporter.onBegin({ shard: null } as unknown as FullConfig, suite);
  const good = encodeCheckAnnotation({ id: 'good-check', requirements: ['AUTH-401-MISSING-BEARER'], title: 'Good', outcome: 'pass' });
  reporter.onTestEnd(fakeTest('good'), fakeResult([good]));
  reporter.onTestEnd(fakeTest('broken'), fakeResult([{ type: 'check:pass', description: '{"id":"broken-check","requirements":["X"],' }]));
  endRun(reporter);
  const outcomes = JSON.parse(fs.readFileSync(path.join(out, 'outcomes.json'), 'utf8'));
  expect(outcomes.checks.map((c: { id: string }) => c.id)).toEqual(['good-check']);
  expect(outcomes.runErrors).toHaveLength(1);
  expect(outcomes.runErrors[0]).toMatch(/^harness error: unreadable check record .* in test "broken"/);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
  expect(report.verdict).toBe('not_conformant');
  expect(report.problems.join('\n')).toContain('harness error: unreadable check record');
});

test('a patient value first met in a later check\'s body leaves an earlier check\'s detail and evidence, in every file the reporter writes', () => {
  // The reporter redacts each check's evidence as it arrives and everything again at the end, answering a string it
  // met before from redaction's memo (record/redact.ts). A value met after an answer was given makes it stale: the
  // earlier check's detail, error message, header and body, each answered before the value was known (its worker
  // had not met it), must lose it all the same. The values are this test's own (a process remembers every value).
  const [first, last] = ['Wilhelmina', 'Quarrington'];
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-reporter-late-'));
  const reporter = new ConformanceReporter({ outDir: out });
  const suite = { allTests: () => [fakeTest('earlier'), fakeTest('later')] } as unknown as Suite;
  reporter.onBegin({ shard: null } as unknown as FullConfig, suite);
  const evidence = (id: string, exchanges: unknown[]) => [{ name: `evidence:${id}`, body: Buffer.from(JSON.stringify(exchanges)) }];
  const earlier = [{
    request: { method: 'GET', target: '/external/v1/encounters/enc_1', headers: { accept: 'application/json' } },
    response: { status: 200, headers: { 'x-note': `for ${first} ${last}` }, body: JSON.stringify({ note: `${first} ${last} called` }), bodyBytes: 40, durationMs: 1 },
    error: { kind: 'timeout', message: `waiting for ${first} ${last}` },
  }];
  const later = [{
    request: { method: 'GET', target: '/external/v1/encounters/enc_2', headers: { accept: 'application/json' } },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ encounter: { patient: { patient_id: 'p', first_name: first, last_name: last } } }), bodyBytes: 90, durationMs: 1 },
  }];
  const detail = `list says ${first} ${last}`;
  const annotation = (id: string, rec: { detail?: string; outcome: 'pass' | 'fail' }) => encodeCheckAnnotation({ id, requirements: ['LIST-LIMIT-DEFAULT'], title: id, ...rec });
  reporter.onTestEnd(fakeTest('earlier'), fakeResult([annotation('late-earlier', { outcome: 'fail', detail })], 'passed', evidence('late-earlier', earlier)));
  reporter.onTestEnd(fakeTest('later'), fakeResult([annotation('late-later', { outcome: 'pass' })], 'passed', evidence('late-later', later)));
  endRun(reporter);
  const files = ['outcomes.json', 'conformance.json', 'junit.xml', 'conformance.html'];
  for (const f of files) {
    const text = fs.readFileSync(path.join(out, f), 'utf8');
    expect(text, f).not.toContain(first);
    expect(text, f).not.toContain(last);
  }
  // Replaced, not dropped: the earlier check keeps its detail and evidence, with placeholders of the same length.
  const outcomes = JSON.parse(fs.readFileSync(path.join(out, 'outcomes.json'), 'utf8'));
  const ex = outcomes.checks.find((c: { id: string }) => c.id === 'late-earlier');
  expect(ex.detail).toBe('list says ********** ***********');
  expect(ex.evidence[0].error.message).toBe('waiting for ********** ***********');
  expect(ex.evidence[0].response.headers['x-note']).toBe('for ********** ***********');
  expect(JSON.parse(ex.evidence[0].response.body)).toEqual({ note: '********** *********** called' });
  fs.rmSync(out, { recursive: true, force: true });
});
