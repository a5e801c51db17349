// Deliberately broken webhook receivers for the receiver-suite proof (tests/webhook-receiver-suite.spec.ts):
// each carries ONE defect a partner receiver could have, and the checks named in BROKEN_RECEIVERS
// must fail against it. They keep state in memory and make real follow-up fetches to a counting fake
// REST API, so the suite's follow-up probe sees what they do.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign, verify, WEBHOOK_HEADERS } from '../judge/signature.ts';
import type { VerifyInput, VerifyResult, WebhookEvent } from '../judge/signature.ts';
import type { CountingApi } from '../observe/counting-api.ts';
import { RECEIVER_CASES } from '../checks/receiver/cases.ts';

/** Every check that sends an invalid (or open-choice) delivery: each must fail against a receiver that works before verifying. */
const INVALID_DELIVERY_CHECKS = RECEIVER_CASES.filter((c) => ['reject', 'decision', 'payload-policy', 'unsupported-type'].includes(c.expectation)).map((c) => c.id);

export type BrokenKind =
  | 'accepts-stale-timestamps'
  | 'verifies-reserialised-body'
  | 'verifies-python-json-dumps'
  | 'answers-503-after-follow-up'
  | 'answers-503-to-completed-duplicates'
  | 'dedupes-by-delivery-id'
  | 'answers-500-to-invalid-signature'
  | 'hangs-on-invalid-signature'
  | 'follows-up-before-verifying'
  | 'processes-concurrent-duplicates-twice'
  | 'verifies-nothing'
  | 'hmac-without-timestamp'
  | 'syncs-before-verifying-clock-ahead'
  | 'syncs-before-verifying-clock-behind';

/**
 * For each broken receiver, checks of runReceiverSuite that must FAIL against it, and checks that must
 * end as a `warning` (a `should` of §6.3 not met: the receiver is not broken in a way the spec forbids).
 */
