// The project works wherever it sits, also as root in a folder only root may enter (root's home is 0700 in
// most CI images): the embedded PostgreSQL clusters run as the "postgres" user from a binary cache that user
// can read (platform/embedded-postgres.ts). Proven from a copy of the project in a fresh 0700 folder (its
// node_modules hard-linked: the paths, which decide who may reach them, are the copy's own): the main job,
// a Playwright run through the global setup, and a closed cache folder as one line, exit 2.
import { test, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './helpers/cli-process.ts';
import { firstClosedFolder, initialiseFromTemplate } from '../platform/embedded-postgres.ts';

const AS_ROOT = process.getuid?.() === 0;

test('firstClosedFolder names the first folder others cannot enter, and nothing for an open path', () => {
  const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-closed-'));
  try {
    fs.chmodSync(outer, 0o755);
    const inner = path.join(outer, 'private');
    fs.mkdirSync(path.join(inner, 'deeper'), { recursive: true });
    fs.chmodSync(inner, 0o700);
    expect(firstClosedFolder(path.join(inner, 'deeper', 'not-made-yet'))).toBe(inner);
    fs.chmodSync(inner, 0o711); // enterable, not listable: enough for a server to reach what it is told
    expect(firstClosedFolder(path.join(inner, 'deeper'))).toBeUndefined();
  } finally {
    fs.rmSync(outer, { recursive: true, force: true });
  }
});

test('a data folder is initialised from the template of an earlier initdb: only one of this user\'s, closed to others, keyed by what initdb was given', async () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-template-'));
  const saved = process.env.CONFORMANCE_PG_CACHE;
  process.env.CONFORMANCE_PG_CACHE = cache;
  const fresh = () => fs.mkdtempSync(path.join(cache, 'data-'));
  let initdbs = 0;
  const initdb = (dir: string) => async () => {
    initdbs++;
    fs.mkdirSync(path.join(dir, 'base'));
    fs.writeFileSync(path.join(dir, 'PG_VERSION'), '18\n');
    fs.writeFileSync(path.join(dir, 'base', 'conf'), `made by initdb #${initdbs}\n`);
  };
  try {
    const a = fresh();
    expect(await initialiseFromTemplate(a, 'key-1', initdb(a))).toBe('initdb');
    const template = fs.readdirSync(cache).find((n) => n.startsWith(`cec-pg-template-${process.getuid!()}-`))!;
    expect(fs.statSync(path.join(cache, template)).mode & 0o777).toBe(0o700);
    const b = fresh();
    expect(await initialiseFromTemplate(b, 'key-1', initdb(b))).toBe('template');
    expect(fs.readFileSync(path.join(b, 'base', 'conf'), 'utf8')).toBe('made by initdb #1\n');
    expect(fs.statSync(b).mode & 0o777).toBe(0o700);
    // Another superuser, password or flags: another template.
    const c = fresh();
    expect(await initialiseFromTemplate(c, 'key-2', initdb(c))).toBe('initdb');
    // A template others may enter is never used (nor one missing its completion mark).
    fs.chmodSync(path.join(cache, template), 0o755);
    const d = fresh();
    expect(await initialiseFromTemplate(d, 'key-1', initdb(d))).toBe('initdb');
    expect(fs.readFileSync(path.join(d, 'base', 'conf'), 'utf8')).toBe(`made by initdb #${initdbs}\n`);
    expect(initdbs).toBe(3);
  } finally {
    if (saved === undefined) delete process.env.CONFORMANCE_PG_CACHE;
    else process.env.CONFORMANCE_PG_CACHE = saved;
    fs.rmSync(cache, { recursive: true, force: true });
  }
});

