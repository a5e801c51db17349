// Starting the reference as containers (`--reference container`): its image and a PostgreSQL container, removed by their reaper.
// The reference implementation as a container (reference-impl/Dockerfile) beside a
// PostgreSQL container on one network of their own, started with testcontainers. The run reaches the reference
// on a published port of 127.0.0.1; the reference reaches the harness's webhook capture as host.docker.internal.
// Whatever ends the run (its end, a failure, Ctrl-C, SIGKILL), engine/reference/container-reaper.ts removes both containers
// and the network.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../platform/embedded-cluster.ts';
import { oneLine } from '../../record/redact.ts';
import { setting, settingName } from '../config.ts';
import { ContainerSetupError } from '../errors.ts';
import { nodeBinary } from './process.ts';
import { referenceImageTag } from './image.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** `.ts` in a clone, `.js` in the npm package. */
const EXT = path.extname(import.meta.filename);
export const DEFAULT_DB_IMAGE = 'postgres:16-alpine';
/** The host name the reference container reaches the harness by (Docker's host-gateway). */
export const CALLBACK_HOST = 'host.docker.internal';
/** Every container of one run carries this label with the run's id: what the reaper removes. */
export const RUN_LABEL = 'org.clinical-encounter-conformance.run';
/** testcontainers' message when it finds no engine (the wording has changed before, so it lives in one place). */
const NO_RUNTIME = 'Could not find a working container runtime strategy';

export interface ContainerReferenceOptions {
  profilePath: string;
  switchboardToken: string;
  dbImage?: string;
  referenceImage?: string;
  timeoutMs?: number;
  /** Called with each line the reference writes (its log and, with --guide, the guide). */
  onLog?: (line: string) => void;
  /** Extra arguments for reference-impl/main.ts (e.g. --guide). */
  args?: string[];
}

export interface ContainerReference {
  baseUrl: string;
  db: 'container';
  profilePath: string;
  switchboardToken: string;
  /** The run's id (the value of RUN_LABEL on its containers). */
  runId: string;
  /** Resolves when the reference container stops by itself (not after stop()). */
  exited: Promise<void>;
  /** Removes both containers and the network; resolves once the reaper is done. Idempotent. */
  stop(): Promise<void>;
}

function startReaper(runId: string): { child: ChildProcess; done: Promise<void> } {
  // Detached: its own process group, so the terminal's Ctrl-C to ours does not end it before it cleaned up.
  const child = spawn(nodeBinary(), [path.join(import.meta.dirname, `container-reaper${EXT}`), `${RUN_LABEL}=${runId}`], {
    detached: true, stdio: ['pipe', 'ignore', 'inherit'], env: process.env,
  });
  child.unref();
  const done = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { child, done };
}

/** The optional packages of the container path, with the range the harness is tested with (package.json peerDependencies). */
export const CONTAINER_PACKAGES = 'testcontainers@^12.2.0 @testcontainers/postgresql@^12.2.0';

/**
 * Loads testcontainers and its PostgreSQL module. A clone has them (devDependencies); the npm package leaves them
 * to the user (optional peer dependencies): a missing one is one line naming what to install.
 */
async function loadContainerPackages() {
  try {
    return { tc: await import('testcontainers'), postgres: await import('@testcontainers/postgresql') };
  } catch (e) {
    const missing = /Cannot find (?:package|module) '((?:@testcontainers\/postgresql|testcontainers))'/.exec((e as Error).message ?? '');
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && missing) {
      throw new ContainerSetupError(`--reference container needs the package ${missing[1]}, which the harness leaves to you: npm i -D ${CONTAINER_PACKAGES}`);
    }
    throw e;
  }
}

/** The reference image to run: the one named, else the one built from this clone's tree; the npm package cannot build it. */
function referenceImageOf(opts: ContainerReferenceOptions): string {
  const named = opts.referenceImage ?? setting('referenceImage');
  if (named) return named;
  if (!fs.existsSync(path.join(ROOT, 'reference-impl', 'Dockerfile'))) {
    throw new ContainerSetupError(`--reference container: the npm package has no reference image and cannot build one (reference-impl/Dockerfile is in a clone of the harness): build it there with scripts/container-images.sh and name it in ${settingName('referenceImage')}`);
  }
  return referenceImageTag();
}

