// Bounded concurrency for waiting on a target: at most `n` promises of a list in flight at once. Used by the
// batches of engine/planner.ts (cases of a suite) and by checks that read many independent resources
// (every embedded document, every transcript met): a target 150 ms away then costs latency × requests ÷ n.
import { setting } from './config.ts';

/** Cases of a batch, or cases of a property sent ahead, in flight at once: CONFORMANCE_IN_FLIGHT (`--in-flight`), else 8. */
export function inFlight(): number {
  const n = Number(setting('inFlight') ?? 8);
  return Number.isInteger(n) && n > 0 ? n : 8;
}

/**
 * Runs `fn` on every item with at most `n` running at once. The first error stops new items from starting and
 * is thrown once every call in flight has ended: nothing outlives the pool (a check's requests end with it).
 */
export async function inPool<T>(items: readonly T[], n: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        await fn(items[i], i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, lane));
  if (failed) throw failed.error;
}

/** Maps every item with at most `n` calls in flight; the results keep the items' order. */
export async function mapPool<T, R>(items: readonly T[], n: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  await inPool(items, n, async (item, i) => {
    out[i] = await fn(item, i);
  });
  return out;
}

/** Requests one check keeps in flight when it reads independent resources. */
export const READS_IN_FLIGHT = 8;
