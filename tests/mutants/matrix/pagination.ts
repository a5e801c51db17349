// Mutants that the pagination suite (suites/pagination.spec.ts), the canonical-integer properties
// (properties/canonical-integers.spec.ts) and the query fuzz property (properties/query-fuzz.spec.ts)
// must catch. Check ids are spelled out: the non-canonical checks differ in the middle of the id.
import type { Matrix } from '../matrix.ts';

type Param = 'limit' | 'offset';
const rejected = (param: Param, ...names: string[]) => names.map((n) => `pagination-${param}-${n}-rejected`);

/** Every non-canonical name of suites/pagination.spec.ts (NON_CANONICAL). */
const NON_CANONICAL = [
  'leading-zero-01', 'leading-zero-007', 'leading-zero-00', 'long-leading-zeros', 'plus-raw', 'plus-encoded', 'minus-zero',
  'encoded-leading-space', 'encoded-trailing-space', 'encoded-leading-tab', 'encoded-trailing-tab', 'decimal-1-0', 'decimal-trailing-dot',
  'exponent', 'hex', 'empty-value', 'no-equals', 'arabic-indic-digit', 'fullwidth-digit', 'long-digits', 'comma', 'semicolon', 'nan', 'infinity', 'true',
];
const both = (...names: string[]) => [...rejected('limit', ...names), ...rejected('offset', ...names)];

/** Every check that must answer 422 for the parameter. */
const LIMIT_422 = [...rejected('limit', ...NON_CANONICAL, '0', '101'), 'pagination-limit-duplicate-key-documented', 'canonical-integers-limit-non-canonical-rejected'];
const OFFSET_422 = [...rejected('offset', ...NON_CANONICAL, 'minus-1', '10001'), 'pagination-offset-duplicate-key-documented', 'canonical-integers-offset-non-canonical-rejected'];

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
  'limit-zero-as-default': [...rejected('limit', '0', 'leading-zero-00', 'minus-zero'), 'errors-category-422'],
  'offset-negative-accepted': rejected('offset', 'minus-1', 'minus-zero'),
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
  'limit-max-101': rejected('limit', '101'),
  'offset-max-10001': rejected('offset', '10001'),
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
