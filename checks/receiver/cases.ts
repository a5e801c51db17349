// Receiver conformance: the harness plays the service and posts signed deliveries to a partner's
// webhook receiver (any URL): the valid one, tolerance boundaries, replays and retries, and the
// adversarial battery of adversarial.ts plus a few more, each signed so that ONLY its one defect
// differs (§6.2, §6.3, §6.4, §8). Each case is one check with a permanent id `webhook-receiver-…`.
// The case table is static (test titles are known before any option is); the cases run against a
// ReceiverContext built from the options. The oracle is the spec, never a receiver implementation.
//
// Judging a rejection (one place, `judgeRejection`). §6.3's last paragraph says what rejecting is:
// the receiver "must not fetch follow-up resources or do clinical work" (the must, catalog
// WEBHOOK-SIG-FAIL-NO-FOLLOWUP) "and should answer non-2xx" (a should, WEBHOOK-SIG-FAIL-NON-2XX):
//   - a follow-up REST fetch after an invalid delivery fails (the must), when a followUpProbe lets
//     the harness see the receiver's fetches;
//   - a 2xx without any follow-up fetch is a `warning` (the should is not met); without a probe a 2xx
//     is `not_verified`: the receiver said "delivery succeeded" and nothing shows whether it acted;
//   - a 5xx, 408, 409, 425, 429, a timeout or a dropped connection is a `warning`: non-2xx as asked
//     (or no answer at all), but §6.4 makes it retryable, so the service would re-send the junk;
//   - any other non-2xx (4xx, 3xx) passes. Without a probe the must itself is verified only by the
//     sweep `webhook-receiver-no-followup-after-invalid-deliveries`, which is then not_verified.
// Where the spec leaves the outcome open (catalog level `unspecified`, or a choice another standard
// allows: uppercase hex, several signatures, leading zeros, identical repeated header lines read as
// one value, a UTF-8 byte-order mark before the JSON, the sub-second boundary) acceptance is
// informational, recorded as observed; a follow-up after a rejection still fails.
import crypto from 'node:crypto';
import { sendRaw, TransportError } from '../../observe/http.ts';
import type { TransportErrorKind } from '../../observe/http.ts';
import { CheckFailure, NotVerified } from '../../record/record.ts';
import { defineCheck, type Declaration } from '../../engine/registry.ts';
import type { CheckScope, Exchange } from '../../record/record.ts';
import { registerSecret } from '../../record/redact.ts';
import { buildDelivery, REASON_REQUIREMENTS, WEBHOOK_HEADERS, WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE, withHeaderWord } from '../../judge/signature.ts';
import type { HeaderBag, VerifyReason, WebhookEvent } from '../../judge/signature.ts';
import { fabricateRejections } from './adversarial.ts';
import { isRetryableStatus } from '../../fixtures/contract/webhook-retries.ts';

const H = WEBHOOK_HEADERS;

/** Cumulative number of follow-up REST fetches the receiver has made so far (monotonic). */
export type FollowUpProbe = () => number | Promise<number>;

export interface ReceiverSuiteOptions {
  /** The receiver endpoint, e.g. https://partner.example/webhooks/transcripts. */
  url: string;
  /** The endpoint signing secret; registered with the redaction layer. */
  secret: string;
  /** The harness clock in ms (default Date.now); deliveries are signed at floor(clock/1000). */
  clock?: () => number;
  /** Lets the suite see follow-up fetches (a counting fake REST API, nock); absent for a partner receiver. */
  followUpProbe?: FollowUpProbe;
  /** How long to wait for an answer to one delivery (default 10 s); a receiver that takes longer times out. */
  timeoutMs?: number;
  /** Wait after an answer before reading the probe, for receivers that work after answering (default 150 ms). */
  followUpSettleMs?: number;
  /** Names the events of this run (`evt_conf_<runId>_001`…); random by default, fixed for reproducible vectors. */
  runId?: string;
  /** Real identifiers for the receiver's follow-up fetches (a partner receiver fetches them from the service). */
  organizationId?: string;
  resources?: { encounter_id: string; document_id: string };
  /** The word of the service's §6.2 header names the receiver expects (default Service): every delivery is sent with it. */
  headerWord?: string;
}

/** What a receiver did with one delivery. */
export interface Answer {
  status?: number;
  error?: TransportErrorKind | 'other';
  message?: string;
  ms: number;
}

/** One delivery as it goes on the wire: headers (an array value: repeated header lines) and the raw body bytes. */
export type Wire = { headers: HeaderBag; body: Buffer };

export class ReceiverContext {
  readonly opts: ReceiverSuiteOptions;
  readonly runId: string;
  private seq = 0;
  constructor(opts: ReceiverSuiteOptions) {
    if (!opts.secret) throw new Error('receiver suite: the signing secret is empty');
    registerSecret(opts.secret);
    this.opts = opts;
    this.runId = opts.runId ?? crypto.randomBytes(5).toString('hex');
  }

