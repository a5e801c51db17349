// The secrets of a profile are listed explicitly from what it declares (profile/profile.ts
// profileSecrets): every credential role it names (inline key or keyEnv value, the `no_scopes_*` roles
// included), the webhook signing secret, and secret-named request and fault header values. The reporter
// process (reports/context.ts loadRunContext) registers them from that one function: a key given by
// variable for a role that a hand-kept role list once missed never reaches a report.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { profileSecrets, validateProfile } from '../profile/profile.ts';
import { redact, REDACTED } from '../record/redact.ts';
import { loadRunContext } from '../reports/context.ts';

const ENV = {
  RP_SPEC_FULL: 'k_live_rp_spec_full_000111',
  RP_SPEC_NO_SCOPES_DOC: 'k_live_rp_spec_noscopes_doc_000222',
  RP_SPEC_NO_SCOPES_ENC: 'k_live_rp_spec_noscopes_enc_000333',
  RP_SPEC_WHSEC: 'whsec_rp_spec_env_000444',
};

function profileData() {
  return {
    name: 'redaction-profile',
    baseUrl: 'http://127.0.0.1:9',
    requestHeaders: { 'x-switchboard-token': 'sbt_rp_spec_000555', 'x-tenant': 'tenant-visible' },
    credentials: {
      full: { keyEnv: 'RP_SPEC_FULL' },
      invalid_key: { key: 'k_live_rp_spec_inline_000666' },
      no_scopes_document_routes_disabled: { keyEnv: 'RP_SPEC_NO_SCOPES_DOC' },
      no_scopes_encounter_routes_disabled: { keyEnv: 'RP_SPEC_NO_SCOPES_ENC' },
      revoked_key: { keyEnv: 'RP_SPEC_UNSET_VARIABLE' },
    },
    faults: { api_keys_disabled: { headers: { 'x-fault': 'api_keys_disabled', 'x-fault-token': 'ft_rp_spec_000777' } } },
    webhook: { signingSecretEnv: 'RP_SPEC_WHSEC' },
  };
}

test('profileSecrets lists every secret the profile resolves to, and nothing that is not one', () => {
  const p = validateProfile(profileData(), 'profile', process.env);
  const secrets = profileSecrets(p, ENV);
  expect(secrets.sort()).toEqual([
    ...Object.values(ENV), 'k_live_rp_spec_inline_000666', 'sbt_rp_spec_000555', 'ft_rp_spec_000777',
  ].sort());
  expect(secrets).not.toContain('api_keys_disabled');
  expect(secrets).not.toContain('tenant-visible');
  // An unset variable resolves to nothing (unresolvedVariables makes it a setup error elsewhere).
  expect(profileSecrets(p, {})).not.toContain(undefined);
});

test('the reporter process registers keys given by variable for every role, the no_scopes_* roles included', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-redaction-profile-'));
  const file = path.join(dir, 'p.json');
  fs.writeFileSync(file, JSON.stringify(profileData()));
  const saved = Object.fromEntries(Object.keys(ENV).map((k) => [k, process.env[k]]));
  try {
    for (const [k, v] of Object.entries(ENV)) expect(redact(`x ${v}`), 'not known before the profile is read').toBe(`x ${v}`);
    Object.assign(process.env, ENV);
    const ctx = loadRunContext({ outDir: dir, profilePath: file });
    expect(ctx.target?.name).toBe('redaction-profile');
    for (const v of Object.values(ENV)) {
      expect(redact(`x ${v} ${encodeURIComponent(v)} ${Buffer.from(v).toString('base64')}`)).toBe(`x ${REDACTED} ${REDACTED} ${REDACTED}`);
    }
    expect(redact('ft_rp_spec_000777 sbt_rp_spec_000555')).toBe(`${REDACTED} ${REDACTED}`);
    expect(redact('api_keys_disabled tenant-visible')).toBe('api_keys_disabled tenant-visible');
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
