// §4 order of evaluation as a property against the target: draw a route and at most one fault per stage
// (each from what the profile can produce), send the one request that carries them all, and require the
// reason of the EARLIEST faulty stage — or 200 when no stage is faulty. One check wraps the whole property;
// runs are sent unrecorded and only the shrunk counterexample is replayed as evidence. Fixed examples
// cover every pair of stages first, so the property is never luckier than its seed.
import fc from 'fast-check';
import { suite } from '../../../engine/declare.ts';
import { checkProperty } from '../../../engine/property-check.ts';
import { expectError, expectSuccess } from '../../../judge/assertions.ts';
import { NotVerified, type Exchange } from '../../../record/record.ts';
import { ROUTES, type RouteRef } from '../../../observe/routes.ts';
import { startProperty } from '../../../engine/seed.ts';
import type { CheckApi } from '../../../observe/target.ts';
import {
  AUTH_CREDENTIAL_FAULTS, AUTH_ENV_FAULTS, DEMO, NOT_ORG_SCOPED, ORG_NOT_ALLOWLISTED, OTHER_ORG, QUERY_FAULTS, STAGES, UNKNOWN_ENCOUNTER,
  authFaultNamed, describeCombination, distinctiveScopeFault, earliest, expressible, lookupFaults, queryFaultNamed, requestFor, routeFaults,
  scopeFaults, stageApplies, unsupportedKeyFault, unsupportedKeyFaults, type Combination, type Stage, type StageFault,
} from '../../../observe/stage-faults.ts';

const check = suite(import.meta.filename, { solo: true });

const ID = 'order-property-earliest-faulty-stage-wins';

interface Case { route: RouteRef; c: Combination }

const route = (name: RouteRef['name']): RouteRef => ROUTES.find((r) => r.name === name)!;

/** Whether the profile has every role the combination needs (CheckApi ends the check otherwise). */
function buildable(api: CheckApi, { route: r, c }: Case): boolean {
  if (!expressible(c, r)) return false;
  try {
    requestFor(api, r, c);
    return true;
  } catch (e) {
    if (e instanceof NotVerified) return false;
    throw e;
  }
}

/** The faults of one stage on one route that the profile can produce on their own. */
function optionsFor(api: CheckApi, stage: Stage, r: RouteRef): StageFault[] {
  if (!stageApplies(stage, r)) return [];
  const all: Record<Stage, StageFault[]> = {
    1: [...AUTH_CREDENTIAL_FAULTS, ...AUTH_ENV_FAULTS],
    2: routeFaults(r),
    3: scopeFaults(r),
    4: unsupportedKeyFaults(r),
    5: QUERY_FAULTS,
    6: lookupFaults(r),
  };
  return all[stage].filter((f) => buildable(api, { route: r, c: { [stage]: f } }));
}

/** Presence weight per stage against an absence weight of 3: an early fault masks every later one, so the
 * early stages are drawn less often (1 in 4) than the last two (1 in 2). */
const PRESENT: Record<Stage, number> = { 1: 1, 2: 1, 3: 1, 4: 1, 5: 3, 6: 3 };

function caseArbitrary(api: CheckApi): fc.Arbitrary<Case> {
  const perRoute = ROUTES.map((r) => {
    const stages = STAGES.map((s) => {
      const opts = optionsFor(api, s, r);
      return opts.length === 0
        ? fc.constant(undefined)
        : fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.constantFrom(...opts), weight: PRESENT[s] });
    });
    return fc.tuple(...stages).map((faults): Case => {
      const c: Combination = {};
      faults.forEach((f, i) => {
        if (f) c[STAGES[i]] = f;
      });
      return { route: r, c };
    });
  });
  return fc.oneof(...perRoute).filter((x) => buildable(api, x));
}

