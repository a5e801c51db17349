// Verdicts a gate can trust (issue 11): CONFORMANT only when every must requirement in scope was verified
// and passed; NOT CONFORMANT on any un-waived failure; INCOMPLETE when nothing failed but something in scope
// was not verified (exit 1 unless --allow-incomplete); PARTIAL for a run narrowed by a filter or a subset of
// shards; parts a profile declares out of scope are listed, never counted as verified; a variable the profile
// names but the environment lacks is a setup error; `--profile` alone is a target run, never the sandbox.
// The first half judges the pure report model on fabricated outcomes; the second replays the situations
// through the CLI against the reference.
import { test, expect } from '@playwright/test';
import { loadCatalog } from '../reports/context.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, exitCodeFor, isPartial, partCovers, verdictLine, mergeOutcomes, type Catalog } from '../reports/model.ts';
import { toHtml } from '../reports/html.ts';
import { check, context, outcomes } from './helpers/report-data.ts';
import { runCli, type CliResult } from './helpers/cli-process.ts';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';

const CATALOG: Catalog = {
  spec: 'clinical-encounter-public-api.md',
  requirements: [
    { id: 'A-MUST', section: '4.1', area: 'list', statement: 'a', level: 'must' },
    { id: 'B-MUST', section: '5', area: 'auth', statement: 'b', level: 'must' },
    { id: 'C-SHOULD', section: '6.3', area: 'webhook', statement: 'c', level: 'should' },
    { id: 'D-OPEN', section: '8', area: 'limits', statement: 'd', level: 'unspecified' },
    { id: 'E-MUST-WEBHOOK', section: '6.3', area: 'webhook', statement: 'e', level: 'must' },
  ],
};
const ctx = (extra: Parameters<typeof context>[0] = {}) => context({ catalog: CATALOG, ...extra });
const allPass = () => [check('a', 'pass', ['A-MUST']), check('b', 'pass', ['B-MUST']), check('c', 'pass', ['C-SHOULD']), check('d', 'informational', ['D-OPEN']), check('e', 'pass', ['E-MUST-WEBHOOK'])];

