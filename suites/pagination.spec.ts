// §4.1 / §8 pagination bounds and canonical integers on the list route: limit 1..100 (default 50), offset
// 0..10000 (default 0), both accepted only as canonical decimal text (ASCII digits, no sign, no leading
// zero except "0" itself, nothing else), each boundary and each kind of non-canonical text its own check,
// for limit and for offset. Query text goes on the wire exactly as written here.
//
// Reading of "canonical decimal text": it constrains the DECODED value of the parameter. Percent-encoding
// is a transport form (RFC 3986 §2.1, §2.3), so `%31` is the text "1" and is canonical, while `%2B1`
// ("+1"), `%201` (" 1") and `%D9%A1` (ARABIC-INDIC DIGIT ONE) are not. A raw `+` may be read as a space by
// form decoding; "+1" and " 1" are both non-canonical, so either reading must be rejected.
import { test } from '../harness/fixtures.ts';
import { describe, expectDocumented, expectError, expectJson, expectSuccess, fail, type ErrorBody } from '../harness/assertions.ts';
import { validateAgainst } from '../harness/contract.ts';
import { expectPage, LIST_PATH as LIST, type ListPage as ListBody } from '../harness/pagination.ts';
import type { CheckApi } from '../harness/target.ts';

type Param = 'limit' | 'offset';
const REASON: Record<Param, 'invalid_limit' | 'invalid_offset'> = { limit: 'invalid_limit', offset: 'invalid_offset' };
const REQ: Record<Param, string[]> = {
  limit: ['COND-INVALID-LIMIT', 'LIST-LIMIT-RANGE', 'LIMIT-LIMIT', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD'],
  offset: ['COND-INVALID-OFFSET', 'LIST-OFFSET-RANGE', 'LIMIT-OFFSET', 'ERR-422-CATEGORY', 'ERR-FIELD-FIELD'],
};
const CANONICAL_REQ = ['LIST-CANONICAL-INTEGERS', 'LIMIT-CANONICAL-INTEGERS'];

const get = (api: CheckApi, query: string) => api.get(query === '' ? LIST : `${LIST}?${query}`);

// ---------------------------------------------------------------- bounds

interface Bound {
  id: string;
  param: Param;
  /** Raw query text. */
  query: string;
  /** The echoed page parameters when accepted; undefined = rejected. */
  accept?: { limit: number; offset: number };
  requirements: string[];
  what: string;
}

const BOUNDS: Bound[] = [
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

for (const b of BOUNDS) {
  test(b.id, async ({ check }) => {
    const title = b.accept
      ? `${b.what} is accepted: 200 with ${b.param} echoed and a page that honours it`
      : `${b.what} answers 422 ${REASON[b.param]} with field "${b.param}"`;
    await check({ id: b.id, requirements: b.requirements, title }, async (api) => {
      const ex = await get(api, b.query);
      if (b.accept) expectPage(ex, b.accept);
      else expectError(ex, { reason: REASON[b.param], field: b.param });
    });
  });
}

// ---------------------------------------------------------------- defaults

test('pagination-limit-default-50', async ({ check }) => {
  await check({ id: 'pagination-limit-default-50', requirements: ['LIST-LIMIT-DEFAULT', 'LIMIT-LIMIT', 'FIELD-LIST-LIMIT', 'LIST-QUERY-OPTIONAL'], title: 'without limit the page uses the default 50: limit echoed 50 and at most 50 items' }, async (api) => {
    expectPage(await get(api, ''), { limit: 50, offset: 0 });
  });
});

test('pagination-offset-default-0', async ({ check }) => {
  await check({ id: 'pagination-offset-default-0', requirements: ['LIST-OFFSET-DEFAULT', 'LIMIT-OFFSET', 'FIELD-LIST-OFFSET', 'LIST-QUERY-OPTIONAL'], title: 'without offset the page starts at the default 0: offset echoed 0' }, async (api) => {
    const first = expectPage(await get(api, 'limit=3'), { limit: 3, offset: 0 });
    // The default page is the page at offset 0: the same first items as an explicit offset=0.
    const explicit = expectPage(await get(api, 'limit=3&offset=0'), { limit: 3, offset: 0 });
    const a = first.items.map((i) => i.encounter_id).join(',');
    const b = explicit.items.map((i) => i.encounter_id).join(',');
    if (a !== b && first.total === explicit.total) fail('the page without offset is not the page at offset 0', `${a} vs ${b}`);
  });
});

// ---------------------------------------------------------------- non-canonical text

interface NonCanonical {
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

const NON_CANONICAL: NonCanonical[] = [
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
];

for (const param of ['limit', 'offset'] as const) {
  for (const c of NON_CANONICAL) {
    const id = `pagination-${param}-${c.name}-rejected`;
    test(id, async ({ check }) => {
      await check({
        id, requirements: [...CANONICAL_REQ, ...REQ[param]],
        title: `${param} given as ${c.what} is not canonical decimal text: 422 ${REASON[param]} with field "${param}"`,
      }, async (api, scope) => {
        const ex = await get(api, `${param}${c.raw}`);
        const alt = c.alternative;
        if (alt && ex.response?.status === 400) {
          const body = expectDocumented(ex, 'listPublicEncounters') as ErrorBody;
          if (body.reason_code === alt.reason && body.field === alt.field) {
            scope.observe(`${alt.note}: 400 ${alt.reason} with field ${JSON.stringify(alt.field)}`);
            return;
          }
        }
        expectError(ex, { reason: REASON[param], field: param });
      });
    });
  }

  // `%31` decodes to "1": the decoded text is canonical, so the request is limit=1 (offset=1).
  const encodedId = `pagination-${param}-percent-encoded-digit-accepted`;
  test(encodedId, async ({ check }) => {
    await check({
      id: encodedId, requirements: [...CANONICAL_REQ, param === 'limit' ? 'LIST-LIMIT-RANGE' : 'LIST-OFFSET-RANGE'],
      title: `${param}=%31 is the canonical text "1" after percent-decoding: 200 with ${param} echoed 1`,
    }, async (api) => {
      const ex = await get(api, param === 'limit' ? 'limit=%31' : 'offset=%31&limit=2');
      expectPage(ex, param === 'limit' ? { limit: 1, offset: 0 } : { limit: 2, offset: 1 });
    });
  });

  // A raw space cannot be part of an HTTP/1.1 request-target (RFC 9112 §3.2): the request line itself is
  // malformed, so the HTTP layer (or any proxy in front of the service) may refuse it before the API sees a
  // query. What the contract still forbids is ACCEPTING it as a valid value. Outcomes: 422 with the
  // documented body → pass; a 400 (HTTP-level refusal, body not governed by §7) → informational, recorded;
  // a 2xx or any other status → fail.
  const rawSpaceId = `pagination-${param}-raw-space-not-accepted`;
  test(rawSpaceId, async ({ check }) => {
    await check({
      id: rawSpaceId, requirements: [...CANONICAL_REQ, ...REQ[param]],
      title: `${param} with a raw space before the digit (${param}= 1) is never accepted as a valid ${param}`,
    }, async (api, scope) => {
      const ex = await get(api, `${param}= 1`);
      const status = ex.response?.status;
      if (status === 400) {
        let shape = 'not JSON';
        try {
          const body = expectJson(ex);
          shape = validateAgainst('PublicApiErrorResponse', body) === undefined ? `a PublicApiErrorResponse (${(body as ErrorBody).reason_code})` : 'JSON that is not a PublicApiErrorResponse';
        } catch {
          // shape stays "not JSON"
        }
        scope.observe(`the malformed request line was refused with 400 at the HTTP layer; body: ${shape}`);
        return;
      }
      if (status !== undefined && status >= 200 && status < 300) fail(`a raw space in ${param} was accepted`, describe(ex));
      expectError(ex, { reason: REASON[param], field: param });
    });
  });

  // Duplicate keys are not addressed by the spec (LIST-DUPLICATE-KEYS): the outcome is recorded, but it
  // must still be a documented answer that honours the request: 200 with one of the given values, or the
  // parameter's 422 (or 400 unsupported_filter naming it).
  const dupId = `pagination-${param}-duplicate-key-documented`;
  test(dupId, async ({ check }) => {
    await check({
      id: dupId, requirements: ['LIST-DUPLICATE-KEYS', 'LIST-ERRORS'],
      title: `${param} given twice gets a documented answer (200 honouring one value, or a ${param} error); outcome recorded`,
    }, async (api, scope) => {
      const values = param === 'limit' ? [1, 2] : [0, 1];
      const ex = await get(api, param === 'limit' ? 'limit=1&limit=2' : 'offset=0&offset=1&limit=2');
      const status = ex.response?.status;
      if (status === 200) {
        const body = expectSuccess<ListBody>(ex, 'listPublicEncounters');
        const used = body[param];
        if (!values.includes(used)) fail(`a duplicate ${param} was answered with ${param} ${used}, neither of the values given`, describe(ex));
        expectPage(ex, param === 'limit' ? { limit: used, offset: 0 } : { limit: 2, offset: used });
        scope.observe(`200: the ${used === values[0] ? 'first' : 'last'} value won (${param} ${used})`);
        return;
      }
      if (status === 400) {
        expectError(ex, { reason: 'unsupported_filter', field: param });
        scope.observe(`400 unsupported_filter with field "${param}"`);
        return;
      }
      expectError(ex, { reason: REASON[param], field: param });
      scope.observe(`422 ${REASON[param]} with field "${param}"`);
    });
  });
}
