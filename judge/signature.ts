// Webhook signing and verification for `recording.transcript_ready` (spec §6.2, §6.3, §8, §9).
// The signer builds deliveries the way the service must; the verifier is the harness oracle for a
// receiver and follows §6.3 step by step, in order. Pure functions of their inputs (the clock is a
// parameter); the verifier never throws, and no secret or computed digest ever appears in a result.
import crypto from 'node:crypto';
import { checkWebhookEvent } from './event-schema.ts';

export const WEBHOOK_API_VERSION = '2026-05-01';
export const WEBHOOK_EVENT_TYPE = 'recording.transcript_ready';
/** §8: webhook timestamp tolerance. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * §6.2: "The header names below use a neutral word where the service's own name would stand; the rest of each name
 * is exact." The word is a setting (profile webhook.headerWord, --header-word); the spec's own is Service.
 */
export const SPEC_HEADER_WORD = 'Service';
const HEADER_WORD = /^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$/;

/** The five §6.2 header names with `word` where the spec writes Service, in the order the verifier checks them. */
export function webhookHeaders(word: string = SPEC_HEADER_WORD) {
  if (!HEADER_WORD.test(word)) throw new TypeError(`webhook header word must be letters and digits (hyphens between), got ${JSON.stringify(word)}`);
  return {
    eventId: `${word}-Event-Id`,
    deliveryId: `${word}-Delivery-Id`,
    timestamp: `${word}-Timestamp`,
    signature: `${word}-Signature`,
    version: `${word}-Webhook-Version`,
  } as const;
}
export type WebhookHeaderNames = ReturnType<typeof webhookHeaders>;

/** The five §6.2 headers as the spec writes them (word Service). */
export const WEBHOOK_HEADERS: WebhookHeaderNames = webhookHeaders(SPEC_HEADER_WORD);

const SPEC_NAME = /^(service)(-(?:event-id|delivery-id|timestamp|signature|webhook-version))$/i;

/**
 * A header name of a delivery built with the spec's word, spelled with another word (`Service-Timestamp` →
 * `Ceapi-Timestamp`); the casing of the spelling is kept (`service-timestamp` → `ceapi-timestamp`, as an adversarial
 * delivery spells a repeat). Any other name is returned as it is.
 */
export function withHeaderWord(name: string, word: string = SPEC_HEADER_WORD): string {
  const m = SPEC_NAME.exec(name);
  if (!m || word === SPEC_HEADER_WORD) return name;
  webhookHeaders(word);
  const spelled = m[1] === m[1].toLowerCase() ? word.toLowerCase() : m[1] === m[1].toUpperCase() ? word.toUpperCase() : word;
  return `${spelled}${m[2]}`;
}
type HeaderKey = keyof WebhookHeaderNames;
const HEADER_ORDER: readonly HeaderKey[] = ['eventId', 'deliveryId', 'timestamp', 'signature', 'version'];

/**
 * Every reason the verifier can give, in the order of the checks. Each is distinct and stable:
 * reports and unit pairs key on them; the example receiver (reference-receiver/verify.ts) answers with the
 * same names, spelled there on its own.
 */
export const VERIFY_REASONS = [
  // Input shape (not a §6.3 step: the caller handed over something that is not headers + bytes).
  'invalid_input',
  // Required headers: absent, or given more than once (an array, or two spellings of one name).
  'event_id_missing', 'event_id_duplicate',
  'delivery_id_missing', 'delivery_id_duplicate',
  'timestamp_missing', 'timestamp_duplicate',
  'signature_missing', 'signature_duplicate',
  'webhook_version_missing', 'webhook_version_duplicate',
  // §6.3 step 2: decimal Unix epoch seconds; `timestamp_not_canonical` = digits with a leading zero.
  'timestamp_malformed', 'timestamp_not_canonical',
  // §6.3 step 3: more than 300 s from the receiver clock (whole seconds).
  'timestamp_outside_tolerance',
  // §6.3 step 6: exactly one `v1=` + 64 lowercase hex digits.
  'multiple_signatures', 'unsupported_signature_version', 'signature_uppercase_hex', 'malformed_signature',
  // §6.3 steps 4, 5, 7: HMAC over `{timestamp}.` + raw bytes, constant-time compare.
  'signature_mismatch',
  // §6.3 step 8: JSON only after the signature holds (UTF-8, no BOM).
  'invalid_json',
  // Closed payload schema (§6.1).
  'schema_violation',
  // §6.3 steps 9, 10.
  'event_id_mismatch', 'webhook_version_mismatch',
  // Defensive catch-all: the verifier never throws.
  'internal_error',
] as const;
export type VerifyReason = (typeof VERIFY_REASONS)[number];

