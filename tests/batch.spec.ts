// The batches of engine/planner.ts: a Playwright test runs many cases at once, so one case's end must not
// end the others, a harness error must still fail the test, and the CLI's --grep and --shard must choose
// cases exactly (each case in one shard, in every process alike). Run against fakes: no target, no runner.
import { test, expect } from '@playwright/test';
import type { TestInfo } from '@playwright/test';
import { recordCheck } from '../engine/evaluate.ts';
import { CheckFailure, NotVerified, type CheckDef } from '../record/record.ts';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { claimBatch, planRun, runGroups, selection, type Case, type Checker, type Registered } from '../engine/planner.ts';
import { inPool } from '../engine/pool.ts';
import type { CheckApi } from '../observe/target.ts';
import { declared } from './helpers/declared.ts';

class SkipMarker extends Error {}

function fakeInfo() {
  const info = {
    annotations: [] as { type: string; description?: string }[],
    attachments: [] as unknown[],
    skip: (cond: boolean, reason: string) => {
      if (cond) throw new SkipMarker(reason);
    },
  };
  return info;
}

/** A checker as the fixture builds it, minus the target: the body gets no api (these bodies use none). */
const checker: Checker = (testInfo, caseTitle, sink) => async (def, body) => {
  const r = await recordCheck(testInfo, def, (scope) => body(undefined as unknown as CheckApi, scope), { case: caseTitle });
  sink(r);
  return r.rec;
};

const def = (id: string): CheckDef => declared(id);
const outcomes = (info: ReturnType<typeof fakeInfo>) => info.annotations.filter((a) => a.type.startsWith('check:')).map((a) => `${JSON.parse(a.description!).id}:${a.type}`).sort();

test('a batch records every case: a decided failure and a not_verified end only their own check', async () => {
  const info = fakeInfo();
  const cases: Case[] = [
    { title: 'batch-a', body: async ({ check }) => void (await check(def('batch-a'), async () => {})) },
    { title: 'batch-b', body: async ({ check }) => void (await check(def('batch-b'), async () => { throw new CheckFailure('Broken', 'x'); })) },
    { title: 'batch-c', body: async ({ check }) => void (await check(def('batch-c'), async () => { throw new NotVerified('profile lacks y'); })) },
  ];
  await runGroups([{ cases, lanes: 2 }], checker, undefined, info as unknown as TestInfo, false);
  expect(outcomes(info)).toEqual(['batch-a:check:pass', 'batch-b:check:fail', 'batch-c:check:not_verified']);
  // Each record names its case and its own time.
  for (const a of info.annotations) expect(JSON.parse(a.description!)).toMatchObject({ case: expect.stringMatching(/^batch-/), durationMs: expect.any(Number) });
});

test('a harness error in one case fails the batch after every case ran, naming the case', async () => {
  const info = fakeInfo();
  const cases: Case[] = [
    { title: 'batch-harness-error', body: async ({ check }) => void (await check(def('batch-harness-error'), async () => { throw new TypeError('undefined is not a function'); })) },
    { title: 'batch-outside', body: async () => { throw new Error('thrown outside any check'); } },
    { title: 'batch-after', body: async ({ check }) => void (await check(def('batch-after'), async () => {})) },
  ];
  const e = await runGroups([{ cases, lanes: 1 }], checker, undefined, info as unknown as TestInfo, false).then(() => undefined, (x: Error) => x);
  expect(e?.message).toContain('2 cases failed outside their checks');
  expect(e?.message).toContain('batch-harness-error: TypeError: undefined is not a function');
  expect(e?.message).toContain('batch-outside: Error: thrown outside any check');
  // The harness error is recorded fail too; the case after it still ran.
  expect(outcomes(info)).toEqual(['batch-after:check:pass', 'batch-harness-error:check:fail']);
});

test('a solo case (a property) that is not verified skips its test; a batch is never skipped', async () => {
  const nv: Case = { title: 'batch-nv', body: async ({ check }) => void (await check(def('batch-nv'), async () => { throw new NotVerified('profile lacks z'); })) };
  const solo = fakeInfo();
  const e = await runGroups([{ cases: [nv], lanes: 1 }], checker, undefined, solo as unknown as TestInfo, true).then(() => undefined, (x: Error) => x);
  expect(e).toBeInstanceOf(SkipMarker);
  expect(e?.message).toBe('not_verified: profile lacks z');
  const batch = fakeInfo();
  await runGroups([{ cases: [nv], lanes: 1 }], checker, undefined, batch as unknown as TestInfo, false);
  expect(outcomes(batch)).toEqual(['batch-nv:check:not_verified']);
});

test('a case asking for the webhook listener in a suite declared without it is a clear harness error', async () => {
  const info = fakeInfo();
  const e = await runGroups([{ cases: [{ title: 'batch-capture', body: async ({ capture }) => void capture }], lanes: 1 }], checker, undefined, info as unknown as TestInfo, false).then(() => undefined, (x: Error) => x);
  expect(e?.message).toContain('not declared with { capture: true }');
});

