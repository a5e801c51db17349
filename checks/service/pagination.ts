// §4.1 / §8 pagination bounds and canonical integers on the list route: limit 1..100 (default 50), offset
// 0..10000 (default 0), both accepted only as canonical decimal text (ASCII digits, no sign, no leading
// zero except "0" itself, nothing else), each boundary and each kind of non-canonical text its own check,
// for limit and for offset. Query text goes on the wire exactly as written here.
//
// Reading of "canonical decimal text": it constrains the DECODED value of the parameter. Percent-encoding
// is a transport form (RFC 3986 §2.1, §2.3), so `%31` is the text "1" and is canonical, while `%2B1`
// ("+1"), `%201` (" 1") and `%D9%A1` (ARABIC-INDIC DIGIT ONE) are not. A raw `+` may be read as a space by
// form decoding; "+1" and " 1" are both non-canonical, so either reading must be rejected.
// The case tables and check ids live in ./pagination.cases.ts (the mutant matrix names the same cases).
import { suite } from '../../engine/declare.ts';
import { describe, expectDocumented, expectError, expectJson, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { validateAgainst } from '../../judge/contract.ts';
import { expectPage, LIST_PATH as LIST, type ListPage as ListBody } from '../../judge/pagination.ts';
import type { CheckApi } from '../../observe/target.ts';
import {
  BOUNDS, CANONICAL_REQ, duplicateKeyId, NON_CANONICAL, nonCanonicalId, PARAMS, percentEncodedDigitId, rawSpaceId, REASON, REQ,
} from './pagination.cases.ts';

const check = suite(import.meta.filename);

const get = (api: CheckApi, query: string) => api.get(query === '' ? LIST : `${LIST}?${query}`, { shared: true });

// ---------------------------------------------------------------- bounds

for (const b of BOUNDS) {
  const title = b.accept
    ? `${b.what} is accepted: 200 with ${b.param} echoed and a page that honours it`
    : `${b.what} answers 422 ${REASON[b.param]} with field "${b.param}"`;
  check({ id: b.id, requirements: b.requirements, title, run: async (api) => {
    const ex = await get(api, b.query);
    if (b.accept) expectPage(ex, b.accept);
    else expectError(ex, { reason: REASON[b.param], field: b.param });
  } });
}

// ---------------------------------------------------------------- defaults

check({ id: 'pagination-limit-default-50', requirements: ['LIST-LIMIT-DEFAULT', 'LIMIT-LIMIT', 'FIELD-LIST-LIMIT', 'LIST-QUERY-OPTIONAL'], title: 'without limit the page uses the default 50: limit echoed 50 and at most 50 items', run: async (api) => {
  expectPage(await get(api, ''), { limit: 50, offset: 0 });
} });

check({ id: 'pagination-offset-default-0', requirements: ['LIST-OFFSET-DEFAULT', 'LIMIT-OFFSET', 'FIELD-LIST-OFFSET', 'LIST-QUERY-OPTIONAL'], title: 'without offset the page starts at the default 0: offset echoed 0', run: async (api) => {
  const first = expectPage(await get(api, 'limit=3'), { limit: 3, offset: 0 });
  // The default page is the page at offset 0: the same first items as an explicit offset=0.
  const explicit = expectPage(await get(api, 'limit=3&offset=0'), { limit: 3, offset: 0 });
  const a = first.items.map((i) => i.encounter_id).join(',');
  const b = explicit.items.map((i) => i.encounter_id).join(',');
  if (a !== b && first.total === explicit.total) fail('the page without offset is not the page at offset 0', `${a} vs ${b}`);
} });

// ---------------------------------------------------------------- non-canonical text

for (const param of PARAMS) {
  for (const c of NON_CANONICAL) {
    const id = nonCanonicalId(param, c.name);
    check({
      id, requirements: [...CANONICAL_REQ, ...REQ[param]],
      title: `${param} given as ${c.what} is not canonical decimal text: 422 ${REASON[param]} with field "${param}"`,
      run: async (api, scope) => {
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
      },
    });
  }

  // `%31` decodes to "1": the decoded text is canonical, so the request is limit=1 (offset=1).
  const encodedId = percentEncodedDigitId(param);
  check({
    id: encodedId, requirements: [...CANONICAL_REQ, param === 'limit' ? 'LIST-LIMIT-RANGE' : 'LIST-OFFSET-RANGE'],
    title: `${param}=%31 is the canonical text "1" after percent-decoding: 200 with ${param} echoed 1`,
    run: async (api) => {
      const ex = await get(api, param === 'limit' ? 'limit=%31' : 'offset=%31&limit=2');
      expectPage(ex, param === 'limit' ? { limit: 1, offset: 0 } : { limit: 2, offset: 1 });
    },
  });

  // A raw space cannot be part of an HTTP/1.1 request-target (RFC 9112 §3.2): the request line itself is
  // malformed, so the HTTP layer (or any proxy in front of the service) may refuse it before the API sees a
  // query. What the contract still forbids is ACCEPTING it as a valid value. Outcomes: 422 with the
  // documented body → pass; a 400 (HTTP-level refusal, body not governed by §7) → informational, recorded;
  // a 2xx or any other status → fail.
  const spaceId = rawSpaceId(param);
  check({
    id: spaceId, requirements: [...CANONICAL_REQ, ...REQ[param]],
    title: `${param} with a raw space before the digit (${param}= 1) is never accepted as a valid ${param}`,
    run: async (api, scope) => {
      const ex = await get(api, `${param}= 1`);
      // A server may also end the connection on an invalid request line, or answer it the way HTTP/0.9 would (a body
      // with no status line: Python's http.server): not accepted either. RFC 9112 §3 recommends a 400; the spec is silent.
      if (ex.error && (ex.error.kind === 'connection_reset' || ex.error.kind === 'malformed_response')) {
        scope.observe(`the malformed request line was refused at the HTTP layer without an HTTP/1.1 answer (${ex.error.kind}: ${ex.error.message}); RFC 9112 §3 recommends 400`);
        return;
      }
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
    },
  });

  // Duplicate keys are not addressed by the spec (LIST-DUPLICATE-KEYS): the outcome is recorded, but it
  // must still be a documented answer that honours the request: 200 with one of the given values, or the
  // parameter's 422 (or 400 unsupported_filter naming it).
  const dupId = duplicateKeyId(param);
  check({
    id: dupId, requirements: ['LIST-DUPLICATE-KEYS', 'LIST-ERRORS'],
    title: `${param} given twice gets a documented answer (200 honouring one value, or a ${param} error); outcome recorded`,
    run: async (api, scope) => {
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
    },
  });
}