test.describe('the verdict of the report model', () => {
  test('every must requirement verified and passed: CONFORMANT, exit 0', () => {
    const r = buildReport(outcomes(allPass()), ctx());
    expect(r.verdict).toBe('conformant');
    expect(r.coverage).toMatchObject({ mustTotal: 3, mustInScope: 3, mustVerified: 3, mustNotVerified: [] });
    expect(verdictLine(r)).toBe('conformance: CONFORMANT — service: verified 3 of 3 must requirements in scope');
    expect(exitCodeFor(r)).toBe(0);
  });

  test('a must requirement not verified: INCOMPLETE, exit 1, exit 0 only with allowIncomplete; the missing role is named', () => {
    const checks = allPass().map((c) => (c.id === 'b' ? { ...c, outcome: 'not_verified' as const, detail: "profile lacks credential role 'revoked_key'", lacks: 'credentials.revoked_key' } : c));
    const r = buildReport(outcomes(checks), ctx());
    expect(r.verdict).toBe('incomplete');
    expect(r.coverage.mustNotVerified).toEqual(['B-MUST']);
    expect(r.verdictReason).toBe('verified 2 of 3 must requirements in scope; nothing failed');
    expect(r.missingRoles).toEqual([{ role: 'revoked_key', kind: 'credential', checks: 1, requirements: 1 }]);
    const receiver = buildReport(outcomes([...checks, check('e2', 'not_verified', ['E-MUST-WEBHOOK'], { detail: 'profile lacks webhook.receiverUrl (the receiver under test)', lacks: 'webhook.receiverUrl' })]), ctx());
    expect(receiver.missingRoles).toContainEqual({ role: 'webhook.receiverUrl', kind: 'webhook', checks: 1, requirements: 1 });
    expect(exitCodeFor(r)).toBe(1);
    expect(exitCodeFor(r, { allowIncomplete: true })).toBe(0);
  });

  test('a must requirement without any check is not verified either; all checks informational is not a verification', () => {
    expect(buildReport(outcomes(allPass().filter((c) => c.id !== 'e')), ctx()).verdict).toBe('incomplete');
    const info = allPass().map((c) => (c.id === 'a' ? { ...c, outcome: 'informational' as const } : c));
    const r = buildReport(outcomes(info), ctx());
    expect(r.verdict).toBe('incomplete');
    expect(r.coverage.mustNotVerified).toEqual(['A-MUST']);
  });

  test('a must requirement with a reviewed not-tested reason (a client obligation) is listed but outside what a service run verifies', () => {
    const r = buildReport(outcomes(allPass().filter((c) => c.id !== 'e')), ctx({ notTested: { 'E-MUST-WEBHOOK': 'an obligation on clients' } }));
    expect(r.verdict).toBe('conformant');
    expect(r.coverage).toMatchObject({ mustInScope: 2, mustVerified: 2, notTested: { 'E-MUST-WEBHOOK': 'an obligation on clients' } });
  });

  test('a failure outweighs everything, a narrowed run included: NOT CONFORMANT, exit 1', () => {
    const failing = allPass().map((c) => (c.id === 'a' ? { ...c, outcome: 'fail' as const } : c));
    expect(buildReport(outcomes(failing), ctx()).verdict).toBe('not_conformant');
    const narrowed = buildReport(outcomes(failing.slice(0, 1), { filter: { grep: 'a' } }), ctx());
    expect(narrowed.verdict).toBe('not_conformant');
    expect(exitCodeFor(narrowed)).toBe(1);
  });

  test('a run narrowed by --grep, --requirement or a subset of shards is PARTIAL: no claim, the filter recorded, exit 0', () => {
    const r = buildReport(outcomes(allPass().slice(0, 1), { filter: { requirement: 'A-MUST' } }), ctx());
    expect(r.verdict).toBe('partial');
    expect(r.run.filter).toEqual({ requirement: 'A-MUST' });
    expect(r.verdictReason).toContain('--requirement A-MUST');
    expect(exitCodeFor(r)).toBe(0);
    const html = toHtml(r);
    expect(html).toContain('PARTIAL');
    expect(html).not.toMatch(/>\s*CONFORMANT\s*</);
    const shard = buildReport(outcomes(allPass(), { shard: '1/2' }), ctx());
    expect(shard.verdict).toBe('partial');
    expect(shard.run.filter).toEqual({ shard: '1/2' });
  });

  test('shards that add up to the whole run give the full verdict; a missing shard keeps it partial', () => {
    expect(isPartial(null, ['1/2', '2/2'])).toBe(false);
    expect(isPartial(null, ['2/2'])).toBe(true);
    expect(isPartial(null, ['1/3', '2/3'])).toBe(true);
    expect(isPartial({ grep: 'x' }, [])).toBe(true);
    expect(isPartial(null, [])).toBe(false);
    const merged = mergeOutcomes([outcomes(allPass().slice(0, 2), { shard: '1/2' }), outcomes(allPass().slice(2), { shard: '2/2' })]);
    expect(buildReport(merged, ctx()).verdict).toBe('conformant');
    const half = mergeOutcomes([outcomes(allPass().slice(0, 2), { shard: '1/2' })]);
    expect(buildReport(half, ctx()).verdict).toBe('partial');
  });

  test('parts declared out of scope are listed with their reason and never counted as verified', () => {
    const checks = allPass().filter((c) => c.id !== 'e');
    const r = buildReport(outcomes(checks), ctx({ outOfScope: [{ part: 'area:webhook', reason: 'no partner receiver on staging' }] }));
    expect(r.verdict).toBe('conformant');
    expect(r.requirements.find((q) => q.id === 'E-MUST-WEBHOOK')).toMatchObject({ status: 'out_of_scope', outOfScope: 'no partner receiver on staging' });
    expect(r.coverage).toMatchObject({ mustTotal: 3, mustInScope: 2, mustVerified: 2, outOfScope: [{ id: 'C-SHOULD', reason: 'no partner receiver on staging' }, { id: 'E-MUST-WEBHOOK', reason: 'no partner receiver on staging' }] });
    expect(r.scope.outOfScope).toEqual([{ part: 'area:webhook', reason: 'no partner receiver on staging', requirements: ['C-SHOULD', 'E-MUST-WEBHOOK'] }]);
    expect(r.verdictReason).toContain('declared out of scope');
    // A failure seen on an out-of-scope part stays a failure.
    const failing = buildReport(outcomes([...checks, check('e', 'fail', ['E-MUST-WEBHOOK'])]), ctx({ outOfScope: [{ part: 'area:webhook', reason: 'r' }] }));
    expect(failing.verdict).toBe('not_conformant');
    expect(partCovers('section:6', { id: 'X', area: 'webhook', section: '6.3' })).toBe(true);
    expect(partCovers('section:6', { id: 'X', area: 'webhook', section: '61' })).toBe(false);
    expect(partCovers('X', { id: 'X', area: 'a', section: '1' })).toBe(true);
    const unknown = buildReport(outcomes(checks), ctx({ outOfScope: [{ part: 'webhooks', reason: 'typo' }] }));
    expect(unknown.warnings.join('\n')).toContain('out-of-scope part "webhooks" names no requirement');
  });

  test('a warning (a should not met) is shown and counted, and fails the run only under --strict', () => {
    const warned = allPass().map((c) => (c.id === 'c' ? { ...c, outcome: 'warning' as const, detail: 'answered 500: invites a retry' } : c));
    const r = buildReport(outcomes(warned), ctx());
    expect(r.summary.warning).toBe(1);
    expect(r.requirements.find((q) => q.id === 'C-SHOULD')!.status).toBe('warning');
    expect(r.verdict).toBe('conformant');
    const strict = buildReport(outcomes(warned), ctx({ strict: true }));
    expect(strict.verdict).toBe('not_conformant');
    expect(strict.run.strict).toBe(true);
    expect(exitCodeFor(strict)).toBe(1);
  });

  test('an open point is observed, never passed: an unspecified requirement whose checks passed is informational', () => {
    const r = buildReport(outcomes(allPass().map((c) => (c.id === 'd' ? { ...c, outcome: 'pass' as const, detail: 'answered 422 invalid_query' } : c))), ctx());
    expect(r.requirements.find((q) => q.id === 'D-OPEN')!.status).toBe('informational');
    expect(r.verdict).toBe('conformant');
  });

  test('each requirement row carries its outcome counts', () => {
    const r = buildReport(outcomes([...allPass(), check('a2', 'not_verified', ['A-MUST'], { detail: "profile lacks resource role 'own_encounter'", lacks: 'resources.own_encounter' })]), ctx());
    expect(r.requirements.find((q) => q.id === 'A-MUST')!.counts).toEqual({ pass: 1, not_verified: 1 });
  });
});

