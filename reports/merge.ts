// What merging the outcomes of a run's parts keeps: a check one part verified stands over another part's not_verified record.
import type { OutcomesFile } from './model.ts';

/**
 * A check one part could not verify (not_verified: a run whose profile did not let it make the service send) and
 * another part did verify (`webhook sender --profile` judged the sender apart): the verified record stands, the
 * not_verified one is dropped. Shards never record one check twice, so this changes nothing for them.
 */
export function supersedeUnverified(parts: OutcomesFile[]): OutcomesFile[] {
  const verified = new Set(parts.flatMap((p) => p.checks.filter((c) => c.outcome !== 'not_verified').map((c) => c.id)));
  return parts.map((p) => ({ ...p, checks: p.checks.filter((c) => c.outcome !== 'not_verified' || !verified.has(c.id)) }));
}
