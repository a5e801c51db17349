// `conformance profile init` and `conformance profile check` (cli/profile.ts) as a service team
// uses them: init writes every role of the schema with its variable and what it is; filled with the
// sandbox's keys (the reference started as a process, which writes its own profile), check answers
// exit 0; two keys swapped, check answers exit 1 naming the role and asking the right question; an
// unset variable, a FILL-ME left or an unreachable target is exit 2 in one line. Keys never appear.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { keyVariable, profileSchemaReference, rolesMarkdown, SIGNING_SECRET_VARIABLE } from '../engine/profile-template.ts';
import { CREDENTIAL_EXPECTATIONS, FAULT_EXPECTATIONS, RESOURCE_EXPECTATIONS, profileRoles } from '../engine/profile-check.ts';
import { PROFILE_SCHEMA_PATH } from '../fixtures/paths.ts';
import { loadProfile } from '../profile/profile.ts';
import { freePort } from '../platform/embedded-cluster.ts';
import { runCli } from './helpers/cli-process.ts';

const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { env, sampleMs: 0, timeoutMs: 60_000 });
const ROOT = path.resolve(import.meta.dirname, '..');
const schema = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/profiles/profile.schema.json'), 'utf8'));
const schemaRoles = (section: string) => Object.keys(schema.properties[section].properties);

/** The file a profile's `$schema` names, resolved as an editor does: relative to the profile's own folder. */
const schemaFileOf = (profileFile: string): string => {
  const ref = JSON.parse(fs.readFileSync(profileFile, 'utf8')).$schema as string;
  expect(ref, `${profileFile} $schema`).toMatch(/^\.{1,2}\//); // relative, forward slashes
  expect(ref).not.toContain('\\');
  return path.resolve(path.dirname(profileFile), ref);
};

interface SandboxProfile { credentials: Record<string, { key: string }>; resources: Record<string, unknown>; faults?: Record<string, unknown> }

test.describe('profile roles (no target needed)', () => {
  test('profile check knows what every role of the schema should answer', () => {
    expect(Object.keys(CREDENTIAL_EXPECTATIONS).sort()).toEqual(schemaRoles('credentials').sort());
    expect(Object.keys(RESOURCE_EXPECTATIONS).sort()).toEqual(schemaRoles('resources').sort());
    expect(Object.keys(FAULT_EXPECTATIONS).sort()).toEqual(schemaRoles('faults').sort());
    const roles = profileRoles();
    expect(roles.filter((r) => r.kind === 'webhook').map((r) => r.role)).toEqual(schemaRoles('webhook'));
    // Every role is described in the schema: the template's guide is generated from these descriptions.
    expect(roles.filter((r) => !r.description).map((r) => `${r.kind} ${r.role}`)).toEqual([]);
  });

  test("the profile reference's table of roles (docs/profile.md) is the schema's, role for role and word for word", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/profile.md'), 'utf8');
    const block = /<!-- profile-roles:begin -->\n([\s\S]*?)\n<!-- profile-roles:end -->/.exec(doc)?.[1];
    expect(block, 'docs/profile.md has the profile-roles block').toBeDefined();
    expect(block).toBe(rolesMarkdown());
    const listed = [...block!.matchAll(/^\| \w+ \| `(\w+)\.(\w+)`/gm)].map((m) => `${m[1]}.${m[2]}`).sort();
    const all = [...['credentials', 'resources', 'faults', 'webhook'].flatMap((sec) => schemaRoles(sec).map((r) => `${sec}.${r}`))].sort();
    expect(listed).toEqual(all);
  });

  test('the example profile names every credential role of the schema and validates', () => {
    const file = path.join(ROOT, 'fixtures/profiles/example.profile.json');
    const example = loadProfile(file, process.env);
    expect(Object.keys(example.credentials).sort()).toEqual(schemaRoles('credentials').sort());
    for (const c of Object.values(example.credentials)) expect(c).toHaveProperty('keyEnv');
    expect(schemaFileOf(file)).toBe(PROFILE_SCHEMA_PATH);
  });

  test("a profile's $schema is the harness's schema, relative to the profile's folder with forward slashes", () => {
    expect(profileSchemaReference(path.join(path.dirname(PROFILE_SCHEMA_PATH), 'x.profile.json'))).toBe('./profile.schema.json');
    expect(profileSchemaReference(path.join(ROOT, 'conformance.profile.json'))).toBe('./fixtures/profiles/profile.schema.json');
    for (const dir of [os.tmpdir(), path.join(os.tmpdir(), 'a b', 'c'), path.parse(ROOT).root]) {
      const ref = profileSchemaReference(path.join(dir, 'p.json'));
      expect(ref).toMatch(/^\.{1,2}\/[^\\]*profile\.schema\.json$/);
      expect(path.resolve(dir, ref), dir).toBe(PROFILE_SCHEMA_PATH);
    }
    // The schema and the loader take any string there: the reference is a convenience for editors, never judged.
    expect(schema.properties.$schema).toEqual({ type: 'string' });
  });
});

