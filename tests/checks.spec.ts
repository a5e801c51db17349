// The outcome model: runCheck against a fake TestInfo (annotations, attach, skip only), so the tests
// depend on nothing internal to Playwright.
import type { TestInfo } from '@playwright/test';
import { test, expect } from '@playwright/test';
import { runCheck } from '../engine/evaluate.ts';
import { defineCheck, type Declaration } from '../engine/registry.ts';
import { CheckFailure, NotVerified, OUTCOMES, evidenceOf, type CheckDef, type Exchange } from '../record/record.ts';
import { declaration, declaredChecks } from '../engine/registry.ts';
import { declared } from './helpers/declared.ts';
import { registerSecret, REDACTED } from '../record/redact.ts';

class SkipMarker extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SkipMarker';
  }
}

interface Fake {
  testInfo: TestInfo;
  annotations: { type: string; description?: string }[];
  attachments: { name: string; body: string; contentType?: string }[];
}

function fakeTestInfo(): Fake {
  const annotations: { type: string; description?: string }[] = [];
  // Evidence is pushed onto testInfo.attachments (no attach() step); read back with the body as text.
  const raw: { name: string; body?: string | Buffer; contentType?: string }[] = [];
  const info = {
    annotations,
    attachments: raw,
    attach: async () => {
      throw new Error('attach() opens a step per call: evidence is pushed onto testInfo.attachments');
    },
    skip: (cond: boolean, reason: string) => {
      if (cond) throw new SkipMarker(reason);
    },
  };
  return {
    testInfo: info as unknown as TestInfo, annotations,
    get attachments() {
      return raw.map((a) => ({ name: a.name, body: String(a.body), contentType: a.contentType }));
    },
  };
}

/** A check's identity, not declared. */
function literal(id: string, title = `Rule of ${id}`): Declaration {
  return { id, subject: 'service', requirements: ['PUB-ERR-001', 'PUB-ERR-002'], title, probe: true };
}

/** A declared check (once per id and worker: the registry is per process and refuses a second declaration). */
function def(id: string, title = `Rule of ${id}`): CheckDef {
  return declared(id, title, ['PUB-ERR-001', 'PUB-ERR-002']);
}

