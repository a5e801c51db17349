// `npm run bench` part `phases`: where the time of a conformance run goes, before and after a change, measured
// in one bench run on this machine. Three scenarios:
//   cold          `conformance run` from nothing (embedded PostgreSQL, reference, every check, reports);
//   target        `conformance run --profile P --allow-incomplete` against a reference started once beforehand;
//   mutant-target the same against a reference started with `--mutant extra-field-error` (several hundred
//                 checks fail: a broken service must not take longer to judge than a good one).
// Each scenario runs BENCH_ROUNDS times (default 3) after one warm-up, alternating the checkout under test
// (this one, "after") with BENCH_BEFORE (a checkout of the commit to compare with, its own node_modules; the
// README says how to make one), so drifts in machine load fall on both sides alike. Medians are reported with
// the ratio after/before. Marks come from the run's own output (--verbose), timed here as the lines arrive:
//   listed        the runner listed its tests ("conformance: running N tests")        — process start
//   referenceReady (cold) "conformance: reference ready at"
//   firstTest     the first test began (a marker the progress reporter prints with --verbose; absent before)
//   checksDone    the last test ended ("[N/N]")
//   reportsDone   the verdict counts were printed (reports written)
//   exit          the process exited
// Peak memory: the largest sum of resident memory of the harness's processes (the CLI, the runner and its
// workers; never the reference or PostgreSQL), and the largest single process, sampled every 100 ms from /proc.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type Scenario = 'cold' | 'target' | 'mutant-target';
export const SCENARIOS: Scenario[] = ['cold', 'target', 'mutant-target'];
const MUTANT = 'extra-field-error';

export interface PhaseRun {
  side: 'before' | 'after';
  scenario: Scenario;
  wallS: number;
  marks: Record<string, number | null>;
  exitCode: number | null;
  counts: string | null;
  /** Peak of the harness processes' summed resident memory, and of the largest one. */
  peakRssMiB: number | null;
  peakProcessRssMiB: number | null;
}

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const median = (xs: number[]): number | null => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Pids of `root` and all its descendants, with their command lines, from /proc. */
function tree(root: number): { pid: number; cmd: string }[] {
  const children = new Map<number, number[]>();
  const cmds = new Map<number, string>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
      cmds.set(Number(d), fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' '));
    } catch { /* gone meanwhile */ }
  }
  const out: { pid: number; cmd: string }[] = [];
  const walk = (pid: number) => {
    out.push({ pid, cmd: cmds.get(pid) ?? '' });
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/**
 * Resident memory of the harness's processes under `root` (never the reference or PostgreSQL), in KiB: the sum
 * over the processes, and the largest single one (what `/usr/bin/time` reports for a process tree).
 */
export function harnessRss(root: number): { sumKiB: number; maxKiB: number } {
  let sumKiB = 0;
  let maxKiB = 0;
  for (const p of tree(root)) {
    if (/reference-impl|reference-switchboard|postgres/.test(p.cmd)) continue;
    try {
      const m = /VmRSS:\s+([0-9]+) kB/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'utf8'));
      if (m) {
        sumKiB += Number(m[1]);
        maxKiB = Math.max(maxKiB, Number(m[1]));
      }
    } catch { /* gone meanwhile */ }
  }
  return { sumKiB, maxKiB };
}

/** Samples harnessRss every 100 ms until stopped; returns the peaks in MiB. */
export function rssSampler(pid: () => number | undefined): { stop(): { sumMiB: number | null; maxMiB: number | null } } {
  let sum = 0;
  let max = 0;
  const timer = setInterval(() => {
    const p = pid();
    if (!p) return;
    const r = harnessRss(p);
    sum = Math.max(sum, r.sumKiB);
    max = Math.max(max, r.maxKiB);
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return { sumMiB: sum > 0 ? round(sum / 1024, 1) : null, maxMiB: max > 0 ? round(max / 1024, 1) : null };
    },
  };
}

/** One conformance run of `checkout`, timed by the marks in its output. */
async function oneRun(checkout: string, side: PhaseRun['side'], scenario: Scenario, profile: string | undefined): Promise<PhaseRun> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `cec-phases-${side}-`));
  const args = [path.join(checkout, 'cli/conformance.mjs'), 'run', '--out', out, '--verbose', ...(profile ? ['--profile', profile, '--allow-incomplete'] : [])];
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('CONFORMANCE_')) delete env[k];
  const t0 = performance.now();
  const at = () => round((performance.now() - t0) / 1000);
  const marks: Record<string, number | null> = { listed: null, referenceReady: null, firstTest: null, checksDone: null, reportsDone: null };
  let text = '';
  let peak = { sumMiB: null as number | null, maxMiB: null as number | null };
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const sampler = rssSampler(() => child.pid);
    const onData = (d: Buffer) => {
      text += d.toString('utf8');
      if (marks.listed === null && /conformance: running [0-9]+ tests/.test(text)) marks.listed = at();
      if (marks.referenceReady === null && text.includes('conformance: reference ready at')) marks.referenceReady = at();
      if (marks.firstTest === null && text.includes('conformance: first test began')) marks.firstTest = at();
      const done = /\[([0-9]+)\/([0-9]+)\]/g;
      for (const m of text.matchAll(done)) if (m[1] === m[2] && marks.checksDone === null) marks.checksDone = at();
      if (marks.reportsDone === null && /conformance: [0-9]+ passed, [0-9]+ failed/.test(text)) marks.reportsDone = at();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (c) => {
      peak = sampler.stop();
      resolve(c);
    });
  });
  const wallS = at();
  fs.rmSync(out, { recursive: true, force: true });
  const counts = /conformance: ([0-9]+ passed, [0-9]+ failed[^\n]*)/.exec(text)?.[1] ?? null;
  return { side, scenario, wallS, marks: { ...marks, exit: wallS }, exitCode: code, counts, peakRssMiB: peak.sumMiB, peakProcessRssMiB: peak.maxMiB };
}

