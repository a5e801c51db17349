// Collects check outcomes from test annotations and evidence attachments and writes them at the end
// of the run (outcomes.json; the report writers build on it). It never decides an outcome and never
// talks to the network: Playwright swallows reporter errors, so verdicts must not live here.
import fs from 'node:fs';
import path from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

export interface CollectedCheck {
  id: string;
  requirements: string[];
  title: string;
  outcome: 'pass' | 'fail' | 'not_verified' | 'informational';
  detail?: string;
  project: string;
  file: string;
  test: string;
  evidence?: unknown;
  seed?: string;
}

export default class ConformanceReporter implements Reporter {
  private readonly outDir: string;
  private checks = new Map<string, CollectedCheck>();
  private started = new Date();

  constructor(options: { outDir?: string } = {}) {
    this.outDir = options.outDir ?? 'reports/out';
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const project = test.parent.project()?.name ?? '';
    const seed = result.annotations.find((a) => a.type === 'seed')?.description;
    for (const a of result.annotations) {
      const m = /^check:(pass|fail|not_verified|informational)$/.exec(a.type);
      if (!m || !a.description) continue;
      let d: { id: string; requirements: string[]; title: string; detail?: string };
      try {
        d = JSON.parse(a.description);
      } catch {
        continue;
      }
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
      this.checks.set(`${project}:${d.id}:${test.id}`, {
        id: d.id, requirements: d.requirements, title: d.title, outcome: m[1] as CollectedCheck['outcome'], detail: d.detail,
        project, file: path.relative(process.cwd(), test.location.file), test: test.title, evidence, seed,
      });
    }
  }

  onEnd(result: FullResult): void {
    fs.mkdirSync(this.outDir, { recursive: true });
    const checks = [...this.checks.values()].sort((a, b) => a.id.localeCompare(b.id));
    fs.writeFileSync(
      path.join(this.outDir, 'outcomes.json'),
      JSON.stringify({ startedAt: this.started.toISOString(), finishedAt: new Date().toISOString(), runStatus: result.status, seed: process.env.CONFORMANCE_SEED ?? null, checks }, null, 2),
    );
  }

  printsToStdio(): boolean {
    return false;
  }
}
