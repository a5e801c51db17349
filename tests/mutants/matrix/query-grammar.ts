// Mutants that the query-grammar suite (checks/service/query-grammar.ts) must catch, the new ones of issue 30 and
// older ones its cases also meet. The case names come from the suite's own tables (checks/service/query-grammar.cases.ts):
// a case added there is named here through its table, and a misspelt name is a type error.
import type { Matrix } from '../matrix.ts';
import {
  BOUND_CASES, boundId, DATE_PARAMS, emptyQueryId, ID_ENCODINGS, ID_ROUTES, idEncodingId, INT_PARAMS, INTEGER_STRAYS, integerStrayId, NOT_DATE_TIMES,
  notDateTimeId, SORT_ENCODED, sortEncodedId, SORT_STRAYS, sortStrayId, windowId,
  type BoundCaseName, type DateParam, type IdEncodingName, type IntegerStrayName, type IntParam, type NotDateTimeName, type SortStrayName,
} from '../../../checks/service/query-grammar.cases.ts';

const ALL_NOT_DATE_TIMES = NOT_DATE_TIMES.map((c) => c.name);
const notDate = (names: readonly NotDateTimeName[], params: readonly DateParam[] = DATE_PARAMS) => params.flatMap((p) => names.map((n) => notDateTimeId(p, n)));
const bounds = (...names: BoundCaseName[]) => names.map(boundId);
const ints = (names: readonly IntegerStrayName[], params: readonly IntParam[] = INT_PARAMS) => params.flatMap((p) => names.map((n) => integerStrayId(p, n)));
const sorts = (...names: SortStrayName[]) => names.map(sortStrayId);
const ids = (name: IdEncodingName) => ID_ROUTES.map((r) => idEncodingId(r, name));

/** Open spellings the reference refuses (its 422 is judged like any other: status, body, category, field). */
const REFUSED_OPEN: BoundCaseName[] = [
  'lowercase-t', 'lowercase-z', 'space-separator', 'basic-format', 'basic-format-offset', 'extended-time-basic-offset', 'hour-only-offset',
  'minutes-precision', 'hours-precision', 'week-date', 'ordinal-date', 'comma-fraction', 'end-of-day-24-00', 'rfc-9557-suffix', 'expanded-year',
  'leap-second', 'year-0000', 'year-10000-expanded',
];
/** Every bound written with a numeric offset. */
const NUMERIC_OFFSET_BOUNDS: BoundCaseName[] = [
  'offset-plus-00-00', 'offset-plus-14-00', 'offset-minus-12-00', 'offset-plus-05-45', 'offset-minus-09-30', 'offset-lowercase-hex-escapes',
  'offset-every-byte-escaped', 'year-1583-minus-12-00', 'year-1970-plus-01-00', 'leap-day', 'year-9999-plus-14-00',
];

