// Requirement coverage: which checks verify each requirement (read from the checks' declarations, engine/declared-checks.ts
// checksByRequirement) and the reviewed reasons why some must requirements have no check (fixtures/requirements/
// not-tested.json, kept by hand). The gate's logic is a pure function; the gate test hands it the declarations.
import fs from 'node:fs';
import type { Catalog } from './model.ts';
import { NOT_TESTED_PATH } from '../fixtures/paths.ts';

export interface CoverageFile {
  /** Requirement id → ids of the checks that name it. */
  requirements: Record<string, string[]>;
  /** Requirement id → why it has no check (reviewed; read from not-tested.json). */
  notTested: Record<string, string>;
}

/** The reviewed reasons; empty when the file is absent or unreadable. */
export function readNotTested(file: string = NOT_TESTED_PATH): Record<string, string> {
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { notTested?: Record<string, string> }).notTested ?? {};
  } catch {
    return {};
  }
}

export interface CoverageGaps {
  /** must requirements with neither a check nor a notTested reason. */
  uncovered: string[];
  /** Requirement ids checks or reasons name that the catalog does not have (renamed or removed requirements). */
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