/** Runs a command of the private copy with a clean environment (no enclosing run's settings). */
function run(cwd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CONFORMANCE_') && !k.startsWith('PW_') && k !== 'TEST_WORKER_INDEX' && k !== 'TEST_PARALLEL_INDEX'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

test.describe('as root from a 0700 folder', () => {
  test.describe.configure({ mode: 'serial' });
  test.skip(!AS_ROOT, 'only root runs PostgreSQL as another user; this machine runs the tests as a regular user');

  let home = '';
  let copy = '';
  let cache = '';
  test.beforeAll(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-private-')); // mkdtemp: mode 0700
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    copy = path.join(home, 'clone');
    const skip = new Set(['node_modules', '.git', path.join('reports', 'out'), 'test-results']);
    fs.cpSync(ROOT, copy, { recursive: true, filter: (src) => !skip.has(path.relative(ROOT, src)) });
    // Hard links: the same files under the copy's own (closed) paths, in a second instead of a 370 MB copy.
    const linked = spawn('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules')], { stdio: 'inherit' });
    return new Promise<void>((resolve, reject) => linked.on('close', (c) => (c === 0 ? resolve() : reject(new Error(`cp -al exited ${c}`)))));
  });
  test.beforeEach(() => {
    // A fresh binary cache per test, so the copy is made (not found) each time.
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-pgcache-'));
    fs.chmodSync(cache, 0o755);
  });
  test.afterEach(() => fs.rmSync(cache, { recursive: true, force: true }));
  test.afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  test('a cache folder the server user cannot enter ends as one line naming it and the fix, exit 2', async () => {
    const closed = path.join(home, 'closed-cache');
    fs.mkdirSync(closed, { mode: 0o700 });
    const r = await run(copy, ['cli/conformance.mjs', 'run'], { CONFORMANCE_PG_CACHE: closed }, 60_000);
    expect(r.code, r.err).toBe(2);
    const lines = r.err.trim().split('\n').filter((l) => !/^conformance: starting/.test(l));
    expect(lines, r.err).toHaveLength(1);
    expect(lines[0]).toContain(home);
    expect(lines[0]).toContain('CONFORMANCE_PG_CACHE');
    expect(r.err).not.toMatch(/Node\.js v\d|\n\s+at |EACCES/);
  });

  test('the main job is CONFORMANT', async () => {
    test.setTimeout(240_000);
    const r = await run(copy, ['cli/conformance.mjs', 'run', '--out', path.join(home, 'out')], { CONFORMANCE_PG_CACHE: cache }, 230_000);
    expect(r.code, r.err.slice(-2000)).toBe(0);
    expect(r.out).toMatch(/CONFORMANT — service: /);
    expect(fs.existsSync(path.join(home, 'out', 'conformance.json'))).toBe(true);
    expect(fs.readdirSync(cache).some((n) => n.startsWith('cec-embedded-postgres-'))).toBe(true);
  });

  test('a Playwright run of the copy starts its reference in global setup', async () => {
    test.setTimeout(180_000);
    const r = await run(copy, ['node_modules/@playwright/test/cli.js', 'test', '--project=conformance', '--workers', '1', '--reporter', 'line'], { CONFORMANCE_PG_CACHE: cache, CONFORMANCE_OUT: path.join(home, 'pw-out'), CONFORMANCE_GREP: '^checks/service/openapi\\.ts ' }, 170_000);
    expect(r.code, (r.out + r.err).slice(-3000)).toBe(0);
    expect(r.out + r.err).not.toMatch(/EACCES|did not start/);
    expect(r.out).toMatch(/[1-9]\d* passed/);
  });

  test('the example webhook receiver of the copy starts its own cluster', async () => {
    test.setTimeout(120_000);
    const script = "const m = await import('./tests/helpers/receiver-sandbox.ts'); const s = await m.startReceiverSandbox(); const ok = (await fetch(s.url, { method: 'POST', body: '{}' })).status; await s.close(); console.log('receiver answered ' + ok);";
    const r = await run(copy, ['--input-type=module', '-e', script], { CONFORMANCE_PG_CACHE: cache }, 110_000);
    expect(r.code, (r.out + r.err).slice(-3000)).toBe(0);
    expect(r.out).toMatch(/receiver answered [1-5]\d\d/);
  });
});
