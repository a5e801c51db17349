// The profile loader: valid profiles load, malformed ones end in a ProfileError that names the
// offending field, keyEnv credentials resolve from an environment, and every key is registered for
// redaction. Also validates the shipped example profile.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { loadProfile, validateProfile, credentialKey, signingSecret, ProfileError, type Profile } from '../profile/profile.ts';
import { redact, REDACTED } from '../record/redact.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../fixtures/profiles/example.profile.json');

function valid(): Record<string, any> {
  return {
    name: 'local',
    baseUrl: 'http://127.0.0.1:8080',
    timeouts: { requestMs: 5000, maxBodyBytes: 65536 },
    credentials: {
      full: { key: 'sk_live_profileSpec_full_0001' },
      revoked_key: { keyEnv: 'PROFILE_SPEC_REVOKED' },
    },
    resources: {
      own_encounter: { encounter_id: 'enc-1' },
      clinical_document: { encounter_id: 'enc-1', document_id: 'doc-1' },
      list_min_total: 2,
    },
    webhook: { signingSecret: 'whsec_profileSpec_0002' },
  };
}

function writeProfile(file: string, data: unknown): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
  return file;
}

function profileError(fn: () => unknown): ProfileError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProfileError);
    return e as ProfileError;
  }
  throw new Error('expected a ProfileError');
}

test('a valid profile loads from a file', async ({}, testInfo) => {
  const file = writeProfile(testInfo.outputPath('ok.json'), valid());
  const p = loadProfile(file, process.env);
  expect(p.name).toBe('local');
  expect(p.baseUrl).toBe('http://127.0.0.1:8080');
  expect(p.resources?.clinical_document).toEqual({ encounter_id: 'enc-1', document_id: 'doc-1' });
});

test('the bytes a parent validated (markProfileChecked) skip the schema in its children; any other bytes are validated', async ({}, testInfo) => {
  const { profileDigest } = await import('../profile/profile.ts');
  const { markProfileChecked } = await import('../engine/plan.ts');
  const file = writeProfile(testInfo.outputPath('ok.json'), valid());
  const env: NodeJS.ProcessEnv = {};
  markProfileChecked(file, env);
  expect(env.CONFORMANCE_PROFILE_SHA256).toBe(profileDigest(fs.readFileSync(file, 'utf8')));
  // A file that does not validate, with a digest that is not its own: validated, and refused.
  const bad = testInfo.outputPath('bad.json');
  fs.writeFileSync(bad, JSON.stringify({ name: 'n', credentials: {} }));
  {
    expect(profileError(() => loadProfile(bad, {}, env.CONFORMANCE_PROFILE_SHA256)).message).toMatch(/must have required property 'baseUrl'/);
    // The same bad bytes vouched for by a parent are trusted (the parent refused them before any child ran).
    expect(loadProfile(bad, {}, profileDigest(fs.readFileSync(bad, 'utf8'))).name).toBe('n');
    // A parent refuses a bad profile: markProfileChecked throws and vouches for nothing.
    const env2: NodeJS.ProcessEnv = {};
    expect(() => markProfileChecked(bad, env2)).toThrow();
    expect(env2.CONFORMANCE_PROFILE_SHA256).toBeUndefined();
  }
});

test('a minimal profile (name, baseUrl, no credentials) loads', () => {
  expect(validateProfile({ name: 'n', baseUrl: 'https://api.example.test/base', credentials: {} }, 'profile', process.env).credentials).toEqual({});
});

test('a block written alone (a webhook block, say) is refused with what a profile is', () => {
  const fragment = { webhook: { delivery: 'activated', headerWord: 'Medrec', sender: { listen: { host: '127.0.0.1', port: 8787 }, trigger: 'none' } } };
  expect(profileError(() => validateProfile(fragment, 'profile staging.json', process.env)).message).toBe(
    'profile staging.json: field (root) must have required property \'name\'; a profile describes the whole target: "name", "baseUrl" and "credentials" beside blocks such as "webhook" (`conformance profile init` writes one to fill in; docs/profile.md)',
  );
});