  nowMs(): number {
    return (this.opts.clock ?? Date.now)();
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /** A fresh event per delivery scenario, so no case is answered from another case's state. */
  freshEvent(): WebhookEvent {
    this.seq += 1;
    return {
      id: `evt_conf_${this.runId}_${String(this.seq).padStart(3, '0')}`,
      type: WEBHOOK_EVENT_TYPE,
      api_version: WEBHOOK_API_VERSION,
      occurred_at: new Date(this.nowSeconds() * 1000).toISOString(),
      organization_id: this.opts.organizationId ?? 'org_conformance',
      resources: { ...(this.opts.resources ?? { encounter_id: 'enc_conformance', document_id: 'doc_conformance' }) },
    };
  }

  /**
   * With the real clock, waits until early in a second so that a boundary case (299/300/301 s) is not
   * pushed across a second boundary on its way to the receiver.
   */
  async alignToSecond(): Promise<void> {
    if (this.opts.clock) return;
    const ms = Date.now() % 1000;
    if (ms > 500) await sleep(1000 - ms + 15);
  }

  async followUps(): Promise<number | undefined> {
    return this.opts.followUpProbe ? await this.opts.followUpProbe() : undefined;
  }

  async settle(): Promise<void> {
    if (this.opts.followUpProbe) await sleep(this.opts.followUpSettleMs ?? 150);
  }

  /** Posts one delivery exactly as built (repeated headers become repeated lines) and records it (not without a scope). */
  async send(scope: Pick<CheckScope, 'record'> | undefined, wire: Wire): Promise<Answer> {
    const u = new URL(this.opts.url);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(wire.headers)) {
      if (value === undefined) continue;
      const values = Array.isArray(value) ? value : [value as string];
      // sendRaw takes a record: spell each repeat differently (HTTP names are case-insensitive).
      // The names are built with the spec's word, and sent with the service's (withHeaderWord).
      const sent = withHeaderWord(name, this.opts.headerWord);
      values.forEach((v, i) => {
        headers[i === 0 ? sent : i === 1 ? sent.toLowerCase() : sent.toUpperCase()] = String(v);
      });
    }
    const target = `${u.pathname}${u.search}`;
    const ex: Exchange = { request: { method: 'POST', target: `${u.origin}${target}`, headers, body: previewBody(wire.body), signingInput: signingInputOf(wire) } };
    let answer: Answer;
    try {
      const res = await sendRaw({ baseUrl: u.origin, timeoutMs: this.opts.timeoutMs ?? 10_000, maxBodyBytes: 64 * 1024 }, { method: 'POST', target, headers, body: wire.body });
      ex.response = { status: res.status, headers: res.headers, body: res.body.toString('utf8'), bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
      answer = { status: res.status, ms: Math.round(res.durationMs) };
    } catch (e) {
      const kind = e instanceof TransportError ? e.kind : 'other';
      const message = e instanceof Error ? e.message : String(e);
      ex.error = { kind, message };
      answer = { error: kind, message, ms: 0 };
    }
    scope?.record(ex);
    return answer;
  }

  /** Sends and returns the answer with the follow-up fetches it caused (undefined without a probe). */
  async sendObserved(scope: CheckScope, wire: Wire): Promise<{ answer: Answer; followUps: number | undefined }> {
    const before = await this.followUps();
    const answer = await this.send(scope, wire);
    await this.settle();
    const after = await this.followUps();
    return { answer, followUps: before === undefined || after === undefined ? undefined : after - before };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function previewBody(body: Buffer): string {
  const text = body.toString('utf8');
  return text.length > 2048 ? `${text.slice(0, 2048)}…[${body.length} bytes]` : text;
}

export function describeAnswer(a: Answer): string {
  if (a.status !== undefined) return `answered ${a.status}`;
  if (a.error === 'timeout') return `gave no answer (${a.message ?? 'timeout'})`;
  return `failed at the transport level (${a.error}: ${a.message ?? ''})`;
}

// §6.4's retryable answers: the one table is the contract's (fixtures/contract/webhook-retries.ts), which the
// reference's delivery worker reads too; re-exported for the CLI's sender judge.
export { isRetryableStatus };

/** §6.4: would the service retry after this answer? */
export function isRetryableAnswer(a: Answer): boolean {
  return isRetryableStatus(a.status);
}

const is2xx = (a: Answer) => a.status !== undefined && a.status >= 200 && a.status < 300;

// ---------------------------------------------------------------------------------------------
// Judging

type Expectation =
  /** A §6.3 check fails or a required header is missing: must be rejected, terminally, without follow-up. */
  | 'reject'
  /** The harness decision is "reject", but the spec leaves it open: acceptance is informational. */
  | 'decision'
  /** Validly signed and matching headers, but the body is off the closed schema: receiver policy. */
  | 'payload-policy'
  /** §6.4 unsupported event type: ignore (2xx) or reject (non-2xx), never fetch its resources. */
  | 'unsupported-type';

const NON_2XX = 'WEBHOOK-SIG-FAIL-NON-2XX';

function judgeRejection(kind: Expectation, scope: CheckScope, answer: Answer, followUps: number | undefined, what: string): void {
  const said = describeAnswer(answer);
  const accepted = is2xx(answer);
  if (followUps !== undefined && followUps > 0 && (kind === 'reject' || kind === 'unsupported-type' || !accepted)) {
    throw new CheckFailure(ACTED_ON_INVALID, `${what}: the receiver ${said} and made ${followUps} follow-up REST fetch(es)`);
  }
  if (!accepted) {
    if (isRetryableAnswer(answer)) {
      scope.warn(`${what}: the receiver ${said}; §6.3 asks for a non-2xx answer${answer.status === undefined ? ', and none came' : ''}, but §6.4 makes this answer retryable, so the service would re-send the invalid delivery (a terminal 4xx such as 400 or 401 would not)`);
    }
    return;
  }
  if (kind === 'reject') {
    if (followUps === undefined) {
      throw new NotVerified(`${what}: the receiver ${said} to an invalid delivery (§6.3: should answer non-2xx); whether it fetched follow-ups or did clinical work (the must) cannot be observed without a follow-up probe`, LACKS.probe);
    }
    scope.warn(`${what}: the receiver ${said} to an invalid delivery and made no follow-up fetch; §6.3: it should answer non-2xx (a 2xx tells the service the delivery succeeded)`);
  } else if (kind === 'decision') {
    scope.observe(`${what}: the receiver ${said} (accepted; the spec leaves this open, the harness's own verifier rejects it)${followUps === undefined ? '' : `; ${followUps} follow-up fetch(es)`}`);
  } else if (kind === 'payload-policy') {
    scope.observe(`${what}: the receiver ${said} (accepted a validly signed body that is off the closed event schema)${followUps === undefined ? '' : `; ${followUps} follow-up fetch(es)`}`);
  }
  // unsupported-type: 2xx without follow-up is "ignore", which §6.4 allows.
}

// ---------------------------------------------------------------------------------------------
// Judging a delivery the receiver must accept (valid, or a duplicate of a completed event).
//
// §6.4 lists what a receiver may answer: 2xx (succeeded), a retryable failure (5xx, 408, 409, 425, 429, a
// timeout or a dropped connection: the service retries) or a terminal failure (other 4xx, 1xx, 3xx). Nothing
// in §6.3/§6.4 requires a 2xx from a receiver whose own processing failed, so a retryable answer to a valid
// delivery is never a failure: the most common cause is the receiver's follow-up fetch failing (its REST base
// URL cannot be reached from the run). Without a follow-up probe that is `not_verified` with that hint; with
// the probe, a retryable answer although the stand-in answered the receiver's fetches is a `warning` (the
// service will re-send, the receiver did its work and still said "failed"). A terminal answer to a valid
// delivery is a failure: the service would drop the event. Before failing, the harness tries the same event
// signed over the usual re-serialisations of its JSON: a receiver that accepts one of those computes the HMAC
// over a re-serialised body, not the raw bytes (§6.3 steps 1, 4), and the detail says so.

/**
 * §6.4 decides the answer to a duplicate event id whose earlier processing completed: success. The first delivery was
 * acknowledged 2xx and its follow-up fetches were seen, so its processing completed; without the probe, or without
 * fetches, it may still be in progress ("continue idempotent handling"), and the general rule applies.
 */
function completedDuplicate(firstFollowUps: number | undefined): string | undefined {
  return firstFollowUps !== undefined && firstFollowUps > 0
    ? '§6.4 decides it: "A duplicate event id: return success if earlier processing completed", and the first delivery was acknowledged 2xx after its follow-up fetches'
    : undefined;
}

/** Marks the sentence of a detail that names the receiver's body handling (the CLI prints it as a hint). */
/** The failure of a delivery the receiver must not act on that led to follow-up fetches (the summary groups on it). */
export const ACTED_ON_INVALID = 'Follow-up fetch after a delivery that must not be acted on';

export const BODY_HANDLING = 'Body handling:';
/** Marks the sentence of a detail that shows what the harness signed. */
export const SIGNING_INPUT = 'Signing input:';

/**
 * What a receiver check lacks when it ends not verified (its record's `lacks`, as a service check names a profile
 * role): the follow-up probe (`--follow-up-port`), or a receiver whose REST base URL is the probe's stand-in. The CLI
 * groups results on it, never on the wording of a detail.
 */
export const LACKS = { probe: '--follow-up-port', standInUnused: 'follow-up fetches at the stand-in (the receiver\'s REST base URL)' } as const;

const FOLLOW_UP_HINT = "a receiver answers so when its own processing fails, most often because its follow-up REST fetches cannot connect: give `conformance webhook receiver` --follow-up-port N and set the receiver's REST base URL to http://127.0.0.1:N for the run, so its follow-ups reach the harness's stand-in";

/** Bytes as text a partner can diff: printable ASCII as is, `\\` doubled, \n \r \t, every other byte \xNN. */
export function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x5c) out += '\\\\';
    else if (b === 0x0a) out += '\\n';
    else if (b === 0x0d) out += '\\r';
    else if (b === 0x09) out += '\\t';
    else if (b >= 0x20 && b <= 0x7e) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

function headerValue(headers: HeaderBag, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key === undefined ? undefined : headers[key];
  return Array.isArray(v) ? v[0] : (v as string | undefined);
}

/**
 * The exact HMAC input of a delivery (§6.3 step 4): the timestamp header's text, a dot, the raw body bytes, with
 * the body's length, escaped so that whitespace and non-ASCII bytes are visible. Never the secret or a digest.
 */
export function signingInputOf(wire: Wire): string {
  const ts = headerValue(wire.headers, H.timestamp) ?? '';
  return `${JSON.stringify(ts)} + "." + raw body (${wire.body.length} bytes): ${escapeBytes(wire.body)}`;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** JSON text with the given separators, keys sorted or in their order: the usual re-serialisations. */
function serialise(value: Json, sep: string, colon: string, sorted: boolean, indent = '', step = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = step ? `${indent}${step}` : '';
  const open = (c: string) => (step ? `${c}\n${inner}` : c);
  const close = (c: string) => (step ? `\n${indent}${c}` : c);
  const join = step ? `,\n${inner}` : sep;
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `${open('[')}${value.map((v) => serialise(v, sep, colon, sorted, inner, step)).join(join)}${close(']')}`;
  const keys = Object.keys(value);
  if (sorted) keys.sort();
  if (keys.length === 0) return '{}';
  return `${open('{')}${keys.map((k) => `${JSON.stringify(k)}${colon}${serialise(value[k], sep, colon, sorted, inner, step)}`).join(join)}${close('}')}`;
}

/** Forms a receiver may re-serialise a parsed body into before computing its HMAC (the defect §6.3 step 4 forbids). */
export const RESERIALISATIONS: readonly { name: string; of(v: Json): string }[] = [
  { name: 'compact JSON (JSON.stringify(JSON.parse(body)), json.dumps(..., separators=(",", ":")))', of: (v) => serialise(v, ',', ':', false) },
  { name: 'JSON with ", " and ": " separators (Python\'s json.dumps(request.json) default)', of: (v) => serialise(v, ', ', ': ', false) },
  { name: 'compact JSON with sorted keys (a Go map, json.dumps(..., sort_keys=True, separators=(",", ":")))', of: (v) => serialise(v, ',', ':', true) },
  { name: 'JSON with ", " and ": " separators and sorted keys (json.dumps(..., sort_keys=True))', of: (v) => serialise(v, ', ', ': ', true) },
  { name: 'JSON indented by two spaces (JSON.stringify(body, null, 2), json.dumps(..., indent=2))', of: (v) => serialise(v, ',', ': ', false, '', '  ') },
];

/**
 * After a valid delivery was refused terminally: the same event again, its body sent as before but signed over
 * each re-serialisation of it (one the refused body is not). The first one the receiver accepts names its
 * body handling; undefined when none is accepted. The probes are not recorded as evidence of the check.
 */
async function diagnoseBodyHandling(ctx: ReceiverContext, wire: Wire): Promise<string | undefined> {
  let parsed: Json;
  try {
    parsed = JSON.parse(wire.body.toString('utf8')) as Json;
  } catch {
    return undefined;
  }
  const ts = headerValue(wire.headers, H.timestamp) ?? String(ctx.nowSeconds());
  for (const form of RESERIALISATIONS) {
    const text = form.of(parsed);
    if (Buffer.from(text).equals(wire.body)) continue;
    const signed = buildDelivery(parsed as unknown as WebhookEvent, ctx.opts.secret, ctx.nowSeconds(), { timestamp: ts, rawBody: text });
    const answer = await ctx.send(undefined, { headers: { ...wire.headers, [H.signature]: signed.headers[H.signature] }, body: wire.body });
    if (is2xx(answer)) {
      return `${BODY_HANDLING} the receiver refused the delivery as signed (over the raw body it received) but ${describeAnswer(answer)} to the same body signed over its ${form.name}: it computes the HMAC over a re-serialisation of the parsed JSON, not over the raw bytes as received (§6.3 steps 1 and 4: read the raw body before any JSON parsing; no re-serialisation or whitespace normalisation).`;
    }
  }
  return undefined;
}

/**
 * Judges the answer to a delivery the receiver must accept; returns true on 2xx. `standIn`: whether the follow-up
 * stand-in answered the receiver's fetches during this check (undefined without a probe). A `final` step is the
 * point of the check (a retryable answer with the stand-in answering is a warning); a prerequisite step of a
 * scenario ends the check as not_verified instead, since what it sets up did not happen.
 */
async function judgeAccepted(ctx: ReceiverContext, scope: CheckScope, wire: Wire, answer: Answer, what: string, standIn: boolean | undefined, step: 'final' | 'prerequisite', decided?: string): Promise<boolean> {
  if (is2xx(answer)) return true;
  const said = describeAnswer(answer);
  // Where a sentence of §6.4 decides the answer for the case, any other answer fails, retryable or not.
  if (decided !== undefined) throw new CheckFailure('Duplicate of a completed event not answered with success', `${what}: the receiver ${said}; ${decided}. ${SIGNING_INPUT} ${signingInputOf(wire)}`);
  if (isRetryableAnswer(answer)) {
    const retryable = `${what}: the receiver ${said}, a retryable failure under §6.4 (the service will re-send the delivery), not a failure of §6.3`;
    if (standIn === undefined) throw new NotVerified(`${retryable}; nothing shows why: ${FOLLOW_UP_HINT}`, LACKS.probe);
    if (!standIn) throw new NotVerified(`${retryable}; the follow-up stand-in saw no fetch from the receiver during this check, so nothing shows why (is the receiver's REST base URL the stand-in for this run?)`, LACKS.standInUnused);
    if (step === 'prerequisite') throw new NotVerified(`${retryable}; the follow-up stand-in answered its fetches, but the delivery was not acknowledged, so the rest of this scenario could not be judged`);
    scope.warn(`${retryable}; the follow-up stand-in answered the receiver's fetches, yet it did not acknowledge the delivery: a receiver whose processing succeeded answers 2xx (§6.4), or every delivery is sent again`);
    return false;
  }
  const diagnosis = await diagnoseBodyHandling(ctx, wire);
  throw new CheckFailure('Valid delivery not acknowledged with 2xx', `${what}: the receiver ${said}, a terminal failure under §6.4 (the service would drop the event).${diagnosis ? ` ${diagnosis}` : ''} ${SIGNING_INPUT} ${signingInputOf(wire)}`);
}

// ---------------------------------------------------------------------------------------------
// The case table

/** A check of a partner's webhook receiver: declared once (defineCheck), run against a receiver's answers (ReceiverContext). */
export interface ReceiverCase extends Declaration {
  subject: 'receiver';
  expectation: Expectation | 'accept' | 'boundary' | 'scenario';
  /** For an invalid delivery: the verifier reason it exercises, and so its §6.3 step. */
  reason?: VerifyReason;
  /**
   * For a check that judges ONE delivery on its own (no state of the receiver involved): that delivery, built
   * from the context's clock and secret, for `conformance webhook vectors` and `webhook send`. Absent for the
   * scenarios (replays, retries, concurrency), which need a receiver's memory.
   */
  wire?: (ctx: ReceiverContext) => Wire;
  run(ctx: ReceiverContext, scope: CheckScope): Promise<void>;
}

/** The §6.3 step (or §6.1, §6.2 rule) a delivery with this defect breaks, for people reading a summary. */
export function specStepOf(reason: VerifyReason): string {
  if (/_missing$/.test(reason)) return '§6.3: a required header is missing (§6.2)';
  if (/_duplicate$/.test(reason)) return '§6.2: a required header given more than once';
  switch (reason) {
    case 'timestamp_malformed':
    case 'timestamp_not_canonical':
      return '§6.3 step 2: timestamp not decimal Unix epoch seconds';
    case 'timestamp_outside_tolerance':
      return '§6.3 step 3: timestamp more than 300 s from the receiver clock';
    case 'multiple_signatures':
    case 'unsupported_signature_version':
    case 'signature_uppercase_hex':
    case 'malformed_signature':
      return '§6.3 step 6: signature header not the supported v1= form';
    case 'signature_mismatch':
      return '§6.3 steps 4, 5, 7: digest does not match HMAC-SHA256 over "{timestamp}." + the raw body';
    case 'invalid_json':
      return '§6.3 step 8, §6.1: validly signed body is not JSON';
    case 'schema_violation':
      return '§6.1: validly signed body is not a recording.transcript_ready event';
    case 'event_id_mismatch':
      return '§6.3 step 9: event-id header differs from body id';
    case 'webhook_version_mismatch':
      return '§6.3 step 10: version header differs from body api_version';
    default:
      return '§6.3';
  }
}

const NO_FOLLOWUP = 'WEBHOOK-SIG-FAIL-NO-FOLLOWUP';
const NO_PROBE = "no view of the receiver's follow-up fetches (a follow-up probe): give `conformance webhook receiver` --follow-up-port N and point the receiver's REST base URL at it";
const uniq = (xs: readonly string[]) => [...new Set(xs)];

/** adversarial.ts cases sent over HTTP, and how a receiver must treat each. */
const ADVERSARIAL: Record<string, { expectation: Expectation; title: string; extra?: string[] }> = {
  'service-event-id-absent': { expectation: 'reject', title: 'a delivery without Service-Event-Id is rejected' },
  // Identical repeated header lines: RFC 9110 §5.3 lets a recipient combine field lines, and the spec
  // does not say a repeat invalidates a delivery; a receiver that reads two identical lines as one value
  // (and then finds everything valid) makes an allowed choice. The harness's own verifier rejects them.
  'service-event-id-repeated': { expectation: 'decision', title: 'a delivery with Service-Event-Id given twice (identical lines) is rejected (harness decision)' },
  'service-delivery-id-absent': { expectation: 'reject', title: 'a delivery without Service-Delivery-Id is rejected' },
  // The spec does not say whether a repeated delivery-id header (metadata only) invalidates a delivery.
  'service-delivery-id-repeated': { expectation: 'decision', title: 'a delivery with Service-Delivery-Id given twice is rejected (harness decision)' },
  'service-timestamp-absent': { expectation: 'reject', title: 'a delivery without Service-Timestamp is rejected' },
  'service-timestamp-repeated': { expectation: 'decision', title: 'a delivery with two identical Service-Timestamp headers is rejected (harness decision)' },
  'service-signature-absent': { expectation: 'reject', title: 'a delivery without Service-Signature is rejected' },
  'service-signature-repeated': { expectation: 'decision', title: 'a delivery with two Service-Signature headers is rejected (harness decision: one signature)', extra: ['WEBHOOK-SIG-MULTIPLE-SIGNATURES'] },
  'service-webhook-version-absent': { expectation: 'reject', title: 'a delivery without Service-Webhook-Version is rejected' },
  'service-webhook-version-repeated': { expectation: 'decision', title: 'a delivery with Service-Webhook-Version given twice (identical lines) is rejected (harness decision)' },
  'timestamp-plus-sign': { expectation: 'reject', title: 'a timestamp with a plus sign (+T) is rejected' },
  'timestamp-fraction': { expectation: 'reject', title: 'a timestamp with a fraction (T.0) is rejected' },
  'timestamp-exponent': { expectation: 'reject', title: 'a timestamp in exponent form (1.7…e9) is rejected' },
  'timestamp-milliseconds-iso': { expectation: 'reject', title: 'an ISO date-time timestamp is rejected' },
  'timestamp-empty': { expectation: 'reject', title: 'an empty timestamp is rejected' },
  'timestamp-negative': { expectation: 'reject', title: 'a negative timestamp is rejected' },
  'timestamp-leading-zero': { expectation: 'decision', title: 'a timestamp with a leading zero is rejected (harness decision)' },
  'timestamp-301-s-old': { expectation: 'reject', title: 'a timestamp 301 s in the past is rejected' },
  'timestamp-301-s-ahead': { expectation: 'reject', title: 'a timestamp 301 s in the future is rejected' },
  'signature-two-v1-comma': { expectation: 'decision', title: 'a signature header with two v1= digests is rejected (harness decision)' },
  'signature-two-versions-space': { expectation: 'decision', title: 'a signature header with v1= and v0= digests is rejected (harness decision)' },
  'signature-version-v0': { expectation: 'reject', title: 'a v0= signature is rejected' },
  'signature-version-v2': { expectation: 'reject', title: 'a v2= signature is rejected' },
  'signature-uppercase-hex': { expectation: 'decision', title: 'a v1= signature in uppercase hex is rejected (harness decision)' },
  'signature-no-prefix': { expectation: 'reject', title: 'a bare digest without v1= is rejected' },
  'signature-sha256-prefix': { expectation: 'reject', title: 'a sha256= signature is rejected' },
  'signature-truncated': { expectation: 'reject', title: 'a truncated v1= digest (63 hex) is rejected' },
  'signature-base64': { expectation: 'reject', title: 'a base64 v1= digest is rejected' },
  'signature-other-secret': { expectation: 'reject', title: 'a signature made with another secret is rejected' },
  'body-one-bit-flipped': { expectation: 'reject', title: 'a body changed by one bit after signing is rejected' },
  'body-reserialised-pretty': { expectation: 'reject', title: 'a body re-serialised (pretty-printed) after signing is rejected' },
  'body-trailing-newline': { expectation: 'reject', title: 'a body with a newline appended after signing is rejected' },
  'timestamp-changed-after-signing': { expectation: 'reject', title: 'a timestamp header changed after signing is rejected' },
  'body-truncated-json': { expectation: 'reject', title: 'a validly signed body that is not JSON (truncated) is rejected' },
  // RFC 8259 §8.1: a sender must not add a byte-order mark, but a parser MAY ignore it; the signature
  // covers the mark, so a receiver that verifies the raw bytes and then skips it acts on authentic data.
  'body-with-bom': { expectation: 'decision', title: 'a validly signed body with a byte-order mark is rejected (harness decision; RFC 8259 §8.1 lets parsers ignore it)' },
  'body-empty': { expectation: 'reject', title: 'a validly signed empty body is rejected' },
  'body-invalid-utf8': { expectation: 'reject', title: 'a validly signed body that is not UTF-8 is rejected' },
  'payload-extra-field': { expectation: 'payload-policy', title: 'a validly signed event with an undeclared field is rejected' },
  'payload-extra-resource-field': { expectation: 'payload-policy', title: 'a validly signed event with an undeclared resources field is rejected' },
  'payload-missing-document-id': { expectation: 'payload-policy', title: 'a validly signed event without resources.document_id is rejected' },
  'payload-occurred-at-not-datetime': { expectation: 'payload-policy', title: 'a validly signed event whose occurred_at is not a date-time is rejected' },
  'payload-other-event-type': { expectation: 'unsupported-type', title: 'an event of an unsupported type is ignored or rejected, never followed up', extra: ['WEBHOOK-UNSUPPORTED-EVENT-TYPE'] },
  // Body id '' / an array: the event-id header then differs from the body id (§6.3 step 9).
  'payload-empty-id': { expectation: 'reject', title: 'a validly signed event with an empty id (header differs) is rejected', extra: ['WEBHOOK-SIG-EVENT-ID-MATCH'] },
  'payload-array': { expectation: 'reject', title: 'a validly signed JSON array body is rejected', extra: ['WEBHOOK-SIG-EVENT-ID-MATCH'] },
  'event-id-header-differs': { expectation: 'reject', title: 'an event-id header that differs from body id is rejected' },
  'version-header-differs': { expectation: 'reject', title: 'a version header that differs from body api_version is rejected' },
};

/** Names of adversarial.ts cases the table covers (a unit test keeps the two in step). */
export const COVERED_ADVERSARIAL_CASES: readonly string[] = Object.keys(ADVERSARIAL);

function adversarialWire(ctx: ReceiverContext, name: string): { wire: Wire; reason: VerifyReason } {
  const all = fabricateRejections({ secret: ctx.opts.secret, nowSeconds: ctx.nowSeconds(), event: ctx.freshEvent() });
  const c = all.find((x) => x.name === name);
  if (!c) throw new Error(`adversarial case ${name} no longer exists`);
  return { wire: { headers: c.headers, body: Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body) }, reason: c.expectedReason };
}

// Expected reasons of the adversarial cases, for the requirement ids (static: computed once with a dummy secret).
const ADVERSARIAL_REASONS: Record<string, VerifyReason> = Object.fromEntries(
  fabricateRejections({ secret: 'requirement-id-lookup', nowSeconds: 1_800_000_000 }).map((c) => [c.name, c.expectedReason]),
);

/** Extra invalid deliveries beyond adversarial.ts, built from a fresh valid one with one defect. */
interface ExtraCase { name: string; reason: VerifyReason; title: string; build(ctx: ReceiverContext): Wire }

function signedAt(ctx: ReceiverContext, event: WebhookEvent, timestamp: string, rawBody?: Buffer | string): Wire {
  return buildDelivery(event, ctx.opts.secret, ctx.nowSeconds(), { timestamp, rawBody });
}

function withSignature(ctx: ReceiverContext, value: (digest: string) => string): Wire {
  const d = buildDelivery(ctx.freshEvent(), ctx.opts.secret, ctx.nowSeconds());
  return { headers: { ...d.headers, [H.signature]: value(d.headers[H.signature].slice(3)) }, body: d.body };
}

const EXTRA: ExtraCase[] = [
  { name: 'timestamp-hex', reason: 'timestamp_malformed', title: 'a hexadecimal timestamp (0x…) is rejected', build: (ctx) => signedAt(ctx, ctx.freshEvent(), `0x${ctx.nowSeconds().toString(16)}`) },
  { name: 'timestamp-one-day-old', reason: 'timestamp_outside_tolerance', title: 'a timestamp one day in the past is rejected', build: (ctx) => signedAt(ctx, ctx.freshEvent(), String(ctx.nowSeconds() - 86_400)) },
  { name: 'timestamp-one-day-ahead', reason: 'timestamp_outside_tolerance', title: 'a timestamp one day in the future is rejected', build: (ctx) => signedAt(ctx, ctx.freshEvent(), String(ctx.nowSeconds() + 86_400)) },
  { name: 'timestamp-epoch-zero', reason: 'timestamp_outside_tolerance', title: 'the timestamp 0 (1970) is rejected', build: (ctx) => signedAt(ctx, ctx.freshEvent(), '0') },
  { name: 'timestamp-twenty-digits', reason: 'timestamp_outside_tolerance', title: 'a 20-digit timestamp (beyond 64-bit seconds) is rejected', build: (ctx) => signedAt(ctx, ctx.freshEvent(), '99999999999999999999') },
  { name: 'signature-over-long', reason: 'malformed_signature', title: 'a v1= digest with extra hex digits (66) is rejected', build: (ctx) => withSignature(ctx, (d) => `v1=${d}00`) },
  { name: 'signature-non-hex', reason: 'malformed_signature', title: 'a v1= digest with non-hex characters is rejected', build: (ctx) => withSignature(ctx, (d) => `v1=zz${d.slice(2)}`) },
  { name: 'signature-v1-empty', reason: 'malformed_signature', title: 'an empty v1= digest is rejected', build: (ctx) => withSignature(ctx, () => 'v1=') },
  {
    name: 'signature-over-reserialised-body',
    reason: 'signature_mismatch',
    title: 'a signature over the re-serialised body instead of the raw bytes is rejected',
    build: (ctx) => {
      // The body goes out with spaces after the colons; the digest covers JSON.stringify(JSON.parse(body)).
      // Only a receiver that re-serialises before computing the HMAC would find them equal.
      const event = ctx.freshEvent();
      const compact = JSON.stringify(event);
      const spaced = compact.replace(/":/g, '": ').replace(/,"/g, ', "');
      const d = buildDelivery(event, ctx.opts.secret, ctx.nowSeconds(), { rawBody: compact });
      return { headers: d.headers, body: Buffer.from(spaced) };
    },
  },
];

function rejectionCase(id: string, title: string, expectation: Expectation, requirements: string[], build: (ctx: ReceiverContext) => Wire, what: string, reason: VerifyReason): ReceiverCase {
  return defineCheck<ReceiverCase>({
    subject: 'receiver', id, requirements: uniq(requirements), title,
    expectation,
    reason,
    wire: build,
    async run(ctx, scope) {
      if (/^timestamp-[0-9]{3}-s-/.test(what)) await ctx.alignToSecond();
      const { answer, followUps } = await ctx.sendObserved(scope, build(ctx));
      judgeRejection(expectation, scope, answer, followUps, what);
    },
  });
}

function boundaryCase(seconds: 299 | 300, direction: 'old' | 'ahead'): ReceiverCase {
  const id = `webhook-receiver-accepts-timestamp-${seconds}-s-${direction}`;
  return defineCheck<ReceiverCase>({
    subject: 'receiver', id,
      requirements: seconds === 300 ? ['WEBHOOK-SIG-TOLERANCE-300', 'WEBHOOK-SIG-SUBSECOND-BOUNDARY', 'WEBHOOK-RECEIVER-2XX-SUCCESS', NO_FOLLOWUP] : ['WEBHOOK-SIG-TOLERANCE-300', 'WEBHOOK-RECEIVER-2XX-SUCCESS'],
      title: `a valid delivery signed ${seconds} s ${direction === 'old' ? 'in the past' : 'in the future'} is accepted`,
    expectation: seconds === 300 ? 'boundary' : 'accept',
    wire: (ctx) => {
      const now = ctx.nowSeconds();
      return buildDelivery(ctx.freshEvent(), ctx.opts.secret, now, { timestamp: String(direction === 'old' ? now - seconds : now + seconds) });
    },
    async run(ctx, scope) {
      await ctx.alignToSecond();
      const delivery = this.wire!(ctx);
      const { answer, followUps } = await ctx.sendObserved(scope, delivery);
      if (seconds === 300 && !is2xx(answer) && isRetryableAnswer(answer)) {
        // A retryable answer is a rejection (allowed here) or a failure of the receiver's own processing after it
        // accepted; the follow-up stand-in tells which. Without it nothing does.
        if (followUps === undefined) throw new NotVerified(`timestamp exactly 300 s ${direction}: the receiver ${describeAnswer(answer)}: a rejection (allowed at the open boundary, though retryable) or a failure of its own processing after accepting; nothing shows which: ${FOLLOW_UP_HINT}`, LACKS.probe);
        if (followUps > 0) {
          await judgeAccepted(ctx, scope, delivery, answer, `timestamp exactly 300 s ${direction} (accepted: it made ${followUps} follow-up fetch(es))`, true, 'final');
          return;
        }
      }
      if (seconds === 300 && !is2xx(answer)) {
        // Rejecting at the open boundary is the receiver's call; once it has rejected, §6.3 forbids the work.
        if (followUps !== undefined && followUps > 0) {
          throw new CheckFailure('Follow-up fetch after a delivery the receiver rejected', `timestamp exactly 300 s ${direction}: the receiver ${describeAnswer(answer)} and made ${followUps} follow-up REST fetch(es)`);
        }
        if (isRetryableAnswer(answer)) {
          // Rejecting at the open boundary is allowed; answering it retryably invites re-sends (§6.4).
          scope.warn(`timestamp exactly 300 s ${direction}: the receiver ${describeAnswer(answer)}; a rejection should be a terminal non-2xx (§6.3, §6.4), this one is retryable`);
          return;
        }
        // WEBHOOK-SIG-SUBSECOND-BOUNDARY: a receiver comparing milliseconds may see 300.x s.
        scope.observe(`timestamp exactly 300 s ${direction}: the receiver ${describeAnswer(answer)} (the harness judges whole seconds and accepts; the spec leaves the sub-second boundary open)`);
        return;
      }
      await judgeAccepted(ctx, scope, delivery, answer, `timestamp ${seconds} s ${direction}`, standInOf(followUps), 'final');
    },
  });
}

/** Whether the follow-up stand-in answered fetches of the receiver (undefined without a probe). */
const standInOf = (followUps: number | undefined): boolean | undefined => (followUps === undefined ? undefined : followUps > 0);

/**
 * Sends a fresh valid event and returns it with the follow-ups it caused and whether it was acknowledged. A
 * refusal ends the check (judgeAccepted); only a `final` step can come back unacknowledged (a warning).
 */
async function deliverFirst(ctx: ReceiverContext, scope: CheckScope, opts: { deliveryId?: string; step?: 'final' | 'prerequisite' } = {}) {
  const event = ctx.freshEvent();
  const now = ctx.nowSeconds();
  const first = buildDelivery(event, ctx.opts.secret, now, opts.deliveryId ? { deliveryId: opts.deliveryId } : {});
  const { answer, followUps } = await ctx.sendObserved(scope, first);
  const acknowledged = await judgeAccepted(ctx, scope, first, answer, 'first delivery of the event', standInOf(followUps), opts.step ?? 'prerequisite');
  return { event, first, now, followUps, acknowledged };
}

const SCENARIOS: ReceiverCase[] = [
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-accepts-valid-delivery', requirements: ['WEBHOOK-RECEIVER-2XX-SUCCESS', 'WEBHOOK-HMAC-AUTHENTICATED', 'WEBHOOK-SIG-INPUT', 'WEBHOOK-SIG-HMAC-SHA256'], title: 'a correctly signed delivery is acknowledged with 2xx',
    expectation: 'accept',
    wire: (ctx) => buildDelivery(ctx.freshEvent(), ctx.opts.secret, ctx.nowSeconds()),
    async run(ctx, scope) {
      await deliverFirst(ctx, scope, { step: 'final' });
    },
  }),
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-accepts-valid-delivery-laid-out-json',
      requirements: ['WEBHOOK-SIG-RAW-BODY', 'WEBHOOK-SIG-INPUT', 'WEBHOOK-RECEIVER-2XX-SUCCESS'],
      title: 'a correctly signed delivery whose JSON is laid out otherwise (indented, a final newline) is acknowledged with 2xx',
    expectation: 'accept',
    // §6.3 step 4: the HMAC covers the raw bytes as received, so a receiver must accept any JSON text the
    // service signs, not only the compact form the other deliveries use. A receiver that re-serialises the
    // parsed body before computing the HMAC accepts compact deliveries and refuses this one.
    wire: (ctx) => {
      const event = ctx.freshEvent();
      return buildDelivery(event, ctx.opts.secret, ctx.nowSeconds(), { rawBody: `${JSON.stringify(event, null, 2)}\n` });
    },
    async run(ctx, scope) {
      const delivery = this.wire!(ctx);
      const { answer, followUps } = await ctx.sendObserved(scope, delivery);
      await judgeAccepted(ctx, scope, delivery, answer, 'the same kind of event as the valid delivery, its JSON indented', standInOf(followUps), 'final');
    },
  }),
  boundaryCase(299, 'old'),
  boundaryCase(299, 'ahead'),
  boundaryCase(300, 'old'),
  boundaryCase(300, 'ahead'),
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-accepts-exact-replay', requirements: ['WEBHOOK-DUPLICATE-EVENT-SUCCESS', 'WEBHOOK-AT-LEAST-ONCE', 'WEBHOOK-DEDUPE-BY-EVENT-ID'], title: 'an exact replay of a processed delivery inside the window is acknowledged with 2xx and not processed again',
    expectation: 'scenario',
    async run(ctx, scope) {
      const { first, followUps: firstFollowUps } = await deliverFirst(ctx, scope);
      const { answer, followUps } = await ctx.sendObserved(scope, first);
      await judgeAccepted(ctx, scope, first, answer, 'exact replay of a completed delivery', standInOf(firstFollowUps), 'final', completedDuplicate(firstFollowUps));
      if (followUps !== undefined && followUps > 0) {
        throw new CheckFailure('Duplicate event processed again', `the replay caused ${followUps} more follow-up fetch(es); business work is deduplicated by event id`);
      }
    },
  }),
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-accepts-retry-with-new-delivery-id', requirements: ['WEBHOOK-DUPLICATE-EVENT-SUCCESS', 'WEBHOOK-DEDUPE-BY-EVENT-ID', 'WEBHOOK-HEADER-DELIVERY-ID', 'WEBHOOK-AT-LEAST-ONCE'], title: 'a retry of a processed event with a new delivery id and timestamp is acknowledged with 2xx and not processed again',
    expectation: 'scenario',
    async run(ctx, scope) {
      const { event, now, followUps: firstFollowUps } = await deliverFirst(ctx, scope);
      const retry = buildDelivery(event, ctx.opts.secret, now, { deliveryId: `dlv_retry_${ctx.runId}_${crypto.randomBytes(4).toString('hex')}`, timestamp: String(now - 7) });
      const { answer, followUps } = await ctx.sendObserved(scope, retry);
      await judgeAccepted(ctx, scope, retry, answer, 'retry of the event with a new delivery id', standInOf(firstFollowUps), 'final', completedDuplicate(firstFollowUps));
      if (followUps !== undefined && followUps > 0) {
        throw new CheckFailure('Duplicate event processed again', `the retry with a new delivery id caused ${followUps} more follow-up fetch(es); deduplication must key on the event id, never the delivery id`);
      }
    },
  }),
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-processes-concurrent-duplicates-once',
      requirements: ['WEBHOOK-DUPLICATE-EVENT-SUCCESS', 'WEBHOOK-DEDUPE-BY-EVENT-ID', 'WEBHOOK-AT-LEAST-ONCE'],
      title: 'concurrent deliveries of one event id (replays and retries in parallel) lead to the follow-up work once',
    expectation: 'scenario',
    async run(ctx, scope) {
      if (!ctx.opts.followUpProbe) throw new NotVerified(NO_PROBE, LACKS.probe);
      // How much follow-up work one event causes at this receiver (its own event, sent alone).
      const alone = await deliverFirst(ctx, scope);
      const perEvent = alone.followUps!;
      if (perEvent === 0) {
        scope.observe('the receiver made no follow-up fetch for a valid delivery, so repeated work under concurrent duplicates could not be counted');
        return;
      }
      // §6.4 at least once: the service may have a retry in flight while the first delivery is still
      // being handled. Two copies of one delivery and two retries with new delivery ids, all at once.
      const event = ctx.freshEvent();
      const now = ctx.nowSeconds();
      const first = buildDelivery(event, ctx.opts.secret, now);
      const retry = (n: number) => buildDelivery(event, ctx.opts.secret, now, { deliveryId: `dlv_par_${ctx.runId}_${n}_${crypto.randomBytes(3).toString('hex')}`, timestamp: String(now - n) });
      const wires = [first, first, retry(1), retry(2)];
      const before = (await ctx.followUps())!;
      const answers = await Promise.all(wires.map((w) => ctx.send(scope, w)));
      await sleep(Math.max(300, ctx.opts.followUpSettleMs ?? 150));
      // Earlier processing has completed by now: a further replay gets success and no work (§6.4).
      const replay = await ctx.send(scope, first);
      await ctx.settle();
      const work = (await ctx.followUps())! - before;
      if (work > perEvent) {
        throw new CheckFailure('Concurrent duplicates processed more than once', `${wires.length} concurrent deliveries of one event (answered ${answers.map((a) => a.status ?? a.error).join(', ')}) and a replay caused ${work} follow-up fetch(es); one event causes ${perEvent} at this receiver, so the work was done ${Math.round((work / perEvent) * 10) / 10} times`);
      }
      if (!(await judgeAccepted(ctx, scope, first, replay, 'replay after concurrent deliveries of the event had settled', true, 'final'))) return;
      if (work < perEvent) scope.observe(`the concurrent deliveries and the replay caused ${work} follow-up fetch(es), fewer than the ${perEvent} of an event sent alone`);
    },
  }),
  defineCheck<ReceiverCase>({
    subject: 'receiver', id: 'webhook-receiver-processes-events-sharing-a-delivery-id', requirements: ['WEBHOOK-DEDUPE-BY-EVENT-ID', 'WEBHOOK-RECEIVER-2XX-SUCCESS'], title: 'two different events that carry the same delivery id are both processed',
    expectation: 'scenario',
    async run(ctx, scope) {
      const shared = `dlv_shared_${ctx.runId}_${crypto.randomBytes(4).toString('hex')}`;
      const a = await deliverFirst(ctx, scope, { deliveryId: shared });
      const b = buildDelivery(ctx.freshEvent(), ctx.opts.secret, ctx.nowSeconds(), { deliveryId: shared });
      const { answer, followUps } = await ctx.sendObserved(scope, b);
      if (!(await judgeAccepted(ctx, scope, b, answer, 'second event with the same delivery id', standInOf(followUps), 'final'))) return;
      if (followUps === undefined || a.followUps === undefined) return;
      if (a.followUps === 0) {
        scope.observe('the receiver made no follow-up fetch for the first event, so whether it deduplicates by delivery id could not be observed');
        return;
      }
      if (followUps === 0) {
        throw new CheckFailure('Event skipped as a duplicate of another event', `the first event caused ${a.followUps} follow-up fetch(es), the second (another event id, same delivery id) none: deduplication keyed on the delivery id`);
      }
    },
  }),
];

