// The `conformance` CLI seen from outside, through child processes (async spawn: a synchronous one would
// starve the in-process fake target): usage and setup errors exit 2 with ONE line, a non-conformant
// target exits 1, the main job (reference started, every suite run) writes a schema-valid report, and
// `merge` joins shard outputs.
import { test, expect } from '@playwright/test';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { check, outcomes, waiver } from './helpers/report-data.ts';
import { startReference } from '../engine/reference/process.ts';
import { freePort } from '../platform/embedded-cluster.ts';
import { processTree, runCli, ROOT, SHIM, type CliResult } from './helpers/cli-process.ts';
import { allDeclaredChecks } from '../engine/declared-checks.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The CLI as a child process (tests/helpers/cli-process.ts), without memory sampling. */
const cli = (args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}) => runCli(args, { ...opts, sampleMs: 0 });

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cec-cli-'));
}

function writeJson(dir: string, name: string, data: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof data === 'string' ? data : JSON.stringify(data));
  return f;
}

function expectOneLine(r: CliResult, pattern: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^conformance: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

test.describe('usage and setup errors exit 2 with one line', () => {
  test('unknown option', async () => {
    const r = await cli(['run', '--bogus']);
    expect(r.code).toBe(2);
    expectOneLine(r, /unknown option --bogus/);
  });

  test('unknown command and missing command', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(2);
    expectOneLine(r, /unknown command frobnicate/);
    const none = await cli([]);
    expect(none.code).toBe(2);
    expectOneLine(none, /missing command/);
  });

  test('missing profile file names the file', async () => {
    const file = path.join(tmp(), 'absent.profile.json');
    const r = await cli(['run', '--profile', file]);
    expect(r.code).toBe(2);
    expectOneLine(r, new RegExp(`cannot read profile ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOENT`));
  });

  test('malformed profile names the field', async () => {
    const dir = tmp();
    const bad = writeJson(dir, 'bad.json', { name: 'x', baseUrl: 'http://127.0.0.1:1', credentials: { full: { key: 'k_live_abcdef' } }, colour: 'blue' });
    const r = await cli(['run', '--profile', bad]);
    expect(r.code).toBe(2);
    expectOneLine(r, /field \(root\) must NOT have additional properties 'colour'/);
    const badUrl = writeJson(dir, 'bad-url.json', { name: 'x', baseUrl: 'ftp://h', credentials: {} });
    const r2 = await cli(['run', '--profile', badUrl]);
    expect(r2.code).toBe(2);
    expectOneLine(r2, /field \/baseUrl/);
    const notJson = writeJson(dir, 'not-json.json', '{"name": ');
    const r3 = await cli(['run', '--profile', notJson]);
    expect(r3.code).toBe(2);
    expectOneLine(r3, /is not valid JSON/);
  });

  test('unreachable target exits 2 within a few seconds', async () => {
    const port = await freePort();
    const profile = writeJson(tmp(), 'p.json', { name: 'dead', baseUrl: `http://127.0.0.1:${port}`, credentials: {} });
    const r = await cli(['run', '--profile', profile]);
    expect(r.code).toBe(2);
    // What was tried and what to check next (issue 40).
    expectOneLine(r, new RegExp(`target http://127\\.0\\.0\\.1:${port} is unreachable: connection_refused \\(one TCP connection to 127\\.0\\.0\\.1:${port} was tried\\): is the service running, on this port, and listening on an address this machine reaches\\? The profile's baseUrl, or --target, names it$`));
    expect(r.ms).toBeLessThan(8_000);
  });

  test('--target overrides the profile base URL', async () => {
    const port = await freePort();
    const profile = writeJson(tmp(), 'p.json', { name: 'x', baseUrl: 'http://127.0.0.1:1', credentials: {} });
    const r = await cli(['run', '--target', `http://127.0.0.1:${port}/`, '--profile', profile]);
    expect(r.code).toBe(2);
    expectOneLine(r, new RegExp(`target http://127\\.0\\.0\\.1:${port} is unreachable`));
  });

  test('--target without --profile, bad --shard, bad --seed, bad --db', async () => {
    for (const [args, re] of [
      [['run', '--target', 'http://127.0.0.1:1'], /--target needs --profile/],
      [['run', '--shard', '3/2'], /--shard must be I\/N/],
      [['run', '--seed', 'abc'], /--seed must be an integer/],
      [['run', '--db', 'sqlite'], /--db must be one of embedded, container, url/],
      [['run', '--grep', '('], /--grep is not a valid regular expression/],
    ] as [string[], RegExp][]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expectOneLine(r, re);
    }
  });

  test('an invalid waiver file is a setup error naming the field', async () => {
    const dir = tmp();
    const w = writeJson(dir, 'w.json', [{ id: 'X', reason: 'r', owner: 'o', expires: 'soon' }]);
    const r = await cli(['run', '--waivers', w, '--profile', writeJson(dir, 'p.json', { name: 'x', baseUrl: 'http://127.0.0.1:1', credentials: {} })]);
    expect(r.code).toBe(2);
    expectOneLine(r, /waivers .*w\.json: field \/0\/expires must match pattern/);
  });

  test('--help for each command exits 0 on stdout', async () => {
    for (const args of [['--help'], ['run', '--help'], ['serve', '--help'], ['merge', '--help']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: conformance/);
      expect(r.stderr).toBe('');
    }
  });
});

