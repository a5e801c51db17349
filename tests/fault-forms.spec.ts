// Issue 38: a real deployment has no per-request fault switches; it has each condition in another form (a key, a
// document, another environment, an operator's on/off switch). The sandbox judged through each form, by the
// deployment double (tests/helpers/deployment-double.ts), gives the same outcomes as through its headers; a
// credential, which joins no other caller, leaves the order checks that pair it not verified, saying which form
// would judge them; an 'on' command that fails leaves its checks not verified and 'off' still runs.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { runCli } from './helpers/cli-process.ts';
import { startDeploymentDouble, type DeploymentDouble } from './helpers/deployment-double.ts';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

let ref: ReferenceHandle;
let dbl: DeploymentDouble;
let base: Record<string, any>;
let dir: string;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  ref = await startReference();
  base = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8'));
  const switches = Object.fromEntries(Object.entries(base.faults as Record<string, { headers: Record<string, string> }>).map(([k, v]) => [k, v.headers]));
  dbl = await startDeploymentDouble({ base: base.baseUrl, switches, fullKey: base.credentials.full.key, testKey: base.credentials.test_key.key, audioDocument: base.resources.ambient_transcript_with_audio });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fault-forms-'));
});

test.afterAll(async () => {
  await dbl?.close();
  await ref?.stop();
});

/** The checks that need a condition, and a cheap neighbour of each kind to keep the run honest. */
const GREP = '(auth-|order-auth-|errors-category-503|errors-audio-storage|access-audio-storage)';

/** A staging profile through the double: the sandbox's keys and ids, no switchboard, the given conditions. */
function profileWith(name: string, faults: Record<string, unknown>, credentials: Record<string, unknown> = base.credentials): string {
  const p = { name: `double ${name}`, baseUrl: dbl.staging, timeouts: base.timeouts, credentials, resources: base.resources, faults, webhook: { delivery: 'not_activated' } };
  const file = path.join(dir, `${name}.profile.json`);
  fs.writeFileSync(file, JSON.stringify(p, null, 2));
  return file;
}

async function outcomes(name: string, faults: Record<string, unknown>, credentials?: Record<string, unknown>): Promise<Map<string, { outcome: string; detail?: string }>> {
  const out = path.join(dir, `out-${name}`);
  const r = await runCli(['run', '--profile', profileWith(name, faults, credentials), '--out', out, '--grep', GREP], { timeoutMs: 200_000, sampleMs: 0 });
  expect(r.code, r.stderr.slice(-2000)).not.toBe(2);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { checks: { id: string; outcome: string; detail?: string }[] };
  return new Map(report.checks.map((c) => [c.id, { outcome: c.outcome, detail: c.detail }]));
}

const sameOutcomes = (a: Map<string, { outcome: string }>, b: Map<string, { outcome: string }>) => {
  expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
  const differ = [...a].filter(([id, x]) => b.get(id)?.outcome !== x.outcome).map(([id, x]) => `${id}: ${x.outcome} → ${b.get(id)?.outcome}`);
  expect(differ).toEqual([]);
};

let viaHeaders: Map<string, { outcome: string; detail?: string }>;

test('through the sandbox\'s headers, every condition\'s checks pass (the baseline the forms are compared with)', async () => {
  viaHeaders = await outcomes('headers', base.faults);
  expect(viaHeaders.size).toBeGreaterThan(40);
  expect([...viaHeaders.values()].filter((x) => x.outcome !== 'pass' && x.outcome !== 'informational')).toEqual([]);
});

test('test_prefix_not_allowed as a credential (a test-prefixed key of an environment that refuses test keys): the same outcomes, no credentials.test_key needed', async () => {
  const credentials = Object.fromEntries(Object.entries(base.credentials as Record<string, unknown>).filter(([role]) => role !== 'test_key'));
  const got = await outcomes('credential', { ...base.faults, test_prefix_not_allowed: { credential: { key: dbl.refusedTestKey } } }, credentials);
  sameOutcomes(viaHeaders, got);
});

test('audio_storage_unavailable as a resource (a document whose audio storage is offline): the same outcomes', async () => {
  const got = await outcomes('resource', { ...base.faults, audio_storage_unavailable: { resource: dbl.offlineDocument } });
  sameOutcomes(viaHeaders, got);
});

test('api_keys_disabled as another environment (baseUrl): the same outcomes, the order checks sending their callers\' keys there', async () => {
  const got = await outcomes('baseurl', { ...base.faults, api_keys_disabled: { baseUrl: dbl.keysOff } });
  sameOutcomes(viaHeaders, got);
});

