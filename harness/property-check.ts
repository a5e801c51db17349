// Runs a fast-check property as ONE check: the cases run unrecorded; when the property fails, the
// shrunk counterexample is replayed once more with its exchange recorded as evidence, and the check
// fails with the case, the seed and the shrink path. Shared by every target-facing property.
import fc from 'fast-check';
import { CheckFailure, NotVerified } from './checks.ts';

export interface PropertyCheck<T> {
  arbitrary: fc.Arbitrary<T>;
  seed: number;
  runs: number;
  /** Cases fast-check runs first, whatever the seed. */
  examples?: T[];
  /** One case, unrecorded; throws CheckFailure when the target gets it wrong. */
  run(x: T): Promise<void>;
  /** The same case again, its exchange recorded as evidence. */
  replay(x: T): Promise<void>;
  describe(x: T): string;
  /** Names the violation, e.g. "Undocumented answer". */
  failure: string;
  /** Runs after fc.check, failed or not (e.g. to wait for requests sent ahead). */
  after?(): Promise<void>;
}

export async function checkProperty<T>(p: PropertyCheck<T>): Promise<void> {
  const prop = fc.asyncProperty(p.arbitrary, (x) => p.run(x));
  let out: fc.RunDetails<[T]>;
  try {
    out = await fc.check(prop, { seed: p.seed, numRuns: p.runs, examples: p.examples?.map((x) => [x] as [T]) });
  } finally {
    await p.after?.();
  }
  if (!out.failed) return;
  if (out.errorInstance instanceof NotVerified) throw out.errorInstance;
  const cx = out.counterexample![0];
  const where = `${p.describe(cx)} (seed ${p.seed}, path ${out.counterexamplePath}, ${out.numShrinks} shrinks)`;
  try {
    await p.replay(cx);
  } catch (e) {
    if (e instanceof CheckFailure) throw new CheckFailure(`${p.failure}: ${e.title}`, `${where}: ${e.detail}`);
    throw e;
  }
  throw new CheckFailure(`${p.failure} (not reproduced on replay)`, `${where}: ${String(out.errorInstance)}`);
}
