// The mutant matrix: for each mutant of the reference switchboard, the check ids that must turn red
// when it is on. Each area keeps its own file in ./matrix/ so suites can grow independently; this
// module merges them. A check id may end in `*` to name every check with that prefix.
import fs from 'node:fs';
import path from 'node:path';

export type Matrix = Record<string, string[]>;

const dir = path.join(import.meta.dirname, 'matrix');

export async function loadMatrix(): Promise<Matrix> {
  const merged: Matrix = {};
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts')).sort();
  for (const f of files) {
    const mod = (await import(path.join(dir, f))) as { MATRIX?: Matrix };
    for (const [mutant, checks] of Object.entries(mod.MATRIX ?? {})) {
      merged[mutant] = [...(merged[mutant] ?? []), ...checks];
    }
  }
  return merged;
}

export { matchesPattern as matches } from '../../engine/evaluate.ts';

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A grep that selects exactly the tests (titles = check ids) a mutant must break. */
export function grepFor(patterns: string[]): RegExp {
  const alts = patterns.map((p) => (p.endsWith('*') ? `${escapeRegex(p.slice(0, -1))}[a-z0-9-]*` : escapeRegex(p)));
  return new RegExp(`(^|\\s)(${alts.join('|')})$`);
}
