// The container path, run for real: `--db container` (the reference as a process on a PostgreSQL container) and
// `--reference container` (the reference's own image beside a PostgreSQL container on one network), through
// testcontainers on the engine scripts/container-images.sh provides (.ci/run runs it). Where no engine can run,
// these tests are skipped with the reason the script gave; the no-engine message is tested everywhere.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { getContainerRuntimeClient } from 'testcontainers';
import type Dockerode from 'dockerode';
import { setting } from '../engine/config.ts';
import { RUN_LABEL } from '../engine/reference/container.ts';
import { launchReference, nodeBinary, startReference } from '../engine/reference/process.ts';
import { freePort } from '../platform/embedded-cluster.ts';
import { harnessImageTag } from '../scripts/harness-image.ts';
import { ROOT, runCli, SHIM } from './helpers/cli-process.ts';

test.describe.configure({ mode: 'serial' });

/** The engine's API, or why there is none (the script's reason first). */
async function engine(): Promise<{ docker: Dockerode } | { reason: string }> {
  const unavailable = setting('containersUnavailable');
  if (unavailable) return { reason: `no container engine: ${unavailable}` };
  try {
    const client = await getContainerRuntimeClient();
    return { docker: (client.container as unknown as { dockerode: Dockerode }).dockerode };
  } catch (e) {
    return { reason: `no container engine found (${(e as Error).message.split('\n')[0]}); scripts/container-images.sh starts one` };
  }
}

let docker: Dockerode;
test.beforeAll(async () => {
  const e = await engine();
  if ('docker' in e) docker = e.docker;
});
function needEngine(): void {
  test.skip(docker === undefined, setting('containersUnavailable') ?? 'no container engine here (scripts/container-images.sh starts one; .ci/run runs it)');
}