interface ReferenceRun { profile: string; stop: () => Promise<void> }

/** A reference of the "after" checkout as a target, optionally with a mutant; started once per scenario. */
async function startTarget(mutant?: string): Promise<ReferenceRun> {
  const { startReference } = await import('../engine/reference/process.ts');
  const ref = await startReference({ args: mutant ? ['--mutant', mutant] : [] });
  return { profile: ref.profilePath, stop: () => ref.stop() };
}

export interface PhaseSummary {
  scenario: Scenario;
  rounds: number;
  before: Record<string, number | null> | null;
  after: Record<string, number | null>;
  ratio: Record<string, number | null> | null;
  counts: { before: string | null; after: string | null };
}

function summarise(runs: PhaseRun[]): Record<string, number | null> {
  const keys = ['listed', 'referenceReady', 'firstTest', 'checksDone', 'reportsDone', 'exit'];
  const out: Record<string, number | null> = {};
  for (const k of keys) out[k] = median(runs.map((r) => r.marks[k]).filter((v): v is number => v !== null));
  out.peakRssMiB = median(runs.map((r) => r.peakRssMiB).filter((v): v is number => v !== null));
  out.peakProcessRssMiB = median(runs.map((r) => r.peakProcessRssMiB).filter((v): v is number => v !== null));
  return out;
}

/**
 * Runs every scenario, alternating before and after. `before` is a checkout path or undefined (then only this
 * checkout is measured and the JSON says so). Returns the runs and a per-scenario summary.
 */
export async function phases(root: string, before: string | undefined, rounds: number, log: (m: string) => void, only: Scenario[] = SCENARIOS): Promise<{ runs: PhaseRun[]; summary: PhaseSummary[] }> {
  const runs: PhaseRun[] = [];
  const summary: PhaseSummary[] = [];
  for (const scenario of only) {
    const target = scenario === 'cold' ? undefined : await startTarget(scenario === 'mutant-target' ? MUTANT : undefined);
    try {
      const sides: [PhaseRun['side'], string][] = before ? [['before', before], ['after', root]] : [['after', root]];
      for (const [side, checkout] of sides) {
        log(`phases: ${scenario} warm-up (${side})`);
        await oneRun(checkout, side, scenario, target?.profile);
      }
      const mine: PhaseRun[] = [];
      for (let i = 0; i < rounds; i++) {
        // Alternate which side goes first, so neither always follows the other.
        for (const [side, checkout] of i % 2 ? [...sides].reverse() : sides) {
          const r = await oneRun(checkout, side, scenario, target?.profile);
          log(`phases: ${scenario} ${side} #${i + 1}: ${r.wallS} s (exit ${r.exitCode}; ${r.counts ?? 'no counts'}; peak ${r.peakRssMiB} MiB, largest process ${r.peakProcessRssMiB} MiB)`);
          mine.push(r);
        }
      }
      runs.push(...mine);
      const a = summarise(mine.filter((r) => r.side === 'after'));
      const b = before ? summarise(mine.filter((r) => r.side === 'before')) : null;
      const ratio = b ? Object.fromEntries(Object.keys(a).map((k) => [k, a[k] !== null && b[k] ? round(a[k]! / b[k]!, 3) : null])) : null;
      summary.push({
        scenario, rounds, before: b, after: a, ratio,
        counts: { before: mine.find((r) => r.side === 'before')?.counts ?? null, after: mine.find((r) => r.side === 'after')?.counts ?? null },
      });
    } finally {
      await target?.stop();
    }
  }
  return { runs, summary };
}

/** Table rows for the terminal: scenario, after (before), ratio. */
export function phaseRows(summary: PhaseSummary[]): [string, string, string][] {
  return summary.map((s) => {
    const a = s.after;
    const parts = [`listed ${a.listed} s`, ...(a.referenceReady !== null ? [`reference ${a.referenceReady} s`] : []), ...(a.firstTest !== null ? [`first test ${a.firstTest} s`] : []), `checks done ${a.checksDone} s`, `reports ${a.reportsDone} s`, `peak ${a.peakRssMiB} MiB (largest process ${a.peakProcessRssMiB} MiB)`];
    const vs = s.before ? `before ${s.before.exit} s, ratio ${s.ratio?.exit}` : 'no BENCH_BEFORE';
    return [`${s.scenario} (median of ${s.rounds})`, `${a.exit} s: ${parts.join(', ')}`, vs];
  });
}
