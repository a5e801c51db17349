// The six stages of spec §4 (order of evaluation) and the faults that make a request fail at each one,
// built from profile roles. Shared by checks/service/order.ts (every pair of stages) and
// checks/service/properties/evaluation-order.ts (random combinations). A combination holds at most one fault per
// stage; `requestFor` turns it into one request, `earliest` names the answer the contract demands (the
// reason of the earliest faulty stage). Nothing here sends a request or knows the reference.
import { KEY_401_ROLES, KEY_ROLE_ANSWER, type CredentialRole, type DocumentRole, type FaultName } from '../profile/profile.ts';
import type { RouteRef } from './routes.ts';
import { SCOPE_ROLE } from './routes.ts';
import type { As, CheckApi } from './target.ts';

export type Stage = 1 | 2 | 3 | 4 | 5 | 6;
export const STAGES: Stage[] = [1, 2, 3, 4, 5, 6];

/** Short stage names used in check ids. */
export const STAGE_NAME: Record<Stage, string> = { 1: 'auth', 2: 'route', 3: 'scope', 4: 'keys', 5: 'query', 6: 'lookup' };

export const STAGE_REQUIREMENT: Record<Stage, string> = {
  1: 'ORDER-1-AUTH', 2: 'ORDER-2-ROUTE-ORG', 3: 'ORDER-3-SCOPES', 4: 'ORDER-4-UNSUPPORTED-KEYS', 5: 'ORDER-5-QUERY-VALIDATION', 6: 'ORDER-6-LOOKUP',
};

export type LookupResource = 'unknown_encounter' | 'other_org' | 'demo' | 'foreign_document';

export interface StageFault {
  stage: Stage;
  /** kebab-case, part of check ids. */
  name: string;
  /** The answer when this is the earliest faulty stage. */
  reason: string;
  field: string | null;
  /** The §7.2 condition row (COND-*). */
  requirement: string;
  /** Stages 1–3: the caller. A stage-1 fault with `as` fixes the caller, so no stage-2/3 fault can join it. */
  as?: CredentialRole | 'none';
  /** Stage 1: an environment switch; without `as` it combines with the caller of a stage-2/3 fault. */
  env?: FaultName;
  /** Stages 4–5: one raw query pair. */
  query?: string;
  /** Stage 6: the resource addressed instead of the caller's own. */
  resource?: LookupResource;
}

export type Combination = Partial<Record<Stage, StageFault>>;

// ---------------------------------------------------------------- stage 1

const authFault = (name: string, reason: string, as: CredentialRole | 'none', env?: FaultName): StageFault =>
  ({ stage: 1, name, reason, field: null, requirement: 'COND-AUTH-FAILS', as, env });

/** Faults of a bad caller (fix the credential). */
export const AUTH_CREDENTIAL_FAULTS: StageFault[] = [
  authFault('no-authorization', 'missing_bearer', 'none'),
  ...KEY_401_ROLES.map((role) => authFault(role.replaceAll('_', '-'), KEY_ROLE_ANSWER[role].reason, role)),
  authFault('test-prefix-not-allowed', 'test_prefix_not_allowed', 'test_key', 'test_prefix_not_allowed'),
];

/** Environment faults of step 1: they combine with any caller. digest_key_unavailable belongs to step 1 (§5.6). */
export const AUTH_ENV_FAULTS: StageFault[] = [
  { stage: 1, name: 'api-keys-disabled', reason: 'api_keys_disabled', field: null, requirement: 'COND-AUTH-FAILS', env: 'api_keys_disabled' },
  { stage: 1, name: 'digest-key-unavailable', reason: 'digest_key_unavailable', field: null, requirement: 'COND-DIGEST-KEY-UNAVAILABLE', env: 'digest_key_unavailable' },
];

export const authFaultNamed = (name: string): StageFault => {
  const f = [...AUTH_CREDENTIAL_FAULTS, ...AUTH_ENV_FAULTS].find((x) => x.name === name);
  if (!f) throw new Error(`no stage-1 fault ${name}`);
  return f;
};

// ---------------------------------------------------------------- stage 2

export const NOT_ORG_SCOPED: StageFault = { stage: 2, name: 'not-org-scoped', reason: KEY_ROLE_ANSWER.not_org_scoped.reason, field: null, requirement: 'COND-NOT-ORG-SCOPED', as: 'not_org_scoped' };
export const ORG_NOT_ALLOWLISTED: StageFault = { stage: 2, name: 'org-not-allowlisted', reason: KEY_ROLE_ANSWER.org_not_allowlisted.reason, field: null, requirement: 'COND-ROUTE-OR-ORG-NOT-APPROVED', as: 'org_not_allowlisted' };