/** Every pair of stages at least once (and all six at once), before the random runs. */
function examples(): Case[] {
  const list = route('list');
  const enc = route('encounter');
  const doc = route('document');
  const transcript = route('transcript');
  const audio = route('audio');
  return [
    { route: list, c: { 1: authFaultNamed('api-keys-disabled'), 2: NOT_ORG_SCOPED } },
    { route: doc, c: { 1: authFaultNamed('digest-key-unavailable'), 2: ORG_NOT_ALLOWLISTED } },
    { route: list, c: { 1: authFaultNamed('api-keys-disabled'), 3: distinctiveScopeFault(list) } },
    { route: enc, c: { 1: authFaultNamed('invalid-key'), 4: unsupportedKeyFault(enc) } },
    { route: list, c: { 1: authFaultNamed('revoked-key'), 5: queryFaultNamed('limit-0') } },
    { route: doc, c: { 1: authFaultNamed('no-authorization'), 6: UNKNOWN_ENCOUNTER } },
    { route: transcript, c: { 2: NOT_ORG_SCOPED, 3: distinctiveScopeFault(transcript) } },
    { route: list, c: { 2: routeFaults(list)[2], 4: unsupportedKeyFault(list) } },
    { route: list, c: { 2: ORG_NOT_ALLOWLISTED, 5: queryFaultNamed('sort-uppercase') } },
    { route: enc, c: { 2: ORG_NOT_ALLOWLISTED, 6: UNKNOWN_ENCOUNTER } },
    { route: list, c: { 3: distinctiveScopeFault(list), 4: unsupportedKeyFault(list), 5: queryFaultNamed('offset-negative') } },
    { route: audio, c: { 3: distinctiveScopeFault(audio), 6: OTHER_ORG } },
    { route: list, c: { 4: unsupportedKeyFault(list), 5: queryFaultNamed('start-at-not-a-date') } },
    { route: doc, c: { 4: unsupportedKeyFault(doc), 6: DEMO } },
    { route: audio, c: { 1: authFaultNamed('api-keys-disabled'), 2: ORG_NOT_ALLOWLISTED, 3: distinctiveScopeFault(audio), 4: unsupportedKeyFault(audio), 6: UNKNOWN_ENCOUNTER } },
    ...ROUTES.map((r) => ({ route: r, c: {} })),
  ];
}

/** Sends the case: unrecorded, or recorded as evidence (the replay of a counterexample). */
function send(api: CheckApi, { route: r, c }: Case, record: boolean): Promise<Exchange> {
  const req = requestFor(api, r, c);
  const opts = { as: req.as, faults: req.faults };
  return record ? api.get(req.target, { ...opts, shared: true }) : api.target.send(req.target, { ...opts, shared: true });
}

/** Judges the answer; throws CheckFailure when the earliest faulty stage did not answer. */
function judge(ex: Exchange, { route: r, c }: Case): void {
  const want = earliest(c);
  if (want) expectError(ex, { reason: want.reason, field: want.field });
  else expectSuccess(ex, r.operationId);
}

check({
  id: ID,
  requirements: ['ORDER-1-AUTH', 'ORDER-2-ROUTE-ORG', 'ORDER-3-SCOPES', 'ORDER-4-UNSUPPORTED-KEYS', 'ORDER-5-QUERY-VALIDATION', 'ORDER-6-LOOKUP', 'ORDER-AUTH-BEFORE-QUERY', 'ORDER-AUTH-OVER-QUERY-VALIDATION', 'ORDER-QUERY-BEFORE-LOOKUP'],
  title: 'any combination of at most one fault per stage answers the reason of the earliest faulty stage (200 when none)',
  run: async (api, _scope, { testInfo }) => {
    testInfo.setTimeout(180_000);
    const { seed, runs } = startProperty(testInfo, 100);
    api.key('full');
    const byStage = new Map<string, number>();
    const fixed = examples().filter((x) => buildable(api, x));
    try {
      await checkProperty({
        arbitrary: caseArbitrary(api), seed, runs, examples: fixed,
        send: (x, record) => send(api, x, record),
        judge: (ex, x) => {
          const key = earliest(x.c) ? `stage ${earliest(x.c)!.stage}` : 'none';
          byStage.set(key, (byStage.get(key) ?? 0) + 1);
          judge(ex, x);
        },
        describe: (x) => `${x.route.name} with ${describeCombination(x.c)}`,
        failure: 'Earliest faulty stage did not answer',
      });
    } finally {
      testInfo.annotations.push({ type: 'distribution', description: [...byStage].sort().map(([k, n]) => `${k}: ${n}`).join(', ') });
    }
  },
});