/** Requirement catalog ids (fixtures/requirements) each reason enforces. */
export const REASON_REQUIREMENTS = {
  invalid_input: [],
  event_id_missing: ['WEBHOOK-HEADER-EVENT-ID'], event_id_duplicate: ['WEBHOOK-HEADER-EVENT-ID'],
  delivery_id_missing: ['WEBHOOK-HEADER-DELIVERY-ID'], delivery_id_duplicate: ['WEBHOOK-HEADER-DELIVERY-ID'],
  timestamp_missing: ['WEBHOOK-HEADER-TIMESTAMP'], timestamp_duplicate: ['WEBHOOK-HEADER-TIMESTAMP'],
  signature_missing: ['WEBHOOK-HEADER-SIGNATURE'], signature_duplicate: ['WEBHOOK-HEADER-SIGNATURE'],
  webhook_version_missing: ['WEBHOOK-HEADER-VERSION'], webhook_version_duplicate: ['WEBHOOK-HEADER-VERSION'],
  timestamp_malformed: ['WEBHOOK-SIG-TIMESTAMP-DECIMAL'],
  timestamp_not_canonical: ['WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS'],
  timestamp_outside_tolerance: ['WEBHOOK-SIG-TOLERANCE-300', 'WEBHOOK-SIG-SUBSECOND-BOUNDARY'],
  multiple_signatures: ['WEBHOOK-SIG-MULTIPLE-SIGNATURES'],
  unsupported_signature_version: ['WEBHOOK-SIG-V1-ONLY'],
  signature_uppercase_hex: ['WEBHOOK-SIG-UPPERCASE-HEX'],
  malformed_signature: ['WEBHOOK-SIG-V1-ONLY', 'WEBHOOK-HEADER-SIGNATURE'],
  // Not WEBHOOK-SIG-CONSTANT-TIME (step 7): no delivery can observe how the digests are compared (not-tested.json).
  signature_mismatch: ['WEBHOOK-SIG-RAW-BODY', 'WEBHOOK-SIG-INPUT', 'WEBHOOK-SIG-HMAC-SHA256'],
  invalid_json: ['WEBHOOK-SIG-PARSE-AFTER-VERIFY', 'WEBHOOK-BODY-JSON'],
  schema_violation: ['WEBHOOK-PAYLOAD-CLOSED', 'WEBHOOK-THIN-PAYLOAD', 'WEBHOOK-SINGLE-EVENT-TYPE'],
  event_id_mismatch: ['WEBHOOK-SIG-EVENT-ID-MATCH'],
  webhook_version_mismatch: ['WEBHOOK-SIG-VERSION-MATCH'],
  internal_error: [],
} as const satisfies Record<VerifyReason, readonly string[]>;

/**
 * Reasons that rest on a harness decision where the spec leaves the outcome open (catalog level
 * `unspecified`). Judging a partner receiver, a different outcome here is informational, not a failure.
 */
export const DECISION_REASONS = {
  timestamp_not_canonical: 'WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS',
  multiple_signatures: 'WEBHOOK-SIG-MULTIPLE-SIGNATURES',
  signature_uppercase_hex: 'WEBHOOK-SIG-UPPERCASE-HEX',
} as const satisfies Partial<Record<VerifyReason, string>>;

export interface WebhookEvent {
  id: string;
  type: typeof WEBHOOK_EVENT_TYPE;
  api_version: typeof WEBHOOK_API_VERSION;
  occurred_at: string;
  organization_id: string;
  resources: { encounter_id: string; document_id: string };
}

export type Secret = string | Uint8Array;
export type RawBody = Uint8Array;
/** Header values as Node gives them (`headers` or `headersDistinct`) or as a test writes them. */
export type HeaderBag = Record<string, string | readonly string[] | undefined>;

