// The npm package, installed the way a service team installs it: `npm pack` (its prepack builds dist/, the
// JavaScript the package runs), `npm install <tarball>` into an empty project with the registry as the only
// source, then every command from there through npx, on this test's Node (Node 24, put first on PATH: the
// machine's own node is too old). Slow (a real install), so one serial describe; skipped with the reason only when
// the npm registry cannot be reached.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { startReceiverSandbox } from './helpers/receiver-sandbox.ts';
import { freePort } from '../platform/embedded-cluster.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string; version: string; bin: Record<string, string>; engines: { node: string };
  dependencies: Record<string, string>; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

interface Ran { code: number | null; stdout: string; stderr: string; ms: number }

/** This test's Node first on PATH; nothing of an enclosing run's settings. */
function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, ...extra };
  for (const k of Object.keys(e)) if (k.startsWith('CONFORMANCE_') && !(k in extra)) delete e[k];
  return e;
}

/** Runs a command asynchronously (a synchronous spawn would starve the servers this test runs in-process). */
function sh(cmd: string, args: string[], opts: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv; onStderr?: (text: string) => void; group?: boolean }): Promise<Ran> & { signalGroup(s: NodeJS.Signals): void } {
  const started = performance.now();
  // group: its own process group, signalled as a whole, as a terminal's Ctrl-C does (npx does not forward signals).
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? env(), stdio: ['ignore', 'pipe', 'pipe'], detached: opts.group === true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    opts.onStderr?.(stderr);
  });
  const done = new Promise<Ran>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (opts.group) process.kill(-child.pid!, 'SIGKILL');
      else child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not end within ${opts.timeoutMs / 1000} s; stderr tail: ${stderr.slice(-2000)}`));
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
  return Object.assign(done, { signalGroup: (s: NodeJS.Signals) => process.kill(-child.pid!, s) });
}

/** `npx conformance …` in the consumer project. */
const conformance = (cwd: string, args: string[], timeoutMs = 60_000, extra: NodeJS.ProcessEnv = {}) =>
  sh('npx', ['--no-install', 'conformance', ...args], { cwd, timeoutMs, env: env(extra) });

/** The conformance lines of an output (npm's own warnings, e.g. about the machine's npmrc, left out). */
const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('conformance:'));

const fmt = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);

test.describe('the npm package, installed into an empty project', () => {
  test.describe.configure({ mode: 'serial' });

  let work = '';
  let consumer = '';
  let installed = '';
  let tarball = '';

  test.beforeAll(async () => {
    test.setTimeout(60_000);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-package-'));
    consumer = path.join(work, 'consumer');
    installed = path.join(consumer, 'node_modules', PKG.name);
    const ping = await sh('npm', ['ping'], { cwd: work, timeoutMs: 45_000 }).catch((e: Error) => ({ code: -1, stderr: e.message, stdout: '', ms: 0 }));
    test.skip(ping.code !== 0, `the npm registry cannot be reached (npm ping: ${ping.stderr.trim().split('\n').filter((l) => !l.includes('Unknown user config')).slice(-1)[0] ?? `exit ${ping.code}`}); the package test needs it to install the package's dependencies`);
  });

  test.afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('npm pack builds dist/ and packs the compiled harness: JavaScript and the files it reads, no sources, no tests', async () => {
    test.setTimeout(240_000);
    const r = await sh('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, timeoutMs: 200_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf('[\n'))) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
    tarball = path.join(work, info.filename);
    expect(fs.existsSync(tarball)).toBe(true);
    const size = `${fmt(info.size)} packed, ${fmt(info.unpackedSize)} unpacked, ${info.entryCount} files`;
    test.info().annotations.push({ type: 'package size', description: size });
    process.stderr.write(`package: ${size}\n`);

    const files = info.files.map((f) => f.path).sort();
    for (const f of ['package.json', 'README.md', PKG.bin.conformance, 'dist/cli/main.js', 'dist/playwright.config.js', 'dist/reference-impl/main.js',
      'dist/reference-impl/migrations/001_init.sql', 'dist/fixtures/contract/openapi.json', 'dist/fixtures/spec/clinical-encounter-public-api.md',
      'dist/fixtures/requirements/not-tested.json', 'dist/engine/declared-checks.js', 'dist/reference-client/scenario.json', 'dist/checks/service/list.js', 'dist/checks/service/properties/query-fuzz.js', 'dist/engine/playwright/run.spec.js',
      // The example client's and receiver's sources, which `conformance examples` copies for partners to read and run.
      'dist/examples/reference-client/main.ts', 'dist/examples/reference-client/client.ts', 'dist/examples/reference-client/scenario.json',
      'dist/examples/reference-receiver/verify.ts', 'dist/examples/reference-receiver/receiver.ts', 'dist/examples/reference-receiver/event-schema.ts',
      'dist/examples/reference-receiver/openapi.json', 'dist/examples/reference-receiver/README.md']) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => !['package.json', 'README.md', 'CHANGELOG.md', PKG.bin.conformance].includes(f) && !f.startsWith('dist/') && !f.startsWith('docs/'))).toEqual([]);
    // The README's links resolve in the installed package: the docs pages ship beside it.
    expect(files).toContain('docs/profile.md');
    // TypeScript only as the examples' sources (nothing of the package runs them).
    expect(files.filter((f) => (f.endsWith('.ts') && !f.startsWith('dist/examples/')) || f.startsWith('dist/tests/') || f.includes('/out/'))).toEqual([]);

    // Every relative import of the shipped JavaScript names a shipped .js file; every package it imports is a
    // dependency (or an optional peer, loaded lazily), so the package runs without the clone's devDependencies.
    const shipped = new Set(files);
    const packages = new Set<string>();
    const unresolved: string[] = [];
    for (const f of files.filter((x) => /\.(m?js)$/.test(x))) {
      const source = fs.readFileSync(path.join(ROOT, f), 'utf8');
      for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm)) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (spec.startsWith('.')) {
          const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), spec));
          if (!shipped.has(target)) unresolved.push(`${f} → ${spec}`);
        } else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) {
          packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
        }
      }
    }
    expect(unresolved).toEqual([]);
    const optional = Object.keys(PKG.peerDependencies).filter((p) => PKG.peerDependenciesMeta[p]?.optional);
    expect([...packages].filter((p) => !(p in PKG.dependencies) && !optional.includes(p)).sort()).toEqual([]);
    expect(optional.sort()).toEqual(['@testcontainers/postgresql', 'testcontainers']);
  });

  test('npm install <tarball> into an empty project installs the runtime dependencies only and links the conformance command', async () => {
    test.setTimeout(420_000);
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), `${JSON.stringify({ name: 'service-repo', version: '1.0.0', private: true }, null, 2)}\n`);
    const r = await sh('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: consumer, timeoutMs: 400_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    test.info().annotations.push({ type: 'install time', description: `${(r.ms / 1000).toFixed(1)} s` });
    process.stderr.write(`package: npm install took ${(r.ms / 1000).toFixed(1)} s\n`);
    expect(fs.existsSync(path.join(consumer, 'node_modules', '.bin', 'conformance'))).toBe(true);
    for (const dep of Object.keys(PKG.dependencies)) expect(fs.existsSync(path.join(consumer, 'node_modules', dep, 'package.json')), dep).toBe(true);
    // The clone's tools stay out: no TypeScript, no Node binary, no container packages (optional peers).
    for (const dev of ['typescript', 'node', 'testcontainers', '@testcontainers/postgresql']) expect(fs.existsSync(path.join(consumer, 'node_modules', dev)), dev).toBe(false);
    expect(fs.existsSync(path.join(installed, 'cli', 'main.ts'))).toBe(false);
  });

  test('npx conformance --help and profile init work from the package', async () => {
    const help = await conformance(consumer, ['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: conformance <command> \[options\]/);
    const init = await conformance(consumer, ['profile', 'init', '--out', 'p.json', '--base-url', 'http://127.0.0.1:9']);
    expect(init.code, init.stderr).toBe(0);
    const profile = JSON.parse(fs.readFileSync(path.join(consumer, 'p.json'), 'utf8')) as { $schema: string; baseUrl: string };
    expect(profile.baseUrl).toBe('http://127.0.0.1:9');
    // The schema the profile names is the installed package's own copy.
    expect(profile.$schema).toBe(`./node_modules/${PKG.name}/dist/fixtures/profiles/profile.schema.json`);
    expect(fs.existsSync(path.join(consumer, profile.$schema))).toBe(true);
  });

  test('a target run from the package judges a running service: exit 0 and a conformant conformance.json', async () => {
    test.setTimeout(300_000);
    let ref: ReferenceHandle | undefined;
    const out = path.join(work, 'target-out');
    try {
      ref = await startReference({ timeoutMs: 120_000 });
      const r = await conformance(consumer, ['run', '--profile', ref.profilePath, '--out', out], 240_000);
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(lines(r.stdout).slice(-1)[0]).toMatch(/^conformance: CONFORMANT — service: verified (\d+) of \1 must requirements in scope/);
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { verdict: string; run: { harnessVersion: string; target: { baseUrl: string } } };
      expect(report.verdict).toBe('conformant');
      expect(report.run.harnessVersion).toBe(PKG.version);
      expect(report.run.target.baseUrl).toBe(ref.baseUrl);
      for (const f of ['junit.xml', 'conformance.html', 'outcomes.json']) expect(fs.existsSync(path.join(out, f)), f).toBe(true);
    } finally {
      await ref?.stop();
    }
    // merge from the package: the one folder merged is the same verdict.
    const m = await conformance(consumer, ['merge', '--out', path.join(work, 'merged'), out]);
    expect(m.code, m.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(work, 'merged', 'conformance.json'), 'utf8')).verdict).toBe('conformant');
  });

  test('the main job from the package: conformance run starts the packaged reference on embedded PostgreSQL, CONFORMANT, reports in ./reports/out', async () => {
    test.setTimeout(300_000);
    const r = await conformance(consumer, ['run'], 240_000);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(lines(r.stdout).slice(-1)[0]).toMatch(/^conformance: CONFORMANT — service: verified (\d+) of \1 must requirements in scope.*; reports in reports\/out\//);
    expect(JSON.parse(fs.readFileSync(path.join(consumer, 'reports', 'out', 'conformance.json'), 'utf8')).verdict).toBe('conformant');
  });

  test('serve, client and webhook receiver from the package', async () => {
    test.setTimeout(300_000);
    // serve: the sandbox is up and stops on SIGINT.
    const profileOut = path.join(work, 'sandbox.profile.json');
    let ready: (up: boolean) => void = () => undefined;
    const isReady = new Promise<boolean>((resolve) => (ready = resolve));
    const serve = sh('npx', ['--no-install', 'conformance', 'serve', '--profile-out', profileOut], {
      cwd: consumer, timeoutMs: 150_000, group: true, onStderr: (text) => /conformance: sandbox at http:\/\/\S+; profile in /.test(text) && ready(true),
    });
    void serve.then(() => ready(false), () => ready(false));
    if (!(await isReady)) {
      const early = await serve;
      throw new Error(`serve exited with ${early.code} before its sandbox was up: ${early.stderr.slice(-2000)}`);
    }
    const sandbox = JSON.parse(fs.readFileSync(profileOut, 'utf8')) as { baseUrl: string };
    expect((await fetch(`${sandbox.baseUrl}/external/v1/encounters`)).status).toBe(401);
    serve.signalGroup('SIGINT');
    const served = await serve;
    expect(served.stderr).toContain('conformance: stopping the sandbox');
    expect((await fetch(`${sandbox.baseUrl}/external/v1/encounters`).catch((e: Error) => e)) instanceof Error, 'the sandbox is gone').toBe(true);

    // client: the example client the package ships, judged from its traffic.
    const dist = path.join(installed, 'dist');
    const client = await conformance(consumer, ['client', '--scenario', path.join(dist, 'reference-client', 'scenario.json'), '--out', path.join(work, 'client-out'), '--',
      process.execPath, path.join(dist, 'reference-client', 'main.js')], 180_000);
    expect(client.code, client.stderr.slice(-3000)).toBe(0);
    expect(lines(client.stdout).slice(-1)[0]).toMatch(/^conformance: CONFORMANT — client: verified (\d+) of \1 must requirements in (its declared )?scope/);

    // webhook receiver: the example receiver (started from the clone) judged by the packaged command.
    const secret = 'whsec_package_test_5a6b7c8d9e';
    const receiver = await startReceiverSandbox(secret);
    try {
      const w = await conformance(consumer, ['webhook', 'receiver', '--url', receiver.url, '--allow-incomplete'], 120_000, { CONFORMANCE_WEBHOOK_SECRET: secret });
      expect(w.code, w.stderr + w.stdout).toBe(0);
      expect(w.stdout).toMatch(/^conformance: INCOMPLETE — receiver: verified \d+ of \d+ must requirements in scope; nothing failed$/m);
    } finally {
      await receiver.close();
    }
  });

  test("the README's partner commands, run as written from the installed package", async () => {
    test.setTimeout(420_000);
    // The partner block of the README, between its markers: each line a command, a trailing `# …` comment aside.
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /<!-- partner-commands:begin -->\n```sh\n([\s\S]*?)```\n<!-- partner-commands:end -->/.exec(readme);
    expect(block, 'README.md has the partner-commands block').not.toBeNull();
    const commands = block![1].split('\n').map((l) => l.replace(/\s+#\s.*$/, '').trim()).filter(Boolean);
    expect(commands.length).toBeGreaterThanOrEqual(4);
    expect(commands.some((c) => c.includes('webhook receiver') && c.includes('--follow-up-port'))).toBe(true);
    // The ports are the test's own (free ones for 9000 and 9400); everything else runs as written, the example
    // receiver included, in a fresh folder of the consumer project.
    const secret = /CONFORMANCE_WEBHOOK_SECRET=(\S+)/.exec(block![1])?.[1];
    expect(secret, 'the README names the secret by value').toBeTruthy();
    // A partner's own folder, made the way npm makes one (`npm init -y` writes "type": "commonjs").
    const partner = path.join(consumer, 'partner');
    fs.mkdirSync(partner);
    const init = await sh('npm', ['init', '-y'], { cwd: partner, timeoutMs: 60_000, env: env() });
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(partner, 'package.json'), 'utf8')).type).toBe('commonjs');
    const followUpPort = await freePort();
    const receiverPort = await freePort();
    const background: ChildProcess[] = [];
    try {
      for (const written of commands) {
        const command = written.replaceAll('127.0.0.1:9000', `127.0.0.1:${receiverPort}`).replace(/--port 9000\b/, `--port ${receiverPort}`)
          .replaceAll('127.0.0.1:9400', `127.0.0.1:${followUpPort}`).replace(/--follow-up-port 9400\b/, `--follow-up-port ${followUpPort}`);
        if (command.endsWith('&')) {
          // The example receiver, started as written and left running while the next commands judge it.
          // Its own process group, so that stopping it stops npx and the harness under it.
          const child = spawn('sh', ['-c', command.slice(0, -1).trim()], { cwd: partner, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
          background.push(child);
          let said = '';
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`${written}: not listening after 120 s\n${said}`)), 120_000);
            const look = (d: Buffer) => {
              said += d.toString();
              if (/listening at http/.test(said)) {
                clearTimeout(timer);
                resolve();
              }
            };
            child.stdout!.on('data', look);
            child.stderr!.on('data', look);
            child.on('exit', (code) => reject(new Error(`${written}: exited ${code}\n${said}`)));
          });
          continue;
        }
        const r = await sh('sh', ['-c', command], { cwd: partner, timeoutMs: 300_000, env: env() });
        const said = `${written}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`;
        expect(r.code, said).toBe(0);
        const all = `${r.stdout}\n${r.stderr}`;
        if (/conformance (client|webhook receiver) /.test(written)) expect(all, said).toMatch(/^conformance: CONFORMANT — (client|receiver): verified (\d+) of \2 must requirements in (its declared )?scope/m);
        if (/conformance webhook receiver /.test(written)) expect(all, said).toMatch(/^not observable by any run \(listed apart, never counted as verified\): WEBHOOK-SIG-CONSTANT-TIME/m);
        if (/conformance webhook send /.test(written)) expect(all, said).toMatch(/: as expected$/m);
      }
      // What the commands left: the examples' sources and the vectors.
      for (const f of ['reference-client/main.ts', 'reference-client/scenario.json', 'reference-receiver/verify.ts', 'webhook-vectors/webhook-receiver-vectors.json']) {
        expect(fs.existsSync(path.join(partner, f)), f).toBe(true);
      }
    } finally {
      for (const c of background) {
        try {
          process.kill(-c.pid!, 'SIGTERM');
        } catch { /* already gone */ }
      }
    }
  });

  test('what the package leaves to a clone or to the user is one line, exit 2', async () => {
    // The reference image is built from a clone; the package runs one that is named.
    const noImage = await conformance(consumer, ['run', '--reference', 'container', '--out', path.join(work, 'x')]);
    expect(noImage.code).toBe(2);
    expect(lines(noImage.stderr).filter((l) => !l.startsWith('conformance: starting'))).toEqual([
      expect.stringMatching(/cannot build one \(reference-impl\/Dockerfile is in a clone of the harness\).*CONFORMANCE_REFERENCE_IMAGE$/),
    ]);
    // The container packages are optional peers: named, with the command that installs them.
    const noPackages = await conformance(consumer, ['run', '--reference', 'container', '--out', path.join(work, 'x')], 60_000, { CONFORMANCE_REFERENCE_IMAGE: 'cec-reference:any' });
    expect(noPackages.code).toBe(2);
    expect(lines(noPackages.stderr).filter((l) => !l.startsWith('conformance: starting'))).toEqual([
      expect.stringContaining('needs the package testcontainers, which the harness leaves to you: npm i -D testcontainers@^12.2.0 @testcontainers/postgresql@^12.2.0'),
    ]);
    // The mutant meta-suites are the clone's tests.
    const mutants = await conformance(consumer, ['run', '--mutants']);
    expect(mutants.code).toBe(2);
    expect(lines(mutants.stderr)).toEqual(['conformance: --mutants needs a clone of the harness (its meta-suites, tests/mutants.spec.ts and tests/variants.spec.ts, are not part of the npm package)']);
  });
});
