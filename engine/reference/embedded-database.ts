// A throw-away embedded PostgreSQL with its pool (the example receiver's dedupe table): it starts a process and judges nothing.
import pg from 'pg';
import { startCluster, type Cluster } from '../../platform/embedded-cluster.ts';

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
