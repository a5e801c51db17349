// Collects check outcomes from test annotations and evidence attachments and, at the end of the run,
// hands them to the report writers (outcomes.json, conformance.json, junit.xml, conformance.html) and
// prints the plain `conformance: ...` line. It never decides an outcome and never talks to the network:
// Playwright swallows reporter errors, so verdicts must not live here (the CLI decides the exit code
// from conformance.json).
import path from 'node:path';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { setting } from '../engine/config.ts';
import { redact, redactValue } from '../record/redact.ts';
import { loadProfile, registerProfileSecrets } from '../profile/profile.ts';
import { decodeCheckAnnotation, decodeEvidence } from '../record/record.ts';
import { readyState } from '../engine/ready.ts';
import { sanitizeEvidence, suiteFileOf, summaryLine, type CollectedCheck, type OutcomesFile, type RunFilter, type TestFailure } from './model.ts';
import { loadRunContext } from './context.ts';
import { writeOutcomes, writeReports } from './write.ts';

export type { CollectedCheck } from './model.ts';

/** Projects whose tests make up a conformance run; failures elsewhere (unit tests) are not the target's. */
const RUN_PROJECTS = new Set(['conformance', 'conformance-switched', 'properties']);

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
    // The CLI shards by case (engine/planner.ts selection, CONFORMANCE_SHARD); a runner's own --shard splits tests.
    if (config.shard) this.shard = `${config.shard.current}/${config.shard.total}`;
    else if (setting('shard')) this.shard = setting('shard')!;
    this.conformanceTests = suite.allTests().filter((t) => RUN_PROJECTS.has(t.parent.project()?.name ?? '')).length;
    this.learnSecrets();
  }

  /**
   * The profile's secrets, registered before results arrive, so each check's evidence is redacted as it arrives,
   * while this process waits on the workers, instead of all at the end (where it was most of the time between
   * the last check and the verdict). The end still passes everything through redaction once more; those strings
   * are then answered from redaction's memo. A reference the CLI is still starting has no profile yet: tried
   * again as results come. A profile that cannot be read is reported by the run context at the end, as before.
   */
  private secretsLearned = false;
  private learnSecrets(): void {
    const profilePath = setting('profile');
    if (this.secretsLearned || !profilePath) return;
    const ready = setting('waitReady');
    if (ready && !readyState(ready)?.ready) return;
    try {
      registerProfileSecrets(loadProfile(profilePath, process.env, setting('profileChecked')), process.env);
    } catch { /* said by loadRunContext in onEnd */ }
    this.secretsLearned = true;
  }

  onError(error: TestError): void {
    this.runErrors.push(redact(firstLine(error.message ?? error.value ?? 'unknown error')));
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.learnSecrets();
    const project = test.parent.project()?.name ?? '';
    // A test runs cases of many suite files: each record names its own (engine/playwright/fixtures.ts).
    const testFile = path.relative(process.cwd(), suiteFileOf(test).file);
    const seed = result.annotations.find((a) => a.type === 'seed')?.description;
    let failedCheck = false;
    for (const a of result.annotations) {
      const decoded = decodeCheckAnnotation(a);
      if (decoded === null) continue;
      if (!decoded.ok) {
        // A record that cannot be read is a harness error shown in the report, never silently dropped.
        this.runErrors.push(redact(`harness error: ${decoded.error} in test "${test.title}" (${testFile})`));
        if (a.type === 'check:fail') failedCheck = true;
        continue;
      }
      const d = decoded.record;
      if (d.outcome === 'fail') failedCheck = true;
      const att = result.attachments.find((x) => x.name === `evidence:${d.id}`);
      // A retried test replaces its earlier record; the last attempt is the verdict.
      // In the meta-suites one test records the check once per mutant or variant; each is its own record.
      this.checks.set(`${project}:${d.id}:${test.id}:${d.case ?? ''}:${d.mutant ?? ''}:${d.variant ?? ''}`, {
        id: d.id, requirements: d.requirements, title: d.title, outcome: d.outcome, detail: d.detail,
        project, file: d.file ?? testFile, test: d.case ?? test.title, evidence: redactValue(sanitizeEvidence(decodeEvidence(att?.body))), seed, durationMs: d.durationMs ?? result.duration,
        ...(d.mutant ? { mutant: d.mutant } : {}), ...(d.variant ? { variant: d.variant } : {}), ...(d.lacks ? { lacks: d.lacks } : {}), ...(d.uses ? { uses: d.uses } : {}),
      });
    }
    const bad = result.status === 'failed' || result.status === 'timedOut' || result.status === 'interrupted';
    // A batch that timed out may have recorded some checks and not others: it is a problem either way.
    if (bad && (!failedCheck || result.status === 'timedOut') && RUN_PROJECTS.has(project)) {
      const error = firstLine(result.errors[0]?.message ?? result.status);
      this.failures.set(test.id, { test, failure: { project, file: testFile, test: test.title, error: redact(error) } });
    } else {
      this.failures.delete(test.id);
    }
  }

  onEnd(result: FullResult): void {
    // A run the CLI stopped because its target may not be used (the reference did not start, the preflight
    // refused the target) has no verdict: the CLI says why, and no report of it is written.
    const ready = setting('waitReady');
    const state = ready ? readyState(ready) : { ready: true };
    if (state && !state.ready) return;
    const checks = [...this.checks.values()].sort((a, b) => a.id.localeCompare(b.id));
    const testFailures = [...this.failures.values()].filter((f) => f.test.outcome() === 'unexpected').map((f) => f.failure);
    const ctx = loadRunContext({ outDir: this.outDir, profilePath: setting('profile'), waiversPath: setting('waivers') });
    const outcomes: OutcomesFile = {
      startedAt: this.started.toISOString(), finishedAt: new Date().toISOString(), runStatus: result.status,
      seed: setting('seed') ?? null, shard: this.shard, target: ctx.target, checks, testFailures, runErrors: this.runErrors,
      filter: runFilter(),
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

/** The grep/requirement filter the CLI ran with (CONFORMANCE_FILTER, JSON); shards come from the runner's config. */
function runFilter(): RunFilter | null {
  const raw = setting('filter');
  if (!raw) return null;
  try {
    const f = JSON.parse(raw) as RunFilter;
    return f.grep !== undefined || f.requirement !== undefined ? { ...(f.grep !== undefined ? { grep: String(f.grep) } : {}), ...(f.requirement !== undefined ? { requirement: String(f.requirement) } : {}) } : null;
  } catch {
    return { grep: raw };
  }
}

function firstLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '').trim().split('\n')[0]?.slice(0, 500) ?? '';
}
