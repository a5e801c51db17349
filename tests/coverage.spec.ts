// The coverage gate: every `must` requirement of the catalog is verified by at least one declared check of some
// subject (engine/registry.ts, loaded by engine/declared-checks.ts), or has a reviewed `notTested` reason
// (fixtures/requirements/not-tested.json). Coverage is read from the declarations themselves: nothing generated
// from a run to keep in step. The gate's logic is tested on fabricated data first, so a red gate means coverage,
// not a broken gate.
import { test, expect } from '@playwright/test';
import { coverageGaps, readNotTested } from '../reports/coverage.ts';
import { loadCatalog } from '../reports/context.ts';
import { checksByRequirement } from '../engine/declared-checks.ts';
import { CATALOG } from './helpers/report-data.ts';

test.describe('gate logic (fabricated catalog)', () => {
  const must = CATALOG.requirements.filter((r) => r.level === 'must').map((r) => r.id);
  const requirements = { 'AUTH-401-MISSING-BEARER': ['auth-missing-bearer-list'], 'AUTH-401-INVALID-KEY': ['auth-invalid-key-list'], 'LIST-LIMIT-DEFAULT': ['list-limit-default'], 'LIST-LIMIT-CANONICAL': ['list-limit-rejects-plus-sign'] };

  test('a must requirement without a check or a reason is uncovered; unspecified ones are not required', () => {
    expect(coverageGaps(CATALOG, { requirements, notTested: {} }).uncovered).toEqual(['AUDIO-URL-SHORT-LIVED', 'VERSION-HEADER']);
    expect(must).toContain('VERSION-HEADER');
  });

  test('a reviewed notTested reason closes the gap; an empty or contradicted one does not', () => {
    expect(coverageGaps(CATALOG, { requirements, notTested: { 'AUDIO-URL-SHORT-LIVED': 'needs a real clock on the storage side', 'VERSION-HEADER': 'no header defined' } }))
      .toEqual({ uncovered: [], unknown: [], badReasons: [] });
    const bad = coverageGaps(CATALOG, { requirements, notTested: { 'VERSION-HEADER': '  ', 'LIST-LIMIT-DEFAULT': 'untestable' } });
    expect(bad.uncovered).toEqual(['AUDIO-URL-SHORT-LIVED', 'VERSION-HEADER']);
    expect(bad.badReasons).toEqual(['VERSION-HEADER: the notTested reason is empty', 'LIST-LIMIT-DEFAULT: has a notTested reason but checks list-limit-default verify it; drop the reason']);
  });

  test('ids the catalog does not have are reported as stale', () => {
    expect(coverageGaps(CATALOG, { requirements: { 'GONE-1': ['x'] }, notTested: { 'GONE-2': 'r' } }).unknown).toEqual(['GONE-1', 'GONE-2']);
  });
});

test('every must requirement of the catalog has a declared check or a notTested reason, and every check names catalog requirements', async () => {
  const catalog = loadCatalog();
  expect(catalog, 'fixtures/requirements/requirements.json').toBeTruthy();
  const gaps = coverageGaps(catalog!, { requirements: await checksByRequirement(), notTested: readNotTested() });
  const must = catalog!.requirements.filter((r) => r.level === 'must').length;
  expect(gaps.unknown, 'checks or reasons name requirements the catalog does not have').toEqual([]);
  expect(gaps.badReasons).toEqual([]);
  expect(gaps.uncovered, `${gaps.uncovered.length} of ${must} must requirements have no check and no notTested reason`).toEqual([]);
});