export const BROKEN_RECEIVERS: Record<BrokenKind, { description: string; mustFail: string[]; mustWarn?: string[] }> = {
  'accepts-stale-timestamps': {
    description: 'skips the 300-second tolerance (verifies against the timestamp itself)',
    mustFail: [
      'webhook-receiver-rejects-timestamp-301-s-old', 'webhook-receiver-rejects-timestamp-301-s-ahead',
      'webhook-receiver-rejects-timestamp-one-day-old', 'webhook-receiver-rejects-timestamp-one-day-ahead',
      'webhook-receiver-rejects-timestamp-epoch-zero', 'webhook-receiver-no-followup-after-invalid-deliveries',
    ],
  },
  'verifies-reserialised-body': {
    description: 'computes the HMAC over JSON.stringify(JSON.parse(body)) instead of the raw bytes',
    mustFail: [
      'webhook-receiver-rejects-signature-over-reserialised-body', 'webhook-receiver-rejects-body-reserialised-pretty',
      'webhook-receiver-rejects-body-trailing-newline', 'webhook-receiver-no-followup-after-invalid-deliveries',
      // Compact deliveries re-serialise to themselves; an indented one does not, so it is refused.
      'webhook-receiver-accepts-valid-delivery-laid-out-json',
    ],
  },
  // A receiver written as `hmac(secret, f"{ts}.{json.dumps(request.json)}")`: Python's default separators
  // (", ", ": ") never give back the compact bytes the harness sends, so every valid delivery is refused 401.
  'verifies-python-json-dumps': {
    description: 'computes the HMAC over json.dumps(request.json) (Python\'s default ", " and ": " separators) instead of the raw bytes',
    mustFail: [
      'webhook-receiver-accepts-valid-delivery', 'webhook-receiver-accepts-valid-delivery-laid-out-json',
      'webhook-receiver-accepts-timestamp-299-s-old', 'webhook-receiver-accepts-timestamp-299-s-ahead',
    ],
  },
  // Verifies correctly and makes its follow-up fetches (the stand-in answers them), then answers 503 all the
  // same (say its own database is down): §6.4 makes that a retryable failure, never a §6.3 failure.
  'answers-503-after-follow-up': {
    description: 'verifies every delivery and fetches the follow-ups, then answers 503 to the valid ones',
    mustFail: [],
    mustWarn: [
      'webhook-receiver-accepts-valid-delivery', 'webhook-receiver-accepts-valid-delivery-laid-out-json',
      'webhook-receiver-accepts-timestamp-299-s-old', 'webhook-receiver-accepts-timestamp-299-s-ahead',
    ],
  },
  // §6.4 decides the answer to a duplicate of a completed event (success): a retryable 503 there is a failure, not the
  // warning a retryable answer to a first delivery is.
  'answers-503-to-completed-duplicates': {
    description: 'processes each event once and acknowledges it, then answers 503 to every duplicate of a completed event',
    mustFail: ['webhook-receiver-accepts-exact-replay', 'webhook-receiver-accepts-retry-with-new-delivery-id'],
  },
  'dedupes-by-delivery-id': {
    description: 'deduplicates business work by Service-Delivery-Id instead of the event id',
    mustFail: ['webhook-receiver-accepts-retry-with-new-delivery-id', 'webhook-receiver-processes-events-sharing-a-delivery-id'],
  },
  // §6.3 "should answer non-2xx": 500 is non-2xx, only §6.4 makes it retryable, so a warning, not a failure.
  'answers-500-to-invalid-signature': {
    description: 'answers 500 when the signature or its header is wrong',
    mustFail: [],
    mustWarn: [
      'webhook-receiver-rejects-signature-other-secret', 'webhook-receiver-rejects-body-one-bit-flipped',
      'webhook-receiver-rejects-signature-version-v0', 'webhook-receiver-rejects-signature-truncated',
      'webhook-receiver-rejects-service-signature-absent', 'webhook-receiver-rejects-signature-over-reserialised-body',
    ],
  },
  // No answer: the should (non-2xx) is not met and the service retries a timeout; no must is broken.
  'hangs-on-invalid-signature': {
    description: 'never answers a delivery whose signature is wrong',
    mustFail: [],
    mustWarn: ['webhook-receiver-rejects-signature-other-secret', 'webhook-receiver-rejects-body-one-bit-flipped'],
  },
  'follows-up-before-verifying': {
    description: 'fetches the encounter named in the body before it verifies the delivery',
    mustFail: [
      'webhook-receiver-rejects-signature-other-secret', 'webhook-receiver-rejects-timestamp-301-s-old',
      'webhook-receiver-rejects-event-id-header-differs', 'webhook-receiver-rejects-version-header-differs',
      'webhook-receiver-rejects-payload-other-event-type', 'webhook-receiver-no-followup-after-invalid-deliveries',
      'webhook-receiver-accepts-exact-replay',
    ],
  },
  'processes-concurrent-duplicates-twice': {
    description: 'deduplicates by event id, but marks an event done only after its follow-up work (check-then-act race)',
    mustFail: ['webhook-receiver-processes-concurrent-duplicates-once'],
  },
  'hmac-without-timestamp': {
    description: 'computes the HMAC over the raw body alone, without the "{timestamp}." prefix',
    mustFail: ['webhook-receiver-accepts-valid-delivery', 'webhook-receiver-accepts-timestamp-299-s-old', 'webhook-receiver-accepts-timestamp-299-s-ahead'],
  },
  // Its clock runs 1.5 s ahead of the harness (clocks differ; the spec judges against the receiver's
  // clock), so it rejects the delivery exactly 300 s old, which is allowed; the defect is the re-sync it
  // has already started by then, for any delivery, even one whose body is not JSON.
  'syncs-before-verifying-clock-ahead': {
    description: 'starts a re-sync (a fetch of the encounter list) for every delivery before verifying it; clock 1.5 s ahead',
    mustFail: [
      'webhook-receiver-accepts-timestamp-300-s-old', 'webhook-receiver-no-followup-after-invalid-deliveries', 'webhook-receiver-accepts-exact-replay',
      ...INVALID_DELIVERY_CHECKS,
    ],
  },
  'syncs-before-verifying-clock-behind': {
    description: 'starts a re-sync (a fetch of the encounter list) for every delivery before verifying it; clock 1.5 s behind',
    mustFail: ['webhook-receiver-accepts-timestamp-300-s-ahead', 'webhook-receiver-rejects-signature-other-secret'],
  },
  'verifies-nothing': {
    description: 'acknowledges every delivery with 204 and does the follow-up work for whatever the body names',
    mustFail: [
      'webhook-receiver-rejects-signature-other-secret', 'webhook-receiver-rejects-timestamp-301-s-old',
      'webhook-receiver-rejects-service-signature-absent', 'webhook-receiver-no-followup-after-invalid-deliveries',
    ],
  },
};

const SIGNATURE_REASONS = new Set(['signature_missing', 'signature_duplicate', 'multiple_signatures', 'unsupported_signature_version', 'signature_uppercase_hex', 'malformed_signature', 'signature_mismatch']);

/** Python's json.dumps(value) with its defaults: ", " and ": " separators, keys in order, non-ASCII escaped. */
function pythonDumps(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(value)) return `[${value.map(pythonDumps).join(', ')}]`;
  return `{${Object.entries(value).map(([k, v]) => `${pythonDumps(k)}: ${pythonDumps(v)}`).join(', ')}}`;
}

