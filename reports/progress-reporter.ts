// Terse progress for `conformance run`: a count every few seconds and one line per failing check
// (its id and the redacted detail), instead of the runner's code frames. A property's seed is printed
// with its replay command only when the property failed (every seed with --verbose). It only prints;
// outcomes are collected by conformance-reporter.ts, and the CLI prints the counts and verdict once.
import type { FullConfig, Reporter, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import { setting } from '../engine/config.ts';
import { redact } from '../record/redact.ts';

export default class ProgressReporter implements Reporter {
  private total = 0;
  private done = 0;
  private lastPrint = 0;
  /** Checks the run's breaker ended (records marked `breaker`): the first is printed, the rest counted. */
  private breakerEnded = 0;

  onBegin(config: FullConfig, suite: Suite): void {
    this.total = suite.allTests().length;
    process.stderr.write(`conformance: running ${this.total} tests using ${config.workers} workers\n`);
  }

  private readonly verbose = setting('verbose') === '1';

  /** With --verbose, every property seed (`[seed] title: seed=S runs=N`, from engine/seed.ts) is shown as it is drawn. */
  onStdOut(chunk: string | Buffer): void {
    if (!this.verbose) return;
    for (const line of chunk.toString().split('\n')) if (line.startsWith('[seed] ')) process.stderr.write(`${redact(line)}\n`);
  }

  private began = false;

  /** With --verbose, one line when the first test begins (the workers are up): a mark `npm run bench` times. */
  onTestBegin(): void {
    if (this.began || !this.verbose) return;
    this.began = true;
    process.stderr.write('conformance: first test began\n');
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.done++;
    let sawFailingCheck = false;
    for (const a of result.annotations) {
      if (a.type !== 'check:fail' || !a.description) continue;
      sawFailingCheck = true;
      try {
        const d = JSON.parse(a.description) as { id: string; detail?: string; breaker?: boolean };
        // A target that stopped answering fails every remaining check the same way: one line, not hundreds.
        if (d.breaker && ++this.breakerEnded > 1) continue;
        process.stderr.write(`  FAIL ${d.id}: ${(d.detail ?? '').split('\n')[0].slice(0, 300)}\n`);
      } catch {
        /* not ours */
      }
    }
    const failed = result.status === 'failed' || result.status === 'timedOut';
    if (!sawFailingCheck && failed) {
      const first = (result.errors[0]?.message ?? result.status).split('\n')[0].slice(0, 300);
      process.stderr.write(`  ERROR ${test.title}: ${redact(first)}\n`);
    }
    const seed = result.annotations.find((a) => a.type === 'seed')?.description;
    if ((failed || sawFailingCheck) && seed) {
      const s = /-?[0-9]+/.exec(seed)?.[0];
      process.stderr.write(`  seed of ${test.title}: ${seed}${s ? ` (replay: npx conformance run --seed ${s})` : ''}\n`);
    }
    // With --verbose, each test's file, title, worker and time: where a run's time went.
    if (this.verbose) process.stderr.write(`  ${this.done}/${this.total} ${test.title} — worker ${result.workerIndex}, ${(result.duration / 1000).toFixed(2)} s\n`);
    const now = Date.now();
    if (now - this.lastPrint > 3000 || this.done === this.total) {
      this.lastPrint = now;
      process.stderr.write(`  [${this.done}/${this.total}]\n`);
    }
  }

  onEnd(): void {
    if (this.breakerEnded > 1) process.stderr.write(`  FAIL ${this.breakerEnded - 1} more checks, each for the same reason: the target stopped answering (every one is in the report)\n`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
