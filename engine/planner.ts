// The run's plan, apart from the Playwright fixtures that run it (engine/playwright/fixtures.ts): what a case is, which
// cases a run keeps (the --grep filter and the CLI's --shard, by "<file> <title>" and a hash of the title), how
// they become the run's Playwright tests (`planRun`: the waiting suites first, then the properties, then batches
// of up to BATCH cases), how a test runs its groups of cases side by side (`runGroups`, CONFORMANCE_IN_FLIGHT in
// flight, default 8), and the claim files that let a waiting test run a later test's batch exactly once
// (`claimBatch`). A check spends most of its time waiting for the target, and a Playwright test costs about 25 ms
// of stack captures for its fixture steps alone: hence batches, many cases at once inside each. Every check
// still keeps its own record (id, outcome, evidence, duration, case title, suite file) and its own JUnit case.
// Pure planning and running: no fixture, no target, no Playwright `test` here (tests/batch.spec.ts runs it on fakes).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TestInfo } from '@playwright/test';
import { setting } from './config.ts';
import type { Recorded } from './evaluate.ts';
import type { CheckDef, CheckRecord, CheckScope } from '../record/record.ts';
import { redact } from '../record/redact.ts';
import { inFlight, inPool } from './pool.ts';
import type { CheckApi } from '../observe/target.ts';
import type { Capture } from '../observe/capture.ts';

export type CheckBody = (api: CheckApi, scope: CheckScope) => Promise<void>;

/** The check function a case calls: runs `body` against the target (once per mutant or bundle in a meta-suite). */
export type CheckFn = (def: CheckDef, body: CheckBody) => Promise<CheckRecord>;

/** Where a batch's checks report: each record, in the order they ended. */
export type Sink = (r: Recorded) => void;

/** Makes the `check` of one case of a batch: records land in `testInfo`, tagged with the case's title and file. */
export type Checker = (testInfo: TestInfo, caseTitle: string, sink: Sink, caseFile?: string) => CheckFn;

/** What a case body receives. `capture` only in a suite declared with `{ capture: true }`. */
export interface CaseFixtures {
  check: CheckFn;
  capture: Capture;
  /** The case's own title (the test's is its batch's). */
  title: string;
}
export type CaseBody = (fx: CaseFixtures, testInfo: TestInfo) => Promise<void> | void;

/** What a service check's `run` receives beside the target and its scope. */
export interface CaseContext {
  /** The sender suite's webhook listener: only in a suite declared with `{ capture: true }`. */
  readonly capture: Capture;
  /** The Playwright test hosting the check (a property's seed annotation, a longer timeout). */
  readonly testInfo: TestInfo;
}

/** How a service check observes and judges: requests through `api`, outcomes through `scope` or thrown. */
export type ServiceRun = (api: CheckApi, scope: CheckScope, ctx: CaseContext) => Promise<void>;

export interface SuiteOptions {
  /** The cases need the webhook listener of the sender suite. */
  capture?: boolean;
  /** Each case is a Playwright test of its own (the properties: CPU-bound, one long check each). */
  solo?: boolean;
  /** Cases in flight at once (default: CONFORMANCE_IN_FLIGHT, else 8). */
  inFlight?: number;
  /**
   * The suite's cases mostly wait (observation windows, an expiry): they start first, in the run's first test,
   * beside other suites' checks, so the waiting overlaps the work instead of holding a worker idle.
   */
  waits?: boolean;
  /** Every check of the suite is declared `fresh` (engine/registry.ts): its reads are never shared. */
  fresh?: boolean;
}

/** Lanes of a group: a number, or `default` (CONFORMANCE_IN_FLIGHT when the group runs). */
export type Lanes = number | 'default';

/** Cases per Playwright test: each test costs ~25 ms of fixture steps, and most files then fit in one. */
export const BATCH = 100;

export interface Case {
  title: string;
  body: CaseBody;
  /** The suite file that declared it, relative to the project root (in its records). */
  file?: string;
}

/** The --grep filter (a regular expression over "<file> <case title>") and the shard "i/n", from the CLI. */
export function selection(env: NodeJS.ProcessEnv = process.env): (file: string, title: string) => boolean {
  const grep = setting('grep', env);
  const re = grep === undefined ? undefined : new RegExp(grep);
  const m = /^([0-9]+)\/([0-9]+)$/.exec(setting('shard', env) ?? '');
  const shard = m ? { i: Number(m[1]), n: Number(m[2]) } : undefined;
  return (file, title) => {
    if (re && !re.test(`${file} ${title}`)) return false;
    // A hash of the title, not the order of declaration: every process (the runner's and each worker's)
    // must put a case in the same shard, whichever files it loaded first.
    return !shard || createHash('sha256').update(title).digest().readUInt32BE(0) % shard.n === shard.i - 1;
  };
}

