// Fabricated report inputs for the report-writer tests: a small catalog, a run's outcomes with one
// check of every outcome (one failing with full request/response evidence), and a run context.
// Self-contained: it does not depend on the real catalog, which other people are still writing.
import type { Catalog, CollectedCheck, OutcomesFile, RunContext, Waiver } from '../../reports/model.ts';

export const CATALOG: Catalog = {
  spec: 'clinical-encounter-public-api.md',
  requirements: [
    { id: 'AUTH-401-MISSING-BEARER', section: '5', area: 'auth', statement: 'A request without a bearer token answers 401 missing_bearer.', level: 'must' },
    { id: 'AUTH-401-INVALID-KEY', section: '5', area: 'auth', statement: 'An unknown key answers 401 invalid_key.', level: 'must' },
    { id: 'LIST-LIMIT-DEFAULT', section: '4.1', area: 'list', statement: 'limit defaults to 50.', level: 'must' },
    { id: 'LIST-LIMIT-CANONICAL', section: '4.1', area: 'list', statement: 'limit must be a canonical integer.', level: 'must' },
    { id: 'AUDIO-URL-SHORT-LIVED', section: '2.6', area: 'audio', statement: 'audio_url is a short-lived signed URL.', level: 'must' },
    { id: 'LIST-ORDER-TIES', section: '4.1', area: 'list', statement: 'The order of ties: not shown.', level: 'unspecified' },
    { id: 'VERSION-HEADER', section: '9', area: 'versioning', statement: 'The version is v1.', level: 'must' },
  ],
};

export const FAILING_EVIDENCE = [
  {
    request: { method: 'GET', target: '/external/v1/encounters?limit=%2B1', headers: { authorization: 'Bearer [REDACTED]', accept: 'application/json' } },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"items":[],"limit":1,"offset":0,"total":0,"note":"<script>alert(1)</script>"}', bodyBytes: 70, durationMs: 12.3 },
  },
];

export function check(id: string, outcome: CollectedCheck['outcome'], requirements: string[], extra: Partial<CollectedCheck> = {}): CollectedCheck {
  return { id, requirements, title: `${id} holds`, outcome, project: 'conformance', file: 'suites/fake.spec.ts', test: id, ...extra };
}

export function outcomes(checks: CollectedCheck[] = defaultChecks(), extra: Partial<OutcomesFile> = {}): OutcomesFile {
  return {
    startedAt: '2026-01-02T03:04:05.000Z', finishedAt: '2026-01-02T03:05:00.000Z', runStatus: checks.some((c) => c.outcome === 'fail') ? 'failed' : 'passed',
    seed: null, shard: null, target: { name: 'fabricated', baseUrl: 'http://127.0.0.1:9' }, checks, testFailures: [], runErrors: [], ...extra,
  };
}

export function defaultChecks(): CollectedCheck[] {
  return [
    check('auth-missing-bearer-list', 'pass', ['AUTH-401-MISSING-BEARER']),
    check('auth-invalid-key-list', 'not_verified', ['AUTH-401-INVALID-KEY'], { detail: 'profile lacks credential invalid_key', lacks: 'credentials.invalid_key' }),
    check('list-limit-default', 'pass', ['LIST-LIMIT-DEFAULT']),
    check('list-limit-rejects-plus-sign', 'fail', ['LIST-LIMIT-CANONICAL'], {
      title: 'limit=+1 answers 400 invalid_query_parameter', detail: 'Undocumented success: expected 400, got 200', evidence: FAILING_EVIDENCE,
    }),
    check('list-order-of-ties', 'informational', ['LIST-ORDER-TIES'], { detail: 'ties ordered by id ascending', seed: '42' }),
  ];
}

export function context(extra: Partial<RunContext> = {}): RunContext {
  return {
    harnessVersion: '0.1.0', target: null, contractSha256: 'a'.repeat(64), catalogSha256: 'b'.repeat(64),
    catalog: CATALOG, waivers: [], mutation: null, today: '2026-01-02', warnings: [], ...extra,
  };
}

export function waiver(id: string, expires = '2026-12-31'): Waiver {
  return { id, reason: 'tracked in TICKET-1', owner: 'api-team', expires };
}
