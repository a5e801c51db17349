// Requirement coverage: which checks verify each requirement (fixtures/requirements/coverage.json, generated
// from a run's outcomes.json by `npm run coverage:update`) and the reviewed reasons why some must requirements
// have no check (fixtures/requirements/not-tested.json, kept by hand). The two live apart so a regeneration
// never touches a review. Pure functions, plus the two readers; the gate test and the update script share them.
import fs from 'node:fs';
import type { Catalog, OutcomesFile } from './model.ts';
import { COVERAGE_PATH, NOT_TESTED_PATH } from '../fixtures/paths.ts';

export interface CoverageFile {
  $comment?: string;
  generatedAt?: string;
  source?: { catalogSha256: string | null; checks: number; runStartedAt: string };
  /** Requirement id → ids of the checks that name it. */
  requirements: Record<string, string[]>;
  /** Requirement id → why it has no check (reviewed; read from not-tested.json). */
  notTested: Record<string, string>;
}

/** The generated map; empty when the file is absent or unreadable. */
export function readCoverageMap(file: string = COVERAGE_PATH): Record<string, string[]> {
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { requirements?: Record<string, string[]> }).requirements ?? {};
  } catch {
    return {};
  }
}

/** The reviewed reasons; empty when the file is absent or unreadable. */
export function readNotTested(file: string = NOT_TESTED_PATH): Record<string, string> {
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { notTested?: Record<string, string> }).notTested ?? {};
  } catch {
    return {};
  }
}

/** Projects whose checks count: the conformance suites and the properties. */
export const COVERAGE_PROJECTS = new Set(['conformance', 'properties']);

/** Maps requirement id → sorted check ids, from one run's outcomes. */
export function coverageFromOutcomes(outcomes: OutcomesFile): Record<string, string[]> {
  const map = new Map<string, Set<string>>();
  for (const c of outcomes.checks) {
    if (!COVERAGE_PROJECTS.has(c.project)) continue;
    for (const r of c.requirements) map.set(r, (map.get(r) ?? new Set()).add(c.id));
  }
  return Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)).map(([r, ids]) => [r, [...ids].sort()]));
}

/** A check known without a run: the receiver suite's cases and the client checks (other subjects' runs). */
export interface StaticCheckDef { id: string; requirements: readonly string[] }

/**
 * Adds the checks of the other subjects' runs to a service run's map: `run` judges the service only, so the
 * receiver's and the client's checks never appear in its outcomes; their tables name their requirements.
 */
export function withStaticChecks(fromRun: Record<string, string[]>, defs: readonly StaticCheckDef[]): Record<string, string[]> {
  const map = new Map(Object.entries(fromRun).map(([r, ids]) => [r, new Set(ids)]));
  for (const d of defs) for (const r of d.requirements) map.set(r, (map.get(r) ?? new Set()).add(d.id));
  return Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)).map(([r, ids]) => [r, [...ids].sort()]));
}

export interface CoverageGaps {
  /** must requirements with neither a check nor a notTested reason. */
  uncovered: string[];
  /** ids in coverage.json that the catalog does not have (renamed or removed requirements). */
  unknown: string[];
  /** notTested entries that are empty or contradict recorded checks. */
  badReasons: string[];
}

export function coverageGaps(catalog: Catalog, coverage: CoverageFile): CoverageGaps {
  const ids = new Set(catalog.requirements.map((r) => r.id));
  const checked = (id: string) => (coverage.requirements[id] ?? []).length > 0;
  const uncovered = catalog.requirements.filter((r) => r.level === 'must' && !checked(r.id) && !coverage.notTested[r.id]?.trim()).map((r) => r.id);
  const unknown = [...new Set([...Object.keys(coverage.requirements), ...Object.keys(coverage.notTested)])].filter((id) => !ids.has(id)).sort();
  const badReasons: string[] = [];
  for (const [id, reason] of Object.entries(coverage.notTested)) {
    if (!reason.trim()) badReasons.push(`${id}: the notTested reason is empty`);
    else if (checked(id)) badReasons.push(`${id}: has a notTested reason but checks ${coverage.requirements[id].join(', ')} verify it; drop the reason`);
  }
  return { uncovered, unknown, badReasons };
}
