// Mutants that the pagination suite (checks/service/pagination.ts), the canonical-integer properties
// (checks/service/properties/canonical-integers.ts) and the query fuzz property (checks/service/properties/query-fuzz.ts)
// must catch. The non-canonical cases and their ids come from the suite's own table
// (checks/service/pagination.cases.ts): a case added there is named here too, and a misspelt name is a type error.
import type { Matrix } from '../matrix.ts';
import { NON_CANONICAL, nonCanonicalId, PARAMS, type NonCanonicalName, type Param } from '../../../checks/service/pagination.cases.ts';

const rejected = (param: Param, ...names: NonCanonicalName[]) => names.map((n) => nonCanonicalId(param, n));
const both = (...names: NonCanonicalName[]) => PARAMS.flatMap((param) => rejected(param, ...names));
const ALL_NON_CANONICAL = NON_CANONICAL.map((c) => c.name);

/** Every check that must answer 422 for the parameter. */
const LIMIT_422 = [...rejected('limit', ...ALL_NON_CANONICAL), 'pagination-limit-0-rejected', 'pagination-limit-101-rejected', 'pagination-limit-duplicate-key-documented', 'canonical-integers-limit-non-canonical-rejected'];
const OFFSET_422 = [...rejected('offset', ...ALL_NON_CANONICAL), 'pagination-offset-minus-1-rejected', 'pagination-offset-10001-rejected', 'pagination-offset-duplicate-key-documented', 'canonical-integers-offset-non-canonical-rejected'];

const ACCEPTED_PAGES = [
  'pagination-limit-1-accepted', 'pagination-limit-100-accepted', 'pagination-offset-0-accepted', 'pagination-limit-default-50',
  'pagination-limit-percent-encoded-digit-accepted', 'pagination-offset-percent-encoded-digit-accepted',
  'canonical-integers-limit-canonical-accepted', 'canonical-integers-offset-canonical-accepted',
];

export const MATRIX: Matrix = {
  'extra-field-error': [...LIMIT_422, ...OFFSET_422],
  'category-422-wrong': [...LIMIT_422, ...OFFSET_422],
  // The duplicate-key answer is built apart from the value checks, so these two mutants leave it alone.
  'field-limit-null': LIMIT_422.filter((id) => !id.includes('duplicate')),
  'field-offset-wrong': OFFSET_422.filter((id) => !id.includes('duplicate')),
  'lenient-limit-leading-zero': [...rejected('limit', 'leading-zero-01', 'leading-zero-007', 'long-leading-zeros'), 'canonical-integers-limit-non-canonical-rejected'],
  'lenient-limit-plus': rejected('limit', 'plus-raw', 'plus-encoded'),
  'lenient-offset-leading-zero': [...rejected('offset', 'leading-zero-01', 'leading-zero-007', 'leading-zero-00', 'long-leading-zeros'), 'canonical-integers-offset-non-canonical-rejected'],
  'lenient-offset-plus': rejected('offset', 'plus-raw', 'plus-encoded'),
  'limit-zero-as-default': ['pagination-limit-0-rejected', ...rejected('limit', 'leading-zero-00', 'minus-zero'), 'errors-category-422'],
  'offset-negative-accepted': ['pagination-offset-minus-1-rejected', ...rejected('offset', 'minus-zero')],
  'lenient-whitespace': [
    ...both('encoded-leading-space', 'encoded-trailing-space', 'encoded-leading-tab', 'encoded-trailing-tab'),
    'canonical-integers-limit-non-canonical-rejected', 'canonical-integers-offset-non-canonical-rejected',
  ],
  'lenient-decimal': both('decimal-1-0', 'decimal-trailing-dot'),
  'lenient-exponent': both('exponent'),
  'lenient-hex': both('hex'),
  'lenient-empty-as-default': both('empty-value', 'no-equals'),
  'lenient-non-numeric-as-default': both('nan', 'infinity', 'true'),
  'lenient-nonascii-digits': both('arabic-indic-digit', 'fullwidth-digit'),
  'lenient-integer-prefix': both('comma', 'semicolon'),
  'long-digits-overflow-accepted': both('long-digits'),
  'limit-max-101': ['pagination-limit-101-rejected'],
  'offset-max-10001': ['pagination-offset-10001-rejected'],
  'range-bounds-exclusive': [
    'pagination-limit-1-accepted', 'pagination-limit-100-accepted', 'pagination-offset-0-accepted', 'pagination-offset-10000-accepted',
    'canonical-integers-limit-canonical-accepted', 'canonical-integers-offset-canonical-accepted',
  ],
  'page-size-off-by-one': ACCEPTED_PAGES,
  'default-limit-20': ['pagination-limit-default-50'],
  'default-offset-1': ['pagination-offset-default-0'],
  'duplicate-keys-crash': ['pagination-limit-duplicate-key-documented', 'pagination-offset-duplicate-key-documented', 'query-fuzz-documented-responses'],
  'query-not-percent-decoded': ['pagination-limit-percent-encoded-digit-accepted', 'pagination-offset-percent-encoded-digit-accepted'],
  'raw-space-target-lenient': ['pagination-limit-raw-space-not-accepted', 'pagination-offset-raw-space-not-accepted'],
  'fuzz-crash-on-dotdot': ['query-fuzz-documented-responses'],
};