async function runContainers(runId: string): Promise<string[]> {
  return (await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=${runId}`] } })).map((c) => c.Id);
}
async function networkNames(): Promise<string[]> {
  return (await docker.listNetworks()).map((n) => n.Name).sort();
}
async function waitUntil(pred: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await pred()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return pred();
}

test('--reference container without an engine is one clear line, exit 2', async () => {
  test.skip(fs.existsSync('/var/run/docker.sock'), 'an engine answers on the default socket here');
  const r = await runCli(['run', '--reference', 'container', '--out', fs.mkdtempSync(path.join(os.tmpdir(), 'cec-noengine-'))], {
    env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }, timeoutMs: 60_000, sampleMs: 0,
  });
  expect(r.code).toBe(2);
  const problem = r.stderr.trim().split('\n').filter((l) => !l.startsWith('conformance: starting'));
  expect(problem).toHaveLength(1);
  expect(problem[0]).toContain('no container runtime found');
  expect(problem[0]).toContain('start Docker or Podman');
});

test('--reference container with --db embedded is refused before anything starts', async () => {
  const r = await runCli(['run', '--reference', 'container', '--db', 'embedded'], { timeoutMs: 30_000, sampleMs: 0 });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--reference container runs its database in a container too (got --db embedded)');
});

test('--db container: migrations and seed on the PostgreSQL container, a request answered from it, the container gone after', async () => {
  needEngine();
  test.setTimeout(240_000);
  const before = (await docker.listContainers({ all: true })).map((c) => c.Id);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-dbcontainer-'));
  const profilePath = path.join(dir, 'profile.json');
  const ref = await launchReference(['--db', 'container', '--profile-out', profilePath], { timeoutMs: 180_000, killAfterMs: 30_000 });
  try {
    expect(ref.db).toBe('container');
    const started = (await docker.listContainers({ all: true })).filter((c) => !before.includes(c.Id));
    expect(started.map((c) => c.Image)).toEqual([setting('dbImage') ?? 'postgres:16-alpine']);
    // The seeded encounters come back through the API: the migrations ran and the seed landed in the container.
    const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8'));
    const key = profile.credentials.full.key;
    const res = await fetch(`${ref.baseUrl}/external/v1/encounters?limit=5`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = await res.json() as { items: unknown[]; total: number };
    expect(body.items.length).toBeGreaterThan(0);
    expect(body.total).toBeGreaterThanOrEqual(body.items.length);
  } finally {
    expect(await ref.stop()).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const left = (await docker.listContainers({ all: true })).filter((c) => !before.includes(c.Id));
  expect(left.map((c) => `${c.Image} ${c.State}`)).toEqual([]);
});

test('conformance run --reference container ends CONFORMANT and leaves no container or network behind', async () => {
  needEngine();
  test.setTimeout(480_000);
  const networks = await networkNames();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-containerrun-'));
  const r = await runCli(['run', '--reference', 'container', '--out', out], { timeoutMs: 420_000, sampleMs: 0 });
  expect(r.stdout).toMatch(/CONFORMANT — service: verified (\d+) of \1 must requirements in scope/);
  expect(r.code).toBe(0);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { verdict: string; checks: { outcome: string; id: string }[] };
  expect(report.verdict).toBe('conformant');
  // The webhook sender checks ran against the containerised sandbox (it reached the harness's capture).
  const sender = report.checks.filter((c) => c.id.startsWith('webhook-sender-'));
  expect(sender.length).toBeGreaterThan(10);
  expect(sender.filter((c) => c.outcome !== 'pass').map((c) => `${c.id} ${c.outcome}`)).toEqual([]);
  const labelled = await docker.listContainers({ all: true, filters: { label: [RUN_LABEL] } });
  expect(labelled.map((c) => c.Image)).toEqual([]);
  expect(await networkNames()).toEqual(networks);
  fs.rmSync(out, { recursive: true, force: true });
});

test('--reference container whose reference never becomes ready: one line, exit 2, nothing left', async () => {
  needEngine();
  test.setTimeout(240_000);
  const networks = await networkNames();
  // The PostgreSQL image as the "reference": its entrypoint cannot run `node reference-impl/main.ts` and the container ends at once.
  const r = await runCli(['run', '--reference', 'container', '--out', fs.mkdtempSync(path.join(os.tmpdir(), 'cec-badref-'))], {
    env: { CONFORMANCE_REFERENCE_IMAGE: setting('dbImage') ?? 'postgres:16-alpine' }, timeoutMs: 200_000, sampleMs: 0,
  });
  expect(r.code).toBe(2);
  const problem = r.stderr.trim().split('\n').filter((l) => !l.startsWith('conformance: starting'));
  expect(problem).toHaveLength(1);
  expect(problem[0]).toMatch(/^conformance: reference implementation did not start: --reference container: \S/);
  const labelled = await docker.listContainers({ all: true, filters: { label: [RUN_LABEL] } });
  expect(labelled.map((c) => c.Image)).toEqual([]);
  expect(await waitUntil(async () => JSON.stringify(await networkNames()) === JSON.stringify(networks), 30_000)).toBe(true);
});

for (const signal of ['SIGINT', 'SIGKILL'] as const) {
  test(`serve --reference container: ${signal} to the CLI removes both containers and the network`, async () => {
    needEngine();
    test.setTimeout(300_000);
    const networks = await networkNames();
    const cli = spawn(nodeBinary(), [SHIM, 'serve', '--reference', 'container'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const runId = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not become ready: ${stderr.slice(-2000)}`)), 240_000);
      cli.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /containers of run ([0-9a-f-]{36})/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      cli.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr.slice(-2000)}`)));
    });
    const exited = new Promise((r) => cli.once('exit', r));
    try {
      expect(await runContainers(runId)).toHaveLength(2);
      expect((await networkNames()).length).toBe(networks.length + 1);
    } finally {
      // Also when an expectation above failed: a CLI left running would keep its containers.
      cli.kill(signal);
      await exited;
    }
    expect(await waitUntil(async () => (await runContainers(runId)).length === 0, 60_000)).toBe(true);
    expect(await waitUntil(async () => JSON.stringify(await networkNames()) === JSON.stringify(networks), 30_000)).toBe(true);
  });
}

/** Runs the docker CLI asynchronously (the documented command line of the harness image), on the engine the environment names. */
function dockerCli(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`docker ${args[0]} did not end within ${timeoutMs / 1000} s; stderr tail: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every file under dir (folders included), relative. */
function tree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String);
}

