// The example webhook receiver for `recording.transcript_ready` (spec §6.3, §6.4): a receiver partners can
// read and copy (README.md beside it walks through it). It verifies every delivery over the raw body bytes
// (verify.ts), deduplicates business work by EVENT id in PostgreSQL (never by delivery id), then fetches the
// encounter and the document through the REST routes (§4). The signing secret and the API key are never
// logged, echoed or stored.
//
// It imports fixtures/ only, never the harness: the harness judges this receiver over HTTP like any
// partner's, with its own signer and verifier, so a bug shared by both sides cannot pass unseen.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { checkSignature, digestMatches, EVENT_TYPE, HEADERS, matchHeaders, signatureFor, verifyDelivery } from './verify.ts';
import type { Headers, Rejected, RejectReason, TranscriptReadyEvent, Verified } from './verify.ts';
import { checkEventBody } from './event-schema.ts';
import type { ReceiverVariant } from './variants.ts';

export type { ReceiverVariant } from './variants.ts';

export interface ReceiverLogEntry {
  outcome: 'accepted' | 'ignored' | 'rejected' | 'duplicate_completed' | 'duplicate_in_progress' | 'followup_failed' | 'receiver_error';
  reason?: RejectReason | string;
  eventId?: string;
  deliveryId?: string;
  status: number;
  /** True when this delivery found the event in progress and waited for the first one. */
  waitedForInProgress?: boolean;
}

export interface FollowUp {
  event: TranscriptReadyEvent;
  encounter: unknown;
  document: unknown;
}

export interface ReferenceReceiverOptions {
  /** Endpoint signing secret. */
  secret: string | Buffer;
  /** Database holding processed_events; the receiver creates the table if needed, never closes the pool. */
  pool: Pool;
  /** Base address of the REST API (without /external/v1). */
  apiBaseUrl: string;
  /** Organization-scoped API key for the follow-up fetches (encounters:read, patients:read, documents:read). */
  apiKey: string;
  /** Receiver clock in milliseconds; defaults to Date.now. */
  clock?: () => number;
  host?: string;
  port?: number;
  /** Path deliveries are posted to; default `/webhook`. */
  path?: string;
  maxBodyBytes?: number;
  /** How long a duplicate waits for an in-progress first delivery before answering 409 (retryable). */
  inProgressWaitMs?: number;
  /** An in-progress claim older than this is taken over (its worker is presumed dead). */
  staleClaimSeconds?: number;
  /** Follow-up fetch timeout. */
  fetchTimeoutMs?: number;
  /** Partner business work after the follow-up fetches; throwing makes the delivery retryable. */
  onEvent?: (followUp: FollowUp) => Promise<void> | void;
  /** Structured log sink; entries carry identifiers and reasons only. */
  log?: (entry: ReceiverLogEntry) => void;
  /**
   * Other legitimate choices a receiver may make (variants.ts, each with its clause); off by
   * default. The receiver-variant meta-test turns them on one at a time.
   */
  variants?: readonly ReceiverVariant[];
}

export interface RunningReceiver {
  url: string;
  close(): Promise<void>;
}

/**
 * Rejections are terminal (§6.4: 400 and 401 are not retried). Authentication failures of the
 * signature and its timestamp answer 401; a delivery that is authentic but unusable answers 400.
 */
const UNAUTHORIZED_REASONS: ReadonlySet<RejectReason> = new Set<RejectReason>([
  'timestamp_missing', 'timestamp_duplicate', 'timestamp_malformed', 'timestamp_not_canonical', 'timestamp_outside_tolerance',
  'signature_missing', 'signature_duplicate', 'multiple_signatures', 'unsupported_signature_version',
  'signature_uppercase_hex', 'malformed_signature', 'signature_mismatch',
]);

export function rejectionStatus(reason: RejectReason): 400 | 401 {
  return UNAUTHORIZED_REASONS.has(reason) ? 401 : 400;
}

export const PROCESSED_EVENTS_DDL = `
CREATE TABLE IF NOT EXISTS processed_events (
  event_id          text PRIMARY KEY,
  status            text NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
  first_delivery_id text NOT NULL,
  last_delivery_id  text NOT NULL,
  organization_id   text NOT NULL,
  encounter_id      text NOT NULL,
  document_id       text NOT NULL,
  attempts          integer NOT NULL DEFAULT 1,
  claimed_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz,
  last_error        text
)`;

/** Creates processed_events once; serialised with an advisory lock so concurrent starts do not race. */
export async function ensureProcessedEventsTable(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['processed_events_ddl']);
    await client.query(PROCESSED_EVENTS_DDL);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

class BodyTooLarge extends Error {}

function readRawBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body?: Record<string, unknown>, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status, headers).end();
  } else {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

type Claim = 'claimed' | 'completed' | 'in_progress' | 'failed';

async function claim(pool: Pool, event: TranscriptReadyEvent, deliveryId: string, staleClaimSeconds: number): Promise<Claim> {
  const inserted = await pool.query(
    `INSERT INTO processed_events (event_id, status, first_delivery_id, last_delivery_id, organization_id, encounter_id, document_id)
     VALUES ($1, 'in_progress', $2, $2, $3, $4, $5)
     ON CONFLICT (event_id) DO NOTHING
     RETURNING event_id`,
    [event.id, deliveryId, event.organization_id, event.resources.encounter_id, event.resources.document_id],
  );
  if (inserted.rowCount === 1) return 'claimed';
  // Take over a failed attempt, or an in-progress claim whose worker is presumed dead. The WHERE
  // clause makes the takeover atomic: of several concurrent retries, exactly one gets the row.
  const retaken = await pool.query(
    `UPDATE processed_events
        SET status = 'in_progress', attempts = attempts + 1, claimed_at = now(), last_delivery_id = $2, last_error = NULL
      WHERE event_id = $1
        AND (status = 'failed' OR (status = 'in_progress' AND claimed_at < now() - make_interval(secs => $3)))
      RETURNING event_id`,
    [event.id, deliveryId, staleClaimSeconds],
  );
  if (retaken.rowCount === 1) return 'claimed';
  const current = await pool.query<{ status: Claim }>('SELECT status FROM processed_events WHERE event_id = $1', [event.id]);
  return current.rows[0]?.status ?? 'in_progress';
}

async function waitForCompletion(pool: Pool, eventId: string, waitMs: number): Promise<Claim> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const current = await pool.query<{ status: Claim }>('SELECT status FROM processed_events WHERE event_id = $1', [eventId]);
    const status = current.rows[0]?.status ?? 'failed';
    if (status !== 'in_progress' || Date.now() >= deadline) return status;
    await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
  }
}

class FollowUpError extends Error {}