export interface VerifyInput {
  /** A plain object (case-insensitive names) or a fetch `Headers`, which joins repeats with ", ". */
  headers: HeaderBag | Headers;
  rawBody: RawBody;
  secret: Secret;
  /** The receiver clock in milliseconds; defaults to Date.now(). */
  nowMs?: number;
  /** The word of the §6.2 header names the service uses (default Service). */
  headerWord?: string;
}

export type VerifyFailure = { ok: false; reason: VerifyReason; detail: string };
export type SignatureOk = { ok: true; timestamp: string; eventIdHeader: string; deliveryId: string; versionHeader: string };
export type VerifyOk = { ok: true; event: WebhookEvent; deliveryId: string; timestamp: string };
export type SignatureResult = SignatureOk | VerifyFailure;
export type VerifyResult = VerifyOk | VerifyFailure;

const TIMESTAMP_CANONICAL = /^(0|[1-9][0-9]*)$/;
const TIMESTAMP_DIGITS = /^[0-9]+$/;
const SIGNATURE_V1 = /^v1=[0-9a-f]{64}$/;

// ---------------------------------------------------------------------------------------------
// Signing

export interface SignInput {
  secret: Secret;
  /** The exact timestamp text that goes into the header (normally decimal Unix seconds). */
  timestamp: string;
  rawBody: RawBody;
}

function assertSecret(secret: Secret): void {
  if (typeof secret === 'string' ? secret.length === 0 : !(secret instanceof Uint8Array) || secret.byteLength === 0) {
    throw new TypeError('webhook signing secret must be a non-empty string or byte array');
  }
}

function hmacDigest(secret: Secret, timestamp: string, rawBody: RawBody): Buffer {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest();
}

/** `v1=` + lowercase hex HMAC-SHA256 of `{timestamp}.{raw body bytes}` (§6.2). */
export function sign({ secret, timestamp, rawBody }: SignInput): string {
  assertSecret(secret);
  return `v1=${hmacDigest(secret, timestamp, rawBody).toString('hex')}`;
}

export interface DeliveryOptions {
  /** Reused across retries of one event to one endpoint; default derived from the event id. */
  deliveryId?: string;
  /** Timestamp text to sign and send; default String(nowSeconds). */
  timestamp?: string;
  /** Exact body bytes to sign and send; default JSON.stringify(event). */
  rawBody?: Uint8Array | string;
  /** Overrides for the event-id and version headers (adversarial deliveries). */
  eventIdHeader?: string;
  versionHeader?: string;
  /** The word of the §6.2 header names (default Service). */
  headerWord?: string;
}

export interface Delivery {
  headers: Record<string, string>;
  body: Buffer;
}

/** Default delivery id: stable for one event (retries reuse it), meaningless otherwise. */
export function defaultDeliveryId(eventId: string): string {
  return `dlv_${crypto.createHash('sha256').update(eventId, 'utf8').digest('hex').slice(0, 32)}`;
}

/** A signed delivery as the service sends it: the five §6.2 headers, content type and body bytes. */
export function buildDelivery(event: WebhookEvent | Record<string, unknown>, secret: Secret, nowSeconds: number, opts: DeliveryOptions = {}): Delivery {
  const body = opts.rawBody === undefined
    ? Buffer.from(JSON.stringify(event), 'utf8')
    : Buffer.from(typeof opts.rawBody === 'string' ? Buffer.from(opts.rawBody, 'utf8') : opts.rawBody);
  const timestamp = opts.timestamp ?? String(Math.floor(nowSeconds));
  const id = typeof event.id === 'string' ? event.id : String(event.id);
  const h = opts.headerWord === undefined ? WEBHOOK_HEADERS : webhookHeaders(opts.headerWord);
  return {
    headers: {
      'Content-Type': 'application/json',
      [h.eventId]: opts.eventIdHeader ?? id,
      [h.deliveryId]: opts.deliveryId ?? defaultDeliveryId(id),
      [h.timestamp]: timestamp,
      [h.signature]: sign({ secret, timestamp, rawBody: body }),
      [h.version]: opts.versionHeader ?? (typeof event.api_version === 'string' ? event.api_version : WEBHOOK_API_VERSION),
    },
    body,
  };
}

// ---------------------------------------------------------------------------------------------
// Verification

