// §4 order of evaluation (and §7.2's last paragraph): for every pair of stages — (1) authentication,
// (2) route availability and organization approval, (3) scopes, (4) unsupported query keys, (5) query
// validation (list only), (6) resource lookup (item routes only) — a request that fails at both answers
// with the earlier stage's reason, on every route where both stages exist. Where the spec leaves the order
// open (two bad query parameters, two unsupported keys) the answer must still be one of the documented
// errors; which one is recorded as informational.
import { suite } from '../../engine/declare.ts';
import { expectError, fail, STATUS_BY_REASON, type ErrorBody } from '../../judge/assertions.ts';
import type { Exchange } from '../../record/record.ts';
import { ROUTES, type RouteRef } from '../../observe/routes.ts';
import {
  ORG_NOT_ALLOWLISTED, NOT_ORG_SCOPED, OTHER_ORG, DEMO, UNKNOWN_ENCOUNTER, STAGE_NAME, STAGE_REQUIREMENT,
  authFaultNamed, distinctiveScopeFault, expressible, queryFaultNamed, requestFor, routeFaults, stageApplies, unsupportedKeyFault,
  type Stage, type StageFault,
} from '../../observe/stage-faults.ts';
import { askedBy } from './needs.ts';

const check = suite(import.meta.filename);

interface PairCase { a: StageFault; b: StageFault }

const product = (as: StageFault[], bs: StageFault[]): PairCase[] => as.flatMap((a) => bs.map((b) => ({ a, b })));

const QUERY_KINDS = ['limit-0', 'offset-negative', 'sort-uppercase', 'start-at-not-a-date'].map(queryFaultNamed);

/**
 * The representative faults of each pair of stages on one route. Stage 1 pairs with stages 2 and 3
 * through the environment switches (a bad credential fixes the caller, so it cannot also be a stage-2/3
 * key); stages 2 and 3 combine through the keys that hold no scope and are not org scoped, or of an organization
 * that is not allowlisted or lacks the route's group.
 */
function pairCases(route: RouteRef): PairCase[] {
  const apiKeysDisabled = authFaultNamed('api-keys-disabled');
  const digest = authFaultNamed('digest-key-unavailable');
  const badCallers = [authFaultNamed('no-authorization'), authFaultNamed('invalid-key')];
  const scope = distinctiveScopeFault(route);
  const unsupported = unsupportedKeyFault(route);
  const cases = [
    ...product([apiKeysDisabled], routeFaults(route)),
    ...product([digest], [ORG_NOT_ALLOWLISTED]),
    ...product([apiKeysDisabled, digest], [scope]),
    ...product(badCallers, [unsupported]),
    ...product([authFaultNamed('invalid-key')], [...QUERY_KINDS, UNKNOWN_ENCOUNTER, DEMO]),
    ...product(routeFaults(route), [scope]),
    ...product(routeFaults(route), [unsupported, queryFaultNamed('limit-0'), UNKNOWN_ENCOUNTER]),
    ...product([scope], [unsupported, ...QUERY_KINDS, UNKNOWN_ENCOUNTER, OTHER_ORG]),
    ...product([unsupported], [...QUERY_KINDS, UNKNOWN_ENCOUNTER, OTHER_ORG]),
  ];
  return cases.filter(({ a, b }) => stageApplies(a.stage, route) && stageApplies(b.stage, route) && expressible({ [a.stage]: a, [b.stage]: b }, route));
}

function requirementsFor(a: StageFault, b: StageFault): string[] {
  const reqs = [STAGE_REQUIREMENT[a.stage], STAGE_REQUIREMENT[b.stage], a.requirement];
  const status = STATUS_BY_REASON[a.reason];
  if (status !== 404) reqs.push(`ERR-${status}-CATEGORY`);
  if (a.stage <= 3 && b.stage >= 4) reqs.push('ORDER-AUTH-BEFORE-QUERY');
  if (a.stage <= 3 && (b.stage === 4 || b.stage === 5)) reqs.push('ORDER-AUTH-OVER-QUERY-VALIDATION');
  if ((a.stage === 4 || a.stage === 5) && b.stage === 6) reqs.push('ORDER-QUERY-BEFORE-LOOKUP');
  return [...new Set(reqs)];
}