test.describe('ProfileError names the offending field', () => {
  const cases: [string, (p: Record<string, any>) => void, RegExp][] = [
    ['a missing baseUrl', (p) => delete p.baseUrl, /\(root\) must have required property 'baseUrl'/],
    ['a missing credentials object', (p) => delete p.credentials, /required property 'credentials'/],
    ['a wrong type (name is a number)', (p) => (p.name = 42), /field \/name must be string/],
    ['a wrong type (requestMs is a string)', (p) => (p.timeouts.requestMs = '5000'), /field \/timeouts\/requestMs must be integer/],
    ['a baseUrl with a query', (p) => (p.baseUrl = 'http://x/?a=1'), /field \/baseUrl must match pattern/],
    ['an unknown credential role', (p) => (p.credentials.superuser = { key: 'whatever-key' }), /field \/credentials must NOT have additional properties 'superuser'/],
    ['an unknown top-level field', (p) => (p.baseURL = 'http://x'), /must NOT have additional properties 'baseURL'/],
    ['a credential with neither key nor keyEnv', (p) => (p.credentials.full = {}), /field \/credentials\/full /],
    ['a credential with both key and keyEnv', (p) => (p.credentials.full = { key: 'k-123456', keyEnv: 'X' }), /field \/credentials\/full /],
    ['a keyEnv that is not a variable name', (p) => (p.credentials.full = { keyEnv: 'MY-KEY' }), /field \/credentials\/full\/keyEnv must match pattern/],
    ['a document without document_id', (p) => (p.resources.clinical_document = { encounter_id: 'e' }), /field \/resources\/clinical_document must have required property 'document_id'/],
  ];
  for (const [name, mutate, want] of cases) {
    test(name, () => {
      const p = valid();
      mutate(p);
      const e = profileError(() => validateProfile(p, 'profile test.json', process.env));
      expect(e.message).toMatch(/^profile test\.json: /);
      expect(e.message).toMatch(want);
    });
  }

  test('the same errors come through loadProfile with the file name', async ({}, testInfo) => {
    const p = valid();
    delete p.baseUrl;
    const file = writeProfile(testInfo.outputPath('no-base.json'), p);
    expect(profileError(() => loadProfile(file, process.env)).message).toBe(`profile ${file}: field (root) must have required property 'baseUrl'`);
  });

  test('invalid JSON', async ({}, testInfo) => {
    const file = writeProfile(testInfo.outputPath('broken.json'), '{"name": "x", "baseUrl": ');
    const e = profileError(() => loadProfile(file, process.env));
    expect(e.message).toMatch(new RegExp(`^profile ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: `));
  });

  test('a missing file', async ({}, testInfo) => {
    const file = testInfo.outputPath('does-not-exist.json');
    expect(profileError(() => loadProfile(file, process.env)).message).toBe(`cannot read profile ${file}: ENOENT`);
  });
});

test('keyEnv is resolved from the given environment; absent roles and unset variables are undefined', () => {
  const p = validateProfile(valid(), 'profile', process.env);
  expect(credentialKey(p, 'full', {})).toBe('sk_live_profileSpec_full_0001');
  expect(credentialKey(p, 'revoked_key', { PROFILE_SPEC_REVOKED: 'sk_live_profileSpec_revoked_0003' })).toBe('sk_live_profileSpec_revoked_0003');
  expect(credentialKey(p, 'revoked_key', {})).toBeUndefined();
  expect(credentialKey(p, 'revoked_key', { PROFILE_SPEC_REVOKED: '' })).toBeUndefined();
  expect(credentialKey(p, 'expired_key', { PROFILE_SPEC_REVOKED: 'x' })).toBeUndefined();
});

test('inline keys are registered for redaction on load; env keys when resolved', () => {
  const p = validateProfile(valid(), 'profile', process.env);
  expect(redact('Bearer-less sk_live_profileSpec_full_0001 here')).toBe(`Bearer-less ${REDACTED} here`);
  expect(redact('whsec_profileSpec_0002')).toBe(REDACTED);
  const envKey = 'sk_live_profileSpec_env_0004';
  expect(redact(envKey)).toBe(envKey); // not known before it is read
  credentialKey(p, 'revoked_key', { PROFILE_SPEC_REVOKED: envKey });
  expect(redact(`x ${envKey} ${encodeURIComponent(envKey)}`)).toBe(`x ${REDACTED} ${REDACTED}`);
});

test('the webhook signing secret resolves from signingSecretEnv and is registered', () => {
  const p = validateProfile({ name: 'n', baseUrl: 'http://h', credentials: {}, webhook: { signingSecretEnv: 'PROFILE_SPEC_WHSEC' } }, 'profile', process.env);
  expect(signingSecret(p, {})).toBeUndefined();
  expect(signingSecret(p, { PROFILE_SPEC_WHSEC: 'whsec_profileSpec_env_0005' })).toBe('whsec_profileSpec_env_0005');
  expect(redact('whsec_profileSpec_env_0005')).toBe(REDACTED);
});

test.describe('the example profile', () => {
  test('validates against the schema', () => {
    const p: Profile = loadProfile(EXAMPLE, process.env);
    expect(p.baseUrl).toMatch(/^https:\/\//);
    expect(Object.keys(p.credentials).length).toBeGreaterThan(0);
  });

  test('uses keyEnv for every credential and an env variable for the signing secret (no inline secret)', () => {
    const p = loadProfile(EXAMPLE, process.env);
    for (const [role, c] of Object.entries(p.credentials)) {
      expect(c, role).toHaveProperty('keyEnv');
      expect(c, role).not.toHaveProperty('key');
    }
    expect(p.webhook?.signingSecret).toBeUndefined();
    expect(p.webhook?.signingSecretEnv).toBeTruthy();
  });

  test('its keys resolve from the environment', () => {
    const p = loadProfile(EXAMPLE, process.env);
    const c = p.credentials.full as { keyEnv: string };
    expect(credentialKey(p, 'full', { [c.keyEnv]: 'sk_live_example_full_0006' })).toBe('sk_live_example_full_0006');
    expect(credentialKey(p, 'full', {})).toBeUndefined();
  });

  test('its document resources belong to the encounters they name', () => {
    const p = loadProfile(EXAMPLE, process.env);
    const r = p.resources!;
    expect(r.clinical_document?.encounter_id).toBe(r.own_encounter?.encounter_id);
    expect(r.other_org_document?.encounter_id).toBe(r.other_org_encounter?.encounter_id);
    expect(r.demo_document?.encounter_id).toBe(r.demo_encounter?.encounter_id);
  });
});