test('inPool keeps at most n items in flight and runs every item once', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  await inPool(Array.from({ length: 25 }, (_, i) => i), 4, async (i) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setTimeout(r, 1 + (i % 3)));
    seen.push(i);
    inFlight--;
  });
  expect(most).toBe(4);
  expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
});

test('--grep chooses cases by "<file> <title>"; --shard puts every case in exactly one shard, by its title alone', () => {
  const titles = Array.from({ length: 200 }, (_, i) => `case-${i}`);
  const grep = selection({ CONFORMANCE_GREP: '(?:^|\\s)case-1[0-9]$' });
  expect(titles.filter((t) => grep('suites/x.spec.ts', t))).toEqual(Array.from({ length: 10 }, (_, i) => `case-1${i}`));
  expect(selection({ CONFORMANCE_GREP: '^suites/x\\.spec\\.ts ' })('suites/x.spec.ts', 'case-1')).toBe(true);
  expect(selection({ CONFORMANCE_GREP: '^suites/y' })('suites/x.spec.ts', 'case-1')).toBe(false);
  const shards = [1, 2, 3].map((i) => titles.filter((t) => selection({ CONFORMANCE_SHARD: `${i}/3` })('any-file', t)));
  expect(shards.flat().sort()).toEqual([...titles].sort());
  for (const s of shards) expect(s.length).toBeGreaterThan(40); // a hash spreads them; none is empty
  // The file does not matter to the shard: the runner's process and each worker agree whatever they loaded.
  expect(titles.filter((t) => selection({ CONFORMANCE_SHARD: '2/3' })('other-file', t))).toEqual(shards[1]);
  expect(selection({})('f', 'anything')).toBe(true);
});

test('the run plan: the listening suite alone first, the other waits beside the first batch of checks, then the properties, then the other batches; every case once', () => {
  const mk = (file: string, n: number, opts: Registered['opts'] = {}): Registered[] =>
    Array.from({ length: n }, (_, i) => ({ title: `${path.basename(file, '.spec.ts')}-${i}`, body: async () => {}, file, opts, property: file.startsWith('properties/') }));
  const cases = [
    ...mk('properties/p-batch.spec.ts', 3),
    ...mk('properties/p-solo.spec.ts', 2, { solo: true }),
    ...mk('suites/a.spec.ts', 150),
    ...mk('suites/audio.spec.ts', 2, { waits: true }),
    ...mk('suites/b.spec.ts', 60),
    ...mk('suites/sender.spec.ts', 29, { waits: true, capture: true, inFlight: 64 }),
  ];
  const plan = planRun(cases, 8);
  // Without a number, the lanes are read when a group runs (a distant target raises them: observe/ready.ts).
  expect(planRun(cases)[1].groups.map((g) => g.lanes)).toEqual(['default', 'default']);
  expect(plan.map((t) => t.title)).toEqual(['sender [1]', 'checks [1]', 'p-batch [1]', 'p-solo-0', 'p-solo-1', 'checks [2]', 'checks [3]']);
  // The suite that listens for deliveries alone, all its cases at once, with the listener: nothing CPU-bound
  // may hold its answers back.
  expect(plan[0].groups.map((g) => [g.cases[0].file, g.cases.length, g.lanes])).toEqual([['suites/sender.spec.ts', 29, 64]]);
  expect(plan[0].capture).toBe(true);
  // The other waiting suite, with its own lanes, beside the first BATCH of the plain suites.
  expect(plan[1].groups.map((g) => [g.cases[0].file, g.cases.length, g.lanes])).toEqual([['suites/audio.spec.ts', 2, 8], ['suites/a.spec.ts', 100, 8]]);
  expect(plan.slice(1).every((t) => !t.capture)).toBe(true);
  expect(plan.filter((t) => t.solo).map((t) => t.title)).toEqual(['p-solo-0', 'p-solo-1']);
  // Later batches mix files: the rest of a.spec.ts, then b.spec.ts.
  expect(plan[5].groups[0].cases.length).toBe(100);
  expect(plan[6].groups[0].cases.length).toBe(10);
  // The audio suite waits: while it does, checks [1] may run the later batches it can claim, the last first;
  // each later batch's own test is claimed by a key of its own.
  expect(plan[1].groups.map((g) => !!g.waits)).toEqual([true, false]);
  expect(plan.map((t) => t.claim)).toEqual([undefined, undefined, undefined, undefined, undefined, 'checks-2', 'checks-3']);
  expect(plan[1].spare?.map((b) => [b.key, b.cases.length, b.lanes])).toEqual([['checks-3', 10, 8], ['checks-2', 100, 8]]);
  expect(plan[1].spare?.[1].cases).toEqual(plan[5].groups[0].cases);
  // Without a waiting suite there is nothing to run while waiting.
  expect(planRun(cases.filter((c) => c.file !== 'suites/audio.spec.ts'), 8)[1].spare).toBeUndefined();
  const planned = plan.flatMap((t) => t.groups.flatMap((g) => g.cases.map((c) => `${c.file} ${c.title}`)));
  expect(planned.sort()).toEqual(cases.map((c) => `${c.file} ${c.title}`).sort());
  expect(planRun([], 8)).toEqual([]);
});