/** The key of an organization whose route group (the route's own) is not enabled. */
export function routeDisabledFault(route: RouteRef): StageFault {
  const role = route.routeGroup === 'encounters' ? 'encounter_routes_disabled' : 'document_routes_disabled';
  return { stage: 2, name: role.replaceAll('_', '-'), reason: 'route_not_allowed', field: null, requirement: 'COND-ROUTE-OR-ORG-NOT-APPROVED', as: role };
}

export const routeFaults = (route: RouteRef): StageFault[] => [NOT_ORG_SCOPED, ORG_NOT_ALLOWLISTED, routeDisabledFault(route)];

// ---------------------------------------------------------------- stage 3

export function missingScopeFault(scope: keyof typeof SCOPE_ROLE): StageFault {
  return { stage: 3, name: `missing-${scope.replace(':', '-')}`, reason: 'missing_scope', field: null, requirement: 'COND-MISSING-SCOPE', as: SCOPE_ROLE[scope] };
}

/** One missing-scope fault per scope the route requires. */
export const scopeFaults = (route: RouteRef): StageFault[] => route.scopes.map((s) => missingScopeFault(s as keyof typeof SCOPE_ROLE));

/** The scope that best characterises the route (audio: recordings:read; list/encounter: patients:read). */
export function distinctiveScopeFault(route: RouteRef): StageFault {
  const scope = route.name === 'audio' ? 'recordings:read' : route.routeGroup === 'encounters' ? 'patients:read' : 'documents:read';
  return missingScopeFault(scope);
}

// ---------------------------------------------------------------- stage 4

/** Keys the route does not support; every key is unsupported on item routes (§4.2–4.5), even `limit`. */
export function unsupportedKeyFaults(route: RouteRef): StageFault[] {
  const keys = ['owners', 'record_kind', 'date_of_service', 'patient_id', 'q'];
  if (route.name !== 'list') keys.push('limit', 'sort_order');
  return keys.map((k) => ({ stage: 4, name: `unsupported-${k.replaceAll('_', '-')}`, reason: 'unsupported_filter', field: k, requirement: 'COND-UNSUPPORTED-FILTER', query: `${k}=x` }));
}

export const unsupportedKeyFault = (route: RouteRef): StageFault => unsupportedKeyFaults(route)[0];

// ---------------------------------------------------------------- stage 5 (list route only)

const q5 = (name: string, query: string, reason: string, field: string, requirement: string): StageFault => ({ stage: 5, name, reason, field, requirement, query });

export const QUERY_FAULTS: StageFault[] = [
  q5('limit-0', 'limit=0', 'invalid_limit', 'limit', 'COND-INVALID-LIMIT'),
  q5('limit-101', 'limit=101', 'invalid_limit', 'limit', 'COND-INVALID-LIMIT'),
  q5('limit-leading-zero', 'limit=01', 'invalid_limit', 'limit', 'COND-INVALID-LIMIT'),
  q5('limit-plus', 'limit=%2B1', 'invalid_limit', 'limit', 'COND-INVALID-LIMIT'),
  q5('offset-negative', 'offset=-1', 'invalid_offset', 'offset', 'COND-INVALID-OFFSET'),
  q5('offset-10001', 'offset=10001', 'invalid_offset', 'offset', 'COND-INVALID-OFFSET'),
  q5('sort-uppercase', 'sort_order=ASC', 'invalid_sort', 'sort_order', 'COND-INVALID-SORT'),
  q5('sort-unknown', 'sort_order=up', 'invalid_sort', 'sort_order', 'COND-INVALID-SORT'),
  q5('start-at-not-a-date', 'start_at=yesterday', 'invalid_query', 'start_at', 'COND-INVALID-QUERY-DATE'),
  q5('end-at-no-timezone', 'end_at=2025-01-01T00:00:00', 'invalid_query', 'end_at', 'COND-INVALID-QUERY-DATE'),
  q5('start-at-month-13', 'start_at=2025-13-01T00:00:00Z', 'invalid_query', 'start_at', 'COND-INVALID-QUERY-DATE'),
];

export const queryFaultNamed = (name: string): StageFault => {
  const f = QUERY_FAULTS.find((x) => x.name === name);
  if (!f) throw new Error(`no stage-5 fault ${name}`);
  return f;
};

// ---------------------------------------------------------------- stage 6 (item routes only)

const l6 = (name: string, resource: LookupResource, reason: string, requirement: string): StageFault => ({ stage: 6, name, reason, field: null, requirement, resource });

export const UNKNOWN_ENCOUNTER = l6('unknown-encounter', 'unknown_encounter', 'encounter_not_found', 'COND-NOT-FOUND');
export const OTHER_ORG = l6('other-org', 'other_org', 'cross_organization_denied', 'COND-CROSS-ORGANIZATION');
export const DEMO = l6('demo', 'demo', 'demo_training_denied', 'COND-DEMO-TRAINING');
/** The caller's own encounter with a document id of another organization's document. */
export const FOREIGN_DOCUMENT = l6('foreign-document', 'foreign_document', 'document_not_found', 'COND-NOT-FOUND');

