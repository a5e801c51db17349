// Prints the plain closing line CI reads: `N passed, N failed, N skipped`, counted from the runner's
// own results (a flaky test that passed on retry counts as passed; interrupted and timed-out as failed).
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

export default class SummaryReporter implements Reporter {
  private final = new Map<string, TestCase>();

  onTestEnd(test: TestCase, _result: TestResult): void {
    this.final.set(test.id, test);
  }

  onEnd(result: FullResult): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const t of this.final.values()) {
      const o = t.outcome();
      if (o === 'skipped') skipped++;
      else if (o === 'expected' || o === 'flaky') passed++;
      else failed++;
    }
    if (result.status !== 'passed' && failed === 0) failed = 1; // a run that broke outside any test
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }

  printsToStdio(): boolean {
    return false;
  }
}
