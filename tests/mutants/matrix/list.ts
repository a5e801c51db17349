// Mutants that the list suite (suites/list.spec.ts) must catch. Ids are spelled out where a prefix
// would also match a check that the mutant leaves alone (list-start-at-* covers bounds and relations).
import type { Matrix } from '../matrix.ts';

const BAD_DATES = ['timezone-less', 'word', 'month-13', 'date-only'];
const rejected = (param: 'start-at' | 'end-at', names = BAD_DATES) => names.map((n) => `list-${param}-${n}-rejected`);

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
  'timezone-less-accepted': [...rejected('start-at', ['timezone-less']), ...rejected('end-at', ['timezone-less'])],
  'date-invalid-ignored': [...rejected('start-at'), ...rejected('end-at'), 'schema-error-invalid-query-closed-json'],
  'date-error-field-wrong': rejected('end-at'),
  'start-not-before-end-accepted': ['list-start-at-equal-end-at-rejected', 'list-start-at-after-end-at-rejected'],
  'cross-org-listed': ['list-items-own-organization', 'list-excludes-other-org-encounter'],
};
