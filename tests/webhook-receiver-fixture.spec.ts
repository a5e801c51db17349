// The receiver under test across processes: global setup (cli/global-setup.ts) starts the example receiver
// once per sandbox run and names it to the workers through the CONFORMANCE_SANDBOX_RECEIVER_* settings;
// the worker fixture (harness/webhook/receiver-fixture.ts) judges it with the follow-up count read over
// HTTP from the counting API. A sandbox run without the receiver is an error, never a pass; a run against
// a target ignores an inherited sandbox receiver; a run of the project's own tests starts none.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { settingName, type Setting } from '../harness/config.ts';
import { readCount, startCountingApi } from '../harness/webhook/counting-api.ts';
import { provideReceiver, type ReceiverUnderTest } from '../harness/webhook/receiver-fixture.ts';
import { conformanceProjectSelected } from '../cli/global-setup.ts';

const KEYS: Setting[] = ['profile', 'sandbox', 'sandboxReceiverUrl', 'sandboxReceiverSecret', 'sandboxReceiverCountUrl', 'sandboxReceiverError', 'setupError'];
let saved: Record<string, string | undefined> = {};
let dir: string;

test.beforeEach(() => {
  saved = Object.fromEntries(KEYS.map((k) => [settingName(k), process.env[settingName(k)]]));
  for (const k of KEYS) delete process.env[settingName(k)];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-receiver-fixture-'));
  // A profile that names no partner receiver: the sandbox settings decide.
  const profile = path.join(dir, 'p.profile.json');
  fs.writeFileSync(profile, JSON.stringify({ name: 'fixture-test', baseUrl: 'http://127.0.0.1:9', credentials: {} }));
  process.env[settingName('profile')] = profile;
});

test.afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function provided(): Promise<ReceiverUnderTest> {
  let got: ReceiverUnderTest | undefined;
  await provideReceiver(async (r) => {
    got = r;
  });
  return got!;
}

test('the counting API serves its count over HTTP on a port of its own; reading it counts nothing', async () => {
  const api = await startCountingApi();
  try {
    const url = await api.countEndpoint();
    expect(new URL(url).port).not.toBe(new URL(api.baseUrl).port);
    expect(await readCount(url)).toBe(0);
    await (await fetch(`${api.baseUrl}/external/v1/encounters/enc_1`)).arrayBuffer();
    await (await fetch(`${api.baseUrl}/external/v1/encounters/enc_1/documents/doc_1`)).arrayBuffer();
    expect(await readCount(url)).toBe(2);
    expect(await readCount(url)).toBe(2);
    expect(api.count()).toBe(2);
    expect(await api.countEndpoint()).toBe(url);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  } finally {
    await api.close();
  }
});

test('in a sandbox run the fixture judges the receiver global setup named, with the count read over HTTP', async () => {
  const api = await startCountingApi();
  try {
    process.env[settingName('sandbox')] = '1';
    process.env[settingName('sandboxReceiverUrl')] = 'http://127.0.0.1:9/webhook';
    process.env[settingName('sandboxReceiverSecret')] = 'whsec_fixture_test_0a1b2c3d';
    process.env[settingName('sandboxReceiverCountUrl')] = await api.countEndpoint();
    const r = await provided();
    if (!('ctx' in r)) throw new Error(`expected a receiver, got: ${r.notVerified}`);
    expect(r.ctx.opts.url).toBe('http://127.0.0.1:9/webhook');
    expect(r.ctx.opts.secret).toBe('whsec_fixture_test_0a1b2c3d');
    expect(await r.ctx.followUps()).toBe(0);
    await (await fetch(`${api.baseUrl}/external/v1/encounters/enc_1`)).arrayBuffer();
    expect(await r.ctx.followUps()).toBe(1);
  } finally {
    await api.close();
  }
});

test('a sandbox run without the example receiver is a setup error naming why, never a pass', async () => {
  process.env[settingName('sandbox')] = '1';
  await expect(provided()).rejects.toThrow(/global setup \(cli\/global-setup\.ts\) did not start it/);
  process.env[settingName('sandboxReceiverError')] = 'the example webhook receiver did not start: no PostgreSQL';
  await expect(provided()).rejects.toThrow('the example webhook receiver did not start: no PostgreSQL');
});

test('a run against a target ignores an inherited sandbox receiver: not verified without webhook.receiverUrl', async () => {
  process.env[settingName('sandboxReceiverUrl')] = 'http://127.0.0.1:9/webhook';
  process.env[settingName('sandboxReceiverSecret')] = 'whsec_fixture_test_0a1b2c3d';
  process.env[settingName('sandboxReceiverCountUrl')] = 'http://127.0.0.1:9/count';
  expect(await provided()).toEqual({ notVerified: 'profile lacks webhook.receiverUrl (the receiver under test)' });
});

test('global setup starts the example receiver unless the command line names only other projects', () => {
  const run = (...args: string[]) => conformanceProjectSelected(['node', 'playwright', 'test', ...args]);
  expect(run()).toBe(true);
  expect(run('tests/a.spec.ts')).toBe(true);
  expect(run('--project=conformance')).toBe(true);
  expect(run('--project=unit', '--project=conformance')).toBe(true);
  expect(run('--project', 'unit', 'conformance')).toBe(true);
  expect(run('--project=conf*')).toBe(true);
  expect(run('--project=unit')).toBe(false);
  expect(run('--project', 'unit', '--grep', 'x')).toBe(false);
  expect(run('tests/mutants.spec.ts', '--project=unit')).toBe(false);
});
