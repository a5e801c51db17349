// The case tables of the pagination suite (checks/service/pagination.ts) and the functions that build its check
// ids: plain data, no Playwright, so the mutant matrix (tests/mutants/matrix/pagination.ts) names the same
// cases instead of retyping them. Query text here goes on the wire exactly as written.

export type Param = 'limit' | 'offset';
export const PARAMS = ['limit', 'offset'] as const satisfies readonly Param[];

export const REASON: Record<Param, 'invalid_limit' | 'invalid_offset'> = { limit: 'invalid_limit', offset: 'invalid_offset' };
export const REQ: Record<Param, string[]> = {
  limit: ['COND-INVALID-LIMIT', 'LIST-LIMIT-RANGE', 'LIMIT-LIMIT', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD'],
  offset: ['COND-INVALID-OFFSET', 'LIST-OFFSET-RANGE', 'LIMIT-OFFSET', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD'],
};
export const CANONICAL_REQ = ['LIST-CANONICAL-INTEGERS', 'LIMIT-CANONICAL-INTEGERS'];

// ---------------------------------------------------------------- bounds

export interface Bound {
  id: string;
  param: Param;
  /** Raw query text. */
  query: string;
  /** The echoed page parameters when accepted; undefined = rejected. */
  accept?: { limit: number; offset: number };
  requirements: string[];
  what: string;
}

export const BOUNDS: Bound[] = [
  { id: 'pagination-limit-0-rejected', param: 'limit', query: 'limit=0', requirements: REQ.limit, what: 'limit=0 (below the minimum 1)' },
  { id: 'pagination-limit-1-accepted', param: 'limit', query: 'limit=1', accept: { limit: 1, offset: 0 }, requirements: ['LIST-LIMIT-RANGE', 'LIMIT-LIMIT', 'FIELD-LIST-LIMIT'], what: 'limit=1 (the minimum)' },
  { id: 'pagination-limit-100-accepted', param: 'limit', query: 'limit=100', accept: { limit: 100, offset: 0 }, requirements: ['LIST-LIMIT-RANGE', 'LIMIT-LIMIT', 'FIELD-LIST-LIMIT'], what: 'limit=100 (the maximum)' },
  { id: 'pagination-limit-101-rejected', param: 'limit', query: 'limit=101', requirements: REQ.limit, what: 'limit=101 (above the maximum 100)' },
  { id: 'pagination-offset-minus-1-rejected', param: 'offset', query: 'offset=-1', requirements: REQ.offset, what: 'offset=-1 (below the minimum 0)' },
  { id: 'pagination-offset-0-accepted', param: 'offset', query: 'offset=0&limit=5', accept: { limit: 5, offset: 0 }, requirements: ['LIST-OFFSET-RANGE', 'LIMIT-OFFSET', 'FIELD-LIST-OFFSET'], what: 'offset=0 (the minimum)' },
  // Past the end of the data the page is empty, but the request is valid and the offset is echoed.
  { id: 'pagination-offset-10000-accepted', param: 'offset', query: 'offset=10000&limit=5', accept: { limit: 5, offset: 10000 }, requirements: ['LIST-OFFSET-RANGE', 'LIMIT-OFFSET', 'FIELD-LIST-OFFSET'], what: 'offset=10000 (the maximum)' },
  { id: 'pagination-offset-10001-rejected', param: 'offset', query: 'offset=10001', requirements: REQ.offset, what: 'offset=10001 (above the maximum 10000)' },
];

// ---------------------------------------------------------------- non-canonical text

export interface NonCanonical {
  /** kebab-case, part of the check id. */
  name: string;
  /** The raw text after `<param>` in the query: `=01`, or '' for a key without `=`. */
  raw: string;
  what: string;
  /**
   * Another reading a target may legitimately take of the bytes, with the answer it leads to. Judged as
   * informational (recorded), never as a pass or a fail.
   */
  alternative?: { reason: string; field: string; note: string };
}

const LONG_ZEROS = `${'0'.repeat(40)}1`;
const LONG_NUMBER = `1${'0'.repeat(30)}`;

/** Keeps each case a NonCanonical while the names stay literal, so NonCanonicalName is their union. */
const table = <const N extends string>(cases: readonly (NonCanonical & { name: N })[]) => cases;

export const NON_CANONICAL = table([
  { name: 'leading-zero-01', raw: '=01', what: '01 (leading zero)' },
  { name: 'leading-zero-007', raw: '=007', what: '007 (leading zeros)' },
  { name: 'leading-zero-00', raw: '=00', what: '00 (zero with a leading zero)' },
  { name: 'long-leading-zeros', raw: `=${LONG_ZEROS}`, what: '40 zeros then 1' },
  // Raw `+`: "+1" as written, or " 1" under form decoding; both non-canonical.
  { name: 'plus-raw', raw: '=+1', what: 'a raw +1' },
  { name: 'plus-encoded', raw: '=%2B1', what: '%2B1 (+1)' },
  { name: 'minus-zero', raw: '=-0', what: '-0' },
  { name: 'encoded-leading-space', raw: '=%201', what: '%201 (" 1")' },
  { name: 'encoded-trailing-space', raw: '=1%20', what: '1%20 ("1 ")' },
  { name: 'encoded-leading-tab', raw: '=%091', what: '%091 (tab then 1)' },
  { name: 'encoded-trailing-tab', raw: '=1%09', what: '1%09 (1 then tab)' },
  { name: 'decimal-1-0', raw: '=1.0', what: '1.0' },
  { name: 'decimal-trailing-dot', raw: '=1.', what: '1.' },
  { name: 'exponent', raw: '=1e2', what: '1e2' },
  { name: 'hex', raw: '=0x10', what: '0x10' },
  { name: 'empty-value', raw: '=', what: 'an empty value' },
  { name: 'no-equals', raw: '', what: 'the key without = (no value)' },
  { name: 'arabic-indic-digit', raw: '=%D9%A1', what: 'ARABIC-INDIC DIGIT ONE (U+0661)' },
  { name: 'fullwidth-digit', raw: '=%EF%BC%91', what: 'FULLWIDTH DIGIT ONE (U+FF11)' },
  { name: 'long-digits', raw: `=${LONG_NUMBER}`, what: '1 followed by 30 zeros' },
  { name: 'comma', raw: '=1,2', what: '1,2' },
  // A few old CGI parsers split pairs on `;` as well as `&`; WHATWG form decoding splits on `&` only.
  {
    name: 'semicolon', raw: '=1;2', what: '1;2',
    alternative: { reason: 'unsupported_filter', field: '2', note: 'the target splits query pairs on ";" and reports the key "2"' },
  },
  { name: 'nan', raw: '=NaN', what: 'NaN' },
  { name: 'infinity', raw: '=Infinity', what: 'Infinity' },
  { name: 'true', raw: '=true', what: 'true' },
]);

/** The name of a non-canonical case: a typo in a matrix is a type error. */
export type NonCanonicalName = (typeof NON_CANONICAL)[number]['name'];

// ---------------------------------------------------------------- check ids

export const nonCanonicalId = (param: Param, name: NonCanonicalName) => `pagination-${param}-${name}-rejected`;
export const percentEncodedDigitId = (param: Param) => `pagination-${param}-percent-encoded-digit-accepted`;
export const rawSpaceId = (param: Param) => `pagination-${param}-raw-space-not-accepted`;
export const duplicateKeyId = (param: Param) => `pagination-${param}-duplicate-key-documented`;
