// `conformance diff` and `run --baseline` (reports/diff.ts, cli/diff.ts, cli/run.ts): the comparison on
// fabricated reports first (every category, the scope sentences, text and Markdown), then through the CLI
// against the reference: the runs of the reference and of one of its mutants (switched on per request by the
// switchboard header, as the mutant meta-suite does), diffed, name exactly the mutant's failing checks; the
// mutant's report as a baseline passes the mutant, fails a second mutant naming its new failures, and calls
// the baseline stale on the conformant reference.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, type ConformanceReport } from '../reports/model.ts';
import { baselineExitCode, baselineGate, compareToBaseline, diffMarkdown, diffReports, diffText } from '../reports/diff.ts';
import { check, context, outcomes, waiver } from './helpers/report-data.ts';
import { runCli, type CliResult } from './helpers/cli-process.ts';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { loadMatrix, matches } from './mutants/matrix.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-diff-'));
const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

test.describe('the comparison of two reports', () => {
  const old = () => buildReport(outcomes([
    check('a-fixed', 'fail', ['LIST-LIMIT-DEFAULT'], { detail: 'was 200' }), check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'], { detail: 'still 200' }),
    check('c-breaks', 'pass', ['VERSION-HEADER']), check('d-loses-role', 'pass', ['AUTH-401-INVALID-KEY']), check('e-gone', 'fail', ['AUDIO-URL-SHORT-LIVED']),
    check('f-waived', 'fail', ['AUTH-401-MISSING-BEARER']),
  ]), context({ waivers: [waiver('f-waived')] }));
  const now = () => buildReport(outcomes([
    check('a-fixed', 'pass', ['LIST-LIMIT-DEFAULT']), check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'], { detail: 'still 200' }),
    check('c-breaks', 'fail', ['VERSION-HEADER'], { detail: 'no version header' }), check('d-loses-role', 'not_verified', ['AUTH-401-INVALID-KEY'], { detail: "profile lacks credential role 'invalid_key'", lacks: 'credentials.invalid_key' }),
    check('f-waived', 'fail', ['AUTH-401-MISSING-BEARER']), check('g-new', 'pass', ['AUDIO-URL-SHORT-LIVED']),
  ], { filter: { grep: 'x' } }), context({ outOfScope: [{ part: 'area:audio', reason: 'no audio on staging' }] }));

  test('newly failing, fixed, still failing, failing-not-run, newly not verified, and the scope changes', () => {
    const d = diffReports(old(), now());
    expect(ids(d.newlyFailing)).toEqual(['c-breaks', 'f-waived']); // a failure that lost its waiver fails anew
    expect(ids(d.fixed)).toEqual(['a-fixed']);
    expect(ids(d.stillFailing)).toEqual(['b-still']);
    expect(ids(d.failingNotRun)).toEqual(['e-gone']);
    expect(ids(d.newlyNotVerified)).toEqual(['d-loses-role']);
    for (const line of ['filter: full run → --grep x', 'now declared out of scope: area:audio (no audio on staging)', '1 check only in the new report: g-new', '1 check only in the old report: e-gone']) expect(d.scope).toContain(line);
    const text = diffText(d, { old: 'old.json', new: 'new.json' });
    expect(text).toContain('Newly failing (2):\n  c-breaks [VERSION-HEADER]: no version header\n  f-waived [AUTH-401-MISSING-BEARER]:');
    expect(text).toContain('Fixed (1):\n  a-fixed [LIST-LIMIT-DEFAULT] (now pass)');
    const md = diffMarkdown(d, { old: 'old.json', new: 'new.json' });
    expect(md).toContain('| Newly failing | 2 |');
    expect(md).toContain("| `d-loses-role` | `AUTH-401-INVALID-KEY` | not_verified | profile lacks credential role 'invalid_key' |");
  });

  test('a report against itself: nothing changed', () => {
    const d = diffReports(old(), old());
    expect([d.newlyFailing, d.fixed, d.failingNotRun, d.newlyNotVerified, d.scope]).toEqual([[], [], [], [], []]);
    expect(ids(d.stillFailing)).toEqual(['a-fixed', 'b-still', 'e-gone']);
  });

  test('a baseline: known failures pass the gate, new ones fail it, baselined failures now passing are stale', () => {
    const cmp = compareToBaseline(old(), now());
    expect(ids(cmp.known)).toEqual(['b-still', 'f-waived']);
    expect(ids(cmp.newFailures)).toEqual(['c-breaks']);
    expect(ids(cmp.stale)).toEqual(['a-fixed']);
    expect(baselineExitCode(now() as ConformanceReport, cmp)).toBe(1);
    const onlyKnown = buildReport(outcomes([check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'])], { filter: { grep: 'b' } }), context());
    expect(onlyKnown.verdict).toBe('not_conformant');
    expect(baselineExitCode(onlyKnown, compareToBaseline(old(), onlyKnown))).toBe(0);
    // The rest of the verdict still applies: a full run with something in scope not verified is INCOMPLETE.
    const full = buildReport(outcomes([check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'])]), context());
    expect(baselineExitCode(full, compareToBaseline(old(), full))).toBe(1);
    expect(baselineExitCode(full, compareToBaseline(old(), full), { allowIncomplete: true })).toBe(0);
  });

  test('every combination of baseline and verdict names its exit code and why, never contradicting it (issue 40)', () => {
    const full = buildReport(outcomes([check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'])]), context());
    const incomplete = baselineGate(full, compareToBaseline(old(), full));
    expect(incomplete).toEqual({ code: 1, why: expect.stringMatching(/^the gate fails: no failure beyond the baseline, but the run is INCOMPLETE: \d+ must requirements? in scope not verified \(--allow-incomplete exits 0 on it\)$/) });
    expect(baselineGate(full, compareToBaseline(old(), full), { allowIncomplete: true }).why).toMatch(/^the gate passes: no failure beyond the baseline; \d+ must requirements? in scope not verified, which --allow-incomplete accepts$/);
    const cmpNew = compareToBaseline(old(), now());
    expect(baselineGate(now() as ConformanceReport, cmpNew).why).toBe('the gate fails: 1 failure beyond the baseline (the known ones are the baseline\'s)');
    const narrowed = buildReport(outcomes([check('b-still', 'fail', ['LIST-LIMIT-CANONICAL'])], { filter: { grep: 'b' } }), context());
    expect(baselineGate(narrowed, compareToBaseline(old(), narrowed))).toEqual({ code: 0, why: 'the gate passes: no failure beyond the baseline (a narrowed run claims nothing more)' });
    for (const r of [full, narrowed, now() as ConformanceReport]) {
      const g = baselineGate(r, compareToBaseline(old(), r));
      expect(g.why.startsWith(g.code === 0 ? 'the gate passes' : 'the gate fails'), g.why).toBe(true);
    }
  });
});

// ---- Through the CLI, against the reference and two of its mutants ----

const MUTANT_A = 'reason-revoked-as-invalid';
const MUTANT_B = 'reason-expired-as-disabled';
// The authentication suite: every check the two mutants break, and forty more that they do not.
const GREP = '(?:^|\\s)auth-';

test.describe('through the CLI', () => {
  test.describe.configure({ mode: 'serial', timeout: 600_000 });
  let ref: ReferenceHandle;
  let dir: string;
  const reports: Record<string, string> = {};

  /** A copy of the sandbox's profile that switches a mutant on for every request (the switchboard header). */
  function profileFor(mutant: string | null): string {
    const p = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { requestHeaders?: Record<string, string> };
    if (mutant) p.requestHeaders = { ...p.requestHeaders, 'x-switchboard-token': ref.switchboardToken, 'x-switchboard-mutant': mutant };
    const file = path.join(dir, `${mutant ?? 'reference'}.profile.json`);
    fs.writeFileSync(file, JSON.stringify(p));
    return file;
  }
  const run = (name: string, mutant: string | null, extra: string[] = []): Promise<CliResult> =>
    runCli(['run', '--profile', profileFor(mutant), '--out', path.join(dir, name), '--grep', GREP, ...extra], { timeoutMs: 300_000, sampleMs: 0 });
  const read = (name: string) => JSON.parse(fs.readFileSync(path.join(dir, name, 'conformance.json'), 'utf8')) as ConformanceReport;
  const failing = (r: ConformanceReport) => r.checks.filter((c) => c.outcome === 'fail').map((c) => c.id).sort();

  test.beforeAll(async () => {
    test.setTimeout(200_000);
    dir = tmp();
    ref = await startReference();
  });
  test.afterAll(async () => {
    await ref?.stop();
  });

  test('diff of the reference\'s report and a mutant\'s names exactly the mutant\'s failing checks', async () => {
    const r0 = await run('reference', null);
    expect(r0.code, r0.stderr.slice(-2000)).toBe(0);
    const ra = await run('mutant-a', MUTANT_A);
    expect(ra.code, ra.stderr.slice(-2000)).toBe(1);
    reports.reference = path.join(dir, 'reference', 'conformance.json');
    reports.a = path.join(dir, 'mutant-a', 'conformance.json');
    const mutantFailing = failing(read('mutant-a'));
    expect(failing(read('reference'))).toEqual([]);
    // The matrix's checks for this mutant are among them (the mutant is really on).
    const matrix = await loadMatrix();
    for (const p of matrix[MUTANT_A]) expect(mutantFailing.some((id) => matches(p, id)), p).toBe(true);

    const d = await runCli(['diff', reports.reference, reports.a], { sampleMs: 0 });
    expect(d.code, d.stderr).toBe(1); // something newly fails
    const section = (name: string) => (new RegExp(`^${name} \\((\\d+)\\):?\\n((?:  .*\\n)*)`, 'm').exec(d.stdout) ?? []);
    const newly = section('Newly failing');
    expect(newly[2].split('\n').filter(Boolean).map((l) => l.trim().split(' ')[0]).sort()).toEqual(mutantFailing);
    expect(Number(newly[1])).toBe(mutantFailing.length);
    expect(section('Fixed')[1]).toBe('0');
    expect(d.stdout).toContain('verdict: PARTIAL → NOT CONFORMANT');

    // The other way round, every one of them is fixed; Markdown on request.
    const back = await runCli(['diff', reports.a, reports.reference, '--markdown'], { sampleMs: 0 });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain(`| Fixed | ${mutantFailing.length} |`);
    for (const id of mutantFailing) expect(back.stdout).toContain(`| \`${id}\` |`);
  });

  test('--baseline: the mutant\'s own report passes the mutant, a second mutant fails naming its new failures, the reference calls it stale', async () => {
    test.skip(!reports.a, 'needs the reports of the test before');
    const again = await run('mutant-a-again', MUTANT_A, ['--baseline', reports.a]);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(again.stdout).toMatch(/^conformance: baseline .*: 0 new failures, \d+ known failures \(still failing\), 0 baselined failures now passing$/m);
    // The last line says the exit code and why.
    expect(again.stdout.trimEnd().split('\n').at(-1)).toMatch(/^conformance: the gate passes: no failure beyond the baseline( \(a narrowed run claims nothing more\))?: exit 0$/);
    // The report itself still says what the run found.
    expect(read('mutant-a-again').verdict).toBe('not_conformant');
    expect(again.stdout).toMatch(/conformance: NOT CONFORMANT — service: \d+ checks? failed; reports in /);

    const b = await run('mutant-b', MUTANT_B, ['--baseline', reports.a]);
    expect(b.code, b.stderr.slice(-2000)).toBe(1);
    const bFailing = failing(read('mutant-b'));
    const aFailing = failing(read('mutant-a'));
    const fresh = bFailing.filter((id) => !aFailing.includes(id));
    expect(fresh.length).toBeGreaterThan(0);
    const named = [...b.stdout.matchAll(/^conformance: NEW FAILURE (\S+) /gm)].map((m) => m[1]).sort();
    expect(named).toEqual(fresh);

    const clean = await run('reference-stale', null, ['--baseline', reports.a]);
    expect(clean.code, clean.stderr.slice(-2000)).toBe(0);
    const stale = [...clean.stdout.matchAll(/^conformance: STALE BASELINE (\S+): failed in the baseline, now pass; update the baseline/gm)].map((m) => m[1]).sort();
    expect(stale).toEqual(aFailing);
  });

  test('a baseline or a report that is not a conformance report is a setup error naming it', async () => {
    const bogus = path.join(tmp(), 'bogus.json');
    fs.writeFileSync(bogus, '{"hello": 1}');
    const r = await runCli(['run', '--baseline', bogus, '--profile', ref.profilePath, '--out', path.join(tmp(), 'out')], { sampleMs: 0 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^conformance: --baseline .*bogus\.json is not a conformance report/);
    const d = await runCli(['diff', bogus], { sampleMs: 0 });
    expect(d.code).toBe(2);
    expect(d.stderr.trim()).toBe('conformance: diff needs two reports: conformance diff OLD.json NEW.json (see conformance diff --help)');
  });
});
