// Runs a fast-check property as ONE check: the cases run unrecorded; when the property fails, the
// shrunk counterexample is replayed once more with its exchange recorded as evidence, and the check
// fails with the case, the seed and the shrink path. Shared by every target-facing property.
//
// The cases' requests are sent ahead, several at once (Prefetch): fast-check runs an async property one case
// after another, so a target 150 ms away would cost 100 × 150 ms per property; sent ahead, the answers are
// there when fast-check asks for them. Every case still makes its own request and is judged by the same function.
import fc from 'fast-check';
import { CheckFailure, NotVerified, type Exchange } from '../record/record.ts';
import { inFlight } from './pool.ts';

/**
 * Sends the cases of a property ahead of fast-check, a few at a time: fc.sample with the same seed draws the very
 * values fc.check draws, in the same order, so each case's exchange is usually already there when the property
 * asks for it. A value not sent ahead (a shrink, or any divergence) is sent live, as before.
 */
export class Prefetch<T> {
  private readonly ahead = new Map<string, Promise<Exchange>[]>();
  private readonly all: Promise<unknown>[] = [];
  private readonly send: (x: T) => Promise<Exchange>;
  constructor(values: T[], send: (x: T) => Promise<Exchange>, concurrency = inFlight()) {
    this.send = send;
    let next = 0;
    let running = 0;
    const start = (): void => {
      while (running < concurrency && next < values.length) {
        const x = values[next++];
        running++;
        const p = send(x);
        const done = p.then(() => undefined, () => undefined).finally(() => {
          running--;
          start();
        });
        this.all.push(done);
        const key = JSON.stringify(x);
        const list = this.ahead.get(key) ?? [];
        list.push(p);
        this.ahead.set(key, list);
      }
    };
    start();
  }

  /** The exchange of the next case with this value: sent ahead, or sent now. */
  get(x: T): Promise<Exchange> {
    const list = this.ahead.get(JSON.stringify(x));
    return list?.shift() ?? this.send(x);
  }

  /** Waits for every request sent ahead, used or not, so none outlives the check. */
  async settle(): Promise<void> {
    await Promise.all(this.all);
  }
}

export interface PropertyCheck<T> {
  arbitrary: fc.Arbitrary<T>;
  seed: number;
  runs: number;
  /** Cases fast-check runs first, whatever the seed. */
  examples?: T[];
  /** Sends one case: unrecorded while the property runs, recorded as evidence for the replay of a counterexample. */
  send(x: T, record: boolean): Promise<Exchange>;
  /** Judges one case's exchange; throws CheckFailure when the target got it wrong. */
  judge(ex: Exchange, x: T): void;
  describe(x: T): string;
  /** Names the violation, e.g. "Undocumented answer". */
  failure: string;
}

export async function checkProperty<T>(p: PropertyCheck<T>): Promise<void> {
  const prefetch = new Prefetch([...(p.examples ?? []), ...fc.sample(p.arbitrary, { seed: p.seed, numRuns: p.runs })], (x) => p.send(x, false));
  const prop = fc.asyncProperty(p.arbitrary, async (x) => p.judge(await prefetch.get(x), x));
  let out: fc.RunDetails<[T]>;
  try {
    out = await fc.check(prop, { seed: p.seed, numRuns: p.runs, examples: p.examples?.map((x) => [x] as [T]) });
  } finally {
    await prefetch.settle();
  }
  if (!out.failed) return;
  if (out.errorInstance instanceof NotVerified) throw out.errorInstance;
  const cx = out.counterexample![0];
  const where = `${p.describe(cx)} (seed ${p.seed}, path ${out.counterexamplePath}, ${out.numShrinks} shrinks)`;
  try {
    p.judge(await p.send(cx, true), cx);
  } catch (e) {
    // A target that stopped answering is the outcome as it is (the run's breaker ended the check), not the
    // property's counterexample: it keeps its name, so the record says so and the terminal counts it once.
    if (e instanceof CheckFailure && e.name === 'TargetStoppedAnswering') throw e;
    if (e instanceof CheckFailure) throw new CheckFailure(`${p.failure}: ${e.title}`, `${where}: ${e.detail}`);
    throw e;
  }
  throw new CheckFailure(`${p.failure} (not reproduced on replay)`, `${where}: ${String(out.errorInstance)}`);
}
