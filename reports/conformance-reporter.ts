// Collects check outcomes from test annotations and evidence attachments and, at the end of the run,
// hands them to the report writers (outcomes.json, conformance.json, junit.xml, conformance.html) and
// prints the plain `conformance: ...` line. It never decides an outcome and never talks to the network:
// Playwright swallows reporter errors, so verdicts must not live here (the CLI decides the exit code
// from conformance.json).
import path from 'node:path';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { redact } from '../harness/redact.ts';
import { sanitizeEvidence, summaryLine, type CollectedCheck, type OutcomesFile, type TestFailure } from './model.ts';
import { loadRunContext } from './context.ts';
import { writeOutcomes, writeReports } from './write.ts';

export type { CollectedCheck } from './model.ts';

/** Projects whose tests make up a conformance run; failures elsewhere (unit tests) are not the target's. */
const RUN_PROJECTS = new Set(['conformance', 'properties']);

export default class ConformanceReporter implements Reporter {
  private readonly outDir: string;
  private checks = new Map<string, CollectedCheck>();
  /** Last result of tests that failed without recording a failing check, by test id. */
  private failures = new Map<string, { test: TestCase; failure: TestFailure }>();
  private runErrors: string[] = [];
  private started = new Date();
  private shard: string | null = null;
  private conformanceTests = 0;

  constructor(options: { outDir?: string } = {}) {
    this.outDir = options.outDir ?? 'reports/out';
  }

  onBegin(config: FullConfig, suite: Suite): void {
    if (config.shard) this.shard = `${config.shard.current}/${config.shard.total}`;
    this.conformanceTests = suite.allTests().filter((t) => RUN_PROJECTS.has(t.parent.project()?.name ?? '')).length;
  }

  onError(error: TestError): void {
    this.runErrors.push(redact(firstLine(error.message ?? error.value ?? 'unknown error')));
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const project = test.parent.project()?.name ?? '';
    const file = path.relative(process.cwd(), test.location.file);
    const seed = result.annotations.find((a) => a.type === 'seed')?.description;
    let failedCheck = false;
    for (const a of result.annotations) {
      const m = /^check:(pass|fail|not_verified|informational)$/.exec(a.type);
      if (!m || !a.description) continue;
      let d: { id: string; requirements: string[]; title: string; detail?: string; mutant?: string };
      try {
        d = JSON.parse(a.description);
      } catch {
        continue;
      }
      if (m[1] === 'fail') failedCheck = true;
      const att = result.attachments.find((x) => x.name === `evidence:${d.id}`);
      let evidence: unknown;
      if (att?.body) {
        try {
          evidence = JSON.parse(att.body.toString('utf8'));
        } catch {
          evidence = att.body.toString('utf8');
        }
      }
      // A retried test replaces its earlier record; the last attempt is the verdict.
      // In mutant mode one test records the check once per mutant; each is its own record.
      this.checks.set(`${project}:${d.id}:${test.id}:${d.mutant ?? ''}`, {
        id: d.id, requirements: d.requirements, title: d.title, outcome: m[1] as CollectedCheck['outcome'], detail: d.detail,
        project, file, test: test.title, evidence: sanitizeEvidence(evidence), seed, ...(d.mutant ? { mutant: d.mutant } : {}),
      });
    }
    const bad = result.status === 'failed' || result.status === 'timedOut' || result.status === 'interrupted';
    if (bad && !failedCheck && RUN_PROJECTS.has(project)) {
      const error = firstLine(result.errors[0]?.message ?? result.status);
      this.failures.set(test.id, { test, failure: { project, file, test: test.title, error: redact(error) } });
    } else {
      this.failures.delete(test.id);
    }
  }

  onEnd(result: FullResult): void {
    const checks = [...this.checks.values()].sort((a, b) => a.id.localeCompare(b.id));
    const testFailures = [...this.failures.values()].filter((f) => f.test.outcome() === 'unexpected').map((f) => f.failure);
    const ctx = loadRunContext({ outDir: this.outDir, profilePath: process.env.CONFORMANCE_PROFILE, waiversPath: process.env.CONFORMANCE_WAIVERS || undefined });
    const outcomes: OutcomesFile = {
      startedAt: this.started.toISOString(), finishedAt: new Date().toISOString(), runStatus: result.status,
      seed: process.env.CONFORMANCE_SEED ?? null, shard: this.shard, target: ctx.target, checks, testFailures, runErrors: this.runErrors,
    };
    writeOutcomes(this.outDir, outcomes);
    // A unit-only run (`--project=unit`) has no conformance to report.
    if (this.conformanceTests === 0 && checks.length === 0) return;
    const report = writeReports(this.outDir, outcomes, ctx);
    process.stdout.write(`${summaryLine(report.summary)}\n`);
  }

  printsToStdio(): boolean {
    return false;
  }
}

function firstLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '').trim().split('\n')[0]?.slice(0, 500) ?? '';
}