function parsed(a: { description?: string }): { id: string; requirements: string[]; title: string; detail?: string } {
  return JSON.parse(a.description!);
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

test('the five outcomes', () => {
  expect(OUTCOMES).toEqual(['pass', 'fail', 'warning', 'not_verified', 'informational']);
});

test('a passing check records check:pass with a JSON description', async () => {
  const f = fakeTestInfo();
  const rec = await runCheck(f.testInfo, def('checks-pass'), async () => {});
  expect(rec).toEqual({ ...def('checks-pass'), outcome: 'pass' });
  expect(f.annotations).toHaveLength(1);
  expect(f.annotations[0].type).toBe('check:pass');
  // The check's own time rides in its record: a test may host many checks (engine/planner.ts batches).
  expect(parsed(f.annotations[0])).toEqual({ id: 'checks-pass', requirements: ['PUB-ERR-001', 'PUB-ERR-002'], title: 'Rule of checks-pass', durationMs: expect.any(Number) });
  expect(f.attachments).toEqual([]); // no exchange recorded, no evidence
});

test('a CheckFailure records check:fail with the titles and ends the test without throwing (the runner keeps its worker)', async () => {
  const f = fakeTestInfo();
  const rec = await runCheck(f.testInfo, def('checks-fail', 'Limit must be canonical'), async () => {
    throw new CheckFailure('Expected 422 invalid_limit', 'got 200 for ?limit=01');
  });
  expect(rec).toMatchObject({ id: 'checks-fail', outcome: 'fail', detail: 'Expected 422 invalid_limit: got 200 for ?limit=01' });
  expect(f.annotations.map((a) => a.type)).toEqual(['check:fail']);
  const d = parsed(f.annotations[0]);
  expect(d.id).toBe('checks-fail');
  expect(d.title).toBe('Limit must be canonical');
  expect(d.requirements).toEqual(['PUB-ERR-001', 'PUB-ERR-002']);
  expect(d.detail).toBe('Expected 422 invalid_limit: got 200 for ?limit=01');
});

test('CheckFailure carries title and detail', () => {
  const e = new CheckFailure('Wrong field for invalid_limit', 'expected "limit", got null');
  expect(e).toBeInstanceOf(Error);
  expect(e.name).toBe('CheckFailure');
  expect(e.title).toBe('Wrong field for invalid_limit');
  expect(e.detail).toBe('expected "limit", got null');
  expect(e.message).toBe('Wrong field for invalid_limit: expected "limit", got null');
  expect(new CheckFailure('Only a title').message).toBe('Only a title');
});

test('any other error is a failure too (harness defect) and is re-thrown as is', async () => {
  const f = fakeTestInfo();
  const boom = new TypeError('cannot read properties of undefined');
  const e = await rejection(runCheck(f.testInfo, def('checks-harness-error'), async () => {
    throw boom;
  }));
  expect(e).toBe(boom);
  expect(f.annotations[0].type).toBe('check:fail');
  expect(parsed(f.annotations[0]).detail).toMatch(/^harness error: TypeError: cannot read properties of undefined/);
});

test('NotVerified records not_verified and skips the test', async () => {
  const f = fakeTestInfo();
  const e = await rejection(runCheck(f.testInfo, def('checks-not-verified'), async () => {
    throw new NotVerified('profile lacks fault switch \'api_keys_disabled\'');
  }));
  expect(e).toBeInstanceOf(SkipMarker);
  expect(e.message).toBe('not_verified: profile lacks fault switch \'api_keys_disabled\'');
  expect(f.annotations.map((a) => a.type)).toEqual(['check:not_verified']);
  expect(parsed(f.annotations[0]).detail).toBe('profile lacks fault switch \'api_keys_disabled\'');
});

test('need() returns present values and ends the check as not_verified for absent ones', async () => {
  const f = fakeTestInfo();
  const seen: unknown[] = [];
  const e = await rejection(runCheck(f.testInfo, def('checks-need'), async (scope) => {
    seen.push(scope.need('k', 'a'), scope.need(0, 'zero'), scope.need('', 'empty'));
    scope.need(undefined, "credential role 'revoked_key'");
    seen.push('unreachable');
  }));
  expect(seen).toEqual(['k', 0, '']);
  expect(e).toBeInstanceOf(SkipMarker);
  expect(f.annotations[0].type).toBe('check:not_verified');
  expect(parsed(f.annotations[0]).detail).toBe("profile lacks credential role 'revoked_key'");

  const g = fakeTestInfo();
  await rejection(runCheck(g.testInfo, def('checks-need'), async (scope) => {
    scope.need(null, 'x');
  }));
  expect(g.annotations[0].type).toBe('check:not_verified');
});

test('observe() makes the outcome informational with what was observed', async () => {
  const f = fakeTestInfo();
  const rec = await runCheck(f.testInfo, def('checks-observe'), async (scope) => {
    scope.observe('limit=0 answered 200');
    scope.observe('items empty');
  });
  expect(rec.outcome).toBe('informational');
  expect(rec.detail).toBe('limit=0 answered 200; items empty');
  expect(f.annotations.map((a) => a.type)).toEqual(['check:informational']);
  expect(parsed(f.annotations[0]).detail).toBe('limit=0 answered 200; items empty');
});

test('a failure after observe() is still a failure', async () => {
  const f = fakeTestInfo();
  expect((await runCheck(f.testInfo, def('checks-observe-then-fail'), async (scope) => {
    scope.observe('something');
    throw new CheckFailure('Broken');
  })).outcome).toBe('fail');
  expect(f.annotations.map((a) => a.type)).toEqual(['check:fail']);
});

const SECRET = 'sk_live_checksSpec_9f8e7d6c5b4a';
const OTHER_BEARER = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

function secretExchange(): Exchange {
  return {
    request: {
      method: 'GET',
      target: '/external/v1/encounters/e1/documents/d1/audio',
      headers: { authorization: `Bearer ${SECRET}`, 'x-forwarded-token': encodeURIComponent(SECRET) },
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-echo': `Bearer ${OTHER_BEARER}` },
      body: JSON.stringify({
        audio_url: 'https://storage.example.test/audio/d1.m4a?expires=1700000000&sig=0a1b2c3d4e5f',
        expires_at: '2030-01-01T00:00:00Z',
        note: `echo ${Buffer.from(SECRET).toString('base64')}`,
      }),
      bodyBytes: 200,
      durationMs: 12,
    },
  };
}

test('recorded exchanges are attached as evidence:<id>, redacted', async () => {
  registerSecret(SECRET);
  const f = fakeTestInfo();
  await runCheck(f.testInfo, def('checks-evidence'), async (scope) => {
    scope.record(secretExchange());
    scope.record({ request: { method: 'GET', target: '/x', headers: {} }, error: { kind: 'timeout', message: 'no complete response within 300 ms' } });
  });
  expect(f.attachments).toHaveLength(1);
  const a = f.attachments[0];
  expect(a.name).toBe('evidence:checks-evidence');
  expect(a.contentType).toBe('application/json');
  for (const leak of [SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString('base64'), OTHER_BEARER, 'sig=0a1b2c3d4e5f', 'storage.example.test']) {
    expect(a.body).not.toContain(leak);
  }
  expect(a.body).toContain(REDACTED);
  const evidence = JSON.parse(a.body) as Exchange[];
  expect(evidence).toHaveLength(2);
  expect(evidence[0].request.target).toBe('/external/v1/encounters/e1/documents/d1/audio');
  expect(evidence[0].request.headers.authorization).toBe(`Bearer ${REDACTED}`);
  expect(JSON.parse(evidence[0].response!.body)).toMatchObject({ audio_url: REDACTED, expires_at: '2030-01-01T00:00:00Z' });
  expect(evidence[1].error!.kind).toBe('timeout');
});

test('evidence is attached on failure too, and the failure text is redacted', async () => {
  registerSecret(SECRET);
  const f = fakeTestInfo();
  const rec = await runCheck(f.testInfo, def('checks-evidence-fail'), async (scope) => {
    scope.record(secretExchange());
    throw new CheckFailure('Expected 401 revoked_key', `sent Bearer ${SECRET}`);
  });
  expect(rec.outcome).toBe('fail');
  expect(rec.detail).not.toContain(SECRET);
  expect(f.annotations[0].description).not.toContain(SECRET);
  expect(f.attachments.map((x) => x.name)).toEqual(['evidence:checks-evidence-fail']);
  expect(f.attachments[0].body).not.toContain(SECRET);
});

test('evidence of a not_verified check is attached before the skip', async () => {
  const f = fakeTestInfo();
  await rejection(runCheck(f.testInfo, def('checks-evidence-skip'), async (scope) => {
    scope.record({ request: { method: 'GET', target: '/y', headers: {} } });
    throw new NotVerified('profile lacks x');
  }));
  expect(f.attachments.map((x) => x.name)).toEqual(['evidence:checks-evidence-skip']);
});

test('evidenceOf truncates long bodies and keeps the byte count', () => {
  const body = 'a'.repeat(20_000);
  const out = JSON.parse(evidenceOf([{ request: { method: 'GET', target: '/', headers: {} }, response: { status: 200, headers: {}, body, bodyBytes: 20_000, durationMs: 1 } }])) as Exchange[];
  expect(out[0].response!.body.length).toBeLessThan(9000);
  expect(out[0].response!.body).toContain('[truncated, 20000 bytes]');
});

test.describe('defineCheck', () => {
  for (const bad of ['Bad-Id', 'bad_id', 'trailing-', '-leading', 'double--dash', 'has space', '']) {
    test(`rejects the non-kebab id ${JSON.stringify(bad)}`, () => {
      expect(() => defineCheck(literal(bad))).toThrow(/kebab-case/);
    });
  }

  test('accepts kebab ids with digits', () => {
    expect(defineCheck(literal('limit-101-rejected')).id).toBe('limit-101-rejected');
  });

  test('rejects an empty requirement list', () => {
    expect(() => defineCheck({ id: 'checks-no-requirement', subject: 'service', requirements: [], title: 'x' })).toThrow(/names no requirement/);
  });

  test('refuses a second declaration of an id, whatever its title; the first stays', () => {
    defineCheck(literal('checks-duplicate', 'First title'));
    expect(() => defineCheck(literal('checks-duplicate', 'First title'))).toThrow(/duplicate check id checks-duplicate/);
    expect(() => defineCheck(literal('checks-duplicate', 'Second title'))).toThrow(/duplicate check id checks-duplicate/);
    expect(declaration('checks-duplicate')?.title).toBe('First title');
    // A probe of the project's own tests runs like any check, but nothing is derived from it.
    expect(declaredChecks().some((d) => d.id === 'checks-duplicate')).toBe(false);
  });

  test('runCheck runs only a declared check: an undeclared id, or a declared id with another identity, is a harness error', async () => {
    const f = fakeTestInfo();
    await expect(runCheck(f.testInfo, literal('checks-never-declared'), async () => {})).rejects.toThrow(/not declared through defineCheck/);
    defineCheck(literal('checks-run-duplicate', 'One'));
    await expect(runCheck(f.testInfo, literal('checks-run-duplicate', 'Two'), async () => {})).rejects.toThrow(/not declared through defineCheck/);
    expect(f.annotations).toEqual([]);
  });
});

test('warn() makes the outcome warning (a should not met), outranking an observation; note() keeps a pass and its detail', async () => {
  const f = fakeTestInfo();
  const warned = await runCheck(f.testInfo, def('checks-warn'), async (scope) => {
    scope.observe('answered 500');
    scope.warn('a 500 invites a retry');
  });
  expect(warned).toMatchObject({ outcome: 'warning', detail: 'a 500 invites a retry; observed: answered 500' });
  expect(f.annotations[0].type).toBe('check:warning');
  const g = fakeTestInfo();
  const noted = await runCheck(g.testInfo, def('checks-note'), async (scope) => {
    scope.note('rejected with 422 invalid_query');
  });
  expect(noted).toMatchObject({ outcome: 'pass', detail: 'rejected with 422 invalid_query' });
  expect(g.annotations[0].type).toBe('check:pass');
  const h = fakeTestInfo();
  const failed = await runCheck(h.testInfo, def('checks-warn-fail'), async (scope) => {
    scope.warn('should');
    throw new CheckFailure('Decided rule broken', 'x');
  });
  expect(failed.outcome).toBe('fail');
  expect(h.annotations[0].type).toBe('check:fail');
});

test('a check the breaker ended is recorded fail with the attempts as evidence and marked `breaker`, without throwing or skipping (no worker restart)', async () => {
  const { TargetStoppedAnswering } = await import('../observe/target.ts');
  const attempts = [0, 1, 2].map((i) => ({ request: { method: 'GET', target: `/t${i}`, headers: {} }, error: { kind: 'timeout', message: 'no complete response within 10000 ms' }, at: '2026-01-01T00:00:00Z' }));
  const f = fakeTestInfo();
  const rec = await runCheck(f.testInfo, def('checks-breaker-ended'), async (scope) => {
    const stop = new TargetStoppedAnswering(attempts);
    for (const x of stop.exchanges()) scope.record(x);
    throw stop;
  });
  expect(rec.outcome).toBe('fail');
  expect(f.annotations.map((a) => a.type)).toEqual(['check:fail']);
  expect(parsed(f.annotations[0]).detail).toMatch(/^target stopped answering: 3 consecutive requests got no answer/);
  expect((parsed(f.annotations[0]) as { breaker?: boolean }).breaker).toBe(true);
  expect((JSON.parse(f.attachments[0].body) as Exchange[]).map((x) => x.error?.kind)).toEqual(['timeout', 'timeout', 'timeout']);
  // A decided failure is neither skipped nor thrown: recorded fail, the test ends (the summary counts it failed).
  const g = fakeTestInfo();
  expect((await runCheck(g.testInfo, def('checks-breaker-other'), async () => {
    throw new CheckFailure('Broken');
  })).outcome).toBe('fail');
  expect(g.annotations.map((a) => a.type)).toEqual(['check:fail']);
});