/** Every live descendant of `pid` (from /proc), with its command line: what a stuck stop leaves behind. */
function descendants(pid: number): { pid: number; cmd: string }[] {
  return processTree(pid).filter((p) => p !== pid).map((p) => {
    try {
      return { pid: p, cmd: fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 160) };
    } catch {
      return { pid: p, cmd: '' }; // gone
    }
  });
}

test.describe('serve', () => {
  // Every wait is bounded by its own timer with a message naming the stage and what was still running,
  // so a slow or stuck stop fails with evidence instead of the bare test timeout.
  // SIGINT to serve alone (a supervisor), Ctrl-C in a terminal (SIGINT to the whole process group, so the
  // reference and its PostgreSQL get it too while serve forwards its own stop), and serve killed outright:
  // the reference notices its parent is gone (its stdin ends) and still shuts down in order.
  const WAYS = { serve: 'SIGINT to serve', group: 'SIGINT to the process group (Ctrl-C)', killed: 'SIGKILL of serve (the sandbox must not outlive it)' } as const;
  for (const how of Object.keys(WAYS) as (keyof typeof WAYS)[]) test(`starts the sandbox, writes its profile, and stops cleanly on ${WAYS[how]}`, async () => {
    test.skip(!fs.existsSync(path.join(ROOT, 'reference-impl/main.ts')), 'reference-impl/main.ts is not there yet');
    test.setTimeout(240_000);
    const profileOut = path.join(tmp(), 'sandbox.profile.json');
    const env = { ...process.env };
    delete env.CONFORMANCE_PROFILE;
    const child = spawn(process.execPath, [SHIM, 'serve', '--profile-out', profileOut], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: how === 'group' });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    let endedBy: NodeJS.Signals | null = null;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => {
      endedBy = signal;
      resolve(code);
    }));
    const within = <T,>(p: Promise<T>, ms: number, what: string): Promise<T> =>
      Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s; serve ${child.exitCode === null ? `(pid ${child.pid}) still running` : `exited ${child.exitCode}`}, its processes ${JSON.stringify(descendants(child.pid!))}; stderr tail: ${stderr.slice(-1500)}; stdout tail: ${stdout.slice(-500)}`)), ms).unref())]);
    let tree: { pid: number; cmd: string }[] = [];
    try {
      await within(
        new Promise<void>((resolve, reject) => {
          child.stderr.on('data', (d: Buffer) => {
            stderr += d;
            // The reference's own line (with its data folder) and serve's line come through one pipe in either order.
            if (/conformance: sandbox at http:\/\/\S+; profile in /.test(stderr) && /data dir \S+ \(temporary\)/.test(stderr)) resolve();
          });
          void exited.then((code) => reject(new Error(`serve exited early with ${code}: ${stderr.slice(-1500)}`)));
        }),
        150_000,
        'serve was not ready',
      );
      expect(JSON.parse(fs.readFileSync(profileOut, 'utf8')).baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      tree = descendants(child.pid!);
      expect(tree.length, 'the sandbox runs the reference (and its PostgreSQL) as child processes').toBeGreaterThan(0);
      const dataDir = /data dir (\S+) \(temporary\)/.exec(stderr)?.[1];
      expect(dataDir, 'the reference names its temporary data folder').toBeTruthy();
      if (how === 'group') process.kill(-child.pid!, 'SIGINT');
      else child.kill(how === 'killed' ? 'SIGKILL' : 'SIGINT');
      const code = await within(exited, 30_000, `serve did not exit after ${how === 'killed' ? 'SIGKILL' : 'SIGINT'}`);
      if (how !== 'killed') {
        expect(code, `serve ended by signal ${endedBy}; stderr tail: ${stderr.slice(-800)}`).toBe(0);
        expect(stderr).toContain('conformance: stopping the sandbox');
      }
      // Stopping the sandbox stops what it started: no process of the tree outlives the stop for long.
      const deadline = Date.now() + 15_000;
      const alive = (pid: number) => {
        try {
          return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        } catch {
          return false;
        }
      };
      let left = tree.filter((t) => alive(t.pid));
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        left = left.filter((t) => alive(t.pid));
      }
      expect(left, 'processes of the sandbox still running 15 s after serve exited').toEqual([]);
      expect(fs.existsSync(dataDir!), `the temporary data folder ${dataDir} is removed`).toBe(false);
    } finally {
      for (const t of [{ pid: child.pid! }, ...tree, ...descendants(child.pid!)]) {
        try {
          process.kill(t.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  });
});

test.describe('merge', () => {
  // End to end: two real shards (each starts its own reference) split the checks without overlap and merge
  // into one report holding exactly the checks of the unsharded selection. A slice (--grep) keeps it short.
  test('two real shards of a run merge into one report of exactly the unsharded checks', async () => {
    test.setTimeout(240_000);
    test.skip(!fs.existsSync(path.join(ROOT, 'reference-impl/main.ts')), 'reference-impl/main.ts is not there yet');
    const dir = tmp();
    const grep = 'order-route-before-';
    const shards = [];
    for (const shard of ['1/2', '2/2']) {
      const r = await cli(['run', '--grep', grep, '--shard', shard, '--out', dir], { timeoutMs: 180_000 });
      expect(r.code, r.stderr).toBe(0);
      shards.push(JSON.parse(fs.readFileSync(path.join(dir, `shard-${shard.replace('/', '-of-')}`, 'conformance.json'), 'utf8')) as { checks: { id: string }[] });
    }
    const [a, b] = shards.map((s) => s.checks.map((c) => c.id));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    expect(a.filter((id) => b.includes(id)), 'a check in both shards').toEqual([]);
    const merged = path.join(dir, 'merged');
    const m = await cli(['merge', '--out', merged, path.join(dir, 'shard-1-of-2'), path.join(dir, 'shard-2-of-2')]);
    expect(m.code, m.stderr).toBe(0);
    const report = JSON.parse(fs.readFileSync(path.join(merged, 'conformance.json'), 'utf8')) as { checks: { id: string }[]; run: { shards: string[] } };
    expect(report.run.shards).toEqual(['1/2', '2/2']);
    // The unsharded selection: every declared service check whose id the grep matches.
    const titles = (await allDeclaredChecks('service')).map((d) => d.id).filter((id) => new RegExp(grep).test(id));
    expect(titles.length).toBeGreaterThan(0);
    expect(report.checks.map((c) => c.id).sort()).toEqual([...new Set(titles)].sort());
  });

  test('joins two shard outcome files into one report; exit follows the merged verdict', async () => {
    const dir = tmp();
    const s1 = path.join(dir, 'shard-1-of-2');
    const s2 = path.join(dir, 'shard-2-of-2');
    fs.mkdirSync(s1);
    fs.mkdirSync(s2);
    writeJson(s1, 'outcomes.json', outcomes([check('auth-missing-bearer-list', 'pass', ['AUTH-401-MISSING-BEARER']), check('list-limit-default', 'pass', ['LIST-LIMIT-DEFAULT'])], { shard: '1/2', runStatus: 'passed' }));
    writeJson(s2, 'outcomes.json', outcomes([check('list-limit-rejects-plus-sign', 'fail', ['LIST-LIMIT-CANONICAL'], { detail: 'expected 400, got 200' }), check('list-order-of-ties', 'informational', ['LIST-ORDER-TIES'])], { shard: '2/2', runStatus: 'failed' }));
    const out = path.join(dir, 'merged');
    const r = await cli(['merge', '--out', out, s1, s2]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.trim().split('\n')[0]).toBe('conformance: 2 passed, 1 failed, 0 warnings, 0 not verified, 1 informational');
    // The verdict line is on stdout, where CI captures a step's result.
    expect(r.stdout).toMatch(/^conformance: NOT CONFORMANT — service: 1 check failed; reports in /m);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
    expect(report.run.shards).toEqual(['1/2', '2/2']);
    expect(report.checks.map((c: { id: string }) => c.id)).toEqual(['auth-missing-bearer-list', 'list-limit-default', 'list-limit-rejects-plus-sign', 'list-order-of-ties']);
    expect(fs.readFileSync(path.join(out, 'junit.xml'), 'utf8')).toContain('name="list-limit-rejects-plus-sign"');
    expect(fs.readFileSync(path.join(out, 'conformance.html'), 'utf8')).toContain('NOT CONFORMANT');

    const waivers = writeJson(dir, 'waivers.json', [waiver('list-limit-rejects-plus-sign')]);
    // Waived, nothing fails; four checks verify a handful of must requirements: INCOMPLETE (exit 1), exit 0 when allowed.
    const w = await cli(['merge', '--out', path.join(dir, 'merged-waived'), '--waivers', waivers, s1, s2]);
    expect(w.code, w.stderr).toBe(1);
    expect(w.stdout.trim().split('\n')[0]).toBe('conformance: 2 passed, 0 failed, 0 warnings, 0 not verified, 1 informational, 1 waived');
    expect(w.stdout).toMatch(/conformance: INCOMPLETE — service: verified \d+ of \d+ must requirements in scope/);
    const allowed = await cli(['merge', '--out', path.join(dir, 'merged-allowed'), '--waivers', waivers, '--allow-incomplete', s1, s2]);
    expect(allowed.code, allowed.stderr).toBe(0);

    const expired = writeJson(dir, 'expired.json', [waiver('list-limit-rejects-plus-sign', '2020-01-01')]);
    const x = await cli(['merge', '--out', path.join(dir, 'merged-expired'), '--waivers', expired, s1, s2]);
    expect(x.code).toBe(1);
    expect(x.stderr).toContain('conformance: problem: waiver list-limit-rejects-plus-sign (owner api-team) expired on 2020-01-01');
  });

  test('a shard folder without outcomes.json is a setup error', async () => {
    const dir = tmp();
    const r = await cli(['merge', '--out', path.join(dir, 'm'), dir]);
    expect(r.code).toBe(2);
    expectOneLine(r, /cannot read .*outcomes\.json: ENOENT/);
  });
});

test.describe('run against a target', () => {
  test.describe.configure({ timeout: 300_000 });

  test('a target that answers 200 to everything is not conformant: exit 1, reports written', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const dir = tmp();
      const profile = writeJson(dir, 'p.json', { name: 'always-200', baseUrl: `http://127.0.0.1:${port}`, credentials: { full: { key: 'k_live_cli_test_0123456789' } } });
      const out = path.join(dir, 'out');
      // A mutation score left by another run must not be reported as this run's.
      fs.mkdirSync(out, { recursive: true });
      writeJson(out, 'mutation.json', { total: 9, caught: 9, score: 1, survivors: [], unproven: [] });
      const r = await cli(['run', '--profile', profile, '--out', out, '--grep', 'auth-missing-bearer-list$', '--workers', '1'], { timeoutMs: 240_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stdout).toMatch(/^conformance: \d+ passed, [1-9]\d* failed, \d+ warnings, \d+ not verified, \d+ informational/m);
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
      expect(report.verdict).toBe('not_conformant');
      expect(report.mutation).toBeNull();
      expect(report.run.target).toEqual({ name: 'always-200', baseUrl: `http://127.0.0.1:${port}` });
      // The mutation score can only be measured against the reference sandbox.
      const m = await cli(['run', '--mutants', '--profile', profile, '--target', `http://127.0.0.1:${port}`, '--out', out]);
      expect(m.code).toBe(2);
      expectOneLine(m, /--mutants needs the reference sandbox/);
      for (const f of ['junit.xml', 'conformance.html', 'outcomes.json']) expect(fs.existsSync(path.join(out, f)), f).toBe(true);
      for (const f of fs.readdirSync(out).filter((x) => x !== 'test-results')) expect(fs.readFileSync(path.join(out, f), 'utf8')).not.toContain('k_live_cli_test_0123456789');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test('the main job: no target starts the reference, runs every suite, writes a schema-valid report', async () => {
    const out = path.join(tmp(), 'out');
    const r = await cli(['run', '--out', out], { timeoutMs: 280_000 });
    // The reference is the specification made executable: the main job against it is conformant.
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/report/conformance-report.schema.json'), 'utf8')));
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.run.target.name).toMatch(/^reference-impl/);
    expect(report.checks.length).toBeGreaterThan(0);
    // The exit code is the report's verdict, nothing else.
    expect(r.code).toBe(report.verdict === 'conformant' ? 0 : 1);
    expect(r.stdout).toMatch(/^conformance: \d+ passed, \d+ failed, \d+ warnings, \d+ not verified, \d+ informational/m);
  });

  test('against a mutant of the reference: exit 1, and the HTML names the failing requirement with its evidence', async () => {
    const ref = await startReference({ args: ['--mutant', 'reason-revoked-as-invalid'] });
    try {
      const out = path.join(tmp(), 'out');
      const r = await cli(['run', '--target', ref.baseUrl, '--profile', ref.profilePath, '--out', out, '--grep', 'auth-revoked-key-list$', '--workers', '1'], { timeoutMs: 240_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr).toMatch(/FAIL auth-revoked-key-list: Expected 401 revoked_key/);
      const html = fs.readFileSync(path.join(out, 'conformance.html'), 'utf8');
      expect(html).toContain('NOT CONFORMANT');
      expect(html).toContain('AUTH-401-REVOKED-KEY');
      expect(html).toMatch(/class="evidence"[^]*\/external\/v1\/encounters[^]*invalid_key/);
      const key = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')).credentials.revoked_key.key as string;
      expect(html).not.toContain(key);
    } finally {
      await ref.stop();
    }
  });
});

test('npx conformance in a clone prints no npm engine warning, whatever Node the machine runs npm on (issue 40: quiet terminals)', () => {
  // The machine's own npm and Node first on PATH (here Node 20: npm checks the project's "engines" on every npx).
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => !d.includes('node_modules'));
  const r = spawnSync('npx', ['conformance', '--help'], { cwd: ROOT, env: { ...process.env, PATH: dirs.join(path.delimiter) }, encoding: 'utf8', timeout: 60_000 });
  expect(`${r.stdout}${r.stderr}`).not.toContain('EBADENGINE');
  expect(r.stdout).toMatch(/^Usage: conformance <command>/);
});