test.describe('against the sandbox', () => {
  test.describe.configure({ mode: 'serial' });
  let ref: ReferenceHandle;
  let sandbox: SandboxProfile;
  let dir: string;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    ref = await startReference();
    sandbox = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-profile-cli-'));
  });

  test.afterAll(async () => {
    await ref?.stop();
  });

  /** The template `init` wrote, filled as a service team would: keys in variables, ids in the file. */
  function fill(template: Record<string, any>): { file: string; env: NodeJS.ProcessEnv } {
    const env: NodeJS.ProcessEnv = { [SIGNING_SECRET_VARIABLE]: 'sandbox-webhook-secret-not-real' };
    for (const [role, c] of Object.entries(template.credentials as Record<string, { keyEnv: string }>)) env[c.keyEnv] = sandbox.credentials[role].key;
    const filled = { ...template, resources: sandbox.resources, faults: sandbox.faults, webhook: { signingSecretEnv: SIGNING_SECRET_VARIABLE } };
    const file = path.join(dir, 'filled.profile.json');
    fs.writeFileSync(file, JSON.stringify(filled, null, 2));
    return { file, env };
  }

  const keys = () => Object.values(sandbox.credentials).map((c) => c.key);

  test('init writes every role with its variable and what it is; unfilled, check refuses in one line', async () => {
    const out = path.join(dir, 'staging.profile.json');
    const r = await cli(['profile', 'init', '--out', out, '--base-url', ref.baseUrl]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${schemaRoles('credentials').length} credential roles, ${schemaRoles('resources').length} resource roles, ${schemaRoles('faults').length} fault switches`);
    const template = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(Object.keys(template.credentials).sort()).toEqual(schemaRoles('credentials').sort());
    expect(Object.keys(template.resources).sort()).toEqual(schemaRoles('resources').sort());
    expect(Object.keys(template.faults).sort()).toEqual(schemaRoles('faults').sort());
    expect(template.credentials.expired_key).toEqual({ keyEnv: 'CONFORMANCE_KEY_EXPIRED_KEY' });
    expect(() => loadProfile(out, process.env)).not.toThrow(); // the template itself is a valid profile
    // Its $schema is the harness's own schema file, as an editor beside the profile resolves it.
    expect(fs.existsSync(schemaFileOf(out))).toBe(true);
    expect(schemaFileOf(out)).toBe(PROFILE_SCHEMA_PATH);
    const guide = fs.readFileSync(path.join(dir, 'staging.profile.roles.md'), 'utf8');
    for (const role of profileRoles()) {
      const row = guide.split('\n').find((l) => l.startsWith(`| \`${role.role}\` |`));
      expect(row, role.role).toBeDefined();
      expect(row).toContain(role.description.replace(/\|/g, '\\|'));
      if (role.kind === 'credential') expect(row).toContain(keyVariable(role.role));
    }
    expect(guide).toMatch(/\| `expired_key` \| `CONFORMANCE_KEY_EXPIRED_KEY` \| .* \| 5 checks, \d+ requirements \|/);

    const again = await cli(['profile', 'init', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^conformance: .*exists \(use --force to overwrite\)\n$/);

    const unfilled = await cli(['profile', 'check', '--profile', out]);
    expect(unfilled.code).toBe(2);
    expect(unfilled.stderr).toMatch(/^conformance: .* still has FILL-ME in resources\.own_encounter, .*\n$/);
  });

  test('filled with the sandbox keys: every role answers as it should, exit 0, no key printed', async () => {
    const out = path.join(dir, 'fill.profile.json');
    expect((await cli(['profile', 'init', '--out', out, '--base-url', ref.baseUrl])).code).toBe(0);
    const { file, env } = fill(JSON.parse(fs.readFileSync(out, 'utf8')));
    const r = await cli(['profile', 'check', '--profile', file], env);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toContain('WRONG');
    expect(r.stdout).toContain('expired_key answers 401 expired_key on GET /external/v1/encounters, as it should');
    expect(r.stdout).toContain('missing_scope_recordings_read answers 403 missing_scope on GET /external/v1/encounters/');
    expect(r.stdout).toContain('other_org_encounter answers 403 cross_organization_denied');
    expect(r.stdout).toContain('audio_storage_unavailable answers 503 audio_storage_unavailable');
    expect(r.stdout).toMatch(/conformance: profile check: \d+ role\(s\) answer as they should, 0 do not, 1 missing\n$/);
    // A service profile is never asked for a partner's receiver URL; it is asked whether its webhook delivery is activated.
    expect(r.stdout).toMatch(/\n  delivery +webhook +the \d+ webhook sender checks/);
    expect(r.stdout).not.toMatch(/receiverUrl +webhook/);
    expect(r.stdout).toContain('webhook sender: the profile lacks webhook.delivery (declare "not_activated"');
    for (const k of keys()) expect(r.stdout).not.toContain(k);
    expect(r.code).toBe(0);
  });

  test('two keys swapped: exit 1, naming the role and asking whether it is the right key', async () => {
    const out = path.join(dir, 'swap.profile.json');
    expect((await cli(['profile', 'init', '--out', out, '--base-url', ref.baseUrl])).code).toBe(0);
    const { file, env } = fill(JSON.parse(fs.readFileSync(out, 'utf8')));
    const swapped = { ...env, CONFORMANCE_KEY_EXPIRED_KEY: env.CONFORMANCE_KEY_REVOKED_KEY, CONFORMANCE_KEY_REVOKED_KEY: env.CONFORMANCE_KEY_EXPIRED_KEY };
    const r = await cli(['profile', 'check', '--profile', file], swapped);
    expect(r.stdout).toContain('WRONG   expired_key answers 401 revoked_key on GET /external/v1/encounters, expected 401 expired_key: is this the expired key? (that is how revoked_key answers)');
    expect(r.stdout).toContain('WRONG   revoked_key answers 401 expired_key on GET /external/v1/encounters, expected 401 revoked_key: is this the revoked key? (that is how expired_key answers)');
    expect(r.stdout).toMatch(/\d+ role\(s\) answer as they should, 2 do not/);
    for (const k of keys()) expect(r.stdout).not.toContain(k);
    expect(r.code).toBe(1);

    // A resource role pointing at the wrong data is caught the same way.
    const p = JSON.parse(fs.readFileSync(file, 'utf8'));
    p.resources.other_org_encounter = p.resources.own_encounter;
    fs.writeFileSync(file, JSON.stringify(p));
    const res = await cli(['profile', 'check', '--profile', file], env);
    expect(res.stdout).toContain('WRONG   other_org_encounter answers 200 on GET /external/v1/encounters/');
    expect(res.stdout).toContain('expected 403 cross_organization_denied: is this an encounter of another organization?');
    expect(res.code).toBe(1);
  });

  test('a profile with few roles: the missing ones are listed with what they unlock; exit 0', async () => {
    const file = path.join(dir, 'small.profile.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'small', baseUrl: ref.baseUrl, credentials: { full: { keyEnv: 'SMALL_FULL' } }, resources: { own_encounter: sandbox.resources.own_encounter } }));
    const r = await cli(['profile', 'check', '--profile', file], { SMALL_FULL: sandbox.credentials.full.key });
    expect(r.stdout).toContain('ok      full answers 200');
    expect(r.stdout).toContain('ok      own_encounter answers 200');
    expect(r.stdout).toMatch(/\n {2}expired_key +credential +5 checks, \d+ requirements +CONFORMANCE_KEY_EXPIRED_KEY\n/);
    expect(r.stdout).toMatch(/\n {2}digest_key_unavailable +fault +\d+ checks/);
    expect(r.stdout).toMatch(/2 role\(s\) answer as they should, 0 do not, \d+ missing\n$/);
    expect(r.code).toBe(0);

    // With the report of a run with this profile, the counts are the run's (its missingRoles).
    const report = path.join(dir, 'small.conformance.json');
    fs.writeFileSync(report, JSON.stringify({ missingRoles: [{ role: 'expired_key', kind: 'credential', checks: 7, requirements: 3 }] }));
    const m = await cli(['profile', 'check', '--profile', file, '--report', report], { SMALL_FULL: sandbox.credentials.full.key });
    expect(m.stdout).toContain(`counts from ${report}`);
    expect(m.stdout).toMatch(/\n {2}expired_key +credential +7 checks, 3 requirements +CONFORMANCE_KEY_EXPIRED_KEY\n/);
    expect(m.stdout).toMatch(/\n {2}revoked_key +credential +0 checks in that run +CONFORMANCE_KEY_REVOKED_KEY\n/);
    expect(m.code).toBe(0);
    const badReport = await cli(['profile', 'check', '--profile', file, '--report', path.join(dir, 'nope.json')], { SMALL_FULL: 'x' });
    expect(badReport.code).toBe(2);
    expect(badReport.stderr).toMatch(/^conformance: cannot read report .*nope\.json: ENOENT\n$/);
  });

  test('an unset variable, an unreachable target, a bad command: exit 2 in one line', async () => {
    const file = path.join(dir, 'unset.profile.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'unset', baseUrl: ref.baseUrl, credentials: { full: { keyEnv: 'PROFILE_CLI_UNSET_FULL' }, expired_key: { keyEnv: 'PROFILE_CLI_UNSET_EXPIRED' } } }));
    const unset = await cli(['profile', 'check', '--profile', file]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toBe('conformance: 2 variable(s) the profile names are unset: PROFILE_CLI_UNSET_FULL (credentials.full), PROFILE_CLI_UNSET_EXPIRED (credentials.expired_key)\n');

    const port = await freePort();
    const down = await cli(['profile', 'check', '--profile', file, '--target', `http://127.0.0.1:${port}`], { PROFILE_CLI_UNSET_FULL: 'k1', PROFILE_CLI_UNSET_EXPIRED: 'k2' });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(new RegExp(`^conformance: cannot reach http://127\\.0\\.0\\.1:${port}: connection_refused .*\\n$`));
    expect(down.stderr).not.toContain('k1');

    const bad = await cli(['profile', 'frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('conformance: unknown profile command frobnicate (init, check; see conformance profile --help)\n');
    const noProfile = await cli(['profile', 'check']);
    expect(noProfile.code).toBe(2);
    expect(noProfile.stderr).toMatch(/^conformance: profile check needs --profile FILE/);
  });
});
