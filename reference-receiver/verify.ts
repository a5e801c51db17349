// The example receiver's delivery verification: §6.2 headers and §6.3 steps 1 to 10, in the spec's order,
// as a partner would write them. Pure functions of (headers, raw body bytes, secret, clock); nothing
// throws out of verifyDelivery, and no secret or computed digest ever appears in a result.
//
// Written apart from the harness on purpose. The harness has its own signer and verifier
// (judge/signature.ts) to judge receivers with; this file shares no code with it and imports
// nothing of the oracle (fixtures/ only). A bug in a shared verifier would pass both sides: the harness
// would sign and judge with the same mistake the example receiver makes, and no check could see it.
// The two meet only on the wire, where the receiver suite judges this receiver like any partner's.
import crypto from 'node:crypto';
import { checkEventBody } from './event-schema.ts';

/** §6.2 header names; HTTP header names are case-insensitive, so they are compared in lowercase. */
export const HEADERS = {
  eventId: 'Service-Event-Id',
  deliveryId: 'Service-Delivery-Id',
  timestamp: 'Service-Timestamp',
  signature: 'Service-Signature',
  version: 'Service-Webhook-Version',
} as const;
export const EVENT_TYPE = 'recording.transcript_ready';
/** §8: how far the signing time may be from this receiver's clock. */
export const TOLERANCE_SECONDS = 300;

/**
 * Why a delivery was rejected: the receiver answers `{ "error": "webhook_rejected", "reason": … }`.
 * Identifiers and reasons only; never a value that was received.
 */
export type RejectReason =
  | 'event_id_missing' | 'event_id_duplicate'
  | 'delivery_id_missing' | 'delivery_id_duplicate'
  | 'timestamp_missing' | 'timestamp_duplicate'
  | 'signature_missing' | 'signature_duplicate'
  | 'webhook_version_missing' | 'webhook_version_duplicate'
  | 'timestamp_malformed' | 'timestamp_not_canonical' | 'timestamp_outside_tolerance'
  | 'multiple_signatures' | 'unsupported_signature_version' | 'signature_uppercase_hex' | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_json' | 'schema_violation'
  | 'event_id_mismatch' | 'webhook_version_mismatch'
  | 'internal_error';

/** Header values as node:http gives them in `req.headersDistinct` (every repeated line kept). */
export type Headers = Record<string, string | readonly string[] | undefined>;

export interface TranscriptReadyEvent {
  id: string;
  type: typeof EVENT_TYPE;
  api_version: string;
  occurred_at: string;
  organization_id: string;
  resources: { encounter_id: string; document_id: string };
}

export type Rejected = { ok: false; reason: RejectReason; detail: string };
/** Steps 1 to 7 held: the signed header values. */
export type Signed = { ok: true; eventId: string; deliveryId: string; timestamp: string; version: string };
export type Verified = { ok: true; event: TranscriptReadyEvent; deliveryId: string; timestamp: string };

export interface DeliveryInput {
  headers: Headers;
  /** The request body exactly as received: never a re-serialised object. */
  rawBody: Buffer;
  secret: string | Buffer;
  /** This receiver's clock, in milliseconds. */
  nowMs: number;
}

const reject = (reason: RejectReason, detail: string): Rejected => ({ ok: false, reason, detail });

/** Every value of one header, whatever the spelling of its name, each repeated line separately. */
function valuesOf(headers: Headers, name: string): string[] {
  const wanted = name.toLowerCase();
  return Object.entries(headers)
    .filter(([key, value]) => key.toLowerCase() === wanted && value !== undefined)
    .flatMap(([, value]) => (typeof value === 'string' ? [value] : [...(value as readonly string[])]));
}

/** `v1=` + lowercase hex HMAC-SHA256 over `{timestamp}.{raw body}` (§6.2, §6.3 steps 4 and 5). */
export function signatureFor(secret: string | Buffer, timestamp: string, rawBody: Buffer): string {
  return `v1=${digest(secret, timestamp, rawBody).toString('hex')}`;
}

function digest(secret: string | Buffer, timestamp: string, rawBody: Buffer): Buffer {
  // Step 4: the timestamp text exactly as received, a dot, the raw bytes exactly as received.
  return crypto.createHmac('sha256', secret).update(timestamp, 'utf8').update('.', 'utf8').update(rawBody).digest();
}

/**
 * Steps 4, 5 and 7: recompute the digest over the raw bytes and compare it with the received `v1=` digest
 * in constant time (never with `===`, whose running time tells an attacker how many leading bytes matched).
 */
export function digestMatches(secret: string | Buffer, timestamp: string, rawBody: Buffer, signatureHeader: string): boolean {
  if (!/^v1=[0-9a-f]{64}$/.test(signatureHeader)) return false;
  const expected = digest(secret, timestamp, rawBody);
  const received = Buffer.from(signatureHeader.slice('v1='.length), 'hex');
  return received.length === expected.length && crypto.timingSafeEqual(received, expected);
}

