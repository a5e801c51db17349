// The ready handshake between `conformance run` and its runner (observe/ready.ts): the workers wait for the file
// the CLI writes once the target may be used; `ready <sha256>` hands them the digest of the profile the CLI
// validated; any other text is the reason the run cannot go on, and the reporter then writes no report.
// Also the CLI shim's compile cache folder: this user's own, or none.
import { test, expect } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FullConfig, FullResult, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import ConformanceReporter from '../reports/conformance-reporter.ts';
import { encodeCheckAnnotation } from '../record/record.ts';
import { readyState, waitForReady, writeReady } from '../engine/ready.ts';
import { profileDigest } from '../profile/profile.ts';
import { lanesFor } from '../engine/preflight.ts';
import { inFlight } from '../engine/pool.ts';
import { settingName } from '../engine/config.ts';
import { withEnv, withStdout } from './helpers/env.ts';

const DIGEST_ENV = 'CONFORMANCE_PROFILE_SHA256';
const READY_ENV = 'CONFORMANCE_WAIT_READY';

test('ready, ready with a digest, a reason, nothing yet: each read as what it says; only a well-formed digest is adopted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-ready-'));
  const file = path.join(dir, 'ready');
  const digest = profileDigest('{"name":"x"}');
  const saved = process.env[DIGEST_ENV];
  delete process.env[DIGEST_ENV];
  try {
    expect(readyState(file)).toBeUndefined();
    writeReady(file, 'ready');
    expect(readyState(file)).toEqual({ ready: true });
    expect(process.env[DIGEST_ENV]).toBeUndefined();
    writeReady(file, `ready ${digest}`);
    await waitForReady(file, 1000);
    expect(process.env[DIGEST_ENV]).toBe(digest);
    delete process.env[DIGEST_ENV];
    // Not a digest: the run cannot go on, and nothing is trusted.
    writeReady(file, 'ready not-a-digest');
    expect(readyState(file)).toEqual({ ready: false, reason: 'ready not-a-digest' });
    expect(process.env[DIGEST_ENV]).toBeUndefined();
    writeReady(file, 'target http://127.0.0.1:1 is unreachable: connection_refused');
    await expect(waitForReady(file, 1000)).rejects.toThrow('unreachable: connection_refused');
    fs.rmSync(file);
    await expect(waitForReady(file, 100)).rejects.toThrow('was not ready within');
  } finally {
    if (saved === undefined) delete process.env[DIGEST_ENV];
    else process.env[DIGEST_ENV] = saved;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a distant target: the CLI advises more checks in flight, which a worker takes only where no --in-flight was set', () => {
  // The default near (under 60 ms: a busy machine answers that slowly), more far away (the answer's time ÷ 3 ms), at most 64.
  expect([1, 24, 59, 60, 150, 400].map(lanesFor)).toEqual([undefined, undefined, undefined, 20, 50, 64]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-ready-lanes-'));
  const file = path.join(dir, 'ready');
  const env = settingName('inFlight');
  const saved = process.env[env];
  try {
    delete process.env[env];
    writeReady(file, 'ready in-flight=50');
    expect(readyState(file)).toEqual({ ready: true });
    expect(process.env[env]).toBe('50');
    expect(inFlight()).toBe(50);
    // The user's own --in-flight wins.
    process.env[env] = '4';
    expect(readyState(file)).toEqual({ ready: true });
    expect(process.env[env]).toBe('4');
    // Anything else after `ready` is not a ready file.
    writeReady(file, 'ready in-flight=lots');
    expect(readyState(file)).toEqual({ ready: false, reason: 'ready in-flight=lots' });
  } finally {
    if (saved === undefined) delete process.env[env];
    else process.env[env] = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function fakeTest(title: string): TestCase {
  return {
    id: `id-${title}`, title, location: { file: path.join(process.cwd(), 'suites/fake.spec.ts'), line: 1, column: 1 },
    parent: { project: () => ({ name: 'conformance' }) }, outcome: () => 'expected',
  } as unknown as TestCase;
}

/** A reporter run of one passing check, with the ready file saying `ready`; returns the files written. */
function reporterRun(readyText: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-ready-reporter-'));
  const ready = path.join(dir, 'ready');
  writeReady(ready, readyText);
  const out = path.join(dir, 'out');
  return withEnv({ [READY_ENV]: ready, [DIGEST_ENV]: undefined }, () => {
    const reporter = new ConformanceReporter({ outDir: out });
    reporter.onBegin({ shard: null } as unknown as FullConfig, { allTests: () => [fakeTest('t')] } as unknown as Suite);
    const rec = encodeCheckAnnotation({ id: 'a-check', requirements: ['AUTH-401-MISSING-BEARER'], title: 'A', outcome: 'pass' });
    reporter.onTestEnd(fakeTest('t'), { annotations: [rec], attachments: [], status: 'passed', duration: 1, errors: [] } as unknown as TestResult);
    withStdout(() => reporter.onEnd({ status: 'passed' } as FullResult));
    return fs.existsSync(out) ? fs.readdirSync(out).sort() : [];
  });
}

test('a run whose target may not be used writes no report; a ready one does', () => {
  expect(reporterRun('ready')).toEqual(expect.arrayContaining(['conformance.json', 'outcomes.json']));
  expect(reporterRun('reference implementation did not start: initdb failed')).toEqual([]);
});

test.describe('the compile cache folder of the CLI shim', () => {
  const SHIM = path.resolve(import.meta.dirname, '../cli/conformance.mjs');
  /** Runs `conformance run --help` with TMPDIR `tmp` and no compile-cache variable of the caller's. */
  function help(tmp: string): void {
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    const r = spawnSync(process.execPath, [SHIM, 'run', '--help'], { env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  }
  const files = (dir: string): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());

  test('made 0700 under the temporary folder and filled; one others may write to is left unused', () => {
    test.skip(typeof process.getuid !== 'function', 'POSIX only');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-ncc-'));
    const dir = path.join(tmp, `conformance-compile-cache-${process.getuid!()}`);
    help(tmp);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(files(dir).length).toBeGreaterThan(0);
    fs.rmSync(dir, { recursive: true });
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chmodSync(dir, 0o777);
    help(tmp);
    expect(files(dir)).toEqual([]);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
