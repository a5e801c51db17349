// The case table of where-the-key-travels (checks/service/credentials.ts): every place other than the
// Authorization header a key might be sent. Plain data, no Playwright, so the mutant matrix
// (tests/mutants/matrix/semantics.ts) names the same checks instead of retyping their ids.
import { LIST_PATH } from '../../observe/list-walk.ts';

export interface Elsewhere {
  id: string;
  where: string;
  /** The request target and headers that carry the full key, without any Authorization header. */
  request(key: string): { target: string; headers: Record<string, string> };
}

export const ELSEWHERE: Elsewhere[] = [
  { id: 'credentials-api-key-query-not-accepted', where: 'the api_key query parameter', request: (key) => ({ target: `${LIST_PATH}?api_key=${encodeURIComponent(key)}`, headers: {} }) },
  { id: 'credentials-access-token-query-not-accepted', where: 'the access_token query parameter', request: (key) => ({ target: `${LIST_PATH}?access_token=${encodeURIComponent(key)}`, headers: {} }) },
  { id: 'credentials-cookie-not-accepted', where: 'a cookie (api_key and access_token)', request: (key) => ({ target: LIST_PATH, headers: { cookie: `api_key=${key}; access_token=${key}` } }) },
  { id: 'credentials-x-api-key-header-not-accepted', where: 'an X-API-Key header', request: (key) => ({ target: LIST_PATH, headers: { 'x-api-key': key } }) },
];
