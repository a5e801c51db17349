// Prints the plain closing line CI reads: `N passed, N failed, N skipped`, counted from the runner's
// own results (a flaky test that passed on retry counts as passed; interrupted and timed-out as failed),
// except that a test whose check recorded `fail` counts as failed: a failing check ends its test without
// throwing (engine/evaluate.ts runCheck), so the runner keeps its worker; the run's status is then failed.
// Just above it, one line per failed test with the first lines of its error: CI logs are often read
// from the tail only, and the runner's own failure blocks may be far above.
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import path from 'node:path';
import { redact } from '../record/redact.ts';
import { suiteFileOf } from './model.ts';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** `FAILED <file>:<line> › <title>: <why>`, redacted: the runner's error, or `why` when given (a failing check). */
export function failureDigest(test: TestCase, result: TestResult | undefined, why?: string): string {
  const at = suiteFileOf(test);
  const where = `${path.relative(process.cwd(), at.file)}${at.line !== undefined ? `:${at.line}` : ''}`;
  const title = test.titlePath().filter(Boolean).slice(-2).join(' › ');
  const error = (result?.errors ?? []).map((e) => (e.message ?? e.value ?? '').replace(ANSI, '')).join(' | ');
  const lines = error.split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 4).join(' / ');
  return redact(`FAILED ${where} › ${title}: ${why ?? (lines.slice(0, 700) || `status ${result?.status ?? 'unknown'}`)}`);
}

export default class SummaryReporter implements Reporter {
  private final = new Map<string, { test: TestCase; result: TestResult }>();

  onTestEnd(test: TestCase, result: TestResult): void {
    this.final.set(test.id, { test, result });
  }

  async onEnd(result: FullResult): Promise<{ status: FullResult['status'] } | undefined> {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const digest: string[] = [];
    for (const { test, result: last } of this.final.values()) {
      const o = test.outcome();
      const failingCheck = last.annotations.find((a) => a.type === 'check:fail');
      if (failingCheck && o !== 'unexpected') {
        failed++;
        digest.push(failureDigest(test, last, `check failed: ${(failingCheck.description ?? '').slice(0, 600)}`));
      } else if (o === 'skipped') skipped++;
      else if (o === 'expected' || o === 'flaky') passed++;
      else {
        failed++;
        digest.push(failureDigest(test, last));
      }
    }
    if (result.status !== 'passed' && failed === 0) failed = 1; // a run that broke outside any test
    const head = digest.length > 0 ? `\n${digest.slice(0, 20).join('\n')}${digest.length > 20 ? `\n… and ${digest.length - 20} more` : ''}\n` : '';
    process.stdout.write(`${head}\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    if (failed > 0 && result.status === 'passed') return { status: 'failed' };
    return undefined;
  }

  printsToStdio(): boolean {
    return false;
  }
}
