// The harness's own reference receiver, ready to be judged: an embedded PostgreSQL cluster (temp
// dir, free port), a counting fake REST API for its follow-up fetches, and the receiver itself.
// Used when a profile names no partner receiver, and by the receiver-suite self-tests. Nothing here
// touches the reference implementation of the service.
import pg from 'pg';
import { freePort, startCluster, type Cluster } from '../embedded-cluster.ts';
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

export { freePort };

export interface DatabaseHandle {
  pool: pg.Pool;
  stop(): Promise<void>;
}

/** A throw-away embedded PostgreSQL (about a second to start). */
export async function startEmbeddedDatabase(): Promise<DatabaseHandle> {
  let cluster: Cluster;
  try {
    cluster = await startCluster({ name: 'cec-receiver-pg', throwaway: true });
  } catch (e) {
    throw new Error(`for the reference receiver: ${e instanceof Error ? e.message : String(e)}`);
  }
  const pool = new pg.Pool({ connectionString: cluster.url, max: 8 });
  pool.on('error', () => undefined); // idle clients are cut when the cluster stops
  return {
    pool,
    async stop() {
      try {
        await pool.end();
      } finally {
        await cluster.remove();
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
