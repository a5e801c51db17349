// §5 Authentication: each 401 reason with its exact category and a null field, on every route;
// 503 digest_key_unavailable where the profile offers the fault switch.
import { suite } from '../../engine/declare.ts';
import { expectError, reasonOf } from '../../judge/assertions.ts';
import { ROUTES } from '../../observe/routes.ts';
import { KEY_401_ROLES, KEY_ROLE_ANSWER, type FaultName } from '../../profile/profile.ts';
import type { As } from '../../observe/target.ts';
import { asNeeds, faultNeeds, needs } from './needs.ts';

const check = suite(import.meta.filename);

interface AuthCase {
  reason: string;
  requirements: string[];
  /** Distinguishes two cases of one reason in the check id. */
  variant?: string;
  /** A second reason the spec leaves open for this case: recorded as informational when seen. */
  alsoOpen?: string;
  as: As;
  faults?: FaultName[];
}

const CASES: AuthCase[] = [
  { reason: 'missing_bearer', requirements: ['AUTH-401-MISSING-BEARER', 'AUTH-BEARER-ALL-ENDPOINTS', 'AUTH-401-STATUS', 'COND-AUTH-FAILS'], as: 'none' },
  // Another scheme supplies "no bearer key": missing_bearer is the literal reading; malformed_token is
  // recorded as informational (AUTH-401-NON-BEARER-SCHEME leaves it open); anything else fails.
  { reason: 'missing_bearer', requirements: ['AUTH-401-MISSING-BEARER', 'AUTH-401-NON-BEARER-SCHEME', 'COND-AUTH-FAILS'], as: { header: 'Basic dXNlcjpwYXNz' }, variant: 'basic-scheme', alsoOpen: 'malformed_token' },
  { reason: 'api_keys_disabled', requirements: ['AUTH-401-API-KEYS-DISABLED', 'COND-AUTH-FAILS'], as: 'full', faults: ['api_keys_disabled'] },
  { reason: 'test_prefix_not_allowed', requirements: ['AUTH-401-TEST-PREFIX-NOT-ALLOWED', 'COND-AUTH-FAILS'], as: 'test_key', faults: ['test_prefix_not_allowed'] },
  // The failing-key roles and their 401 reasons: the one table of role → answer (profile/profile.ts).
  ...KEY_401_ROLES.map((role): AuthCase => {
    const reason = KEY_ROLE_ANSWER[role].reason;
    return { reason, requirements: [`AUTH-401-${reason.toUpperCase().replaceAll('_', '-')}`, 'COND-AUTH-FAILS'], as: role };
  }),
  { reason: 'digest_key_unavailable', requirements: ['AUTH-503-DIGEST-KEY-UNAVAILABLE', 'COND-DIGEST-KEY-UNAVAILABLE'], as: 'full', faults: ['digest_key_unavailable'] },
];

for (const route of ROUTES) {
  for (const c of CASES) {
    const id = ['auth', c.reason.replaceAll('_', '-'), c.variant, route.name].filter(Boolean).join('-');
    check({ id, requirements: c.requirements, title: `${route.name}: ${c.reason} answers its documented status, category and null field`, needs: needs(route.needs, asNeeds(c.as), faultNeeds(c.faults)), run: async (api, scope) => {
      const ex = await api.get(route.path(api), { as: c.as, faults: c.faults });
      const seen = reasonOf(ex.response?.body);
      if (c.alsoOpen && seen === c.alsoOpen) {
        expectError(ex, { reason: c.alsoOpen, field: null });
        scope.observe(`answered ${c.alsoOpen} where ${c.reason} is the literal reading`);
        return;
      }
      expectError(ex, { reason: c.reason, field: null });
    } });
  }
}