export async function startContainerReference(opts: ContainerReferenceOptions): Promise<ContainerReference> {
  const referenceImage = referenceImageOf(opts);
  const { tc, postgres: { PostgreSqlContainer } } = await loadContainerPackages();
  const dbImage = opts.dbImage ?? setting('dbImage') ?? DEFAULT_DB_IMAGE;
  const timeoutMs = opts.timeoutMs ?? 180_000;

  let client;
  try {
    client = await tc.getContainerRuntimeClient();
  } catch (e) {
    const text = (e as Error).message ?? String(e);
    throw new ContainerSetupError(text.includes(NO_RUNTIME)
      ? `--reference container: no container runtime found (${NO_RUNTIME}); start Docker or Podman, or use the default (the reference as a process on embedded PostgreSQL)`
      : `--reference container: ${text}`);
  }
  if (!(await client.image.exists(tc.ImageName.fromString(referenceImage)))) {
    process.stderr.write(`conformance: building ${referenceImage} from reference-impl/Dockerfile (once)\n`);
    try {
      await tc.GenericContainer.fromDockerfile(ROOT, 'reference-impl/Dockerfile').build(referenceImage, { deleteOnExit: false });
    } catch (e) {
      throw new ContainerSetupError(`--reference container: cannot build ${referenceImage} (${oneLine(e)}); where no image registry is reachable, scripts/container-images.sh builds it on a local base`);
    }
  }

  const runId = crypto.randomUUID();
  const reaper = startReaper(runId);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      // Waiting for it must keep this process alive (it was unref'd so that it never holds a run open).
      reaper.child.ref();
      reaper.child.stdin?.end();
      await Promise.race([reaper.done, new Promise((r) => setTimeout(r, 60_000).unref())]);
    })();
    return stopped;
  };
  try {
    const network = await new tc.Network().start();
    reaper.child.stdin?.write(`network ${network.getId()}\n`);
    const labels = { [RUN_LABEL]: runId };
    const db = await new PostgreSqlContainer(dbImage).withNetwork(network).withNetworkAliases('db').withLabels(labels)
      .withStartupTimeout(timeoutMs).start();
    const port = await freePort();
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-container-'));
    fs.chmodSync(outDir, 0o700);
    const databaseUrl = `postgres://${encodeURIComponent(db.getUsername())}:${encodeURIComponent(db.getPassword())}@db:5432/${encodeURIComponent(db.getDatabase())}`;
    const user = process.getuid && process.getgid ? `${process.getuid()}:${process.getgid()}` : undefined;
    let ref = new tc.GenericContainer(referenceImage)
      .withNetwork(network).withLabels(labels)
      .withEnvironment({ DATABASE_URL: databaseUrl })
      .withExposedPorts({ container: 8080, host: port })
      .withExtraHosts([{ host: CALLBACK_HOST, ipAddress: 'host-gateway' }])
      // The profile comes back through this folder, written as our own user so that we can read it.
      .withBindMounts([{ source: outDir, target: '/out', mode: 'rw' }])
      .withCommand(['node', 'reference-impl/main.ts', '--db', 'url', '--host', '0.0.0.0', '--port', '8080',
        '--public-url', `http://127.0.0.1:${port}`, '--profile-out', '/out/reference.profile.json',
        '--switchboard-token', opts.switchboardToken, ...(opts.args ?? [])])
      .withWaitStrategy(tc.Wait.forLogMessage(/"event":"ready"/))
      .withStartupTimeout(timeoutMs);
    if (user) ref = ref.withUser(user);
    // The last lines of its log name the reason when it does not become ready.
    const tail: string[] = [];
    ref = ref.withLogConsumer((stream) => {
      let buf = '';
      stream.on('data', (d: Buffer | string) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('{"event":"ready"')) continue;
          tail.push(line);
          if (tail.length > 5) tail.shift();
          opts.onLog?.(line);
        }
      });
    });
    const started = await ref.start().catch((e: unknown) => {
      throw new Error(`${oneLine(e)}${tail.length ? `; the reference said: ${tail.join(' | ')}` : ''}`);
    });
    fs.copyFileSync(path.join(outDir, 'reference.profile.json'), opts.profilePath);
    fs.chmodSync(opts.profilePath, 0o600);
    fs.rmSync(outDir, { recursive: true, force: true });
    const exited = (async () => {
      const docker = (client.container as unknown as { dockerode: import('dockerode') }).dockerode;
      await docker.getContainer(started.getId()).wait().catch(() => undefined);
    })();
    return { baseUrl: `http://127.0.0.1:${port}`, db: 'container', profilePath: opts.profilePath, switchboardToken: opts.switchboardToken, runId, exited, stop };
  } catch (e) {
    await stop();
    throw new ContainerSetupError(`--reference container: ${oneLine(e)}`);
  }
}
