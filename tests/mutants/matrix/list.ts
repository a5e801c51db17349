// Mutants that the list suite (checks/service/list.ts) must catch. Ids are spelled out where a prefix
// would also match a check that the mutant leaves alone (list-start-at-* covers bounds and relations);
// the date-time cases and the start/end relations come from the suite's own tables (checks/service/list.cases.ts).
import type { Matrix } from '../matrix.ts';
import { BAD_DATES, badDateId, relationId, RELATIONS, type BadDateName, type DateParam } from '../../../checks/service/list.cases.ts';

const rejected = (param: DateParam, names: readonly BadDateName[] = BAD_DATES.map((d) => d.name)) => names.map((n) => badDateId(param, n));

export const MATRIX: Matrix = {
  'missing-required-total': ['list-total-same-on-every-page', 'list-total-equals-items-walked', 'list-total-at-least-profile-minimum', 'schema-success-list-closed-json'],
  'total-is-page-size': ['list-total-same-on-every-page', 'list-total-equals-items-walked', 'list-total-at-least-profile-minimum'],
  'page-duplicates': ['list-walk-yields-each-encounter-once', 'list-total-equals-items-walked'],
  'sort-order-inverted': ['list-sort-asc-by-created-at', 'list-sort-desc-by-created-at', 'list-sort-default-desc'],
  'tiebreak-not-encounter-id': ['list-tie-breaker-asc-encounter-id-ascending', 'list-tie-breaker-desc-consistent'],
  // Random tie order: two identical walks disagree (ordering checks could pass by chance, so only this one is named).
  'tiebreak-nondeterministic': ['list-order-deterministic'],
  'end-at-inclusive': ['list-end-at-exclusive'],
  'start-at-exclusive': ['list-start-at-inclusive'],
  'timezone-less-accepted': [...rejected('start_at', ['timezone-less']), ...rejected('end_at', ['timezone-less'])],
  'date-invalid-ignored': [...rejected('start_at'), ...rejected('end_at'), 'schema-error-invalid-query-closed-json'],
  'date-error-field-wrong': rejected('end_at'),
  'start-not-before-end-accepted': RELATIONS.map((r) => relationId(r.name)),
  'cross-org-listed': ['list-items-own-organization', 'list-excludes-other-org-encounter'],
};
