// Self-tests of the report writers (reports/model.ts, junit.ts, write.ts): requirement statuses, waivers,
// coverage, the summary line, JUnit structure, and a written conformance.json validated against its
// JSON Schema (ajv 2020, strict). Fabricated inputs only; the real catalog is used when it exists.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildReport, summaryLine, mergeOutcomes } from '../reports/model.ts';
import { toJunit } from '../reports/junit.ts';
import { writeReports } from '../reports/write.ts';
import { loadCatalog, loadWaivers, WaiverError } from '../reports/context.ts';
import { CATALOG, check, context, outcomes, waiver } from './helpers/report-data.ts';
import { withStdout } from './helpers/env.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ROOT = path.resolve(import.meta.dirname, '..');
const SCHEMA = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/report/conformance-report.schema.json'), 'utf8'));

function validator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(SCHEMA);
}

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cec-report-'));
}

test.describe('requirement status', () => {
  test('follows the checks that name it, and not_covered without any', () => {
    const r = buildReport(outcomes(), context());
    const status = Object.fromEntries(r.requirements.map((x) => [x.id, x.status]));
    expect(status).toEqual({
      'AUTH-401-MISSING-BEARER': 'pass', 'AUTH-401-INVALID-KEY': 'not_verified', 'LIST-LIMIT-DEFAULT': 'pass',
      'LIST-LIMIT-CANONICAL': 'fail', 'AUDIO-URL-SHORT-LIVED': 'not_covered', 'LIST-ORDER-TIES': 'informational', 'VERSION-HEADER': 'not_covered',
    });
    expect(r.requirements.find((x) => x.id === 'LIST-LIMIT-CANONICAL')!.checks).toEqual(['list-limit-rejects-plus-sign']);
  });

  test('a failure outweighs passes and not_verified outweighs passes', () => {
    const r = buildReport(outcomes([
      check('a-pass', 'pass', ['LIST-LIMIT-DEFAULT']), check('a-fail', 'fail', ['LIST-LIMIT-DEFAULT']),
      check('b-pass', 'pass', ['VERSION-HEADER']), check('b-nv', 'not_verified', ['VERSION-HEADER']),
      check('c-pass', 'pass', ['AUDIO-URL-SHORT-LIVED']), check('c-info', 'informational', ['AUDIO-URL-SHORT-LIVED']),
    ]), context());
    const status = Object.fromEntries(r.requirements.map((x) => [x.id, x.status]));
    expect(status['LIST-LIMIT-DEFAULT']).toBe('fail');
    expect(status['VERSION-HEADER']).toBe('not_verified');
    expect(status['AUDIO-URL-SHORT-LIVED']).toBe('pass');
  });

  test('coverage counts must requirements only and lists the uncovered ids', () => {
    const r = buildReport(outcomes(), context());
    expect(r.coverage).toEqual({
      mustTotal: 6, mustCovered: 4, uncovered: ['AUDIO-URL-SHORT-LIVED', 'VERSION-HEADER'], notTested: {}, notObservable: [],
      mustInScope: 6, mustVerified: 2, mustNotVerified: ['AUTH-401-INVALID-KEY', 'AUDIO-URL-SHORT-LIVED', 'VERSION-HEADER'], outOfScope: [],
    });
  });

  test('an uncovered must requirement carries its reviewed notTested reason', () => {
    const r = buildReport(outcomes(), { ...context(), notTested: { 'VERSION-HEADER': 'deployment fact', 'UNRELATED-ID': 'x' } });
    expect(r.coverage.notTested).toEqual({ 'VERSION-HEADER': 'deployment fact' });
  });

  test('summary, verdict and the plain summary line', () => {
    const r = buildReport(outcomes(), context());
    expect(r.summary).toEqual({ pass: 2, fail: 1, warning: 0, not_verified: 1, informational: 1, waived: 0 });
    expect(r.verdict).toBe('not_conformant');
    expect(summaryLine(r.summary)).toBe('conformance: 2 passed, 1 failed, 0 warnings, 1 not verified, 1 informational');
    expect(summaryLine({ ...r.summary, fail: 0, waived: 1 })).toBe('conformance: 2 passed, 0 failed, 0 warnings, 1 not verified, 1 informational, 1 waived');
    expect(r.run.seeds).toEqual(['42']);
  });

  test('a check naming a requirement the catalog lacks is a warning', () => {
    const r = buildReport(outcomes([check('x', 'pass', ['NO-SUCH-REQ'])]), context());
    expect(r.warnings.join('\n')).toContain('NO-SUCH-REQ (check x)');
  });

  test('a test failing outside any check, an interrupted run, or no check at all is a problem', () => {
    const r = buildReport(outcomes([check('a', 'pass', ['VERSION-HEADER'])], {
      testFailures: [{ project: 'properties', file: 'properties/x.spec.ts', test: 'prop', error: 'Property failed after 3 tests' }], runStatus: 'interrupted',
    }), context());
    expect(r.problems).toHaveLength(2);
    expect(r.verdict).toBe('not_conformant');
    expect(buildReport(outcomes([]), context()).problems).toContain('no check ran');
  });

  test('without a catalog the report still lists the checks and says so', () => {
    const r = buildReport(outcomes(), context({ catalog: null, catalogSha256: null }));
    expect(r.requirements).toEqual([]);
    expect(r.checks).toHaveLength(5);
    expect(r.warnings.join('\n')).toContain('catalog was not found');
  });

  test('the mutation result becomes a score', () => {
    const r = buildReport(outcomes(), context({ mutation: { total: 8, caught: 6, survivors: ['omit-total', 'limit-off-by-one'], unproven: ['list-order-of-ties'] } }));
    expect(r.mutation).toEqual({ score: 0.75, caught: 6, total: 8, survivors: ['omit-total', 'limit-off-by-one'], unproven: ['list-order-of-ties'] });
    expect(buildReport(outcomes(), context()).mutation).toBeNull();
  });
});