// ---- The situations of issue 11, replayed through the CLI ----

const cli = (args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> => runCli(args, { ...opts, sampleMs: 0 });
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-verdict-'));
const readReport = (out: string) => JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));

test.describe('through the CLI', () => {
  test('a credential whose environment variable is unset or empty is a setup error naming the variable (exit 2), before any request', async () => {
    const dir = tmp();
    const profile = path.join(dir, 'p.json');
    // An unreachable base URL: the variable is judged before the target is probed.
    fs.writeFileSync(profile, JSON.stringify({ name: 'staging', baseUrl: 'http://127.0.0.1:1', credentials: { full: { keyEnv: 'CEC_TEST_UNSET_FULL_KEY' }, revoked_key: { keyEnv: 'CEC_TEST_EMPTY_KEY' } } }));
    const r = await cli(['run', '--profile', profile], { env: { CEC_TEST_UNSET_FULL_KEY: undefined, CEC_TEST_EMPTY_KEY: '' } });
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^conformance: profile .* names 2 environment variables that are unset or empty \(credentials\): CEC_TEST_UNSET_FULL_KEY \(credentials\.full\), CEC_TEST_EMPTY_KEY \(credentials\.revoked_key\)\. Set them \(export NAME=value, or --env-file FILE of NAME=value lines\), or delete the roles the target cannot offer/);
  });

  test('--env-file FILE (NAME=value lines, a CI secret\'s format) gives the keys; a variable already set wins; the values are never printed; a missing file is one line, exit 2', async () => {
    const dir = tmp();
    const profile = path.join(dir, 'p.json');
    fs.writeFileSync(profile, JSON.stringify({ name: 'staging', baseUrl: 'http://127.0.0.1:1', credentials: { full: { keyEnv: 'CEC_TEST_ENVFILE_FULL' }, revoked_key: { keyEnv: 'CEC_TEST_ENVFILE_REVOKED' } } }));
    const secrets = path.join(dir, 'staging.env');
    fs.writeFileSync(secrets, 'CEC_TEST_ENVFILE_FULL=k_live_envfile_full_0123456789\n# a comment\nexport CEC_TEST_ENVFILE_REVOKED="k_live_envfile_revoked_0123456789"\n');
    const r = await cli(['run', '--profile', profile, '--env-file', secrets], { env: { CEC_TEST_ENVFILE_FULL: undefined, CEC_TEST_ENVFILE_REVOKED: undefined } });
    // The keys resolved: the run got as far as the target, which is not there.
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/is unreachable: connection_refused/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/k_live_envfile/);
    // A missing file: Node itself checks an `--env-file` it sees anywhere on the command line (nodejs/node#54232)
    // and exits 9 naming it before the harness starts; where it does not, the harness says it, exit 2.
    const missing = await cli(['run', '--profile', profile, '--env-file', path.join(dir, 'nope.env')]);
    expect([2, 9]).toContain(missing.code);
    expect(missing.stderr.trim()).toMatch(missing.code === 9 ? /^(\S*\/)?node: .*nope\.env: not found$/ : /^conformance: --env-file .*nope\.env: cannot read it \(ENOENT\)$/);
  });

  test('every key variable unset (the template as written): one line with the count, the first names and the next step, never cut inside a word', async () => {
    const dir = tmp();
    const profile = path.join(dir, 'p.json');
    const roles = ['full', 'malformed_token', 'invalid_key', 'disabled_key', 'revoked_key', 'expired_key', 'test_key', 'missing_scope_encounters_read', 'missing_scope_patients_read', 'missing_scope_documents_read', 'missing_scope_recordings_read', 'not_org_scoped', 'org_not_allowlisted', 'encounter_routes_disabled', 'document_routes_disabled', 'no_scopes_not_org_scoped', 'no_scopes_org_not_allowlisted', 'no_scopes_encounter_routes_disabled', 'no_scopes_document_routes_disabled'];
    const credentials = Object.fromEntries(roles.map((r) => [r, { keyEnv: `CEC_TEST_UNSET_${r.toUpperCase()}` }]));
    fs.writeFileSync(profile, JSON.stringify({ name: 'staging', baseUrl: 'http://127.0.0.1:1', credentials }));
    const r = await cli(['run', '--profile', profile], { env: Object.fromEntries(roles.map((x) => [`CEC_TEST_UNSET_${x.toUpperCase()}`, undefined])) });
    expect(r.code, r.stderr).toBe(2);
    const line = r.stderr.trimEnd().split('\n').at(-1)!;
    expect(line).toMatch(/names 19 environment variables that are unset or empty \(credentials\): CEC_TEST_UNSET_FULL \(credentials\.full\), .* and 15 more\. Set them .* conformance profile check --profile \S+ lists every role$/);
  });

  test.describe('against the reference as a target', () => {
    test.describe.configure({ mode: 'serial', timeout: 400_000 });
    let ref: ReferenceHandle;
    test.beforeAll(async () => {
      test.setTimeout(200_000);
      ref = await startReference();
    });
    test.afterAll(async () => {
      await ref?.stop();
    });

    test('a service run against a target with every service role and no receiver settings is CONFORMANT and names its subject; no receiver check runs', async () => {
      const out = path.join(tmp(), 'out');
      const r = await cli(['run', '--profile', ref.profilePath, '--out', out], { timeoutMs: 240_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.stdout).toMatch(/conformance: CONFORMANT — service: verified (\d+) of \1 must requirements in scope/);
      const report = readReport(out);
      expect(report.run.subject).toBe('service');
      expect(report.run.target.baseUrl).toBe(ref.baseUrl);
      expect(report.checks.filter((c: { id: string }) => c.id.startsWith('webhook-receiver-'))).toEqual([]);
      const catalog = loadCatalog()!;
      const receiverOnly = new Set(catalog.requirements.filter((x) => !(x.subjects ?? ['service']).includes('service')).map((x) => x.id));
      expect(receiverOnly.size).toBeGreaterThan(0);
      expect(report.requirements.filter((x: { id: string }) => receiverOnly.has(x.id))).toEqual([]);
      // Provenance: the command, the profile's digest, the specification's title; no runner status.
      expect(report.run.command).toEqual(['conformance', 'run', '--profile', ref.profilePath, '--out', out]);
      expect(report.run.profileSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(report.run.specTitle).toBe('Clinical Encounter Public API: Specification');
      expect(report.run.runStatus).toBeUndefined();
      // The JUnit of a real run: the verdict case passes (CONFORMANT), and the file is valid against the published schema.
      const xml = fs.readFileSync(path.join(out, 'junit.xml'), 'utf8');
      expect(/<testcase classname="conformance\.run" name="verdict"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)![1]).not.toContain('<failure');
      const { validateXML } = await import('xmllint-wasm');
      const xsd = fs.readFileSync(path.join(import.meta.dirname, 'fixtures/junit-10.xsd'), 'utf8');
      const v = await validateXML({ xml: [{ fileName: 'junit.xml', contents: xml }], schema: [{ fileName: 'junit-10.xsd', contents: xsd }], maxMemoryPages: 16384 });
      expect(v.errors.map((e) => e.message)).toEqual([]);
      // Real durations: the whole is the run's wall-clock time.
      const wall = (Date.parse(report.run.finishedAt) - Date.parse(report.run.startedAt)) / 1000;
      expect(Number(/<testsuites [^>]*time="([0-9.]+)"/.exec(xml)![1])).toBeCloseTo(wall, 2);
    });

    test('without a way to make the service send, the sender checks are not verified and name the missing setting, webhook.delivery, as profile check does', async () => {
      const dir = tmp();
      const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { webhook?: Record<string, unknown> };
      delete profile.webhook?.sandboxControlUrl;
      const file = path.join(dir, 'no-sender.profile.json');
      fs.writeFileSync(file, JSON.stringify(profile));
      const out = path.join(dir, 'out');
      const r = await cli(['run', '--profile', file, '--out', out, '--grep', '(?:^|\\s)webhook-sender-', '--workers', '1'], { timeoutMs: 240_000 });
      const report = readReport(out);
      const sender = report.checks.filter((c: { id: string }) => c.id.startsWith('webhook-sender-'));
      expect(sender.length, r.stderr.slice(-2000)).toBeGreaterThan(0);
      for (const c of sender) expect(c.outcome, `${c.id}: ${c.detail}`).toBe('not_verified');
      for (const c of sender) expect(c.detail).toMatch(/^profile lacks webhook\.delivery \(declare "not_activated"/);
      expect(report.missingRoles).toContainEqual(expect.objectContaining({ role: 'webhook.delivery', kind: 'webhook', checks: sender.length }));
      expect(r.stderr).toMatch(/conformance: \d+ webhook sender checks not verified: set webhook\.delivery "not_activated" .* webhook\.sender .*`conformance webhook sender`/);
    });

    test('webhook delivery declared not activated: every sender requirement out of scope with that reason, CONFORMANT exit 0, and the verdict line and every report say so', async () => {
      const dir = tmp();
      const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { webhook?: Record<string, unknown> };
      delete profile.webhook?.sandboxControlUrl;
      profile.webhook = { ...profile.webhook, delivery: 'not_activated' };
      const file = path.join(dir, 'not-activated.profile.json');
      fs.writeFileSync(file, JSON.stringify(profile));
      const out = path.join(dir, 'out');
      const r = await cli(['run', '--profile', file, '--out', out], { timeoutMs: 300_000 });
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      const line = /^conformance: CONFORMANT — service: REST API; webhook delivery declared not activated; verified (\d+) of \1 must requirements in scope \((\d+) declared out of scope.*$/m;
      expect(r.stdout).toMatch(line);
      const report = readReport(out);
      expect(report.verdict).toBe('conformant');
      expect(report.verdictReason).toMatch(/^REST API; webhook delivery declared not activated; verified/);
      expect(report.scope.declared).toBe('REST API; webhook delivery declared not activated');
      // No sender check ran; every requirement of the sender, FIELD-EVENT-*, VERSION-WEBHOOK-* and LIMIT-WEBHOOK-TOLERANCE included, is out of scope with the reason.
      expect(report.checks.filter((c: { id: string }) => c.id.startsWith('webhook-sender-'))).toEqual([]);
      const part = report.scope.outOfScope.find((p: { part: string }) => p.part === 'webhook.delivery');
      expect(part.reason).toMatch(/webhook delivery not activated .*planned_not_generally_available/);
      for (const id of ['FIELD-EVENT-ID', 'FIELD-EVENT-RESOURCES-DOCUMENT-ID', 'VERSION-WEBHOOK-DATE', 'VERSION-WEBHOOK-EQUAL', 'LIMIT-WEBHOOK-TOLERANCE', 'WEBHOOK-HEADER-SIGNATURE', 'WEBHOOK-RETRYABLE-FAILURES', 'WEBHOOK-SUBSCRIPTIONS-DISABLED-DEFAULT']) {
        expect(part.requirements, id).toContain(id);
        const row = report.requirements.find((x: { id: string }) => x.id === id);
        expect(row.status, id).toBe('out_of_scope');
        expect(row.outOfScope).toBe(part.reason);
      }
      // REST requirements stay in scope, and nothing is left unverified.
      expect(part.requirements).not.toContain('AUTH-401-REVOKED-KEY');
      expect(report.coverage.mustNotVerified).toEqual([]);
      expect(report.missingRoles.map((m: { role: string }) => m.role)).toEqual([]);
      expect(fs.readFileSync(path.join(out, 'conformance.html'), 'utf8')).toContain('REST API; webhook delivery declared not activated');
      expect(fs.readFileSync(path.join(out, 'junit.xml'), 'utf8')).toContain('REST API; webhook delivery declared not activated');
      expect(r.stderr).not.toMatch(/webhook sender checks not verified/);
    });

    test('--requirement narrows the run: PARTIAL in every report, the filter in the metadata, exit 0', async () => {
      const out = path.join(tmp(), 'out');
      const r = await cli(['run', '--profile', ref.profilePath, '--out', out, '--requirement', 'AUTH-401-REVOKED-KEY', '--workers', '1'], { timeoutMs: 240_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const report = readReport(out);
      expect(report.verdict).toBe('partial');
      expect(report.run.filter).toEqual({ requirement: 'AUTH-401-REVOKED-KEY' });
      expect(r.stdout).toMatch(/conformance: PARTIAL — service: a narrowed run \(--requirement AUTH-401-REVOKED-KEY\) makes no conformance claim/);
      const html = fs.readFileSync(path.join(out, 'conformance.html'), 'utf8');
      expect(html).toContain('PARTIAL');
      expect(html).toContain('AUTH-401-REVOKED-KEY');
    });

    test('half the credential roles missing: INCOMPLETE, exit 1 naming what to provide; exit 0 with --allow-incomplete', async () => {
      const dir = tmp();
      const full = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { credentials: Record<string, unknown> };
      const roles = Object.keys(full.credentials).sort();
      const kept = Object.fromEntries(roles.filter((_, i) => i % 2 === 0 || roles[i] === 'full').map((k) => [k, full.credentials[k]]));
      const half = path.join(dir, 'half.profile.json');
      fs.writeFileSync(half, JSON.stringify({ ...full, credentials: kept }));
      const dropped = roles.filter((k) => !(k in kept));
      const out = path.join(dir, 'out');
      const r = await cli(['run', '--profile', half, '--out', out], { timeoutMs: 300_000 });
      const report = readReport(out);
      expect(report.verdict, r.stderr.slice(-3000)).toBe('incomplete');
      // The JUnit of an INCOMPLETE run (exit 1) has a failing verdict case.
      expect(fs.readFileSync(path.join(out, 'junit.xml'), 'utf8')).toMatch(/<testcase classname="conformance\.run" name="verdict" time="0\.000">\n {6}<failure message="INCOMPLETE — service: verified \d+ of \d+ must requirements in scope; nothing failed" type="incomplete">/);
      expect(r.code).toBe(1);
      expect(report.summary.fail).toBe(0);
      expect(report.coverage.mustVerified).toBeLessThan(report.coverage.mustInScope);
      expect(r.stdout).toMatch(/conformance: INCOMPLETE — service: verified \d+ of \d+ must requirements in scope/);
      expect(r.stderr).toMatch(/must requirements? in scope not verified; what would complete the run[^\n]*:\nconformance:   provide [a-z_]+: [A-Z]/);
      for (const role of dropped.filter((d) => (report.missingRoles as { role: string }[]).some((m) => m.role === d))) expect(r.stderr).toContain(`conformance:   provide ${role}: `);
      // Every credential the table asks for is one that was dropped; a service run never asks for a partner's receiver.
      const missing = report.missingRoles as { role: string; kind: string }[];
      for (const r of missing.filter((m) => m.kind === 'credential')) expect(dropped).toContain(r.role);
      expect(missing.filter((m) => m.kind === 'credential').length).toBeGreaterThan(0);
      expect(missing.map((m) => m.role)).not.toContain('webhook.receiverUrl');
      expect(r.stderr).not.toContain('receiverUrl');
      const allowed = await cli(['run', '--profile', half, '--out', path.join(dir, 'out2'), '--allow-incomplete'], { timeoutMs: 300_000 });
      expect(allowed.code, allowed.stderr.slice(-2000)).toBe(0);
      expect(readReport(path.join(dir, 'out2')).verdict).toBe('incomplete');
    });
  });
});