export const MATRIX: Matrix = {
  // ---- the new mutants of issue 30
  'date-epoch-number-accepted': notDate(['epoch-seconds', 'zero', 'negative-number', 'decimal-number']),
  'date-offset-seconds-accepted': notDate(['offset-with-seconds', 'offset-with-zero-seconds', 'negative-offset-with-seconds']),
  'date-trailing-text-ignored': notDate(['offset-with-seconds', 'offset-with-zero-seconds', 'negative-offset-with-seconds', 'junk-after-z', 'junk-after-offset', 'double-z', 'offset-after-z', 'trailing-space', 'trailing-newline', 'trailing-nul', 'interval']),
  'date-parsed-by-date-parse': notDate(['rfc-2822', 'http-date', 'javascript-date-string', 'us-slashes']),
  'date-bound-millisecond-precision': [...bounds('fraction-microsecond-after', 'fraction-nanosecond-after', 'fraction-fifteen-digits', 'fraction-microsecond-after-offset'), windowId('one-nanosecond')],
  'date-bound-compared-as-text': [...bounds('utc-z', 'offset-plus-14-00', 'offset-plus-05-45', 'offset-lowercase-hex-escapes'), windowId('different-offsets')],
  'date-32-bit-unix-time-only': bounds('year-1583', 'year-1583-minus-12-00', 'year-1970-plus-01-00', 'year-2038', 'year-9999', 'year-9999-plus-14-00'),
  'date-offsets-within-12h': [...bounds('offset-plus-14-00', 'year-9999-plus-14-00'), windowId('different-offsets')],
  'date-utc-designator-only': [...bounds(...NUMERIC_OFFSET_BOUNDS), windowId('different-offsets')],
  'date-lenient-local-time': bounds('lowercase-t', 'lowercase-z', 'space-separator', 'basic-format', 'basic-format-offset', 'extended-time-basic-offset', 'hour-only-offset', 'minutes-precision', 'hours-precision', 'week-date', 'ordinal-date', 'comma-fraction', 'negative-zero-offset', 'rfc-9557-suffix', 'expanded-year'),
  'date-utc-overflow-500': bounds('year-0001-plus-01-00'),
  'sort-order-trimmed': sorts('trailing-space', 'leading-space', 'trailing-tab', 'trailing-newline', 'leading-byte-order-mark'),
  'sort-order-prefix-match': sorts('trailing-space', 'trailing-tab', 'trailing-newline', 'trailing-nul', 'trailing-zero-width-space', 'raw-plus', 'trailing-dot', 'word-ascending', 'both-values'),
  'lenient-integer-non-digits-dropped': ints(INTEGER_STRAYS.map((c) => c.name)),
  'empty-query-as-unsupported-key': [emptyQueryId('list-question-mark'), emptyQueryId('encounter-question-mark'), emptyQueryId('document-question-mark')],
  'path-id-not-percent-decoded': ID_ENCODINGS.flatMap((e) => ids(e.name)),
  'path-id-lowercase-escapes-not-decoded': ids('every-byte-escaped-lower-hex'),
  // ---- older mutants the new cases meet
  'date-invalid-ignored': notDate(ALL_NOT_DATE_TIMES),
  'date-error-field-wrong': [...notDate(ALL_NOT_DATE_TIMES, ['end_at']), ...bounds(...REFUSED_OPEN)],
  'category-422-wrong': [...notDate(ALL_NOT_DATE_TIMES), ...ints(INTEGER_STRAYS.map((c) => c.name)), ...SORT_STRAYS.map((c) => sortStrayId(c.name)), ...bounds(...REFUSED_OPEN)],
  'date-offset-ignored': [...bounds('offset-plus-14-00', 'offset-minus-12-00', 'offset-plus-05-45', 'offset-minus-09-30', 'offset-lowercase-hex-escapes', 'offset-every-byte-escaped', 'offset-plus-23-59', 'offset-minus-23-59'), windowId('different-offsets')],
  'start-not-before-end-accepted': [windowId('equal-instants-different-offsets')],
  'start-at-exclusive': bounds('fraction-as-listed'),
  'end-at-inclusive': bounds('fraction-as-listed'),
  'lenient-integer-prefix': ints(['inner-space', 'inner-underscore', 'inner-nul', 'trailing-nul', 'trailing-newline', 'trailing-letters', 'unit-suffix', 'trailing-percent-sign', 'trailing-hash', 'trailing-zero-width-space']),
  'lenient-whitespace': ints(['trailing-newline', 'leading-no-break-space', 'leading-byte-order-mark']),
  'field-limit-null': ints(INTEGER_STRAYS.map((c) => c.name), ['limit']),
  'field-offset-wrong': ints(INTEGER_STRAYS.map((c) => c.name), ['offset']),
  'field-sort-null': SORT_STRAYS.map((c) => sortStrayId(c.name)),
  'reason-invalid-sort-as-invalid-query': SORT_STRAYS.map((c) => sortStrayId(c.name)),
  'query-not-percent-decoded': [...bounds('offset-lowercase-hex-escapes', 'offset-every-byte-escaped'), ...SORT_ENCODED.map((c) => sortEncodedId(c.name))],
  'default-limit-20': [emptyQueryId('list-question-mark'), emptyQueryId('list-lone-ampersand')],
  'page-size-off-by-one': [emptyQueryId('list-empty-pairs-around-limit')],
};

// Every bound case is named above (a case added to BOUND_CASES without a mutant would go unproven).
void BOUND_CASES;
