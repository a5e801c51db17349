// What would complete an INCOMPLETE run, as lines read from its report (the roles to provide, the requirements left); the CLI prints them.
import { lackedRole, type ConformanceReport } from './model.ts';

/**
 * Exactly what would complete an INCOMPLETE run: each profile role (or setting) whose absence left a must
 * requirement in scope unverified, with those requirements; then the requirements no missing role accounts for,
 * which only declaring them out of scope (profile `outOfScope`, with a reason) would settle.
 */
export function completions(report: Pick<ConformanceReport, 'coverage' | 'checks'>): string[] {
  const open = new Set(report.coverage.mustNotVerified);
  const byRole = new Map<string, Set<string>>();
  const explained = new Set<string>();
  for (const c of report.checks) {
    if (c.outcome !== 'not_verified') continue;
    const role = lackedRole(c.lacks)?.role;
    if (!role) continue;
    for (const r of c.requirements) {
      if (!open.has(r)) continue;
      byRole.set(role, (byRole.get(role) ?? new Set()).add(r));
      explained.add(r);
    }
  }
  const lines = [...byRole].sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))
    .map(([role, reqs]) => `provide ${role}: ${[...reqs].sort().join(', ')}`);
  const rest = [...open].filter((r) => !explained.has(r)).sort();
  if (rest.length) lines.push(`or declare out of scope (profile outOfScope, with a reason) or make verifiable: ${rest.join(', ')}`);
  if (lines.length === 0) lines.push('see the not-verified checks in the report');
  return lines;
}
