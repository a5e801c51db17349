// Outbound `recording.transcript_ready` delivery (spec §6): an outbox row per event and active
// subscription, written in the transaction that finalizes the transcript, and a delivery worker that
// signs each attempt (§6.2: `v1=` HMAC-SHA256 over `{timestamp}.{raw body}`) and retries per §6.4 with
// the SAME event id and delivery id. Subscriptions are disabled by default (runtime status
// planned_not_generally_available); the sandbox control routes activate one at a time.
// Its own signing code: the reference never imports the harness. The sender's choices (the event body, the bytes
// sent, the timestamp, the headers, redirects, success and the retry decision) are named points (context.ts), asked
// of the hook the subscription was made under (its key is stored with the subscription).
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type pg from 'pg';
import { correctRule, type DeliveryInfo, type DeliveryResult, type Rule } from './context.ts';
import { isRetryableStatus } from '../fixtures/contract/webhook-retries.ts';

export const WEBHOOK_API_VERSION = '2026-05-01';
export const WEBHOOK_EVENT_TYPE = 'recording.transcript_ready';
export const WEBHOOK_RUNTIME_STATUS = 'planned_not_generally_available';
/** The word of the §6.2 header names the reference uses: the spec's own (a named point lets another service use its name). */
export const DEFAULT_HEADER_WORD = 'Service';

export class WebhookInputError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface SubscriptionInput {
  receiver_url: string;
  signing_secret: string;
  max_attempts?: number;
  backoff_ms?: number;
  timeout_ms?: number;
}

function intIn(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new WebhookInputError(400, `${name} must be an integer ${min}..${max}`);
  return value;
}