/**
 * Cases a test runs at once, `lanes` of them in flight: a number a suite asked for, or `default`, read when the
 * group runs (engine/pool.ts inFlight: a target measured far away raises it, observe/ready.ts). `waits`: a suite
 * that mostly waits (an expiry).
 */
export interface CaseGroup {
  cases: Case[];
  lanes: Lanes;
  waits?: boolean;
}

/** A later test's batch that a waiting test may run while it waits, if it claims the batch first. */
export interface SpareBatch {
  key: string;
  cases: Case[];
  lanes: Lanes;
}

/**
 * Claims a batch for the test that is about to run it, once per run: a file made with O_EXCL beside the run's
 * breaker file (a folder global setup makes fresh for every run, shared by its workers). The test that owns the
 * batch runs it unless another test claimed it first; a waiting test runs it only with a claim, so a place to
 * claim in that cannot be written never runs a batch twice, it only stops the waiting test from taking one.
 */
export function claimBatch(key: string, owner: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const breaker = setting('breakerFile', env);
  if (!breaker) return owner;
  try {
    fs.writeFileSync(path.join(path.dirname(breaker), `claim-${key}`), '', { flag: 'wx' });
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? false : owner;
  }
}

/**
 * Runs a test's groups of cases side by side, each group with its own lanes, and surfaces what no record can hold:
 * a harness error fails the test after every case ran. A test whose groups wait (an audio URL's expiry) and that
 * was handed `spare` batches runs them, one after another, while it still waits and once its own plain cases are
 * done: each only if `claim` gets it first, so every batch runs once in the run, here or in its own test.
 */
export async function runGroups(
  groups: CaseGroup[], checker: Checker, capture: Capture | undefined, testInfo: TestInfo, solo: boolean,
  spare: readonly SpareBatch[] = [], claim: (key: string) => boolean = (key) => claimBatch(key, false),
): Promise<void> {
  const problems: string[] = [];
  const recorded: Recorded[] = [];
  const runGroup = (g: CaseGroup) => inPool(g.cases, g.lanes === 'default' ? inFlight() : g.lanes, async (c) => {
    const check = checker(testInfo, c.title, (r) => {
      recorded.push(r);
      if (r.problem) problems.push(`${r.rec.id}: ${r.problem.stack ?? r.problem.message}`);
    }, c.file);
    try {
      await c.body({ check, title: c.title, get capture() { if (!capture) throw new Error('this suite was not declared with { capture: true }'); return capture; } }, testInfo);
    } catch (e) {
      // The case failed outside any check (its own code, or Playwright's expect in a property).
      problems.push(`${c.title}: ${(e as Error)?.stack ?? String(e)}`);
    }
  });
  const running = groups.map(runGroup);
  const waiting = running.filter((_, i) => groups[i].waits);
  if (waiting.length > 0 && spare.length > 0) {
    let waited = false;
    void Promise.allSettled(waiting).then(() => (waited = true));
    await Promise.allSettled(running.filter((_, i) => !groups[i].waits));
    for (const b of spare) {
      if (waited) break;
      if (!claim(b.key)) continue;
      testInfo.annotations.push({ type: 'batch', description: `ran batch ${b.key} (${b.cases.length} cases) while waiting` });
      const run = runGroup({ cases: b.cases, lanes: b.lanes });
      running.push(run);
      await Promise.allSettled([run]);
    }
  }
  await Promise.all(running);
  if (problems.length > 0) throw new Error(redact(problems.length === 1 ? problems[0] : `${problems.length} cases failed outside their checks:\n${problems.join('\n')}`));
  // A property is its test: not verified, it is skipped (a batch is never skipped: its other checks ran).
  if (solo && recorded.length > 0 && recorded.every((r) => r.rec.outcome === 'not_verified')) testInfo.skip(true, `not_verified: ${recorded[0].rec.detail}`);
}

export interface Registered extends Case {
  file: string;
  opts: SuiteOptions;
  /** Declared under properties/ (a property, CPU-bound: tests of its own). */
  property: boolean;
}

/**
 * A Playwright test of the run: its title, its groups, whether it needs the webhook listener, whether it is one
 * property; `claim`: the key its batch is claimed by (a waiting test may have run it); `spare`: the batches a
 * waiting test may run while it waits.
 */
export interface PlannedTest {
  title: string;
  groups: CaseGroup[];
  capture: boolean;
  solo: boolean;
  claim?: string;
  spare?: SpareBatch[];
}

