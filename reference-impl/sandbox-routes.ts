// Webhook sandbox control under /__sandbox/, outside /external/v1 and outside the contract: activate a
// subscription for the sandbox organization (the hook key of this request sticks to it), deactivate it,
// finalize a transcript so that a recording.transcript_ready event is produced on demand, and read the worker's
// schedule of one event. Needs the switchboard token; without one the routes do not exist.
import type http from 'node:http';
import type pg from 'pg';
import type { Rule } from './context.ts';
import { tokenMatches } from './faults.ts';
import { sendJson } from './send.ts';
import { activateSubscription, deactivateSubscription, eventDeliveries, finalizeTranscript, parseSubscriptionInput, WebhookInputError } from './webhooks.ts';

export interface SandboxOptions {
  pool: pg.Pool;
  switchboardToken: string | null;
  /** The organization the routes act for. */
  sandboxOrganizationId?: string;
  /** Wakes the webhook delivery worker after an event is written. */
  onWebhookEvent?: () => void;
  /** The rules of a subscription's hook key (the server's hook). */
  ruleOf?: (key: string | null) => Rule;
}

export async function serveSandbox(o: SandboxOptions, req: http.IncomingMessage, method: string, path: string, hookKey: string | null, res: http.ServerResponse): Promise<void> {
  const token = o.switchboardToken;
  const orgId = o.sandboxOrganizationId;
  // Without a token the routes do not exist: the same 404 as any path outside the API, so a production-like
  // reference does not reveal that sandbox control (or a switchboard) exists.
  if (token === null || !orgId) return sendJson(res, 404, { error: 'not_found', message: 'no such path; the public API lives under /external/v1' });
  const given = req.headers['x-switchboard-token'];
  if (!tokenMatches(typeof given === 'string' ? given : '', token)) return sendJson(res, 403, { error: 'sandbox_forbidden', message: 'x-switchboard-token is missing or wrong' });
  try {
    const sub = /^\/__sandbox\/webhooks\/subscriptions\/([A-Za-z0-9_]+)$/.exec(path);
    if (path === '/__sandbox/webhooks/subscriptions' && method === 'POST') {
      const input = parseSubscriptionInput(await readJson(req));
      return sendJson(res, 201, await activateSubscription(o.pool, orgId, input, hookKey));
    }
    if (sub && method === 'DELETE') {
      const found = await deactivateSubscription(o.pool, sub[1]);
      return found ? void res.writeHead(204).end() : sendJson(res, 404, { error: 'not_found', message: 'no such subscription' });
    }
    if (path === '/__sandbox/transcripts/finalize' && method === 'POST') {
      const out = await finalizeTranscript(o.pool, orgId, await readJson(req), o.ruleOf);
      o.onWebhookEvent?.();
      return sendJson(res, 202, out);
    }
    // A new encounter of the sandbox organization, created now, as a staging with traffic creates them while a run
    // reads (issue 38: live data must not make a run incomplete). No documents, no patient.
    if (path === '/__sandbox/encounters' && method === 'POST') {
      const id = `enc_live_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
      await o.pool.query(`INSERT INTO encounters (encounter_id, organization_id, created_at, updated_at, encounter_type, status) VALUES ($1, $2, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()), NULL, 'open')`, [id, orgId]);
      return sendJson(res, 201, { encounter_id: id });
    }
    // The worker's schedule for one event: attempts, last result, next attempt (tests watch retries without guessing).
    const ev = /^\/__sandbox\/webhooks\/events\/([A-Za-z0-9_]+)\/deliveries$/.exec(path);
    if (ev && method === 'GET') return sendJson(res, 200, await eventDeliveries(o.pool, orgId, ev[1]));
    return sendJson(res, 404, { error: 'not_found', message: 'no such sandbox route' });
  } catch (e) {
    if (e instanceof WebhookInputError) return sendJson(res, e.status, { error: 'sandbox_bad_request', message: e.message });
    throw e;
  }
}

/** A small JSON request body (sandbox control only). */
function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 16 * 1024) {
        reject(new WebhookInputError(413, 'body larger than 16 KiB'));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch {
        reject(new WebhookInputError(400, 'body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}