function fail(reason: VerifyReason, detail: string): VerifyFailure {
  return { ok: false, reason, detail };
}

const HEADER_REASON: Record<HeaderKey, { missing: VerifyReason; duplicate: VerifyReason }> = {
  eventId: { missing: 'event_id_missing', duplicate: 'event_id_duplicate' },
  deliveryId: { missing: 'delivery_id_missing', duplicate: 'delivery_id_duplicate' },
  timestamp: { missing: 'timestamp_missing', duplicate: 'timestamp_duplicate' },
  signature: { missing: 'signature_missing', duplicate: 'signature_duplicate' },
  version: { missing: 'webhook_version_missing', duplicate: 'webhook_version_duplicate' },
};

/**
 * Case-insensitive lookup. Every value given for the name is collected, across spellings and arrays;
 * `undefined` entries count as absent. More than one value is a duplicate, which is never merged:
 * a proxy that joined two timestamps would otherwise change what was signed.
 */
function headerValues(headers: HeaderBag, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value: unknown = headers[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) values.push(String(item));
    } else {
      values.push(String(value));
    }
  }
  return values;
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

function describeSkew(skew: bigint): string {
  return `timestamp is ${skew < 0n ? -skew : skew} s ${skew < 0n ? 'ahead of' : 'behind'} the receiver clock (tolerance ${TIMESTAMP_TOLERANCE_SECONDS} s)`;
}

/** §6.3 step 6: the header holds exactly one `v1=` digest of 64 lowercase hex digits. */
function checkSignatureHeader(value: string): VerifyFailure | undefined {
  if (SIGNATURE_V1.test(value)) return undefined;
  // Several signatures in one header (`v1=a,v1=b`, `v1=a v0=b`) are rejected as a whole rather than
  // tried one by one: the contract defines a single digest (WEBHOOK-SIG-MULTIPLE-SIGNATURES).
  const parts = value.split(/[\s,;]+/).filter(p => p.length > 0);
  if (parts.length > 1 && parts.filter(p => /^[A-Za-z0-9]+=/.test(p)).length > 1) {
    return fail('multiple_signatures', `signature header carries ${parts.length} values; exactly one v1= digest is allowed`);
  }
  const scheme = /^(v[0-9]+)=/.exec(value);
  if (scheme && scheme[1] !== 'v1') {
    return fail('unsupported_signature_version', `signature scheme ${scheme[1]} is not supported; only v1 is`);
  }
  // Uppercase hex decodes to the same bytes, but the contract pins lowercase (WEBHOOK-SIG-UPPERCASE-HEX).
  if (/^v1=[0-9a-fA-F]{64}$/.test(value)) {
    return fail('signature_uppercase_hex', 'signature digest uses uppercase hex; the contract requires lowercase');
  }
  return fail('malformed_signature', `signature header is not v1= followed by 64 lowercase hex digits (length ${value.length})`);
}