test('the harness image judges a reference on the host (host.docker.internal) and writes its reports into the mounted folder, owned by the folder\'s owner', async () => {
  needEngine();
  const image = setting('harnessImage');
  test.skip(!image, 'CONFORMANCE_HARNESS_IMAGE is not set: scripts/container-images.sh builds the harness image and names it there');
  expect(image, 'the harness image was built from another tree: rerun eval "$(bash scripts/container-images.sh)"').toBe(harnessImageTag());
  expect(await docker.getImage(image!).inspect().then(() => true, () => false), `${image} is missing: scripts/container-images.sh could not build it (its log names why)`).toBe(true);
  test.setTimeout(420_000);
  // The reference on the host, on every interface, handing out URLs (base, sandbox control, audio) on the name the
  // container reaches the host by; its profile then names that host.
  const port = await freePort();
  const ref = await startReference({ port, args: ['--host', '0.0.0.0', '--public-url', `http://host.docker.internal:${port}`], timeoutMs: 120_000 });
  // A network with a subnet of our own, so the container's address is known before it starts: the reference
  // delivers its webhooks to the harness's capture there (CONFORMANCE_CALLBACK_HOST).
  let network: Dockerode.Network | undefined;
  let ip = '';
  for (let third = 200; third < 255 && !network; third++) {
    try {
      network = await docker.createNetwork({ Name: `cec-harness-image-test-${process.pid}-${third}`, IPAM: { Config: [{ Subnet: `172.30.${third}.0/24` }] } });
      ip = `172.30.${third}.10`;
    } catch {
      /* that subnet is taken: the next one */
    }
  }
  expect(network, 'no free subnet 172.30.200-254.0/24 for the test network').toBeTruthy();
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-harness-image-'));
  // The caller: this user, or (as root) a regular user the entrypoint must switch to.
  const owner = process.getuid?.() === 0 ? { uid: 1234, gid: 1234 } : { uid: process.getuid!(), gid: process.getgid!() };
  try {
    fs.chmodSync(data, 0o755);
    fs.copyFileSync(ref.profilePath, path.join(data, 'p.json'));
    const profile = JSON.parse(fs.readFileSync(path.join(data, 'p.json'), 'utf8')) as { baseUrl: string };
    expect(profile.baseUrl).toBe(`http://host.docker.internal:${port}`);
    for (const f of [data, path.join(data, 'p.json')]) fs.chownSync(f, owner.uid, owner.gid);
    const r = await dockerCli(['run', '--rm', '--add-host', 'host.docker.internal:host-gateway', '--network', network!.id, '--ip', ip,
      '-e', `CONFORMANCE_CALLBACK_HOST=${ip}`, '-v', `${data}:/data`,
      image!, 'run', '--target', profile.baseUrl, '--profile', '/data/p.json', '--out', '/data/out'], 360_000);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toMatch(/CONFORMANT — service: verified (\d+) of \1 must requirements in scope/);
    const report = JSON.parse(fs.readFileSync(path.join(data, 'out', 'conformance.json'), 'utf8')) as { verdict: string; run: { target: { baseUrl: string } }; checks: { id: string; outcome: string }[] };
    expect(report.verdict).toBe('conformant');
    expect(report.run.target.baseUrl).toBe(`http://host.docker.internal:${port}`);
    // The sender checks ran: the reference on the host reached the harness's capture in the container.
    const sender = report.checks.filter((c) => c.id.startsWith('webhook-sender-'));
    expect(sender.length).toBeGreaterThan(10);
    expect(sender.filter((c) => c.outcome !== 'pass').map((c) => `${c.id} ${c.outcome}`)).toEqual([]);
    for (const f of ['conformance.html', 'junit.xml', 'outcomes.json']) expect(fs.existsSync(path.join(data, 'out', f)), f).toBe(true);
    // Everything the container wrote belongs to the folder's owner, none of it to root.
    const written = ['.', ...tree(path.join(data, 'out'))].map((f) => ({ f, uid: fs.statSync(path.join(data, 'out', f)).uid }));
    expect(written.filter((w) => w.uid !== owner.uid)).toEqual([]);
  } finally {
    await ref.stop();
    await network?.remove().catch(() => undefined);
    fs.rmSync(data, { recursive: true, force: true });
  }
});
