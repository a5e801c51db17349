// The example webhook receiver (reference-receiver/), ready to be judged: an embedded PostgreSQL cluster
// (temp dir, free port) for its dedupe table, the counting stand-in of the REST API (the oracle's
// follow-up probe, observe/counting-api.ts) for its follow-up fetches, and the receiver itself.
// Started once per sandbox run by global setup (cli/global-setup.ts), and by the receiver self-tests.
// An entry point's job: the harness never imports the example receiver, and the receiver nothing of
// the harness. Nothing here touches the reference implementation of the service.
import crypto from 'node:crypto';
import pg from 'pg';
import { startCluster, type Cluster } from '../platform/embedded-cluster.ts';
import { registerSecret } from '../record/redact.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import type { CountingApi } from '../observe/counting-api.ts';
import { startReferenceReceiver } from '../reference-receiver/receiver.ts';
import type { ReferenceReceiverOptions, RunningReceiver } from '../reference-receiver/receiver.ts';

export interface ReceiverSandbox {
  url: string;
  secret: string;
  api: CountingApi;
  pool: pg.Pool;
  receiver: RunningReceiver;
  /** Starts another example receiver on the same database and API (e.g. with other options). */
  startReceiver(overrides?: Partial<ReferenceReceiverOptions>): Promise<RunningReceiver>;
  close(): Promise<void>;
}

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
    throw new Error(`for the example receiver: ${e instanceof Error ? e.message : String(e)}`);
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

/** A fresh signing secret for a sandbox receiver (registered for redaction by startReceiverSandbox). */
export function sandboxSecret(): string {
  return `whsec_sandbox_${crypto.randomBytes(12).toString('hex')}`;
}

export async function startReceiverSandbox(secret = sandboxSecret()): Promise<ReceiverSandbox> {
  registerSecret(secret);
  const db = await startEmbeddedDatabase();
  let api: CountingApi;
  try {
    api = await startCountingApi();
  } catch (e) {
    await db.stop();
    throw e;
  }
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
