// Playwright fixtures for the conformance suites: the target (worker-scoped, from the profile named
// by CONFORMANCE_PROFILE) and `check`, which runs one named check against it and records its outcome.
//
// A suite declares its cases with the `test` that `suite(import.meta.filename)` returns; they register here, and
// suites/run.spec.ts, the conformance project's one test file, turns every loaded suite's cases into a few
// Playwright tests (`planRun`: the waiting suites first, then the properties, then batches of up to BATCH cases),
// many cases at once inside each (CONFORMANCE_IN_FLIGHT, default 8): a check spends most of its time waiting for
// the target, and a Playwright test costs about 25 ms of stack captures for its fixture steps alone. Every check
// keeps its own record: id, outcome, evidence, duration, the case title and suite file, and so its own JUnit test
// case. The --grep filter and the CLI's --shard choose cases (not batches) here, by "<file> <title>" and a hash
// of the title.
//
// Mutant mode (used only by the meta-suite against the reference sandbox): when
// CONFORMANCE_MUTANTS_MATRIX names a matrix file, `check` runs the check once per mutant whose
// patterns name it, each time with the switchboard headers that switch that mutant on, and records
// every outcome tagged with the mutant. One test, one worker, many mutants.
//
// Variant mode (the dual, used only by tests/variants.spec.ts): when CONFORMANCE_VARIANTS_SET names a JSON file
// of variant bundles ({ "<bundle>": ["variant", ...] }), `check` runs every check once per bundle with the
// switchboard headers that switch the bundle's variants on, and records each outcome tagged with the bundle.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as playwrightTest from '@playwright/test';
import type { TestInfo } from '@playwright/test';
import { setting, settingName } from './config.ts';
import { loadProfile } from './profile.ts';
import { Target, CheckApi } from './target.ts';
import { matchesPattern, recordCheck, type CheckDef, type CheckRecord, type CheckScope, type Recorded } from './checks.ts';
import { redact, registerSecret } from './redact.ts';
import { inFlight, inPool } from './pool.ts';
import { waitForReady } from './ready.ts';
import type { Capture } from './webhook/sender-suite.ts';

export type CheckBody = (api: CheckApi, scope: CheckScope) => Promise<void>;


function mutantsFor(id: string, matrix: Record<string, string[]>): string[] {
  return Object.entries(matrix).filter(([, ps]) => ps.some((p) => matchesPattern(p, id))).map(([m]) => m);
}

/** How long the sender suite's listener holds a "timeout" answer past the sender's own timeout. */
export const SENDER_TIMEOUT_MS = 500;

interface WorkerFixtures {
  target: Target;
  mutantMatrix: Record<string, string[]> | undefined;
  /** Variant bundles (variant mode), or undefined. */
  variantBundles: Record<string, string[]> | undefined;
  /** Variant mode: what each bundle's variants declare in the profile (a header word), by bundle. */
  variantProfiles: Record<string, { webhook?: Record<string, unknown> }>;
  /** The webhook listener of the sender suite (suites/webhook-sender.spec.ts). */
  capture: Capture;
}

/** The check function a case calls: runs `body` against the target (once per mutant or bundle in a meta-suite). */
export type CheckFn = (def: CheckDef, body: CheckBody) => Promise<CheckRecord>;

/** Where a batch's checks report: each record, in the order they ended. */
export type Sink = (r: Recorded) => void;

/** Makes the `check` of one case of a batch: records land in `testInfo`, tagged with the case's title and file. */
export type Checker = (testInfo: TestInfo, caseTitle: string, sink: Sink, caseFile?: string) => CheckFn;

interface BatchFixtures {
  checker: Checker;
}

// The suites need none of the browser fixtures `@playwright/test`'s `test` brings (the in-process Playwright
// driver, browser options, trace recording and context configuration: auto fixtures, set up and torn down as
// steps, each with a stack capture, for every test). Its fixture-less root, `_baseTest`, is what Playwright's own
// component-testing packages extend; exported (and typed) by the pinned @playwright/test, with `test` as the
// fallback should a later version drop it.
const base: typeof playwrightTest._baseTest = playwrightTest._baseTest ?? playwrightTest.test;