function verifySignatureUnsafe(input: VerifyInput): SignatureResult {
  if (input === null || typeof input !== 'object') return fail('invalid_input', 'verifier input must be an object');
  const { rawBody, secret } = input;
  // A fetch Headers object has already joined repeated lines into "a, b": such values then fail
  // the format or equality checks below rather than the duplicate check.
  const headers: unknown = input.headers instanceof Headers ? Object.fromEntries(input.headers.entries()) : input.headers;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    return fail('invalid_input', 'headers must be a plain object of name → value');
  }
  if (!isBytes(rawBody)) return fail('invalid_input', 'raw body must be the received bytes (Buffer or Uint8Array)');
  if (!(typeof secret === 'string' ? secret.length > 0 : isBytes(secret) && secret.byteLength > 0)) {
    return fail('invalid_input', 'signing secret must be a non-empty string or byte array');
  }
  const nowMs = input.nowMs ?? Date.now();
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) return fail('invalid_input', 'clock must be a finite number of milliseconds');

  // Required headers: present exactly once each (§6.2, §6.3 last paragraph).
  const names = input.headerWord === undefined ? WEBHOOK_HEADERS : webhookHeaders(input.headerWord);
  const single = {} as Record<HeaderKey, string>;
  for (const key of HEADER_ORDER) {
    const values = headerValues(headers as HeaderBag, names[key]);
    if (values.length === 0) return fail(HEADER_REASON[key].missing, `required header ${names[key]} is absent`);
    if (values.length > 1) return fail(HEADER_REASON[key].duplicate, `header ${names[key]} is given ${values.length} times`);
    single[key] = values[0];
  }

  // Step 2: decimal Unix epoch seconds. Canonical form only: a leading zero is a second spelling of
  // the same instant (WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS); signs, spaces, fractions, exponents are not decimal seconds.
  const timestamp = single.timestamp;
  if (!TIMESTAMP_DIGITS.test(timestamp)) {
    return fail('timestamp_malformed', `timestamp is not decimal Unix epoch seconds (length ${timestamp.length})`);
  }
  if (!TIMESTAMP_CANONICAL.test(timestamp)) {
    return fail('timestamp_not_canonical', 'timestamp has a leading zero; only canonical decimal text is accepted');
  }

  // Step 3: whole seconds on both sides (WEBHOOK-SIG-SUBSECOND-BOUNDARY): the clock is floored to
  // seconds, then |now − T| <= 300 is accepted. BigInt keeps absurdly long digit strings exact.
  const skew = BigInt(Math.floor(nowMs / 1000)) - BigInt(timestamp);
  if (skew > BigInt(TIMESTAMP_TOLERANCE_SECONDS) || skew < -BigInt(TIMESTAMP_TOLERANCE_SECONDS)) {
    return fail('timestamp_outside_tolerance', describeSkew(skew));
  }

  // Step 6 before the digest comparison: a header we cannot parse is rejected without comparing.
  const signatureFailure = checkSignatureHeader(single.signature);
  if (signatureFailure) return signatureFailure;

  // Steps 4, 5, 7: the raw bytes exactly as received, then a constant-time comparison of two
  // 32-byte buffers (the format check above guarantees the length; checked again so it never throws).
  const expected = hmacDigest(secret, timestamp, rawBody);
  const received = Buffer.from(single.signature.slice(3), 'hex');
  if (received.length !== expected.length || !crypto.timingSafeEqual(received, expected)) {
    return fail('signature_mismatch', 'signature does not match the HMAC-SHA256 of the timestamp and raw body');
  }
  return { ok: true, timestamp, eventIdHeader: single.eventId, deliveryId: single.deliveryId, versionHeader: single.version };
}

/**
 * §6.3 steps 1 to 7 only: headers, timestamp, clock, signature. For raw-byte properties, where the
 * body is not an event. Never throws.
 */
export function verifySignatureOnly(input: VerifyInput): SignatureResult {
  try {
    return verifySignatureUnsafe(input);
  } catch (error) {
    return fail('internal_error', `verifier failed unexpectedly: ${error instanceof Error ? error.name : typeof error}`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function verifyPayloadUnsafe(signed: SignatureOk, rawBody: RawBody): VerifyResult {
  // Step 8: JSON only now. Invalid UTF-8 and a byte-order mark are not JSON text (RFC 8259 §8.1).
  let parsed: unknown;
  try {
    parsed = JSON.parse(UTF8.decode(rawBody));
  } catch {
    return fail('invalid_json', 'body is not UTF-8 JSON text');
  }
  const schema = checkWebhookEvent(parsed);
  if (!schema.ok) return fail('schema_violation', `body does not match RecordingTranscriptReadyWebhookEvent: ${schema.errors}`);
  const event = parsed as WebhookEvent;
  // Steps 9 and 10: exact string equality, no trimming or case folding.
  if (signed.eventIdHeader !== event.id) return fail('event_id_mismatch', 'Service-Event-Id header differs from body id');
  if (signed.versionHeader !== event.api_version) {
    return fail('webhook_version_mismatch', 'Service-Webhook-Version header differs from body api_version');
  }
  return { ok: true, event, deliveryId: signed.deliveryId, timestamp: signed.timestamp };
}

/** The full §6.3 verification, in order. Never throws; on failure nothing of the body is trusted. */
export function verify(input: VerifyInput): VerifyResult {
  try {
    const signed = verifySignatureUnsafe(input);
    if (!signed.ok) return signed;
    return verifyPayloadUnsafe(signed, input.rawBody);
  } catch (error) {
    return fail('internal_error', `verifier failed unexpectedly: ${error instanceof Error ? error.name : typeof error}`);
  }
}
