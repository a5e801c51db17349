// The example webhook receiver the project's tests judge, started for them: test infrastructure, never part of a run.
// The example webhook receiver (reference-receiver/), ready to be judged: an embedded PostgreSQL cluster
// (temp dir, free port; engine/reference/embedded-database.ts) for its dedupe table, the counting stand-in of the
// REST API (the oracle's follow-up probe, observe/counting-api.ts) for its follow-up fetches, and the receiver
// itself. Started by the receiver self-tests and the package test: the harness never imports the example receiver,
// and the receiver nothing of the harness. Nothing here touches the reference implementation of the service.
import crypto from 'node:crypto';
import type pg from 'pg';
import { registerSecret } from '../../record/redact.ts';
import { startCountingApi } from '../../observe/counting-api.ts';
import type { CountingApi } from '../../observe/counting-api.ts';
import { startEmbeddedDatabase } from '../../engine/reference/embedded-database.ts';
import { startReferenceReceiver } from '../../reference-receiver/receiver.ts';
import type { ReferenceReceiverOptions, RunningReceiver } from '../../reference-receiver/receiver.ts';

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