function adversarialCases(): ReceiverCase[] {
  return Object.entries(ADVERSARIAL).map(([name, spec]) => {
    const reason = ADVERSARIAL_REASONS[name];
    if (!reason) throw new Error(`adversarial case ${name} no longer exists`);
    const reqs = [...REASON_REQUIREMENTS[reason], ...(spec.extra ?? []), NO_FOLLOWUP, NON_2XX];
    return rejectionCase(`webhook-receiver-rejects-${name}`, spec.title, spec.expectation, reqs, (ctx) => adversarialWire(ctx, name).wire, name, reason);
  });
}

function extraCases(): ReceiverCase[] {
  return EXTRA.map((x) => rejectionCase(`webhook-receiver-rejects-${x.name}`, x.title, 'reject', [...REASON_REQUIREMENTS[x.reason], NO_FOLLOWUP, NON_2XX], x.build, x.name, x.reason));
}

/** The invalid deliveries, each its own check: declared once, here (the registry refuses a second declaration). */
const REJECTION_CASES: readonly ReceiverCase[] = [...adversarialCases(), ...extraCases()];

/** All invalid deliveries once more, in one go: the total follow-up count must not move. */
const NO_FOLLOWUP_SWEEP: ReceiverCase = defineCheck<ReceiverCase>({
  subject: 'receiver', id: 'webhook-receiver-no-followup-after-invalid-deliveries', requirements: ['WEBHOOK-FOLLOWUP-VIA-REST', NO_FOLLOWUP, 'WEBHOOK-SIG-PARSE-AFTER-VERIFY'], title: 'no invalid delivery leads to a follow-up REST fetch',
  expectation: 'scenario',
  async run(ctx, scope) {
    if (!ctx.opts.followUpProbe) throw new NotVerified(NO_PROBE, LACKS.probe);
    // Control: the probe must see the follow-ups of a valid delivery, or "none after invalid ones" proves nothing.
    const control = await deliverFirst(ctx, scope);
    if (control.followUps === 0) {
      throw new NotVerified('the follow-up probe saw no fetch after a valid delivery either, so it cannot show whether invalid deliveries are acted on (is the receiver\'s REST base URL the probe?)', LACKS.standInUnused);
    }
    const before = (await ctx.followUps())!;
    const sent: string[] = [];
    for (const c of REJECTION_CASES) {
      if (c.expectation !== 'reject' && c.expectation !== 'unsupported-type') continue;
      const name = c.id.replace('webhook-receiver-rejects-', '');
      const wire = ADVERSARIAL[name] ? adversarialWire(ctx, name).wire : EXTRA.find((x) => x.name === name)!.build(ctx);
      await ctx.send(scope, wire);
      sent.push(name);
    }
    await sleep(Math.max(300, ctx.opts.followUpSettleMs ?? 150));
    const moved = (await ctx.followUps())! - before;
    if (moved > 0) throw new CheckFailure('Follow-up fetch after an invalid delivery', `${moved} follow-up REST fetch(es) across ${sent.length} invalid deliveries`);
  },
});

/** Every receiver check, in the order they run. */
export const RECEIVER_CASES: readonly ReceiverCase[] = [...SCENARIOS, ...REJECTION_CASES, NO_FOLLOWUP_SWEEP];

/** Check ids whose informational outcome is legitimate (the spec leaves the outcome open). */
export const RECEIVER_OPEN_CASE_IDS: readonly string[] = RECEIVER_CASES.filter((c) => c.expectation === 'decision' || c.expectation === 'boundary' || c.expectation === 'payload-policy').map((c) => c.id);