export interface BrokenReceiver {
  url: string;
  close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startBrokenReceiver(kind: BrokenKind, secret: string, api: Pick<CountingApi, 'baseUrl' | 'apiKey'>): Promise<BrokenReceiver> {
  const processed = new Set<string>();

  async function followUp(encounterId: unknown, documentId: unknown): Promise<void> {
    const enc = `${api.baseUrl}/external/v1/encounters/${encodeURIComponent(String(encounterId))}`;
    const headers = { authorization: `Bearer ${api.apiKey}` };
    await (await fetch(enc, { headers })).arrayBuffer();
    await (await fetch(`${enc}/documents/${encodeURIComponent(String(documentId))}`, { headers })).arrayBuffer();
  }

  const skewMs = kind === 'syncs-before-verifying-clock-ahead' ? 1_500 : kind === 'syncs-before-verifying-clock-behind' ? -1_500 : 0;

  function check(input: VerifyInput): VerifyResult {
    if (kind === 'hmac-without-timestamp') {
      // Its digest check covers the body alone; every other step is the verifier's (fed the digest it
      // would have computed once the body-only digest matched).
      const hs = input.headers as Record<string, string[] | undefined>;
      const text = hs[WEBHOOK_HEADERS.signature.toLowerCase()]?.[0] ?? '';
      const bodyOnly = crypto.createHmac('sha256', secret).update(input.rawBody).digest('hex');
      if (text !== `v1=${bodyOnly}`) return { ok: false, reason: 'signature_mismatch', detail: 'digest over the body alone does not match' };
      const timestamp = hs[WEBHOOK_HEADERS.timestamp.toLowerCase()]?.[0] ?? '';
      return verify({ ...input, headers: { ...hs, [WEBHOOK_HEADERS.signature.toLowerCase()]: [sign({ secret, timestamp, rawBody: input.rawBody })] } });
    }
    if (skewMs !== 0) return verify({ ...input, nowMs: Date.now() + skewMs });
    if (kind === 'accepts-stale-timestamps') {
      // Judges the timestamp against itself: whatever its age, it is "now".
      const text = (input.headers as Record<string, string[] | undefined>)[WEBHOOK_HEADERS.timestamp.toLowerCase()]?.[0];
      if (text !== undefined && /^[0-9]+$/.test(text)) return verify({ ...input, nowMs: Number(text) * 1000 });
    }
    if (kind === 'verifies-python-json-dumps') {
      let again: Buffer;
      try {
        again = Buffer.from(pythonDumps(JSON.parse(input.rawBody.toString())));
      } catch {
        return { ok: false, reason: 'invalid_json', detail: 'not JSON' };
      }
      return verify({ ...input, rawBody: again });
    }
    if (kind === 'verifies-reserialised-body') {
      let again: Buffer;
      try {
        again = Buffer.from(JSON.stringify(JSON.parse(input.rawBody.toString())));
      } catch {
        return { ok: false, reason: 'invalid_json', detail: 'not JSON' };
      }
      return verify({ ...input, rawBody: again });
    }
    return verify(input);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (kind === 'syncs-before-verifying-clock-ahead' || kind === 'syncs-before-verifying-clock-behind') {
      const headers = { authorization: `Bearer ${api.apiKey}` };
      await (await fetch(`${api.baseUrl}/external/v1/encounters?limit=10`, { headers })).arrayBuffer();
    }
    if (kind === 'verifies-nothing') {
      try {
        const body = JSON.parse(raw.toString()) as Partial<WebhookEvent>;
        const key = String(body.id);
        if (!processed.has(key)) {
          processed.add(key);
          await followUp(body.resources?.encounter_id, body.resources?.document_id);
        }
      } catch {
        /* not JSON: acknowledged all the same */
      }
      return void res.writeHead(204).end();
    }
    if (kind === 'follows-up-before-verifying') {
      try {
        const early = JSON.parse(raw.toString()) as Partial<WebhookEvent>;
        await followUp(early.resources?.encounter_id, early.resources?.document_id);
      } catch {
        /* not JSON: nothing to prefetch */
      }
    }
    const verdict = check({ headers: req.headersDistinct, rawBody: raw, secret });
    if (!verdict.ok) {
      if (SIGNATURE_REASONS.has(verdict.reason)) {
        if (kind === 'answers-500-to-invalid-signature') return void res.writeHead(500).end();
        if (kind === 'hangs-on-invalid-signature') return; // never answers
      }
      return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ reason: verdict.reason }));
    }
    const key = kind === 'dedupes-by-delivery-id' ? verdict.deliveryId : verdict.event.id;
    if (kind === 'processes-concurrent-duplicates-twice') {
      // The defect: "done" is recorded after the work, so deliveries arriving meanwhile all do it.
      if (!processed.has(key)) {
        await followUp(verdict.event.resources.encounter_id, verdict.event.resources.document_id);
        processed.add(key);
      }
    } else if (kind === 'answers-503-after-follow-up') {
      // Never completes an event: each delivery does the follow-ups again and fails after them.
      await followUp(verdict.event.resources.encounter_id, verdict.event.resources.document_id);
      return void res.writeHead(503, { 'retry-after': '30' }).end();
    } else if (kind === 'answers-503-to-completed-duplicates' && processed.has(key)) {
      return void res.writeHead(503).end();
    } else if (!processed.has(key)) {
      processed.add(key);
      await followUp(verdict.event.resources.encounter_id, verdict.event.resources.document_id);
    }
    res.writeHead(204).end();
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(503).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/transcripts`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