export const lookupFaults = (route: RouteRef): StageFault[] =>
  route.name === 'list' ? [] : route.name === 'encounter' ? [UNKNOWN_ENCOUNTER, OTHER_ORG, DEMO] : [UNKNOWN_ENCOUNTER, OTHER_ORG, DEMO, FOREIGN_DOCUMENT];

// ---------------------------------------------------------------- combinations

/** The document each item route reads on the caller's own data (as observe/routes.ts). */
export const OWN_DOCUMENT: Record<'document' | 'transcript' | 'audio', DocumentRole> = {
  document: 'clinical_document', transcript: 'ambient_transcript_with_audio', audio: 'ambient_transcript_with_audio',
};

/** Whether the stage exists on the route: query validation only on the list, lookup only on item routes. */
export function stageApplies(stage: Stage, route: RouteRef): boolean {
  if (stage === 5) return route.name === 'list';
  if (stage === 6) return route.name !== 'list';
  return true;
}

/** The caller a combination needs, or undefined when the profile roles cannot express it. */
export function callerFor(c: Combination): CredentialRole | 'none' | undefined {
  const [s1, s2, s3] = [c[1], c[2], c[3]];
  if (s1?.as) return s2 || s3 ? undefined : s1.as;
  if (s2 && s3) {
    // Only the order-of-evaluation roles combine a stage-2 fault with missing scopes (they hold no scope).
    if (s2.as === 'not_org_scoped') return 'no_scopes_not_org_scoped';
    if (s2.as === 'org_not_allowlisted') return 'no_scopes_org_not_allowlisted';
    if (s2.as === 'encounter_routes_disabled') return 'no_scopes_encounter_routes_disabled';
    if (s2.as === 'document_routes_disabled') return 'no_scopes_document_routes_disabled';
    return undefined;
  }
  return s2?.as ?? s3?.as ?? 'full';
}

export function expressible(c: Combination, route: RouteRef): boolean {
  for (const s of STAGES) if (c[s] && (!stageApplies(s, route) || c[s]!.stage !== s)) return false;
  return callerFor(c) !== undefined;
}

/** The fault whose reason the contract demands: the earliest faulty stage; undefined = success. */
export function earliest(c: Combination): StageFault | undefined {
  for (const s of STAGES) if (c[s]) return c[s];
  return undefined;
}

export interface BuiltRequest { target: string; as: As; faults: FaultName[] }

function itemPath(api: CheckApi, route: RouteRef, resource: LookupResource | undefined): string {
  if (route.name === 'encounter') {
    const role = resource === undefined ? 'own_encounter' : resource === 'other_org' ? 'other_org_encounter' : resource === 'demo' ? 'demo_encounter' : 'unknown_encounter';
    return route.pathFor(api.encounter(role));
  }
  const own = api.document(OWN_DOCUMENT[route.name as 'document' | 'transcript' | 'audio']);
  switch (resource) {
    case undefined: return route.pathFor(own.encounter_id, own.document_id);
    case 'unknown_encounter': return route.pathFor(api.encounter('unknown_encounter'), own.document_id);
    case 'other_org': { const d = api.document('other_org_document'); return route.pathFor(d.encounter_id, d.document_id); }
    case 'demo': { const d = api.document('demo_document'); return route.pathFor(d.encounter_id, d.document_id); }
    case 'foreign_document': return route.pathFor(own.encounter_id, api.document('other_org_document').document_id);
  }
}

/**
 * Builds the request of a combination. Roles the profile lacks end the check as not_verified (through
 * CheckApi). The query puts the later stage's pair first, so a target that walks the query in order and
 * stops at the first problem is still caught.
 */
export function requestFor(api: CheckApi, route: RouteRef, c: Combination): BuiltRequest {
  if (!expressible(c, route)) throw new Error(`combination not expressible on ${route.name}: ${describeCombination(c)}`);
  const as = callerFor(c)!;
  const faults = c[1]?.env ? [c[1].env] : [];
  for (const f of faults) api.fault(f);
  if (as !== 'none' && !api.callerReplaced(faults)) api.key(as);
  const path = route.name === 'list' ? route.pathFor('') : itemPath(api, route, c[6]?.resource);
  const pairs = [c[5]?.query, c[4]?.query].filter((p): p is string => p !== undefined);
  const target = pairs.length > 0 ? `${path}?${pairs.join('&')}` : path;
  // A condition in a form that cannot join this caller or request (a key of its own, one document) is not built.
  for (const f of faults) api.carries(f, as, target);
  return { target, as, faults };
}

export function describeCombination(c: Combination): string {
  const parts = STAGES.filter((s) => c[s]).map((s) => `${s}:${c[s]!.name}`);
  return parts.length > 0 ? parts.join(' + ') : 'no fault';
}