test.describe('waivers', () => {
  test('a waiver by check id turns the failure into waived, keeps it listed with its evidence, and nothing fails', () => {
    const r = buildReport(outcomes(), context({ waivers: [waiver('list-limit-rejects-plus-sign')] }));
    const c = r.checks.find((x) => x.id === 'list-limit-rejects-plus-sign')!;
    expect(c).toMatchObject({ outcome: 'waived', recorded: 'fail', waiver: { id: 'list-limit-rejects-plus-sign' } });
    expect(c.evidence).toBeTruthy();
    expect(r.summary.fail).toBe(0);
    expect(r.summary.waived).toBe(1);
    expect(r.requirements.find((x) => x.id === 'LIST-LIMIT-CANONICAL')!.status).toBe('waived');
    // Nothing fails un-waived; two must requirements have no check and one is not verified: INCOMPLETE, not CONFORMANT.
    expect(r.verdict).toBe('incomplete');
    expect(r.waivers.applied).toEqual([{ ...waiver('list-limit-rejects-plus-sign'), checks: ['list-limit-rejects-plus-sign'] }]);
  });

  test('a waiver by requirement id waives the failing checks that name it', () => {
    const r = buildReport(outcomes(), context({ waivers: [waiver('LIST-LIMIT-CANONICAL')] }));
    expect(r.checks.find((x) => x.id === 'list-limit-rejects-plus-sign')!.outcome).toBe('waived');
  });

  test('the waiver applies through its expiry day and not after', () => {
    expect(buildReport(outcomes(), context({ today: '2026-03-01', waivers: [waiver('LIST-LIMIT-CANONICAL', '2026-03-01')] })).verdict).toBe('incomplete');
    const r = buildReport(outcomes(), context({ today: '2026-03-02', waivers: [waiver('LIST-LIMIT-CANONICAL', '2026-03-01')] }));
    expect(r.verdict).toBe('not_conformant');
    expect(r.summary.fail).toBe(1);
    expect(r.waivers.expired).toEqual([waiver('LIST-LIMIT-CANONICAL', '2026-03-01')]);
    expect(r.problems.join('\n')).toContain('waiver LIST-LIMIT-CANONICAL (owner api-team) expired on 2026-03-01');
  });

  test('an expired waiver fails the run even when nothing fails', () => {
    const r = buildReport(outcomes([check('a', 'pass', ['VERSION-HEADER'])]), context({ waivers: [waiver('VERSION-HEADER', '2025-01-01')] }));
    expect(r.verdict).toBe('not_conformant');
  });

  test('a waiver that matches nothing is a warning, not a failure', () => {
    const r = buildReport(outcomes([check('a', 'pass', ['VERSION-HEADER'])]), context({ waivers: [waiver('NOPE-1'), waiver('a')] }));
    expect(r.verdict).toBe('incomplete');
    expect(r.problems).toEqual([]);
    expect(r.waivers.unmatched.map((w) => [w.id, w.why])).toEqual([
      ['NOPE-1', 'names no requirement of the catalog and no check of this run'],
      ['a', 'no failing check to waive (fixed, or not run)'],
    ]);
    expect(r.warnings).toHaveLength(2);
  });

  test('the waiver file is validated against its schema, naming the field', () => {
    const dir = tmp();
    const write = (name: string, data: unknown) => {
      const f = path.join(dir, name);
      fs.writeFileSync(f, typeof data === 'string' ? data : JSON.stringify(data));
      return f;
    };
    expect(loadWaivers(write('ok.json', [waiver('X')]))).toEqual([waiver('X')]);
    expect(() => loadWaivers(write('no-owner.json', [{ id: 'X', reason: 'r', expires: '2026-01-01' }]))).toThrow(/field \/0 must have required property 'owner'/);
    expect(() => loadWaivers(write('bad-date.json', [{ ...waiver('X'), expires: '2026-13-01' }]))).toThrow(/field \/0\/expires/);
    expect(() => loadWaivers(write('feb31.json', [{ ...waiver('X'), expires: '2026-02-31' }]))).toThrow(/does not exist/);
    expect(() => loadWaivers(write('broken.json', '[{'))).toThrow(WaiverError);
    expect(() => loadWaivers(path.join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });
});

test.describe('JUnit', () => {
  // The JUnit shape (classnames, times, failure messages, outcomes, the schema) is tested in tests/junit.spec.ts.
  test('escapes markup and drops characters XML cannot carry', () => {
    const xml = toJunit(buildReport(outcomes([check('x', 'fail', ['VERSION-HEADER'], { detail: 'got <b>&"\'\u0001' })]), context()));
    expect(xml).toContain('got &lt;b&gt;&amp;&quot;&apos;\uFFFD');
  });
});

test.describe('conformance.json', () => {
  test('a written report validates against fixtures/report/conformance-report.schema.json', () => {
    const validate = validator();
    const dir = tmp();
    const ctx = context({ waivers: [waiver('LIST-LIMIT-CANONICAL'), waiver('NOPE-1'), waiver('VERSION-HEADER', '2020-01-01')], mutation: { total: 2, caught: 1, survivors: ['m'], unproven: [] } });
    writeReports(dir, outcomes(undefined, { seed: '7', shard: '1/2' }), ctx);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    for (const f of ['junit.xml', 'conformance.html']) expect(fs.existsSync(path.join(dir, f))).toBe(true);
    // The schema is closed: an unknown field is rejected.
    expect(validate({ ...report, extra: 1 })).toBe(false);
  });

  test('a report over the real catalog validates too (when the catalog exists)', () => {
    const catalog = loadCatalog();
    test.skip(!catalog, 'fixtures/requirements/requirements.json is not there yet');
    const validate = validator();
    const id = catalog!.requirements[0].id;
    const r = buildReport(outcomes([check('real-catalog-check', 'pass', [id])]), context({ catalog }));
    expect(validate(JSON.parse(JSON.stringify(r))), JSON.stringify(validate.errors)).toBe(true);
    // A service run's rows: the catalog rows that bind the service (receiver and client rows are other runs' scope).
    expect(r.run.subject).toBe('service');
    expect(r.requirements).toHaveLength(catalog!.requirements.filter((x) => (x.subjects ?? ['service']).includes('service')).length);
    expect(r.requirements.length).toBeLessThan(catalog!.requirements.length);
  });

  test('merging shards concatenates checks, keeps the earliest start and the worst status', () => {
    const a = outcomes([check('a', 'pass', ['VERSION-HEADER'])], { shard: '1/2', startedAt: '2026-01-02T03:00:00.000Z', finishedAt: '2026-01-02T03:10:00.000Z', runStatus: 'passed', seed: '5' });
    const b = outcomes([check('b', 'fail', ['LIST-LIMIT-DEFAULT'])], { shard: '2/2', startedAt: '2026-01-02T03:01:00.000Z', finishedAt: '2026-01-02T03:20:00.000Z', runStatus: 'failed', seed: '5' });
    const m = mergeOutcomes([a, b]);
    expect(m).toMatchObject({ startedAt: '2026-01-02T03:00:00.000Z', finishedAt: '2026-01-02T03:20:00.000Z', runStatus: 'failed', seed: '5', shard: '1/2,2/2' });
    expect(m.checks.map((c) => c.id)).toEqual(['a', 'b']);
    expect(buildReport(m, context()).run.shards).toEqual(['1/2', '2/2']);
  });

  test('the fabricated catalog is internally consistent', () => {
    expect(new Set(CATALOG.requirements.map((r) => r.id)).size).toBe(CATALOG.requirements.length);
  });
});

test.describe('summary reporter', () => {
  // A fabricated failed test: the digest names file:line and title, keeps the first error lines without
  // colour codes, and redacts a registered secret.
  test('the failure digest names the test and the first lines of its error, redacted', async () => {
    const { failureDigest } = await import('../reports/summary-reporter.ts');
    const { registerSecret } = await import('../record/redact.ts');
    registerSecret('cek_live_digestsecret_0123456789abcdef');
    const testCase = { location: { file: path.join(process.cwd(), 'tests/x.spec.ts'), line: 7 }, titlePath: () => ['', 'unit', 'x.spec.ts', 'serve', 'stops'] };
    const result = { status: 'timedOut', errors: [{ message: '\u001b[31mTest timeout of 240000ms exceeded.\u001b[39m\n\nkey cek_live_digestsecret_0123456789abcdef\nline3\nline4\nline5' }] };
    const line = failureDigest(testCase as never, result as never);
    expect(line).toBe('FAILED tests/x.spec.ts:7 › serve › stops: Test timeout of 240000ms exceeded. / key [REDACTED] / line3 / line4');
  });

  test('a batch of checks (declared by engine/playwright/fixtures.ts) is named by its suite file, not by fixtures.ts', async () => {
    const { failureDigest } = await import('../reports/summary-reporter.ts');
    const fileSuite = { type: 'file', location: { file: path.join(process.cwd(), 'checks/service/errors.ts'), line: 0 }, parent: { type: 'project' } };
    const batch = { location: { file: path.join(process.cwd(), 'engine/playwright/fixtures.ts'), line: 219 }, parent: { type: 'describe', parent: fileSuite }, titlePath: () => ['', 'conformance', 'checks/service/errors.ts', 'errors [1]'] };
    const line = failureDigest(batch as never, { status: 'failed', errors: [{ message: 'boom' }] } as never);
    expect(line).toBe('FAILED checks/service/errors.ts › checks/service/errors.ts › errors [1]: boom');
  });

  test('the summary counts a test whose check failed as failed (the test itself ended without throwing) and fails the run', async () => {
    const { default: SummaryReporter } = await import('../reports/summary-reporter.ts');
    const reporter = new SummaryReporter();
    const tc = (id: string, outcome: string) => ({ id, outcome: () => outcome, location: { file: path.join(process.cwd(), 'suites/x.spec.ts'), line: 3 }, titlePath: () => ['', 'conformance', 'x.spec.ts', id] });
    reporter.onTestEnd(tc('ok', 'expected') as never, { status: 'passed', annotations: [{ type: 'check:pass', description: '{}' }], errors: [] } as never);
    reporter.onTestEnd(tc('bad', 'expected') as never, { status: 'passed', annotations: [{ type: 'check:fail', description: '{"id":"bad","detail":"got 200"}' }], errors: [] } as never);
    reporter.onTestEnd(tc('nv', 'skipped') as never, { status: 'skipped', annotations: [{ type: 'check:not_verified', description: '{}' }], errors: [] } as never);
    const written: string[] = [];
    const status: unknown = await withStdout(() => reporter.onEnd({ status: 'passed' } as never), (chunk) => written.push(chunk));
    expect(written.join('')).toMatch(/FAILED suites\/x\.spec\.ts:3 › x\.spec\.ts › bad: check failed: .*got 200/);
    expect(written.join('')).toMatch(/\n1 passed, 1 failed, 1 skipped\n$/);
    expect(status).toEqual({ status: 'failed' });
    const clean = new SummaryReporter();
    clean.onTestEnd(tc('ok', 'expected') as never, { status: 'passed', annotations: [], errors: [] } as never);
    expect(await withStdout(() => clean.onEnd({ status: 'passed' } as never))).toBeUndefined();
  });
});

test.describe('provenance', () => {
  test('the specification\'s title and SHA-256, the harness version, the command and the profile digest are in the report and at the top of the HTML', async () => {
    const { loadRunContext } = await import('../reports/context.ts');
    const { toHtml } = await import('../reports/html.ts');
    const dir = tmp();
    const profile = path.join(dir, 'p.json');
    fs.writeFileSync(profile, JSON.stringify({ name: 'staging', baseUrl: 'http://127.0.0.1:9', credentials: { full: { key: 'cek_live_provenance_0123456789abcdef' } } }));
    const ctx = loadRunContext({ outDir: dir, profilePath: profile, command: ['conformance', 'run', '--profile', profile, '--target', 'https://ops:hunter2@staging.example', '--api-key', 'sk_live_cmdline_secret'] });
    const r = buildReport(outcomes(), { ...ctx, catalog: CATALOG });
    expect(r.run.specTitle).toBe('Clinical Encounter Public API: Specification');
    expect(r.run.specSha256).toBe(fs.readFileSync(path.join(ROOT, 'fixtures/spec/clinical-encounter-public-api.md.sha256'), 'utf8').trim().split(/\s+/)[0]);
    expect(r.run.harnessVersion).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    expect(r.run.command).toEqual(['conformance', 'run', '--profile', profile, '--target', 'https://[REDACTED]@staging.example', '--api-key', '[REDACTED]']);
    expect(r.run.profileSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.run.target).toEqual({ name: 'staging', baseUrl: 'http://127.0.0.1:9' });
    expect(JSON.stringify(r)).not.toMatch(/hunter2|sk_live_cmdline_secret|cek_live_provenance/);
    const html = toHtml(r);
    // The provenance block comes before the verdict.
    expect(html.indexOf('id="provenance"')).toBeGreaterThan(0);
    expect(html.indexOf('id="provenance"')).toBeLessThan(html.indexOf('id="verdict"'));
    expect(html).toContain(`<dd id="prov-spec">Clinical Encounter Public API: Specification — SHA-256 ${r.run.specSha256}</dd>`);
    expect(html).toContain(`SHA-256 ${r.run.profileSha256} (secret values left out)`);
    expect(html).toContain('<dd id="prov-time">2026-01-02T03:04:05.000Z → 2026-01-02T03:05:00.000Z (55 s)</dd>');
    expect(toJunit(r)).toContain(`<property name="profile.sha256" value="${r.run.profileSha256}"/>`);
  });

  test('the profile digest leaves secret values out: rotated keys keep it, a changed base URL or role changes it', async () => {
    const { profileSha256 } = await import('../reports/context.ts');
    const base = { name: 's', baseUrl: 'http://a', requestHeaders: { 'x-switchboard-token': 'tok1', 'x-trace': 'on' }, credentials: { full: { key: 'k1' }, revoked_key: { keyEnv: 'REVOKED' } }, webhook: { signingSecret: 'whsec1' } };
    const rotated = { ...base, requestHeaders: { 'x-switchboard-token': 'tok2', 'x-trace': 'on' }, credentials: { revoked_key: { keyEnv: 'REVOKED' }, full: { key: 'k2' } }, webhook: { signingSecret: 'whsec2' } };
    expect(profileSha256(rotated)).toBe(profileSha256(base));
    expect(profileSha256({ ...base, baseUrl: 'http://b' })).not.toBe(profileSha256(base));
    expect(profileSha256({ ...base, requestHeaders: { ...base.requestHeaders, 'x-trace': 'off' } })).not.toBe(profileSha256(base));
    expect(profileSha256({ ...base, credentials: { ...base.credentials, revoked_key: { keyEnv: 'OTHER' } } })).not.toBe(profileSha256(base));
  });

  test('the target is named by the profile, else by its base URL: never the template\'s placeholder', async () => {
    const { targetOf, TEMPLATE_PROFILE_NAME } = await import('../reports/context.ts');
    expect(targetOf({ name: 'staging', baseUrl: 'https://s.example' })).toEqual({ name: 'staging', baseUrl: 'https://s.example' });
    expect(targetOf({ name: TEMPLATE_PROFILE_NAME, baseUrl: 'https://s.example' })).toEqual({ name: 'https://s.example', baseUrl: 'https://s.example' });
    // What `profile init` writes is that placeholder.
    expect(fs.readFileSync(path.join(ROOT, 'engine/profile-template.ts'), 'utf8')).toContain('name: TEMPLATE_PROFILE_NAME');
  });

  test('no runner status that can contradict the verdict; an absent score says why in a plain sentence', async () => {
    const { toHtml } = await import('../reports/html.ts');
    const r = buildReport(outcomes(), context({ scoresAbsent: 'Not measured for a target run: because.' }));
    expect(r.verdict).toBe('not_conformant');
    expect('runStatus' in r.run).toBe(false);
    const html = toHtml(r);
    expect(html).not.toMatch(/Runner status/i);
    expect(r.scoreNotes).toEqual({ mutation: 'Not measured for a target run: because.', variants: 'Not measured for a target run: because.' });
    expect(html).toContain('<div id="mutation"><p>Not measured for a target run: because.</p></div>');
    expect(html).not.toContain('no mutation.json)');
    const measured = buildReport(outcomes(), context({ mutation: { total: 2, caught: 2, survivors: [], unproven: [] } }));
    expect(measured.scoreNotes.mutation).toBeNull();
    const client = buildReport(outcomes(), context({ subject: 'client' }));
    expect(client.scoreNotes.mutation).toMatch(/^Not applicable: .* the client checks are proven able to fail by the broken clients/);
  });
});
