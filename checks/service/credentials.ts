// §5.1 Where the key travels: only in the Authorization header, with the HTTP bearer scheme whose name is
// case-insensitive (RFC 7235 §2.1, brought in by "HTTP bearer scheme"). A valid key sent anywhere else with no
// Authorization header supplies no bearer key (401 missing_bearer; authentication comes first, so the
// extra query key never reaches step 4). The key only ever goes to the target; the redaction layer knows it.
import { suite } from '../../engine/declare.ts';
import { expectError, expectSuccess } from '../../judge/assertions.ts';
import { LIST_PATH } from '../../observe/list-walk.ts';
import type { CheckApi } from '../../observe/target.ts';
import { ELSEWHERE } from './credentials.cases.ts';

const check = suite(import.meta.filename);

const REQUIREMENTS = ['AUTH-KEY-ONLY-IN-AUTHORIZATION-HEADER', 'AUTH-BEARER-REQUIRED', 'AUTH-401-MISSING-BEARER', 'COND-AUTH-FAILS'];

for (const c of ELSEWHERE) {
  check({ id: c.id, requirements: REQUIREMENTS, title: `a valid key in ${c.where}, with no Authorization header, answers 401 missing_bearer`, run: async (api: CheckApi) => {
    const { target, headers } = c.request(api.key('full'));
    expectError(await api.get(target, { as: 'none', headers }), { reason: 'missing_bearer', field: null });
  } });
}

check({ id: 'credentials-bearer-scheme-case-insensitive', requirements: ['AUTH-BEARER-SCHEME-CASE-INSENSITIVE', 'AUTH-BEARER-REQUIRED'], title: 'the bearer scheme name is case-insensitive: "bearer KEY" and "BEARER KEY" authenticate like "Bearer KEY"', run: async (api) => {
  const key = api.key('full');
  for (const scheme of ['bearer', 'BEARER']) {
    expectSuccess(await api.get(`${LIST_PATH}?limit=1`, { as: { header: `${scheme} ${key}` } }), 'listPublicEncounters');
  }
} });