test('digest_key_unavailable as an on/off command (a process-wide switch): the same outcomes; its checks ran while it was on, and it is off afterwards', async () => {
  const flip = (side: string) => ['node', '-e', `fetch(process.env.CONFORMANCE_BASE_URL + '/__double/switch/digest_key_unavailable/${side}', { method: 'POST' }).then((r) => process.exit(r.status === 204 ? 0 : 1))`];
  const got = await outcomes('command', { ...base.faults, digest_key_unavailable: { command: { on: flip('on'), off: flip('off') } } });
  sameOutcomes(viaHeaders, got);
  expect(dbl.switchedOn.size).toBe(0);
});

test('a failing on command: its checks are not verified, naming the command\'s end; off still runs; nothing else changes', async () => {
  const marker = path.join(dir, 'off-ran');
  const got = await outcomes('command-fails', { ...base.faults, digest_key_unavailable: { command: { on: ['node', '-e', 'console.error("operator API refused"); process.exit(3)'], off: ['node', '-e', `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`] } } });
  expect(fs.existsSync(marker)).toBe(true);
  const digest = [...got].filter(([id]) => /digest-key-unavailable|errors-category-503/.test(id));
  expect(digest.length).toBeGreaterThan(5);
  for (const [, x] of digest) {
    expect(x.outcome).toBe('not_verified');
    expect(x.detail).toContain('ended with exit status 3 (operator API refused)');
  }
  const others = [...got].filter(([id]) => !/digest-key-unavailable|errors-category-503/.test(id));
  expect(others.every(([id, x]) => viaHeaders.get(id)?.outcome === x.outcome)).toBe(true);
});

test('digest_key_unavailable as a credential: each route\'s own check passes; the order checks that pair it with another caller are not verified, saying a credential joins no other caller', async () => {
  const got = await outcomes('credential-digest', { ...base.faults, digest_key_unavailable: { credential: { key: dbl.retiredDigestKey } } });
  for (const route of ['list', 'encounter', 'document', 'transcript', 'audio']) expect(got.get(`auth-digest-key-unavailable-${route}`)?.outcome).toBe('pass');
  expect(got.get('errors-category-503')?.outcome).toBe('pass');
  const paired = [...got].filter(([id]) => /^order-auth-before-.*digest-key-unavailable/.test(id));
  expect(paired.length).toBeGreaterThan(5);
  for (const [, x] of paired) {
    expect(x.outcome).toBe('not_verified');
    expect(x.detail).toContain('joins no other caller');
  }
});

test('live data: the sandbox creating an encounter every 150 ms throughout a complete run is still CONFORMANT (the walks that moved are compared bounded before they began)', async () => {
  const token = ref.switchboardToken;
  let created = 0;
  const live = setInterval(() => {
    void fetch(`${base.baseUrl}/__sandbox/encounters`, { method: 'POST', headers: { 'x-switchboard-token': token } }).then((r) => r.status === 201 && created++, () => undefined);
  }, 150);
  try {
    const out = path.join(dir, 'out-live');
    const r = await runCli(['run', '--profile', ref.profilePath, '--out', out], { timeoutMs: 220_000, sampleMs: 0 });
    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { verdict: string; verdictReason: string; checks: { id: string; outcome: string; detail?: string }[] };
    expect(created, 'encounters were created during the run').toBeGreaterThan(30);
    expect(report.checks.filter((c) => c.outcome === 'not_verified' || c.outcome === 'fail').map((c) => `${c.id}: ${c.detail}`)).toEqual([]);
    expect(report.verdict, report.verdictReason).toBe('conformant');
    expect(r.code).toBe(0);
  } finally {
    clearInterval(live);
  }
});

test('an audio URL living a few seconds is judged without any switch: waited for within --audio-expiry-wait, not verified (naming the option) beyond it', async () => {
  const short = await startReference({ args: ['--audio-ttl-seconds', '4'] });
  try {
    const p = JSON.parse(fs.readFileSync(short.profilePath, 'utf8'));
    delete p.faults.audio_url_expires_soon;
    const file = path.join(dir, 'short-ttl.profile.json');
    fs.writeFileSync(file, JSON.stringify(p));
    const judged = async (extra: string[], name: string) => {
      const out = path.join(dir, `out-${name}`);
      await runCli(['run', '--profile', file, '--out', out, '--grep', 'audio-url-refused-after-expiry', ...extra], { timeoutMs: 120_000, sampleMs: 0 });
      return (JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { checks: { id: string; outcome: string; detail?: string }[] }).checks.find((c) => c.id === 'audio-url-refused-after-expiry')!;
    };
    expect((await judged([], 'ttl-waited')).outcome).toBe('pass');
    const beyond = await judged(['--audio-expiry-wait', '1'], 'ttl-beyond');
    expect(beyond.outcome).toBe('not_verified');
    expect(beyond.detail).toMatch(/at most 1 s is waited for \(--audio-expiry-wait S\), or give faults\.audio_url_expires_soon/);
  } finally {
    await short.stop();
  }
});
