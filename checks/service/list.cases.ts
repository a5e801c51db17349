// The case tables of the list suite's query validation (checks/service/list.ts) and the functions that build
// their check ids: plain data, no Playwright, so the mutant matrix (tests/mutants/matrix/list.ts) names the
// same cases instead of retyping them.

export type DateParam = 'start_at' | 'end_at';
export const DATE_PARAMS = ['start_at', 'end_at'] as const satisfies readonly DateParam[];

export interface BadDate {
  /** kebab-case, part of the check id. */
  name: string;
  /** The query value, sent as given. */
  value: string;
  what: string;
}

// Date-only carries no time and no offset, so it is not a timezone-aware date-time (§4.1, §7.2).
export const BAD_DATES = [
  { name: 'timezone-less', value: '2026-01-01T00:00:00', what: 'a date-time without a timezone' },
  { name: 'word', value: 'yesterday', what: 'a word' },
  { name: 'month-13', value: '2026-13-01T00:00:00Z', what: 'month 13' },
  { name: 'date-only', value: '2026-01-01', what: 'a date without time or timezone' },
] as const satisfies readonly BadDate[];

/** The name of a bad date-time case: a typo in a matrix is a type error. */
export type BadDateName = (typeof BAD_DATES)[number]['name'];

export const badDateId = (param: DateParam, name: BadDateName) => `list-${param.replace('_', '-')}-${name}-rejected`;

export interface Relation {
  /** kebab-case, part of the check id. */
  name: string;
  start: string;
  end: string;
  what: string;
}

/** start_at must be earlier than end_at: the two ways it is not. */
export const RELATIONS = [
  { name: 'equal', start: '2025-01-15T00:00:00Z', end: '2025-01-15T00:00:00Z', what: 'equal to' },
  { name: 'after', start: '2025-01-16T00:00:00Z', end: '2025-01-15T00:00:00Z', what: 'after' },
] as const satisfies readonly Relation[];

export type RelationName = (typeof RELATIONS)[number]['name'];

export const relationId = (name: RelationName) => `list-start-at-${name}-end-at-rejected`;
