// What CI shows of a run (reports/summary.ts, cli/common.ts publishToCi): the verdict line on stdout, the
// Markdown job summary GitHub renders from $GITHUB_STEP_SUMMARY (verdict, scope, counts, failing checks with
// their requirements and the HTML report's anchor), and `::error` annotations on GitHub Actions only. The
// pure renderers on fabricated reports, then the files the CLI writes (`merge` of fabricated shards: the
// gate workflow's merge job runs exactly this).
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport } from '../reports/model.ts';
import { githubAnnotations, MAX_ANNOTATIONS, stepSummary } from '../reports/summary.ts';
import { toHtml } from '../reports/html.ts';
import { check, context, outcomes, waiver } from './helpers/report-data.ts';
import { runCli } from './helpers/cli-process.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-ci-'));

test.describe('the job summary and the annotations', () => {
  test('the summary names the verdict, scope and counts, and each failing check with its requirements and HTML anchor', () => {
    const report = buildReport(outcomes(), context());
    const md = stepSummary(report);
    expect(md).toMatch(/^## ❌ Conformance: NOT CONFORMANT — service\n/);
    expect(md).toContain('**1 check failed**');
    expect(md).toContain('| Scope | full run; verified 2 of 6 must requirements in scope |');
    expect(md).toContain('| Checks | 2 passed · 1 failed · 0 warnings · 1 not verified · 1 informational · 0 waived |');
    expect(md).toContain('| `list-limit-rejects-plus-sign` | `LIST-LIMIT-CANONICAL` | limit=+1 answers 400 invalid_query_parameter: Undocumented success: expected 400, got 200 |');
    // No link relative to nothing on GitHub: the anchor as text, the reports where the run keeps them.
    expect(md).toContain('| `#check-list-limit-rejects-plus-sign` |');
    expect(md).not.toMatch(/\]\(conformance\.html/);
    // The anchor exists in the HTML written beside it.
    expect(toHtml(report)).toContain('id="check-list-limit-rejects-plus-sign"');
    // Only failures are listed as failures: the passing and not-verified checks are counted, not listed.
    expect(md).not.toContain('`auth-missing-bearer-list`');
  });

  test('on GitHub the summary links the workflow run\'s artifacts, never a path relative to nothing; stale and expired waivers are listed with their owners and annotated (issue 40)', () => {
    const env = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/service', GITHUB_RUN_ID: '42' };
    const report = buildReport(outcomes(), context({ waivers: [{ ...waiver('no-such-check'), owner: 'team-a' }, { ...waiver('auth-missing-bearer-list', '2000-01-01'), owner: 'team-b' }] }));
    const md = stepSummary(report, [], env);
    const links = [...md.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const l of links) expect(l).toMatch(/^https:\/\/github\.com\/acme\/service\/actions\/runs\/42#artifacts$/);
    expect(md).toMatch(/### Waivers to review \(2\)/);
    expect(md).toContain('`auth-missing-bearer-list` (owner team-b): expired on 2000-01-01');
    expect(md).toMatch(/`no-such-check` \(owner team-a\): stale, /);
    expect(githubAnnotations(report).some((l) => l.startsWith('::warning title=conformance%3A stale waiver no-such-check::waiver no-such-check (owner team-a) is stale'))).toBe(true);
    expect(stepSummary(report, [], {})).not.toMatch(/\]\(/);
  });

  test('a step whose reports a later step merges publishes nothing (CONFORMANCE_CI_PUBLISH=off): one summary per workflow run', async () => {
    const { publishToCi } = await import('../cli/common.ts');
    const dir = tmp();
    const file = path.join(dir, 'summary.md');
    const report = buildReport(outcomes(), context());
    publishToCi(report, [], { GITHUB_STEP_SUMMARY: file, CONFORMANCE_CI_PUBLISH: 'off' });
    expect(fs.existsSync(file)).toBe(false);
    publishToCi(report, [], { GITHUB_STEP_SUMMARY: file });
    expect(fs.readFileSync(file, 'utf8')).toContain('Conformance: NOT CONFORMANT');
    // The reusable gate's run job says so: its merge job is the one that publishes.
    const action = fs.readFileSync(path.join(import.meta.dirname, '..', '.github', 'actions', 'conformance', 'action.yml'), 'utf8');
    expect(action).toContain("CONFORMANCE_CI_PUBLISH: ${{ inputs.publish == 'false' && 'off' || '' }}");
    const gate = fs.readFileSync(path.join(import.meta.dirname, '..', '.github', 'workflows', 'conformance-gate.yml'), 'utf8');
    expect(gate).toMatch(/publish: "false"/);
    expect(fs.readFileSync(path.join(import.meta.dirname, '..', '.github', 'workflows', 'conformance-gate-package.yml'), 'utf8')).toContain('CONFORMANCE_CI_PUBLISH: "off"');
  });

  test('table cells cannot be broken by what a target answered', () => {
    const report = buildReport(outcomes([check('x', 'fail', ['VERSION-HEADER'], { detail: 'a | b\n<script>alert(1)</script>' })]), context());
    const row = stepSummary(report).split('\n').find((l) => l.startsWith('| `x`'))!;
    expect(row).toContain('a \\| b &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(row.split(/(?<!\\)\|/).length).toBe(6);
  });

  test('::error annotations: one per failing check, capped, data escaped; a verdict annotation unless CONFORMANT', () => {
    const report = buildReport(outcomes(), context());
    const lines = githubAnnotations(report);
    expect(lines[0]).toBe('::error title=conformance%3A list-limit-rejects-plus-sign [LIST-LIMIT-CANONICAL]::limit=+1 answers 400 invalid_query_parameter%0AUndocumented success: expected 400, got 200%0Asee conformance.html#check-list-limit-rejects-plus-sign');
    expect(lines.at(-1)).toBe('::error title=conformance%3A NOT CONFORMANT::NOT CONFORMANT — service: 1 check failed');
    const many = buildReport(outcomes(Array.from({ length: 15 }, (_, i) => check(`c${i}`, 'fail', ['VERSION-HEADER'], { detail: '100% wrong' })), {}), context());
    const m = githubAnnotations(many);
    expect(m.filter((l) => l.startsWith('::error title=conformance%3A c'))).toHaveLength(MAX_ANNOTATIONS);
    expect(m).toContain('::error title=conformance%3A more failing checks::5 more failing checks: see conformance.html');
    expect(m[0]).toContain('100%25 wrong');
    // An INCOMPLETE run warns; nothing is an error.
    const incomplete = buildReport(outcomes([check('a', 'pass', ['VERSION-HEADER'])]), context());
    expect(githubAnnotations(incomplete)).toEqual([expect.stringMatching(/^::warning title=conformance%3A INCOMPLETE::INCOMPLETE — service: verified 1 of 6 /)]);
  });
});

test.describe('through the CLI (the gate workflow\'s merge job)', () => {
  function shards(dir: string): string[] {
    const s1 = path.join(dir, 'shard-1-of-2');
    const s2 = path.join(dir, 'shard-2-of-2');
    for (const [d, o] of [[s1, outcomes([check('auth-missing-bearer-list', 'pass', ['AUTH-401-MISSING-BEARER'])], { shard: '1/2' })], [s2, outcomes([check('list-limit-rejects-plus-sign', 'fail', ['LIST-LIMIT-CANONICAL'], { detail: 'expected 400, got 200' })], { shard: '2/2' })]] as const) {
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'outcomes.json'), JSON.stringify(o));
    }
    return [s1, s2];
  }

  test('on GitHub Actions: the verdict line last on stdout, annotations before it, the summary appended to $GITHUB_STEP_SUMMARY', async () => {
    const dir = tmp();
    const summary = path.join(dir, 'summary.md');
    fs.writeFileSync(summary, '# earlier step\n');
    const r = await runCli(['merge', '--out', path.join(dir, 'out'), ...shards(dir)], { sampleMs: 0, env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary } });
    expect(r.code, r.stderr).toBe(1);
    const out = r.stdout.trim().split('\n');
    expect(out.at(-1)).toMatch(/^conformance: NOT CONFORMANT — service: 1 check failed; reports in /);
    expect(out).toContain('::error title=conformance%3A list-limit-rejects-plus-sign [LIST-LIMIT-CANONICAL]::list-limit-rejects-plus-sign holds%0Aexpected 400, got 200%0Asee conformance.html#check-list-limit-rejects-plus-sign');
    expect(r.stderr).not.toContain('NOT CONFORMANT');
    const md = fs.readFileSync(summary, 'utf8');
    expect(md.startsWith('# earlier step\n')).toBe(true);
    expect(md).toContain('## ❌ Conformance: NOT CONFORMANT — service');
    expect(md).toContain('| `list-limit-rejects-plus-sign` | `LIST-LIMIT-CANONICAL` |');
    expect(md).toContain('`#check-list-limit-rejects-plus-sign`');
    expect(fs.readFileSync(path.join(dir, 'out', 'conformance.html'), 'utf8')).toContain('id="check-list-limit-rejects-plus-sign"');
  });

  test('elsewhere: no annotations and no summary file; an unwritable summary file is one line, not a failed run', async () => {
    const dir = tmp();
    const r = await runCli(['merge', '--out', path.join(dir, 'out'), ...shards(dir)], { sampleMs: 0 });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('::error');
    const bad = await runCli(['merge', '--out', path.join(dir, 'out2'), ...shards(tmp())], { sampleMs: 0, env: { GITHUB_STEP_SUMMARY: path.join(dir, 'no', 'such', 'dir', 'summary.md') } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^conformance: cannot write the job summary to \$GITHUB_STEP_SUMMARY: ENOENT$/m);
    expect(bad.stdout).toMatch(/conformance: NOT CONFORMANT/);
  });
});