// One `base.extend` for every suite and property, so all share one worker pool per project; the webhook
// fixtures are imported lazily, when a batch asks for them. (A separate `test.extend` per file would
// give each file its own worker processes.)
const fixtures = base.extend<BatchFixtures, WorkerFixtures>({
  capture: [
    async ({}, use) => {
      const { Capture } = await import('./webhook/sender-suite.ts');
      // A target in a container reaches the harness through the host's gateway, not its loopback.
      const callbackHost = setting('callbackHost');
      const capture = new Capture({ holdMs: SENDER_TIMEOUT_MS + 1000, ...(callbackHost ? { host: '0.0.0.0', advertiseHost: callbackHost } : {}) });
      await capture.listen();
      await use(capture);
      await capture.close();
    },
    { scope: 'worker' },
  ],
  mutantMatrix: [
    async ({}, use) => {
      const file = setting('mutantsMatrix');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string[]>) : undefined);
    },
    { scope: 'worker' },
  ],
  variantBundles: [
    async ({}, use) => {
      const file = setting('variantsSet');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string[]>) : undefined);
    },
    { scope: 'worker' },
  ],
  variantProfiles: [
    async ({}, use) => {
      const file = setting('variantsProfiles');
      await use(file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { webhook?: Record<string, unknown> }>) : {});
    },
    { scope: 'worker' },
  ],
  target: [
    async ({}, use) => {
      const file = setting('profile');
      if (!file) {
        throw new Error(setting('setupError') ?? `${settingName('profile')} is not set: run through \`conformance run\` or \`npm test\``);
      }
      // A reference `conformance run` is starting meanwhile: its profile is there once it is ready.
      const ready = setting('waitReady');
      if (ready) await waitForReady(ready);
      await use(new Target(loadProfile(file)));
    },
    { scope: 'worker' },
  ],
  checker: async ({ target, mutantMatrix, variantBundles, variantProfiles }, use) => {
    // Meta-suites: every check once per variant bundle, or once per mutant that names it, each with the
    // switchboard headers that switch it on; otherwise once, against the profile's target.
    const token = setting('switchboardToken');
    const runs = (def: CheckDef): { tag: { mutant?: string; variant?: string }; target: Target }[] => {
      const switched = (headers: Record<string, string>, declared: { webhook?: Record<string, unknown> } = {}) => new Target({
        ...target.profile,
        requestHeaders: { ...target.profile.requestHeaders, 'x-switchboard-token': token!, ...headers },
        // What a service making the bundle's choices declares in its profile (the sender's header word).
        ...(declared.webhook ? { webhook: { ...target.profile.webhook, ...declared.webhook } } : {}),
      });
      if (variantBundles) return Object.entries(variantBundles).map(([variant, names]) => ({ tag: { variant }, target: switched({ 'x-switchboard-variant': names.join(',') }, variantProfiles[variant]) }));
      if (mutantMatrix) return mutantsFor(def.id, mutantMatrix).map((mutant) => ({ tag: { mutant }, target: switched({ 'x-switchboard-mutant': mutant }) }));
      return [{ tag: {}, target }];
    };
    if (variantBundles || mutantMatrix) {
      if (!token) throw new Error(`${variantBundles ? 'variant' : 'mutant'} mode needs ${settingName('switchboardToken')}`);
      registerSecret(token);
    }
    await use((testInfo, caseTitle, sink, caseFile) => async (def, body) => {
      let last: CheckRecord | undefined;
      for (const r of runs(def)) {
        const recorded = await recordCheck(testInfo, def, (scope) => body(new CheckApi(r.target, scope), scope), { ...r.tag, case: caseTitle, ...(caseFile ? { file: caseFile } : {}) });
        sink(recorded);
        last = recorded.rec;
      }
      return last ?? { ...def, outcome: 'not_verified', detail: variantBundles ? 'no variant bundle given' : 'no mutant names this check' };
    });
  },
});

/** What a case body receives. `capture` only in a suite declared with `{ capture: true }`. */
export interface CaseFixtures {
  check: CheckFn;
  capture: Capture;
  /** The case's own title (the test's is its batch's). */
  title: string;
}
export type CaseBody = (fx: CaseFixtures, testInfo: TestInfo) => Promise<void> | void;

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
}

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

/** Cases a test runs at once, `lanes` of them in flight. `waits`: a suite that mostly waits (an expiry). */
export interface CaseGroup {
  cases: Case[];
  lanes: number;
  waits?: boolean;
}

/** A later test's batch that a waiting test may run while it waits, if it claims the batch first. */
export interface SpareBatch {
  key: string;
  cases: Case[];
  lanes: number;
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
  const runGroup = (g: CaseGroup) => inPool(g.cases, g.lanes, async (c) => {
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

/** Every case the loaded suite files declared (and the selection kept), in the order they were declared. */
const registered: Registered[] = [];

/**
 * The `test` of one suite file: `const test = suite(import.meta.filename)`, then `test(title, body)` per
 * case. Cases register here; suites/run.spec.ts loads every suite file, then `declareRun` turns the cases into
 * the run's Playwright tests.
 */
export function suite(file: string, opts: SuiteOptions = {}): (title: string, body: CaseBody) => void {
  const rel = path.relative(process.cwd(), file);
  const property = path.basename(path.dirname(file)) === 'properties';
  const chosen = selection();
  const casesOut = setting('casesOut');
  return (title, body) => {
    if (!chosen(rel, title)) return;
    if (casesOut) fs.appendFileSync(casesOut, `${rel}\t${title}\n`);
    registered.push({ title, body, file: rel, opts, property });
  };
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
 * Every process that loads the same files with the same selection plans the same tests.
 */
export function planRun(cases: readonly Registered[], lanes = inFlight()): PlannedTest[] {
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
  for (const g of groupsOf(listening)) out.push({ title: `${suiteName(g.cases[0] as Registered)} [1]`, groups: [g], capture: true, solo: false });
  const first = waiting.length > 0 || chunks.length > 0 ? checks(chunks.shift() ?? [], groupsOf(waiting).map((g) => ({ ...g, waits: true }))) : undefined;
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
  if (first && waiting.length > 0 && later.length > 0) first.spare = later.reverse();
  return out;
}

/** Declares the run's Playwright tests (planRun) from the cases the loaded suite files registered. */
export function declareRun(): void {
  for (const t of planRun(registered)) {
    if (t.capture) fixtures(t.title, async ({ checker, capture }, testInfo) => runGroups(t.groups, checker, capture, testInfo, t.solo));
    else {
      fixtures(t.title, async ({ checker }, testInfo) => {
        if (t.claim !== undefined && !claimBatch(t.claim, true)) {
          testInfo.annotations.push({ type: 'batch', description: `its cases ran in an earlier test of this run, while that test waited` });
          return;
        }
        await runGroups(t.groups, checker, undefined, testInfo, t.solo, t.spare);
      });
    }
  }
}

export { expect } from '@playwright/test';