test('groups of a test run side by side: a group that waits holds none of the others back', async () => {
  const info = fakeInfo();
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const waiting: Case = { title: 'waits', body: async ({ check }) => void (await check(def('waits'), async () => { await gate; order.push('waits'); })) };
  const quick: Case[] = Array.from({ length: 5 }, (_, i) => ({ title: `quick-${i}`, body: async ({ check }) => void (await check(def(`quick-${i}`), async () => { order.push(`quick-${i}`); if (i === 4) release(); })) }));
  await runGroups([{ cases: [waiting], lanes: 1 }, { cases: quick, lanes: 1 }], checker, undefined, info as unknown as TestInfo, false);
  expect(order).toEqual(['quick-0', 'quick-1', 'quick-2', 'quick-3', 'quick-4', 'waits']);
  expect(info.annotations).toHaveLength(6);
});

test('a waiting test runs the spare batches it can claim while it waits, and stops taking them once the wait is over', async () => {
  const info = fakeInfo();
  const ran: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const mk = (title: string, after?: () => Promise<void>): Case => ({ title, body: async ({ check }) => void (await check(def(title), async () => { ran.push(title); await after?.(); })) });
  const waiting: Case = { title: 'expiry', body: async ({ check }) => void (await check(def('expiry'), async () => { await gate; ran.push('expiry'); })) };
  const claimed = new Set<string>(['taken']);
  const claim = (key: string) => (claimed.has(key) ? false : (claimed.add(key), true));
  await runGroups(
    [{ cases: [waiting], lanes: 1, waits: true }, { cases: [mk('own')], lanes: 1 }], checker, undefined, info as unknown as TestInfo, false,
    [
      { key: 'taken', cases: [mk('taken-0')], lanes: 2 },
      { key: 'late', cases: [mk('late-0'), mk('late-1', async () => { release(); await new Promise((r) => setTimeout(r, 20)); })], lanes: 1 },
      { key: 'after', cases: [mk('after-0')], lanes: 1 },
    ],
    claim,
  );
  // Its own cases first; a batch another test claimed is left alone; the one it claimed runs whole; once the
  // wait is over no batch is taken (its own test runs it).
  expect(ran).toEqual(['own', 'late-0', 'late-1', 'expiry']);
  expect([...claimed]).toEqual(['taken', 'late']);
  expect(outcomes(info)).toEqual(['expiry:check:pass', 'late-0:check:pass', 'late-1:check:pass', 'own:check:pass']);
  expect(info.annotations.filter((a) => a.type === 'batch').map((a) => a.description)).toEqual(['ran batch late (2 cases) while waiting']);
});

test('a test without a waiting group runs no spare batch, whatever it is handed', async () => {
  const info = fakeInfo();
  const ran: string[] = [];
  const mk = (title: string): Case => ({ title, body: async ({ check }) => void (await check(def(title), async () => void ran.push(title))) });
  await runGroups([{ cases: [mk('own')], lanes: 1 }], checker, undefined, info as unknown as TestInfo, false, [{ key: 'b', cases: [mk('b-0')], lanes: 1 }], () => true);
  expect(ran).toEqual(['own']);
});

test('a batch is claimed once per run, in the folder of the run\'s breaker file; without one its own test runs it and no other', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'claims-'));
  try {
    const env = { CONFORMANCE_BREAKER_FILE: path.join(dir, 'breaker') };
    expect(claimBatch('checks-2', false, env)).toBe(true);
    expect(claimBatch('checks-2', true, env)).toBe(false);
    expect(claimBatch('checks-3', true, env)).toBe(true);
    expect(claimBatch('checks-3', false, env)).toBe(false);
    // A folder that cannot be written: the owner runs its batch, a waiting test takes none (never twice).
    const gone = { CONFORMANCE_BREAKER_FILE: path.join(dir, 'missing', 'breaker') };
    expect(claimBatch('checks-4', false, gone)).toBe(false);
    expect(claimBatch('checks-4', true, gone)).toBe(true);
    expect(claimBatch('checks-5', true, {})).toBe(true);
    expect(claimBatch('checks-5', false, {})).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a later batch that needs the webhook listener is never lent: it has no claim and no waiting test may take it', () => {
  const mk = (file: string, n: number, opts: Registered['opts'] = {}): Registered[] =>
    Array.from({ length: n }, (_, i) => ({ title: `${path.basename(file, '.spec.ts')}-${i}`, body: async () => {}, file, opts, property: false }));
  const plan = planRun([...mk('suites/a.spec.ts', 100), ...mk('suites/audio.spec.ts', 2, { waits: true }), ...mk('suites/hooks.spec.ts', 150, { capture: true })], 8);
  expect(plan.map((t) => [t.title, t.capture, t.claim])).toEqual([['checks [1]', false, undefined], ['checks [2]', true, undefined], ['checks [3]', true, undefined]]);
  expect(plan[0].spare).toBeUndefined();
});