const seen = new Set<string>();
for (const route of ROUTES) {
  for (const { a, b } of pairCases(route)) {
    const id = `order-${STAGE_NAME[a.stage]}-before-${STAGE_NAME[b.stage]}-${a.name}-${b.name}-${route.name}`;
    if (seen.has(id)) throw new Error(`duplicate order case ${id}`);
    seen.add(id);
    check({
      id, requirements: requirementsFor(a, b),
      title: `${route.name}: a request failing at stage ${a.stage} (${a.name}) and stage ${b.stage} (${b.name}) answers stage ${a.stage}'s ${a.reason}`,
      needs: askedBy((api) => requestFor(api, route, { [a.stage]: a, [b.stage]: b } as Partial<Record<Stage, StageFault>>)),
      run: async (api) => {
        const r = requestFor(api, route, { [a.stage]: a, [b.stage]: b } as Partial<Record<Stage, StageFault>>);
        const ex = await api.get(r.target, { as: r.as, faults: r.faults });
        expectError(ex, { reason: a.reason, field: a.field });
      },
    });
  }
}

// ---------------------------------------------------------------- where the spec leaves the order open

interface Candidate { reason: string; field: string }

/** Requires one of the candidate errors (exact status, category, field); returns the one received. */
function expectOneOf(ex: Exchange, candidates: Candidate[]): Candidate {
  const body = (() => {
    try {
      return JSON.parse(ex.response?.body ?? '') as Partial<ErrorBody>;
    } catch {
      return undefined;
    }
  })();
  const match = candidates.find((c) => body?.reason_code === c.reason && body?.field === c.field)
    ?? candidates.find((c) => body?.reason_code === c.reason);
  if (!match) {
    // Let expectError name the status/body problem when the response is not even JSON or the reason is wrong.
    expectError(ex, candidates[0]);
    fail('Answer is none of the documented errors', `expected one of ${candidates.map((c) => `${c.reason}(${c.field})`).join(', ')}`);
  }
  expectError(ex, match);
  return match;
}

interface OpenCase { id: string; route: RouteRef; query: string; candidates: Candidate[]; requirements: string[] }

const LIST = ROUTES.find((r) => r.name === 'list')!;
const OPEN_QUERY: OpenCase[] = [
  { id: 'order-open-limit-and-offset-invalid-list', query: 'limit=0&offset=-1', candidates: [{ reason: 'invalid_limit', field: 'limit' }, { reason: 'invalid_offset', field: 'offset' }], requirements: ['COND-INVALID-LIMIT', 'COND-INVALID-OFFSET'] },
  { id: 'order-open-offset-and-limit-invalid-list', query: 'offset=-1&limit=0', candidates: [{ reason: 'invalid_limit', field: 'limit' }, { reason: 'invalid_offset', field: 'offset' }], requirements: ['COND-INVALID-LIMIT', 'COND-INVALID-OFFSET'] },
  { id: 'order-open-sort-and-start-at-invalid-list', query: 'sort_order=up&start_at=yesterday', candidates: [{ reason: 'invalid_sort', field: 'sort_order' }, { reason: 'invalid_query', field: 'start_at' }], requirements: ['COND-INVALID-SORT', 'COND-INVALID-QUERY-DATE'] },
  { id: 'order-open-start-at-and-end-at-invalid-list', query: 'start_at=yesterday&end_at=2025-01-01T00:00:00', candidates: [{ reason: 'invalid_query', field: 'start_at' }, { reason: 'invalid_query', field: 'end_at' }], requirements: ['COND-INVALID-QUERY-DATE'] },
].map((c) => ({ ...c, route: LIST, requirements: ['ORDER-MULTIPLE-QUERY-ERRORS', ...c.requirements, 'ERR-422-CATEGORY'] }));

for (const route of ROUTES) {
  // Both keys are unsupported; on the list a supported key follows them, so naming "the last key" is caught.
  const query = route.name === 'list' ? 'owners=x&patient_id=y&limit=10' : 'owners=x&patient_id=y';
  OPEN_QUERY.push({
    id: `order-open-two-unsupported-keys-${route.name}`, route, query,
    candidates: [{ reason: 'unsupported_filter', field: 'owners' }, { reason: 'unsupported_filter', field: 'patient_id' }],
    requirements: ['ORDER-MULTIPLE-QUERY-ERRORS', 'COND-UNSUPPORTED-FILTER', 'ERR-400-CATEGORY'],
  });
}

for (const c of OPEN_QUERY) {
  check({
    id: c.id, requirements: c.requirements,
    title: `${c.route.name}: ?${c.query} answers one of ${c.candidates.map((x) => `${x.reason}(${x.field})`).join(' / ')} (which one is open; recorded)`,
    needs: c.route.needs,
    run: async (api, scope) => {
      const ex = await api.get(`${c.route.path(api)}?${c.query}`);
      const got = expectOneOf(ex, c.candidates);
      scope.observe(`?${c.query} answered ${got.reason} with field ${got.field}`);
    },
  });
}
