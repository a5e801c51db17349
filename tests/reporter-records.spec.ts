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

function fakeTest(title: string): TestCase {
  return {
    id: `id-${title}`, title, location: { file: path.join(process.cwd(), 'suites/fake.spec.ts'), line: 1, column: 1 },
    parent: { project: () => ({ name: 'conformance' }) }, outcome: () => 'expected',
  } as unknown as TestCase;
}

function fakeResult(annotations: { type: string; description?: string }[], status: TestResult['status'] = 'passed'): TestResult {
  return { annotations, attachments: [], status, duration: 12, errors: [] } as unknown as TestResult;
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
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write; // the summary line
  try {
    reporter.onEnd({ status: 'passed' } as FullResult);
  } finally {
    process.stdout.write = write;
  }
  const outcomes = JSON.parse(fs.readFileSync(path.join(out, 'outcomes.json'), 'utf8'));
  expect(outcomes.checks.map((c: { id: string }) => c.id)).toEqual(['good-check']);
  expect(outcomes.runErrors).toHaveLength(1);
  expect(outcomes.runErrors[0]).toMatch(/^harness error: unreadable check record .* in test "broken"/);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
  expect(report.verdict).toBe('not_conformant');
  expect(report.problems.join('\n')).toContain('harness error: unreadable check record');
});