/**
 * The run's Playwright tests, in the order the runner hands them to its workers:
 *   1. each waiting suite that listens for the target's webhook deliveries (`waits` with `capture`), alone in a
 *      test of its own, all its cases at once: its listener must answer within the sender's timeout, so its
 *      worker runs nothing CPU-bound meanwhile (a check's CPU would hold the answer back: a timeout the sender
 *      rightly retries, and a terminal-failure check fails that should not);
 *   2. `checks [1]`: the other waiting suites (an audio URL's expiry), each with its own lanes, beside the first
 *      BATCH cases of the plain suites, so the wait overlaps work instead of holding a worker idle; when those are
 *      done and it still waits, it runs the later batches of step 4 it can claim, the last first (runGroups);
 *   3. the properties (properties/), each file's cases as it asked (one test per case, or batches), CPU-bound;
 *   4. the plain suites' remaining cases, BATCH per test, each run by its own test unless `checks [1]` claimed it.
 * With one worker (`workers`, CONFORMANCE_WORKERS, which the CLI sets) the other waiting suites join the listening
 * test instead of `checks [1]`: a worker runs one test at a time, so the listener's test would otherwise hold the one
 * worker idle through its wait (a deployment's own retry schedule: 107 to 200 s) before an expiry wait began (120 s);
 * an expiry wait is no CPU to hold the listener's answers back. Two workers overlap the two tests instead.
 * Every process that loads the same files with the same selection (and the same worker count) plans the same tests.
 */
export function planRun(cases: readonly Registered[], lanes: Lanes = 'default', workers = Number(setting('workers') ?? 2)): PlannedTest[] {
  /** The cases of each suite file, in the order the files were loaded. */
  const bySuite = (list: readonly Registered[]): Registered[][] => {
    const files = new Map<string, Registered[]>();
    for (const c of list) {
      const cs = files.get(c.file);
      if (cs) cs.push(c);
      else files.set(c.file, [c]);
    }
    return [...files.values()];
  };
  const groupsOf = (list: readonly Registered[]): CaseGroup[] => bySuite(list).map((cs) => ({ cases: cs, lanes: cs[0].opts.inFlight ?? lanes }));
  const suiteName = (c: Registered) => path.basename(c.file).replace(/\.spec\.[jt]s$/, '');
  const listening = cases.filter((c) => c.opts.waits && c.opts.capture);
  const waiting = cases.filter((c) => c.opts.waits && !c.opts.capture);
  const properties = cases.filter((c) => !c.opts.waits && c.property);
  const rest = cases.filter((c) => !c.opts.waits && !c.property);
  const chunks: Registered[][] = [];
  for (let i = 0; i < rest.length; i += BATCH) chunks.push(rest.slice(i, i + BATCH));
  const out: PlannedTest[] = [];
  const checks = (list: Registered[], extra: CaseGroup[] = []): PlannedTest => ({
    title: `checks [${out.filter((t) => t.title.startsWith('checks [')).length + 1}]`,
    groups: [...extra, ...(list.length > 0 ? [{ cases: list, lanes }] : [])],
    capture: [...list, ...extra.flatMap((g) => g.cases as Registered[])].some((c) => c.opts.capture),
    solo: false,
  });
  const waitingGroups = groupsOf(waiting).map((g) => ({ ...g, waits: true }));
  // One worker: the other waits join the first listening test; otherwise they go beside the first batch, in `checks [1]`.
  const besideListener = workers === 1 && listening.length > 0 ? waitingGroups.splice(0) : [];
  groupsOf(listening).forEach((g, i) => out.push({ title: `${suiteName(g.cases[0] as Registered)} [1]`, groups: [g, ...(i === 0 ? besideListener : [])], capture: true, solo: false }));
  const first = waitingGroups.length > 0 || chunks.length > 0 ? checks(chunks.shift() ?? [], waitingGroups) : undefined;
  if (first) out.push(first);
  for (const cs of bySuite(properties)) {
    const name = suiteName(cs[0]);
    const own = cs[0].opts;
    if (own.solo) for (const c of cs) out.push({ title: c.title, groups: [{ cases: [c], lanes: 1 }], capture: !!own.capture, solo: true });
    else for (let i = 0; i < cs.length; i += BATCH) out.push({ title: `${name} [${i / BATCH + 1}]`, groups: [{ cases: cs.slice(i, i + BATCH), lanes: own.inFlight ?? lanes }], capture: !!own.capture, solo: false });
  }
  const later: SpareBatch[] = [];
  for (const chunk of chunks) {
    const t = checks(chunk);
    // A batch that needs the webhook listener runs only in its own test, which has it.
    if (t.capture) {
      out.push(t);
      continue;
    }
    const key = t.title.replace(/\W+/g, '-').replace(/-$/, ''); // "checks-3": unique in the plan, a plain file name
    out.push({ ...t, claim: key });
    later.push({ key, cases: chunk, lanes });
  }
  if (first && waitingGroups.length > 0 && later.length > 0) first.spare = later.reverse();
  return out;
}