async function fetchJson(url: string, apiKey: string, timeoutMs: number, what: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    // The message of a transport error never contains the key (it is in a header, not the URL).
    throw new FollowUpError(`GET ${what} failed: ${error instanceof Error ? error.name : 'error'}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new FollowUpError(`GET ${what} answered ${response.status}`);
  }
  try {
    return await response.json();
  } catch {
    throw new FollowUpError(`GET ${what} answered a body that is not JSON`);
  }
}

/** Variant identical-repeated-headers-merged: identical repeated lines of one header read as one value. */
function mergeIdenticalRepeats(headers: Headers): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = Array.isArray(value) && value.length > 1 && value.every((x) => x === value[0]) ? [value[0]] : value;
  }
  return out;
}

/** The one entry of a header given exactly once, as [name as received, value]; undefined otherwise. */
function onlyValue(headers: Headers, name: string): [string, string] | undefined {
  const entries = Object.entries(headers).filter(([n, v]) => n.toLowerCase() === name.toLowerCase() && v !== undefined);
  if (entries.length !== 1) return undefined;
  const [n, v] = entries[0];
  const values: readonly string[] = typeof v === 'string' ? [v] : (v as readonly string[]);
  return values.length === 1 ? [n, values[0]] : undefined;
}

/** Variant uppercase-hex-accepted: a v1= digest is hex text in either case; compare it as lowercase. */
function lowercaseDigest(headers: Headers): Headers {
  const sig = onlyValue(headers, HEADERS.signature);
  if (!sig || !/^v1=[0-9A-Fa-f]{64}$/.test(sig[1])) return headers;
  return { ...headers, [sig[0]]: [sig[1].toLowerCase()] };
}

/** Variant several-signatures-accepted: each v1= item of a single signature header, as its own header. */
function signatureCandidates(headers: Headers): Headers[] {
  const sig = onlyValue(headers, HEADERS.signature);
  if (!sig) return [];
  const items = sig[1].split(/[\s,]+/).filter((item) => item.startsWith('v1='));
  return items.length > 1 ? items.map((item) => ({ ...headers, [sig[0]]: [item] })) : [];
}

/**
 * Variant leading-zero-timestamp-accepted: the digest is checked over the timestamp text exactly as
 * received (§6.3 step 4), and the value may carry leading zeros; the delivery is then verified again with
 * the canonical spelling (and the digest that spelling has), so every other step still runs.
 */
function canonicalTimestamp(headers: Headers, rawBody: Buffer, secret: string | Buffer): Headers | undefined {
  const ts = onlyValue(headers, HEADERS.timestamp);
  const sig = onlyValue(headers, HEADERS.signature);
  if (!ts || !sig || !/^0[0-9]+$/.test(ts[1])) return undefined;
  if (!digestMatches(secret, ts[1], rawBody, sig[1])) return undefined;
  const canonical = BigInt(ts[1]).toString();
  return { ...headers, [ts[0]]: [canonical], [sig[0]]: [signatureFor(secret, canonical, rawBody)] };
}

/**
 * Variant tolerant-reader-payload: a validly signed event that carries undeclared fields is read for
 * the fields §6.1 defines; the extras are ignored (receiver policy). A missing or malformed field still rejects.
 */
function tolerantRead(headers: Headers, rawBody: Buffer, secret: string | Buffer, nowMs: number): Verified | undefined {
  const signed = checkSignature({ headers, rawBody, secret, nowMs });
  if (!signed.ok) return undefined;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const r = (parsed.resources ?? {}) as Record<string, unknown>;
  const event = {
    id: parsed.id, type: parsed.type, api_version: parsed.api_version, occurred_at: parsed.occurred_at, organization_id: parsed.organization_id,
    resources: { encounter_id: r.encounter_id, document_id: r.document_id },
  };
  if (!checkEventBody(event).ok) return undefined;
  const matched = matchHeaders(signed, event as TranscriptReadyEvent);
  return matched.ok ? matched : undefined;
}

/** Variant unsupported-type-ignored: the body of a validly signed delivery names another event type. */
function otherEventType(rawBody: Buffer): boolean {
  try {
    const parsed = JSON.parse(rawBody.toString('utf8')) as { type?: unknown };
    return typeof parsed?.type === 'string' && parsed.type !== EVENT_TYPE;
  } catch {
    return false;
  }
}

/** The request handler, for mounting in an existing node:http server. */
export function createReferenceReceiverHandler(opts: ReferenceReceiverOptions): http.RequestListener {
  const clock = opts.clock ?? Date.now;
  const path = opts.path ?? '/webhook';
  const maxBodyBytes = opts.maxBodyBytes ?? 256 * 1024;
  const inProgressWaitMs = opts.inProgressWaitMs ?? 5_000;
  const staleClaimSeconds = opts.staleClaimSeconds ?? 300;
  const fetchTimeoutMs = opts.fetchTimeoutMs ?? 10_000;
  const base = opts.apiBaseUrl.replace(/\/+$/, '');
  const log = opts.log ?? (() => undefined);
  const variants = new Set<ReceiverVariant>(opts.variants ?? []);

  /** §6.3 as this receiver applies it (verify.ts), with the variants' allowed choices. */
  function verify(received: Headers, rawBody: Buffer): Verified | Rejected {
    let headers = received;
    if (variants.has('identical-repeated-headers-merged')) headers = mergeIdenticalRepeats(headers);
    if (variants.has('uppercase-hex-accepted')) headers = lowercaseDigest(headers);
    // bom-tolerated: steps 1 to 7 over the raw bytes as received (mark included), then the JSON read
    // with a decoder that skips a leading byte-order mark (RFC 8259 §8.1).
    const skipByteOrderMark = variants.has('bom-tolerated');
    const run = (h: Headers) => verifyDelivery({ headers: h, rawBody, secret: opts.secret, nowMs: clock() }, { skipByteOrderMark });
    const verdict = run(headers);
    if (verdict.ok) return verdict;
    if (verdict.reason === 'multiple_signatures' && variants.has('several-signatures-accepted')) {
      for (const candidate of signatureCandidates(headers)) {
        const again = run(candidate);
        if (again.ok) return again;
      }
    }
    if (verdict.reason === 'timestamp_not_canonical' && variants.has('leading-zero-timestamp-accepted')) {
      const canonical = canonicalTimestamp(headers, rawBody, opts.secret);
      if (canonical) return run(canonical);
    }
    if (verdict.reason === 'schema_violation' && variants.has('tolerant-reader-payload')) {
      return tolerantRead(headers, rawBody, opts.secret, clock()) ?? verdict;
    }
    return verdict;
  }

  /** Success answer: 204 by default; the variants answer 200 with a body. */
  function acknowledge(res: http.ServerResponse, duplicate: boolean): void {
    if (variants.has('success-200-with-body')) return answer(res, 200, { received: true });
    if (duplicate && variants.has('duplicate-answered-200')) return answer(res, 200, { received: true, duplicate: true });
    return answer(res, 204);
  }

  async function followUp(event: TranscriptReadyEvent): Promise<void> {
    // Identifiers are opaque (§2): encode them as path segments, never interpret them.
    const encounterUrl = `${base}/external/v1/encounters/${encodeURIComponent(event.resources.encounter_id)}`;
    const documentUrl = `${encounterUrl}/documents/${encodeURIComponent(event.resources.document_id)}`;
    const encounter = await fetchJson(encounterUrl, opts.apiKey, fetchTimeoutMs, 'encounter');
    const document = await fetchJson(documentUrl, opts.apiKey, fetchTimeoutMs, 'document');
    await opts.onEvent?.({ event, encounter, document });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = new URL(req.url ?? '/', 'http://receiver.invalid');
    if (target.pathname !== path) return answer(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return answer(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });

    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) return answer(res, 413, { error: 'body_too_large' }, { connection: 'close' });
      throw error;
    }

    // headersDistinct keeps a repeated header as several values instead of joining them with ", ".
    const verdict = verify(req.headersDistinct, rawBody);
    if (!verdict.ok) {
      if (verdict.reason === 'schema_violation' && variants.has('unsupported-type-ignored') && otherEventType(rawBody)) {
        // Authentic (the signature held), of a type this receiver does not handle: ignored, nothing fetched.
        log({ outcome: 'ignored', reason: 'unsupported_event_type', status: 202 });
        return answer(res, 202, { ignored: true });
      }
      const status = variants.has('invalid-answered-500') ? 500 : variants.has('invalid-answered-400') ? 400 : rejectionStatus(verdict.reason);
      log({ outcome: 'rejected', reason: verdict.reason, status });
      return answer(res, status, { error: 'webhook_rejected', reason: verdict.reason });
    }

    const { event, deliveryId } = verdict;
    const ids = { eventId: event.id, deliveryId };
    let state = await claim(opts.pool, event, deliveryId, staleClaimSeconds);
    const waitedForInProgress = state === 'in_progress';
    if (waitedForInProgress) {
      // §6.4: a duplicate of an event still in progress continues idempotently: wait for the first
      // delivery's outcome rather than repeat the work; if it does not finish, ask for a retry.
      state = await waitForCompletion(opts.pool, event.id, inProgressWaitMs);
      if (state === 'failed') state = await claim(opts.pool, event, deliveryId, staleClaimSeconds);
    }
    if (state === 'completed') {
      log({ outcome: 'duplicate_completed', ...ids, status: 204, waitedForInProgress });
      return acknowledge(res, true);
    }
    if (state !== 'claimed') {
      log({ outcome: 'duplicate_in_progress', ...ids, status: 409, waitedForInProgress });
      return answer(res, 409, { error: 'event_in_progress' }, { 'retry-after': '5' });
    }

    if (variants.has('acknowledge-then-work')) {
      // Acknowledged at once; the claim keeps duplicates from repeating the work meanwhile.
      answer(res, 202, { received: true });
      try {
        await followUp(event);
        await opts.pool.query(`UPDATE processed_events SET status = 'completed', completed_at = now() WHERE event_id = $1`, [event.id]);
        log({ outcome: 'accepted', ...ids, status: 202, waitedForInProgress });
      } catch (error) {
        const message = error instanceof FollowUpError ? error.message : 'partner work failed';
        await opts.pool.query(`UPDATE processed_events SET status = 'failed', last_error = $2 WHERE event_id = $1`, [event.id, message]);
        log({ outcome: 'followup_failed', reason: message, ...ids, status: 202 });
      }
      return;
    }
    try {
      await followUp(event);
    } catch (error) {
      const message = error instanceof FollowUpError ? error.message : 'partner work failed';
      await opts.pool.query(`UPDATE processed_events SET status = 'failed', last_error = $2 WHERE event_id = $1`, [event.id, message]);
      log({ outcome: 'followup_failed', reason: message, ...ids, status: 503 });
      // Retryable (§6.4): the event is authentic, only the follow-up failed.
      return answer(res, 503, { error: 'followup_failed' }, { 'retry-after': '30' });
    }
    await opts.pool.query(`UPDATE processed_events SET status = 'completed', completed_at = now() WHERE event_id = $1`, [event.id]);
    log({ outcome: 'accepted', ...ids, status: 204, waitedForInProgress });
    return acknowledge(res, false);
  }

  return (req, res) => {
    handle(req, res).catch(() => {
      // Database or other receiver trouble after verification: retryable, and nothing is echoed.
      log({ outcome: 'receiver_error', status: 503 });
      answer(res, 503, { error: 'receiver_unavailable' });
    });
  };
}

/** Starts the receiver on host:port (default 127.0.0.1, a free port) after creating its table. */
export async function startReferenceReceiver(opts: ReferenceReceiverOptions): Promise<RunningReceiver> {
  await ensureProcessedEventsTable(opts.pool);
  const server = http.createServer(createReferenceReceiverHandler(opts));
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${opts.path ?? '/webhook'}`,
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close(error => (error ? reject(error) : resolve()));
    }),
  };
}