export function parseSubscriptionInput(body: unknown): Required<SubscriptionInput> {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.receiver_url !== 'string' || !/^https?:\/\/[^\s/?#]+(\/[^\s]*)?$/.test(b.receiver_url)) throw new WebhookInputError(400, 'receiver_url must be an http(s) URL');
  if (typeof b.signing_secret !== 'string' || b.signing_secret.length < 8) throw new WebhookInputError(400, 'signing_secret must be a string of at least 8 characters');
  return {
    receiver_url: b.receiver_url,
    signing_secret: b.signing_secret,
    max_attempts: intIn(b.max_attempts, 'max_attempts', 1, 20, 5),
    backoff_ms: intIn(b.backoff_ms, 'backoff_ms', 0, 3_600_000, 1000),
    timeout_ms: intIn(b.timeout_ms, 'timeout_ms', 50, 60_000, 10_000),
  };
}

/** Creates an ACTIVE subscription (sandbox activation); the hook key of the activating request sticks to it. */
export async function activateSubscription(pool: pg.Pool, organizationId: string, input: Required<SubscriptionInput>, hookKey: string | null) {
  const id = `whsub_${crypto.randomBytes(8).toString('hex')}`;
  await pool.query(
    `INSERT INTO webhook_subscriptions (subscription_id, organization_id, receiver_url, signing_secret, active, max_attempts, backoff_ms, timeout_ms, hook_key)
     VALUES ($1, $2, $3, $4, true, $5, $6, $7, $8)`,
    [id, organizationId, input.receiver_url, input.signing_secret, input.max_attempts, input.backoff_ms, input.timeout_ms, hookKey],
  );
  // The secret is never echoed.
  return { subscription_id: id, organization_id: organizationId, receiver_url: input.receiver_url, active: true, runtime_status: WEBHOOK_RUNTIME_STATUS, max_attempts: input.max_attempts, backoff_ms: input.backoff_ms, timeout_ms: input.timeout_ms };
}

export async function deactivateSubscription(pool: pg.Pool, subscriptionId: string): Promise<boolean> {
  const r = await pool.query('UPDATE webhook_subscriptions SET active = false WHERE subscription_id = $1', [subscriptionId]);
  await pool.query(`UPDATE webhook_outbox SET status = 'cancelled', updated_at = now() WHERE subscription_id = $1 AND status = 'pending'`, [subscriptionId]);
  return r.rowCount === 1;
}

/**
 * Finalizes the transcript of an ambient transcript document of the organization and, in the same
 * transaction, writes one outbox row per active subscription (or only the named one).
 */
export async function finalizeTranscript(pool: pg.Pool, organizationId: string, body: unknown, ruleOf: (key: string | null) => Rule = () => correctRule): Promise<{ event_id: string; deliveries: number }> {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.encounter_id !== 'string' || typeof b.document_id !== 'string') throw new WebhookInputError(400, 'encounter_id and document_id are required strings');
  if (b.subscription_id !== undefined && typeof b.subscription_id !== 'string') throw new WebhookInputError(400, 'subscription_id must be a string');
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const doc = await client.query(
      `SELECT d.document_id FROM documents d JOIN encounters e ON e.encounter_id = d.encounter_id
        WHERE d.document_id = $1 AND d.encounter_id = $2 AND e.organization_id = $3 AND NOT e.is_demo AND d.schema_type = 'ambient_transcript'`,
      [b.document_id, b.encounter_id, organizationId],
    );
    if (doc.rowCount !== 1) throw new WebhookInputError(404, 'no ambient transcript document of the organization with these ids');
    const t = await client.query('UPDATE transcripts SET finalized = true WHERE document_id = $1 RETURNING document_id', [b.document_id]);
    if (t.rowCount !== 1) throw new WebhookInputError(404, 'the document has no transcript to finalize');
    const eventId = `evt_${crypto.randomBytes(12).toString('hex')}`;
    const payload = {
      id: eventId,
      type: WEBHOOK_EVENT_TYPE,
      api_version: WEBHOOK_API_VERSION,
      occurred_at: new Date().toISOString(),
      organization_id: organizationId,
      resources: { encounter_id: b.encounter_id, document_id: b.document_id },
    };
    // The subscriptions delivered to: the active ones (a subscription's hook may deliver to it inactive too).
    const subs = await client.query<{ subscription_id: string; active: boolean; hook_key: string | null }>(
      'SELECT subscription_id, active, hook_key FROM webhook_subscriptions WHERE organization_id = $1 AND ($2::text IS NULL OR subscription_id = $2)',
      [organizationId, b.subscription_id ?? null],
    );
    const to = subs.rows.filter((x) => x.active || ruleOf(x.hook_key)('deliverToInactive', false)).map((x) => x.subscription_id);
    const r = await client.query(
      `INSERT INTO webhook_outbox (delivery_id, event_id, subscription_id, payload)
       SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $1, s.subscription_id, $2::jsonb
         FROM webhook_subscriptions s WHERE s.subscription_id = ANY($3::text[])`,
      [eventId, JSON.stringify(payload), to],
    );
    await client.query('COMMIT');
    return { event_id: eventId, deliveries: r.rowCount ?? 0 };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

/** The worker's schedule for one event (sandbox control): each delivery's state, attempts so far, last result, next attempt. */
export async function eventDeliveries(pool: pg.Pool, organizationId: string, eventId: string) {
  const r = await pool.query(
    `SELECT o.delivery_id, o.status, o.attempts, o.last_result, o.next_attempt_at, s.max_attempts, s.backoff_ms
       FROM webhook_outbox o JOIN webhook_subscriptions s ON s.subscription_id = o.subscription_id
      WHERE o.event_id = $1 AND s.organization_id = $2 ORDER BY o.delivery_id`,
    [eventId, organizationId],
  );
  return { event_id: eventId, deliveries: r.rows.map((x) => ({ ...x, next_attempt_at: x.next_attempt_at instanceof Date ? x.next_attempt_at.toISOString() : x.next_attempt_at })) };
}

// ---------------------------------------------------------------- the delivery worker

interface DueRow {
  delivery_id: string; event_id: string; payload: Record<string, any>; attempts: number;
  receiver_url: string; signing_secret: string; max_attempts: number; backoff_ms: number; timeout_ms: number; hook_key: string | null;
}

type Result = DeliveryResult;

/** The body bytes, in the contract's field order (jsonb does not keep key order). */
function serialise(p: Record<string, any>): Record<string, unknown> {
  const resources: Record<string, unknown> = { encounter_id: p.resources.encounter_id, document_id: p.resources.document_id };
  return { id: p.id, type: p.type, api_version: p.api_version, occurred_at: p.occurred_at, organization_id: p.organization_id, resources };
}

function post(url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<Result> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    const lib = url.startsWith('https:') ? https : http;
    // Redirects are not followed (node:http never does): a 3xx is a terminal answer (§6.4).
    const req = lib.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => finish({ kind: 'status', status: res.statusCode ?? 0, location: res.headers.location }));
      res.on('error', () => finish({ kind: 'transport', error: 'response aborted' }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ kind: 'transport', error: `timeout after ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish({ kind: 'transport', error: e.code ?? 'connection error' }));
    req.end(body);
  });
}

/** §6.4: retryable (connection errors, timeouts, 408, 409, 425, 429, 5xx) or not (1xx, 3xx, other 4xx): the contract's table. */
export function isRetryable(r: Result): boolean {
  return isRetryableStatus(r.kind === 'transport' ? undefined : r.status);
}

const isSuccess = (r: Result): boolean => r.kind === 'status' && r.status >= 200 && r.status < 300;

export class DeliveryWorker {
  readonly pool: pg.Pool;
  readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();

  readonly ruleOf: (key: string | null) => Rule;

  constructor(pool: pg.Pool, pollMs = 100, ruleOf: (key: string | null) => Rule = () => correctRule) {
    this.pool = pool;
    this.pollMs = pollMs;
    this.ruleOf = ruleOf;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for due rows now (after an event is written) instead of at the next poll. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.claim()
      .catch(() => {}) // the database may be away for a moment: the next poll tries again
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async claim(): Promise<void> {
    const r = await this.pool.query<DueRow>(
      `WITH due AS (
         SELECT delivery_id FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT 20 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE webhook_outbox o SET status = 'delivering', attempts = o.attempts + 1, updated_at = now()
           FROM due WHERE o.delivery_id = due.delivery_id RETURNING o.*)
       SELECT c.delivery_id, c.event_id, c.payload, c.attempts, s.receiver_url, s.signing_secret, s.max_attempts, s.backoff_ms, s.timeout_ms, s.hook_key
         FROM claimed c JOIN webhook_subscriptions s ON s.subscription_id = c.subscription_id`,
    );
    for (const row of r.rows) {
      const p = this.deliver(row).catch(() => {});
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }
  }

  private async deliver(row: DueRow): Promise<void> {
    const rule = this.ruleOf(row.hook_key);
    const event = rule('webhookEvent', serialise)(row.payload, row.attempts);
    const compact = Buffer.from(JSON.stringify(event), 'utf8');
    // The bytes sent are the bytes signed.
    const body = rule('webhookBody', (_e: Record<string, unknown>, bytes: Buffer) => bytes)(event, compact);
    const timestamp = String(rule('webhookTimestamp', (now: number) => now)(Math.floor(Date.now() / 1000)));
    const digest = rule('webhookDigestText', (hex: string) => hex)(crypto.createHmac('sha256', row.signing_secret).update(`${timestamp}.`, 'utf8').update(compact).digest('hex'));
    // §6.2 writes a neutral word (Service) where the service's own name stands: the word is the service's choice.
    const word = rule('webhookHeaderWord', DEFAULT_HEADER_WORD).toLowerCase();
    const correctHeaders: Record<string, string> = {
      'content-type': 'application/json',
      [`${word}-event-id`]: row.event_id,
      [`${word}-delivery-id`]: row.delivery_id,
      [`${word}-timestamp`]: timestamp,
      [`${word}-signature`]: `v1=${digest}`,
      [`${word}-webhook-version`]: String(row.payload.api_version),
      'user-agent': 'cek-reference-webhooks/1',
    };
    const info: DeliveryInfo = { event_id: row.event_id, delivery_id: row.delivery_id, attempts: row.attempts, api_version: String(row.payload.api_version), timestamp };
    const headers = rule('deliveryHeaders', (h: Record<string, string>) => h)(correctHeaders, info);
    let result = await post(row.receiver_url, headers, body, row.timeout_ms);
    // Redirects are never followed (§6.4: a 3xx ends the delivery).
    if (result.kind === 'status' && result.location && rule('followRedirect', () => false)(result)) {
      result = await post(new URL(result.location, row.receiver_url).href, headers, body, row.timeout_ms);
    }
    const summary = result.kind === 'status' ? `status ${result.status}` : result.error;
    if (rule('deliverySucceeded', isSuccess)(result)) {
      await this.pool.query(`UPDATE webhook_outbox SET status = 'delivered', last_result = $2, updated_at = now() WHERE delivery_id = $1`, [row.delivery_id, summary]);
    } else if (rule('retryable', isRetryable)(result) && row.attempts < row.max_attempts) {
      // Exponential backoff from the subscription's base (schedule not shown by the spec; a sandbox choice).
      const delay = Math.min(row.backoff_ms * 2 ** (row.attempts - 1), 300_000);
      await this.pool.query(
        `UPDATE webhook_outbox SET status = 'pending', last_result = $2, next_attempt_at = now() + make_interval(secs => $3), updated_at = now()
          WHERE delivery_id = $1 AND status = 'delivering'`,
        [row.delivery_id, summary, delay / 1000],
      );
      setTimeout(() => this.kick(), delay + 5).unref();
    } else {
      await this.pool.query(`UPDATE webhook_outbox SET status = 'failed', last_result = $2, updated_at = now() WHERE delivery_id = $1`, [row.delivery_id, summary]);
    }
  }
}