/** Step 6: what is wrong with a signature header that is not exactly `v1=` + 64 lowercase hex digits. */
function signatureFormProblem(value: string): Rejected | undefined {
  if (/^v1=[0-9a-f]{64}$/.test(value)) return undefined;
  const items = value.split(/[\s,;]+/).filter(Boolean);
  // Several `scheme=digest` items in one header (secret rotation styles): one digest is defined, so the
  // whole header is refused rather than each item tried.
  if (items.filter((item) => /^[A-Za-z0-9]+=/.test(item)).length > 1) return reject('multiple_signatures', 'more than one signature in the header');
  const version = /^v([0-9]+)=/.exec(value);
  if (version && version[1] !== '1') return reject('unsupported_signature_version', `signature version v${version[1]} is not supported`);
  if (/^v1=[0-9A-Fa-f]{64}$/.test(value)) return reject('signature_uppercase_hex', 'the digest is not lowercase hex');
  return reject('malformed_signature', 'the header is not v1= followed by 64 lowercase hex digits');
}

/** §6.2 and §6.3 steps 1 to 7: the five headers, the timestamp, the clock, the signature. */
export function checkSignature({ headers, rawBody, secret, nowMs }: DeliveryInput): Signed | Rejected {
  // Every required header once: a missing one, or one given twice (never merged: a proxy that
  // joined two timestamps would change what was signed), rejects before anything is computed.
  const single: Partial<Record<keyof typeof HEADERS, string>> = {};
  const prefix = { eventId: 'event_id', deliveryId: 'delivery_id', timestamp: 'timestamp', signature: 'signature', version: 'webhook_version' } as const;
  for (const key of Object.keys(HEADERS) as (keyof typeof HEADERS)[]) {
    const values = valuesOf(headers, HEADERS[key]);
    if (values.length === 0) return reject(`${prefix[key]}_missing`, `${HEADERS[key]} is absent`);
    if (values.length > 1) return reject(`${prefix[key]}_duplicate`, `${HEADERS[key]} is given ${values.length} times`);
    single[key] = values[0];
  }
  const { eventId, deliveryId, timestamp, signature, version } = single as Record<keyof typeof HEADERS, string>;

  // Step 2: decimal Unix epoch seconds, digits only, written without a leading zero.
  if (!/^[0-9]+$/.test(timestamp)) return reject('timestamp_malformed', 'the timestamp is not decimal Unix epoch seconds');
  if (timestamp.length > 1 && timestamp.startsWith('0')) return reject('timestamp_not_canonical', 'the timestamp has a leading zero');

  // Step 3: whole seconds; the clock is floored, and 300 s either way is still accepted. BigInt keeps
  // a timestamp of any length exact.
  const drift = BigInt(Math.floor(nowMs / 1000)) - BigInt(timestamp);
  if (drift > BigInt(TOLERANCE_SECONDS) || -drift > BigInt(TOLERANCE_SECONDS)) {
    return reject('timestamp_outside_tolerance', `the timestamp is more than ${TOLERANCE_SECONDS} s from this receiver's clock`);
  }

  // Step 6 before step 7: a header that is not one v1= digest is refused without comparing anything.
  const form = signatureFormProblem(signature);
  if (form) return form;

  if (!digestMatches(secret, timestamp, rawBody, signature)) {
    return reject('signature_mismatch', 'the signature does not match this endpoint secret over the raw body');
  }
  return { ok: true, eventId, deliveryId, timestamp, version };
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }); // keeps a BOM, so JSON.parse refuses it
const UTF8_WITHOUT_BOM = new TextDecoder('utf-8', { fatal: true }); // drops one leading BOM

/** Steps 8 to 10, only after checkSignature held: parse, check the §6.1 schema, match the headers. */
export function readEvent(signed: Signed, rawBody: Buffer, opts: { skipByteOrderMark?: boolean } = {}): Verified | Rejected {
  let body: unknown;
  try {
    body = JSON.parse((opts.skipByteOrderMark ? UTF8_WITHOUT_BOM : STRICT_UTF8).decode(rawBody));
  } catch {
    return reject('invalid_json', 'the body is not UTF-8 JSON text');
  }
  const schema = checkEventBody(body);
  if (!schema.ok) return reject('schema_violation', `the body is not a ${EVENT_TYPE} event: ${schema.errors}`);
  return matchHeaders(signed, body as TranscriptReadyEvent);
}

/** Steps 9 and 10: exact string equality, no trimming, no case folding. */
export function matchHeaders(signed: Signed, event: TranscriptReadyEvent): Verified | Rejected {
  if (signed.eventId !== event.id) return reject('event_id_mismatch', `${HEADERS.eventId} differs from the body id`);
  if (signed.version !== event.api_version) return reject('webhook_version_mismatch', `${HEADERS.version} differs from the body api_version`);
  return { ok: true, event, deliveryId: signed.deliveryId, timestamp: signed.timestamp };
}

/** The whole of §6.3 in order. Never throws: on any rejection nothing of the body is trusted. */
export function verifyDelivery(input: DeliveryInput, opts: { skipByteOrderMark?: boolean } = {}): Verified | Rejected {
  try {
    const signed = checkSignature(input);
    return signed.ok ? readEvent(signed, input.rawBody, opts) : signed;
  } catch (error) {
    return reject('internal_error', `verification failed unexpectedly (${error instanceof Error ? error.name : typeof error})`);
  }
}
