// Sender conformance: the harness listens as a webhook receiver (node:http on a local port) and judges
// what the service sends: POST + JSON, the five §6.2 headers and their contracts, a valid v1= HMAC over
// the raw body, a body valid against the closed RecordingTranscriptReadyWebhookEvent schema and free of
// the content §6.1 forbids, and no API key (§5.8); §6 subscriptions disabled by default (no delivery for an
// inactive subscription); and §6.4 retries: answers from a SCRIPT (408, 409, 425, 429, 500, 502, 503, a
// held response) must be retried with the same event id and delivery id, and every attempt, retries
// included, must be signed, fresh and carry the header contract; terminal ones (a 3xx, whose redirect is
// never followed, 400, 401, 404, 410, 422) must not be retried, nor a delivery answered 200, 202 or 204.
// With a REST client (the suite's, not the CLI's) the event must name the finalized document and its owner,
// and its transcript must then be fetchable with the receiver's key.
// Events are produced through the sandbox control routes of the profile's `webhook.sandboxControlUrl`
// (POST /__sandbox/webhooks/subscriptions, POST /__sandbox/transcripts/finalize,
// DELETE /__sandbox/webhooks/subscriptions/{id}); the CLI's passive mode judges whatever arrives.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CheckFailure, NotVerified } from '../../record/record.ts';
import { defineCheck, type Declaration } from '../../engine/registry.ts';
import type { CheckScope, Exchange } from '../../record/record.ts';
import { registerSecret } from '../../record/redact.ts';
import { checkWebhookEvent } from '../../judge/event-schema.ts';
import { sign, TIMESTAMP_TOLERANCE_SECONDS, WEBHOOK_HEADERS, type WebhookHeaderNames } from '../../judge/signature.ts';
import { namesFor, header, redirectPath, Capture, SandboxControl, deliveryExchange, type CapturedDelivery, type ScriptStep, type ScenarioResultOf, type Deployment } from '../../observe/capture.ts';

// ---------------------------------------------------------------------------------------------
// Judging one delivery (pure functions of the delivery; each throws CheckFailure)

function single(d: CapturedDelivery, name: string): string {
  const v = header(d, name);
  if (v.length === 0) throw new CheckFailure(`Required header ${name} missing`, `delivery #${d.seq}`);
  if (v.length > 1) throw new CheckFailure(`Header ${name} given more than once`, `delivery #${d.seq}: ${v.length} values`);
  return v[0];
}

function parsed(d: CapturedDelivery): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(d.body));
  } catch {
    throw new CheckFailure('Delivery body is not JSON', `delivery #${d.seq}: ${d.body.length} bytes`);
  }
}

export function judgePostJson(d: CapturedDelivery): void {
  if (d.method !== 'POST') throw new CheckFailure('Delivery not sent with POST', `delivery #${d.seq} used ${d.method}`);
  const ct = header(d, 'content-type');
  if (ct.length !== 1 || !/^application\/json\s*(;.*)?$/i.test(ct[0].trim())) throw new CheckFailure('Delivery without Content-Type: application/json', `delivery #${d.seq}: Content-Type ${JSON.stringify(ct)}`);
  parsed(d);
}

export function judgeHeadersPresent(d: CapturedDelivery, H: WebhookHeaderNames = WEBHOOK_HEADERS): void {
  for (const name of Object.values(H)) {
    const v = single(d, name);
    if (v.length === 0) throw new CheckFailure(`Required header ${name} empty`, `delivery #${d.seq}`);
  }
}

export function judgeTimestamp(d: CapturedDelivery, H: WebhookHeaderNames = WEBHOOK_HEADERS): void {
  const ts = single(d, H.timestamp);
  if (!/^(0|[1-9][0-9]*)$/.test(ts)) throw new CheckFailure(`${H.timestamp} is not canonical decimal Unix seconds`, `delivery #${d.seq}: ${JSON.stringify(ts.slice(0, 40))}`);
  // Judged at the moment of receipt: the timestamp is the time of signing (§6.2).
  const skew = Math.floor(d.receivedAtMs / 1000) - Number(ts);
  if (Math.abs(skew) > TIMESTAMP_TOLERANCE_SECONDS) {
    throw new CheckFailure(`${H.timestamp} outside the 300-second tolerance`, `delivery #${d.seq}: ${Math.abs(skew)} s ${skew < 0 ? 'ahead of' : 'behind'} the harness clock at receipt`);
  }
}

/** The interop note of a sender that writes its digest in uppercase hex (WEBHOOK-SIG-UPPERCASE-HEX: the case is open). */
export const UPPERCASE_HEX_NOTE = 'the digest is written in uppercase hex: §6.2 says "hexadecimal text" and the catalog leaves the case open (WEBHOOK-SIG-UPPERCASE-HEX), so this is not a failure; interop note: receivers that compare the digest as text, or follow the common lowercase convention (the harness\'s own verifier among them), reject it, so lowercase is the safe choice';

/**
 * §6.2: `v1=` + the hexadecimal HMAC-SHA256 of `{timestamp}.{raw body}`. Throws CheckFailure when it is not; returns
 * an observation (the check is then informational) when the digest matches in uppercase hex, a case the spec leaves open.
 */
export function judgeSignature(d: CapturedDelivery, secret: string, H: WebhookHeaderNames = WEBHOOK_HEADERS): string | undefined {
  const sig = single(d, H.signature);
  const ts = single(d, H.timestamp);
  if (!/^v1=[0-9a-fA-F]{64}$/.test(sig)) throw new CheckFailure(`${H.signature} is not v1= followed by 64 hex digits`, `delivery #${d.seq}: length ${sig.length}, prefix ${JSON.stringify(sig.slice(0, 3))}`);
  const expected = Buffer.from(sign({ secret, timestamp: ts, rawBody: d.body }));
  if (!crypto.timingSafeEqual(expected, Buffer.from(`v1=${sig.slice(3).toLowerCase()}`))) {
    throw new CheckFailure(`${H.signature} does not match the HMAC-SHA256 of the timestamp and the raw body`, `delivery #${d.seq}: ${d.body.length} body bytes, timestamp ${ts}`);
  }
  if (!/^v1=[0-9a-f]{64}$/.test(sig)) return `delivery #${d.seq}: ${UPPERCASE_HEX_NOTE}`;
  return undefined;
}

export function judgeSchema(d: CapturedDelivery): void {
  const body = parsed(d);
  const r = checkWebhookEvent(body);
  if (!r.ok) throw new CheckFailure('Delivery body does not match the closed RecordingTranscriptReadyWebhookEvent schema', `delivery #${d.seq}: ${r.errors}`);
}

const SCHEMA_KEYS = new Set(['id', 'type', 'api_version', 'occurred_at', 'organization_id', 'resources']);
const RESOURCE_KEYS = new Set(['encounter_id', 'document_id']);
const URL_LIKE = /(\b[a-z][a-z0-9+.-]*:\/\/|\bwww\.|^\/\/)/i;
const IPV4 = /(^|[^0-9.])(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}($|[^0-9.])/;

function looksLikeIpv6(text: string): boolean {
  return text.split(/[\s/[\]]+/).some((t) => /^[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}$/i.test(t) && (t.includes('::') || t.split(':').length === 8));
}

/** §6.1: identifiers only: no key beyond the schema, no URL, no IP address, no secret anywhere in the body. */
export function judgeThin(d: CapturedDelivery, secret: string): void {
  const text = d.body.toString('utf8');
  if (secret && text.includes(secret)) throw new CheckFailure('Delivery body contains the signing secret', `delivery #${d.seq}`);
  const body = parsed(d);
  const found: string[] = [];
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const k of Object.keys(body)) if (!SCHEMA_KEYS.has(k)) found.push(`undeclared key ${k}`);
    const res = (body as Record<string, unknown>).resources;
    if (res !== null && typeof res === 'object' && !Array.isArray(res)) for (const k of Object.keys(res)) if (!RESOURCE_KEYS.has(k)) found.push(`undeclared key resources.${k}`);
  }
  const walk = (v: unknown, at: string) => {
    if (typeof v === 'string') {
      if (URL_LIKE.test(v)) found.push(`${at} looks like a URL`);
      if (IPV4.test(v) || looksLikeIpv6(v)) found.push(`${at} contains an IP address`);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, at ? `${at}.${k}` : k);
  };
  walk(body, '');
  if (found.length > 0) throw new CheckFailure('Delivery body carries more than identifiers', `delivery #${d.seq}: ${found.join('; ')}`);
}

export function judgeEventIdHeader(d: CapturedDelivery, H: WebhookHeaderNames = WEBHOOK_HEADERS): void {
  const v = single(d, H.eventId);
  const body = parsed(d) as { id?: unknown } | null;
  if (body === null || typeof body !== 'object' || v !== body.id) throw new CheckFailure(`${H.eventId} differs from body id`, `delivery #${d.seq}`);
}

export function judgeVersionHeader(d: CapturedDelivery, H: WebhookHeaderNames = WEBHOOK_HEADERS): void {
  const v = single(d, H.version);
  const body = parsed(d) as { api_version?: unknown } | null;
  if (body === null || typeof body !== 'object' || v !== body.api_version) throw new CheckFailure(`${H.version} differs from body api_version`, `delivery #${d.seq}: header ${JSON.stringify(v)}, body ${JSON.stringify(body?.api_version)}`);
}

const CREDENTIAL_HEADER = /^(proxy-)?authorization$|api[-_]?key|access[-_]?token|^x-auth/i;
const CREDENTIAL_VALUE = /^\s*(bearer|basic|token|apikey|api-key)\s+\S/i;

/**
 * §5.8: webhook receiving does not use API keys. No Authorization (or other credential-named) header, no
 * header value in a credential scheme, and none of the target's API keys (`apiKeys`, from the profile)
 * anywhere in the headers. Values are never put in the detail.
 */
export function judgeNoApiKey(d: CapturedDelivery, apiKeys: readonly string[] = []): void {
  const found: string[] = [];
  for (const [name, values] of Object.entries(d.headers)) {
    if (CREDENTIAL_HEADER.test(name)) found.push(`header ${name} present`);
    for (const v of values) {
      const scheme = CREDENTIAL_VALUE.exec(v);
      if (scheme) found.push(`header ${name} carries a ${scheme[1]} credential`);
      if (apiKeys.some((k) => k.length > 0 && v.includes(k))) found.push(`header ${name} carries an API key of the profile`);
    }
  }
  if (found.length > 0) throw new CheckFailure('Delivery carries an API key', `delivery #${d.seq}: ${[...new Set(found)].join('; ')}; deliveries are authenticated by the signature only`);
}

/** Same event, same delivery (§6.2: the delivery id is reused across retries). */
export function judgeRetryIds(first: CapturedDelivery, retry: CapturedDelivery, H: WebhookHeaderNames = WEBHOOK_HEADERS): void {
  const e1 = single(first, H.eventId);
  const e2 = single(retry, H.eventId);
  if (e1 !== e2) throw new CheckFailure('Retry carries another event id', `deliveries #${first.seq} and #${retry.seq}`);
  const d1 = single(first, H.deliveryId);
  const d2 = single(retry, H.deliveryId);
  if (d1 !== d2) throw new CheckFailure('Retry carries a new delivery id', `deliveries #${first.seq} and #${retry.seq}: the delivery id must be reused across retries`);
  const b1 = parsed(first) as { id?: unknown };
  const b2 = parsed(retry) as { id?: unknown };
  if (b1?.id !== b2?.id) throw new CheckFailure('Retry carries another body id', `deliveries #${first.seq} and #${retry.seq}`);
}

/** What a judge knows besides the delivery: the profile's API keys, the deployment's header word. */
export interface JudgeContext { apiKeys?: readonly string[]; headerWord?: string }

/**
 * The per-delivery judges, by check id (the CLI's passive mode runs them on every delivery). A judge throws
 * CheckFailure, or returns an observation of a choice the spec leaves open (the check is then informational).
 */
/**
 * What every sender check asks the profile for: how the deployment delivers (webhook.delivery, or the sandbox's
 * control, webhook.sandboxControlUrl, which makes the reference produce events) and the finalized transcript document
 * the events name. The two webhook settings are alternatives (either judges the sender); both are listed so each
 * counts the checks it unlocks.
 */
const SENDER_NEEDS: readonly string[] = ['resources.ambient_transcript_with_audio', 'webhook.delivery', 'webhook.sandboxControlUrl'];

/**
 * A sender check judged on one delivery: `judge` is its rule, a pure function of the delivery (the passive mode of
 * `conformance webhook sender` applies it to whatever arrives); its run takes the first delivery of its own scenario.
 */
export interface DeliveryCheck extends SenderCase {
  judge(d: CapturedDelivery, secret: string, known?: JudgeContext): string | void;
}

/** The run of every DeliveryCheck: one delivery of its scenario, judged by the check's rule; a note it returns is informational. */
async function judgeFirstDelivery(this: DeliveryCheck, ctx: SenderContext, scope: CheckScope): Promise<void> {
  const ds = await ctx.oneDelivery(scope, this.id.replace('webhook-sender-', ''));
  const observed = this.judge(firstOrFail(ds), ctx.secret, { apiKeys: ctx.opts.apiKeys, headerWord: ctx.opts.headerWord });
  if (observed) scope.observe(observed);
}

export const DELIVERY_JUDGES: readonly DeliveryCheck[] = [
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-post-json', requirements: ['WEBHOOK-POST-JSON', 'WEBHOOK-CONTENT-TYPE', 'WEBHOOK-BODY-JSON'], title: 'deliveries are POST requests with Content-Type: application/json and a JSON body', judge: (d) => judgePostJson(d) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-required-headers-present', requirements: ['WEBHOOK-HEADER-EVENT-ID', 'WEBHOOK-HEADER-DELIVERY-ID', 'WEBHOOK-HEADER-TIMESTAMP', 'WEBHOOK-HEADER-SIGNATURE', 'WEBHOOK-HEADER-VERSION', 'WEBHOOK-HEADER-NAMES'], title: 'deliveries carry each of the five §6.2 headers (Service-* or the deployment\'s header word) exactly once, non-empty', judge: (d, _s, k) => judgeHeadersPresent(d, namesFor(k?.headerWord)) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-timestamp-current', requirements: ['LIMIT-WEBHOOK-TOLERANCE', 'WEBHOOK-HEADER-TIMESTAMP', 'WEBHOOK-SIG-TOLERANCE-300'], title: 'the timestamp header is canonical decimal Unix seconds within 300 s of the receiver clock', judge: (d, _s, k) => judgeTimestamp(d, namesFor(k?.headerWord)) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-signature-valid', requirements: ['WEBHOOK-HEADER-SIGNATURE', 'WEBHOOK-SIG-INPUT', 'WEBHOOK-SIG-HMAC-SHA256', 'WEBHOOK-HMAC-AUTHENTICATED', 'WEBHOOK-SIG-RAW-BODY'], title: 'the signature header is v1= + the hex HMAC-SHA256 of {timestamp}.{raw body} with the endpoint secret (uppercase hex: informational)', judge: (d, s, k) => judgeSignature(d, s, namesFor(k?.headerWord)) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-payload-schema', requirements: ['FIELD-EVENT-ID', 'FIELD-EVENT-TYPE', 'FIELD-EVENT-API-VERSION', 'FIELD-EVENT-OCCURRED-AT', 'FIELD-EVENT-ORGANIZATION-ID', 'FIELD-EVENT-RESOURCES', 'FIELD-EVENT-RESOURCES-ENCOUNTER-ID', 'FIELD-EVENT-RESOURCES-DOCUMENT-ID', 'WEBHOOK-NO-OTHER-EVENT-TYPES', 'VERSION-WEBHOOK-DATE', 'WEBHOOK-PAYLOAD-CLOSED', 'WEBHOOK-SINGLE-EVENT-TYPE', 'WEBHOOK-BODY-JSON'], title: 'the body is a valid closed RecordingTranscriptReadyWebhookEvent', judge: (d) => judgeSchema(d) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-payload-thin', requirements: ['WEBHOOK-THIN-PAYLOAD', 'WEBHOOK-IDENTIFIERS-ONLY', 'WEBHOOK-THIN-POINTER'], title: 'the body carries identifiers only: no undeclared key, URL, IP address or secret', judge: (d, s) => judgeThin(d, s) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-event-id-header-matches', requirements: ['WEBHOOK-HEADER-EVENT-ID', 'WEBHOOK-SIG-EVENT-ID-MATCH'], title: 'the event-id header equals body id', judge: (d, _s, k) => judgeEventIdHeader(d, namesFor(k?.headerWord)) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-version-header-matches', requirements: ['VERSION-WEBHOOK-EQUAL', 'WEBHOOK-HEADER-VERSION', 'WEBHOOK-SIG-VERSION-MATCH'], title: 'the webhook-version header equals body api_version', judge: (d, _s, k) => judgeVersionHeader(d, namesFor(k?.headerWord)) , run: judgeFirstDelivery }),
  defineCheck<DeliveryCheck>({ subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-no-api-key', requirements: ['WEBHOOK-RECEIVER-NO-API-KEY'], title: 'deliveries carry no Authorization header and no API key in any header (the signature authenticates them)', judge: (d, _secret, known) => judgeNoApiKey(d, known?.apiKeys) , run: judgeFirstDelivery }),
];


// ---------------------------------------------------------------------------------------------
// The cases

/** The sender's timeout in scenarios where the listener answers at once (see SenderContext.scenarioAt). */
export const PROMPT_ANSWER_TIMEOUT_MS = 5_000;

export interface SenderContextOptions {
  capture: Capture;
  /** The sandbox's control routes (subscriptions made per scenario), or … */
  control?: SandboxControl;
  /** … a deployment whose deliveries are caused by its trigger command or its team (webhook.sender). */
  deployment?: Deployment;
  /** The secret the deployment signs with (webhook.signingSecretEnv); the sandbox is given a fresh one per run. */
  secret?: string;
  /** An ambient transcript document with a finalized transcript (profile role ambient_transcript_with_audio). */
  document: { encounter_id: string; document_id: string };
  /** False when the document is not known (a deployment whose team causes the events): the event's document is then fetched, not compared. */
  documentKnown?: boolean;
  /** Subscription settings asked of the sandbox: short, so retries come quickly. */
  backoffMs?: number;
  senderTimeoutMs?: number;
  maxAttempts?: number;
  /** How long to wait for a delivery or a retry (default 10 s). */
  waitMs?: number;
  /** How long to watch for an unwanted retry after a terminal answer, or an unwanted delivery (default 1.5 s). */
  observeMs?: number;
  /** The target's API keys (from the profile): no delivery may carry one. */
  apiKeys?: readonly string[];
  /** The word of the deployment's §6.2 header names (profile webhook.headerWord; default Service). */
  headerWord?: string;
  /** GET on the target's REST routes with the receiver's key (the suite's client); absent in the CLI. */
  rest?: (target: string) => Promise<Exchange>;
}

export class SenderContext {
  readonly opts: SenderContextOptions;
  readonly secret: string;
  constructor(opts: SenderContextOptions) {
    this.secret = opts.secret ?? `whsec_conf_${crypto.randomBytes(12).toString('hex')}`;
    registerSecret(this.secret);
    this.opts = opts;
  }

  /**
   * A deployment's event answered 204, shared by the checks that judge one correct delivery (each event costs the
   * team's trigger a finalized transcript); the sandbox makes one per check, as before.
   */
  async oneDelivery(scope: CheckScope, name: string): Promise<CapturedDelivery[]> {
    const deployment = this.opts.deployment;
    if (!deployment) return this.scenario(scope, name, [204], (x) => x.length >= 1);
    const r = await deployment.shared('one-delivery', () => deployment.scenario({ ...scope, record: () => undefined }, 'one-delivery', [204], (x) => x.length >= 1));
    for (const d of r.deliveries) scope.record(deliveryExchange(d));
    return r.deliveries;
  }

  /**
   * Activates a subscription to a fresh path of the capture server with `script`, finalizes the transcript,
   * waits until `until(deliveries)` holds (or the wait ends), then deactivates the subscription.
   */
  async scenario(scope: CheckScope, name: string, script: ScriptStep[], until: (ds: CapturedDelivery[]) => boolean, extraWaitMs = 0): Promise<CapturedDelivery[]> {
    return (await this.scenarioAt(scope, name, script, until, extraWaitMs)).deliveries;
  }

  /** As scenario(), also giving the receiver path used (to look at its redirect sibling). */
  async scenarioAt(scope: CheckScope, name: string, script: ScriptStep[], until: (ds: CapturedDelivery[]) => boolean, extraWaitMs = 0): Promise<ScenarioResultOf> {
    if (this.opts.deployment) return this.opts.deployment.scenario(scope, name, script, until, extraWaitMs, script.length);
    const { capture } = this.opts;
    const control = this.opts.control;
    if (!control) throw new Error('the sender context has neither a sandbox control nor a deployment');
    const path = `/receiver/${name}-${crypto.randomBytes(4).toString('hex')}`;
    capture.setScript(path, script);
    // Only a scenario about the sender's timeout needs that timeout short. Elsewhere a generous one keeps a
    // listener that answers late on a loaded machine (its process busy, two cores shared with the target) from
    // becoming a timeout the sender rightly retries, which would read as a retry after a 2xx or a terminal answer;
    // a sender that wrongly retries does so after its backoff, well within the observation window either way.
    const timeoutMs = script.includes('timeout') ? (this.opts.senderTimeoutMs ?? 500) : Math.max(this.opts.senderTimeoutMs ?? 500, PROMPT_ANSWER_TIMEOUT_MS);
    const sub = await control.activate(scope, `${capture.url}${path}`, this.secret, {
      max_attempts: this.opts.maxAttempts ?? 3, backoff_ms: this.opts.backoffMs ?? 100, timeout_ms: timeoutMs,
    });
    try {
      await control.finalize(scope, this.opts.document, sub);
      await capture.waitFor(() => until(capture.on(path)), this.opts.waitMs ?? 10_000);
      if (extraWaitMs > 0) await new Promise((r) => setTimeout(r, extraWaitMs));
    } finally {
      await control.deactivate(scope, sub).catch(() => undefined);
    }
    const ds = capture.on(path);
    const followed = capture.on(redirectPath(path));
    for (const d of [...ds, ...followed]) scope.record(deliveryExchange(d));
    return { path, deliveries: ds, followed };
  }
}

/** A check of the service's webhook sender: declared once (defineCheck), run on what the harness's listener captures (SenderContext). */
export interface SenderCase extends Declaration {
  subject: 'service';
  run(ctx: SenderContext, scope: CheckScope): Promise<void>;
  /**
   * Judged only from the sender's own schedule of attempts (the sandbox control): a deployment judged as it is
   * (webhook.sender) offers none, so the case is not part of that run (its requirements are verified by the others).
   */
  needsSchedule?: boolean;
}

/** The cases a deployment judged through webhook.sender runs (every case but those only a sandbox's schedule decides). */
export const DEPLOYMENT_CASES = (): readonly SenderCase[] => SENDER_CASES.filter((c) => !c.needsSchedule);

function firstOrFail(ds: CapturedDelivery[]): CapturedDelivery {
  if (ds.length === 0) throw new CheckFailure('No delivery arrived for the finalized transcript', 'the active subscription received nothing within the wait');
  return ds[0];
}

const contractCases: readonly SenderCase[] = DELIVERY_JUDGES;

function retryCase(step: 503 | 502 | 500 | 429 | 425 | 409 | 408 | 'timeout' | 'reset'): SenderCase {
  const label = String(step);
  const how = step === 'timeout' ? 'with a timeout' : step === 'reset' ? 'with a reset connection (no answer)' : String(step);
  return defineCheck<SenderCase>({
    subject: 'service', needs: SENDER_NEEDS, id: `webhook-sender-retries-${label}-with-same-ids`,
      requirements: ['WEBHOOK-RETRYABLE-FAILURES', 'WEBHOOK-AT-LEAST-ONCE', 'WEBHOOK-HEADER-DELIVERY-ID', 'WEBHOOK-HEADER-EVENT-ID'],
      title: `a delivery answered ${how} is retried with the same event id and delivery id`,
    async run(ctx, scope) {
      const ds = await ctx.scenario(scope, `retry-${label}`, [step, 204], (x) => x.length >= 2);
      const first = firstOrFail(ds);
      if (ds.length < 2) throw new CheckFailure('Retryable failure not retried', `the delivery answered ${step === 'timeout' ? 'with a held response (timeout)' : how} was not delivered again within the wait`);
      judgeRetryIds(first, ds[1], namesFor(ctx.opts.headerWord));
    },
  });
}

function terminalCase(status: 400 | 401 | 404 | 410 | 422 | 302): SenderCase {
  const redirect = status === 302;
  return defineCheck<SenderCase>({
    subject: 'service', needs: SENDER_NEEDS, id: `webhook-sender-no-retry-after-${status}`,
      requirements: ['WEBHOOK-TERMINAL-FAILURES'],
      title: redirect ? 'a delivery answered 302 is neither retried nor redirected (the Location is never followed)' : `a delivery answered ${status} is not retried`,
    async run(ctx, scope) {
      const { deliveries: ds, followed } = await ctx.scenarioAt(scope, `terminal-${status}`, [status, 204], (x) => x.length >= 1, ctx.opts.observeMs ?? 1500);
      firstOrFail(ds);
      if (redirect) {
        if (followed.length > 0) throw new CheckFailure('Redirect followed', `the delivery answered 302 was sent on to its Location ${followed.length} time(s); a 3xx is a terminal answer`);
      }
      if (ds.length > 1) throw new CheckFailure('Terminal failure retried', `the delivery answered ${status} came again ${ds.length - 1} time(s) within ${ctx.opts.observeMs ?? 1500} ms`);
    },
  });
}

/** §6.4: any 2xx is success; the event is not delivered again (200, 202 and 204, watched at once). */
const noRedeliveryAfter2xx: SenderCase = defineCheck<SenderCase>({
  subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-no-redelivery-after-2xx', requirements: ['WEBHOOK-RECEIVER-2XX-SUCCESS', 'WEBHOOK-AT-LEAST-ONCE'], title: 'a delivery answered 200, 202 or 204 (without a body) is not delivered again',
  async run(ctx, scope) {
    const observeMs = ctx.opts.observeMs ?? 1500;
    const runs = await Promise.all(([200, 202, 204] as const).map(async (status) => ({ status, ds: await ctx.scenario(scope, `success-${status}`, [status], (x) => x.length >= 1, observeMs) })));
    const again = runs.filter((r) => r.ds.length > 1).map((r) => `answered ${r.status}: delivered ${r.ds.length} times`);
    for (const r of runs) firstOrFail(r.ds);
    if (again.length > 0) throw new CheckFailure('Delivered again after a 2xx', `${again.join('; ')} within ${observeMs} ms`);
  },
});

/**
 * §6.2/§6.3 on every attempt: the retries too are signed over their own body and timestamp, fresh and complete. The
 * digest's case is not judged here (webhook-sender-signature-valid observes it): this check verifies the HMAC itself.
 */
const everyAttemptJudged: SenderCase = defineCheck<SenderCase>({
  subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-every-attempt-signed-and-fresh',
    requirements: ['WEBHOOK-HEADER-SIGNATURE', 'WEBHOOK-SIG-INPUT', 'WEBHOOK-SIG-HMAC-SHA256', 'WEBHOOK-HMAC-AUTHENTICATED', 'WEBHOOK-SIG-RAW-BODY', 'WEBHOOK-HEADER-TIMESTAMP', 'LIMIT-WEBHOOK-TOLERANCE', 'WEBHOOK-HEADER-EVENT-ID', 'WEBHOOK-HEADER-VERSION', 'WEBHOOK-RETRYABLE-FAILURES'],
    title: 'every attempt of a delivery, retries included, carries the header contract, a current timestamp and a valid signature',
  async run(ctx, scope) {
    const ds = await ctx.scenario(scope, 'every-attempt', [503, 503, 204], (x) => x.length >= 3);
    firstOrFail(ds);
    if (ds.length < 2) throw new NotVerified('the delivery answered 503 was not retried: no retry to judge (webhook-sender-retries-503-with-same-ids judges that)');
    const problems: string[] = [];
    const H = namesFor(ctx.opts.headerWord);
    for (const d of ds) {
      for (const judge of [judgePostJson, (x: CapturedDelivery) => judgeHeadersPresent(x, H), (x: CapturedDelivery) => judgeTimestamp(x, H), (x: CapturedDelivery) => judgeSignature(x, ctx.secret, H), (x: CapturedDelivery) => judgeEventIdHeader(x, H), (x: CapturedDelivery) => judgeVersionHeader(x, H)]) {
        try {
          judge(d);
        } catch (e) {
          if (!(e instanceof CheckFailure)) throw e;
          problems.push(`attempt ${ds.indexOf(d) + 1}: ${e.title} (${e.detail})`);
        }
      }
    }
    if (problems.length > 0) throw new CheckFailure('An attempt of the delivery breaks the delivery contract', problems.join('; '));
  },
});

/**
 * §6/§6.4 follow-up: the event points at the transcript that was finalized (its document and encounter, the
 * organization that owns them), and the receiver can fetch it through the REST route with its key.
 */
const eventNamesFinalizedDocument: SenderCase = defineCheck<SenderCase>({
  subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-event-names-finalized-document',
    requirements: ['WEBHOOK-FOLLOWUP-VIA-REST', 'FIELD-EVENT-ORGANIZATION-ID', 'FIELD-EVENT-RESOURCES-ENCOUNTER-ID', 'FIELD-EVENT-RESOURCES-DOCUMENT-ID', 'WEBHOOK-THIN-POINTER'],
    title: 'the event names the finalized document, its encounter and their organization, and the transcript is then fetchable through the REST route with the receiver key',
  async run(ctx, scope) {
    const rest = ctx.opts.rest;
    if (!rest) throw new NotVerified('no REST client for follow-up fetches (the suite passes the profile\'s full key)');
    const d = firstOrFail(await ctx.oneDelivery(scope, 'names-document'));
    const body = parsed(d) as { organization_id?: unknown; resources?: { encounter_id?: unknown; document_id?: unknown } };
    const doc = { ...ctx.opts.document };
    const got = { encounter_id: body?.resources?.encounter_id, document_id: body?.resources?.document_id };
    if (ctx.opts.documentKnown === false) {
      if (typeof got.encounter_id !== 'string' || typeof got.document_id !== 'string') throw new CheckFailure('The event does not name a document', `delivery #${d.seq}: resources ${JSON.stringify(got)}`);
      doc.encounter_id = got.encounter_id;
      doc.document_id = got.document_id;
    } else if (got.encounter_id !== doc.encounter_id || got.document_id !== doc.document_id) {
      throw new CheckFailure('The event does not name the finalized document', `delivery #${d.seq}: resources ${JSON.stringify(got)}, finalized ${JSON.stringify(doc)}`);
    }
    const seg = encodeURIComponent;
    const enc = await rest(`/external/v1/encounters/${seg(doc.encounter_id)}`);
    let owner: unknown;
    try {
      owner = (JSON.parse(enc.response?.body ?? 'null') as { encounter?: { organization_id?: unknown } } | null)?.encounter?.organization_id;
    } catch {
      /* judged below */
    }
    if (enc.response?.status !== 200 || typeof owner !== 'string') throw new CheckFailure('The event\'s encounter cannot be read with the receiver key', `GET encounter → ${enc.response?.status ?? enc.error?.kind}`);
    if (body.organization_id !== owner) throw new CheckFailure('The event names another organization than the owner of the document', `delivery #${d.seq}: organization_id ${JSON.stringify(body.organization_id)}, encounter owned by ${JSON.stringify(owner)}`);
    const t = await rest(`/external/v1/encounters/${seg(doc.encounter_id)}/documents/${seg(doc.document_id)}/transcript`);
    if (t.response?.status !== 200) throw new CheckFailure('The transcript the event points at cannot be fetched with the receiver key', `GET transcript → ${t.response?.status ?? t.error?.kind}: ${t.response?.body.slice(0, 200) ?? ''}`);
  },
});

/**
 * §6: subscriptions are disabled by default; nothing is delivered until one is activated. A subscription
 * to a fresh path is activated and deactivated again (the control offers no other way to hold an inactive
 * one); a transcript finalized for it must bring no delivery within the observation window.
 */
const noDeliveryWithoutActivation: SenderCase = defineCheck<SenderCase>({
  subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-no-delivery-without-activation',
    requirements: ['WEBHOOK-SUBSCRIPTIONS-DISABLED-DEFAULT'],
    title: 'a transcript finalized for a subscription that is not active brings no delivery',
  async run(ctx, scope) {
    const { capture, control, deployment } = ctx.opts;
    const observeMs = ctx.opts.observeMs ?? 1500;
    if (deployment) {
      const arrived = await deployment.inactive(scope, 'no-delivery-without-activation', observeMs);
      if (arrived.length > 0) throw new CheckFailure('Delivery to a subscription that is not active', `${arrived.length} delivery(ies) arrived within ${observeMs} ms of a transcript the trigger finalized while the subscription was not active`);
      return;
    }
    if (!control) throw new NotVerified('no way to hold a subscription inactive (webhook.sandboxControlUrl, or webhook.sender.trigger)');
    const path = `/receiver/inactive-${crypto.randomBytes(4).toString('hex')}`;
    capture.setScript(path, [204]);
    const sub = await control.activate(scope, `${capture.url}${path}`, ctx.secret, {
      max_attempts: ctx.opts.maxAttempts ?? 3, backoff_ms: ctx.opts.backoffMs ?? 100, timeout_ms: ctx.opts.senderTimeoutMs ?? 500,
    });
    const status = await control.deactivate(scope, sub);
    if (status < 200 || status > 299) throw new Error(`sandbox control could not deactivate the subscription (status ${status})`);
    await control.finalize(scope, ctx.opts.document, sub);
    await capture.waitFor(() => capture.on(path).length > 0, observeMs);
    const ds = capture.on(path);
    for (const d of ds) scope.record(deliveryExchange(d));
    if (ds.length > 0) throw new CheckFailure('Delivery to a subscription that is not active', `${ds.length} delivery(ies) arrived within ${observeMs} ms for a transcript finalized while the subscription was deactivated`);
  },
});

/**
 * §6.4: a connection error (here a refused connection: nothing listens at the receiver URL) is retryable.
 * No delivery can arrive, so the sender's own schedule (sandbox control) shows whether it tried again.
 */
const retriesRefusedConnection: SenderCase = defineCheck<SenderCase>({
  needsSchedule: true,
  subject: 'service', needs: SENDER_NEEDS, id: 'webhook-sender-retries-refused-connection', requirements: ['WEBHOOK-RETRYABLE-FAILURES', 'WEBHOOK-AT-LEAST-ONCE'], title: 'a delivery whose connection is refused is attempted again',
  async run(ctx, scope) {
    const { control } = ctx.opts;
    // A deployment's first attempt at a closed port leaves no trace the harness could see: a retry that arrives after
    // the port opens again cannot be told apart from a late first attempt. Only the sender's own schedule shows it.
    if (!control) throw new NotVerified('a refused connection is judged from the sender\'s own schedule of attempts (the sandbox control\'s GET /__sandbox/webhooks/events/{id}/deliveries); a deployment offers none, and its reset-connection and timeout scenarios judge transport failures');
    const port = await new Promise<number>((resolve, reject) => {
      const probe = http.createServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as AddressInfo;
        probe.close(() => resolve(p));
      });
    });
    const sub = await control.activate(scope, `${new URL(ctx.opts.capture.url).protocol}//${new URL(ctx.opts.capture.url).hostname}:${port}/receiver/refused`, ctx.secret, {
      max_attempts: 2, backoff_ms: ctx.opts.backoffMs ?? 100, timeout_ms: ctx.opts.senderTimeoutMs ?? 500,
    });
    try {
      const eventId = await control.finalize(scope, ctx.opts.document, sub);
      const deadline = Date.now() + (ctx.opts.waitMs ?? 10_000);
      let last: { status: string; attempts: number; last_result: string | null }[] | undefined;
      for (;;) {
        last = await control.deliveries(undefined, eventId);
        if (last === undefined) throw new NotVerified('the sandbox control does not report the sender\'s schedule (GET /__sandbox/webhooks/events/{id}/deliveries)');
        const d = last[0];
        if (d && d.attempts >= 2) return;
        if (d && d.status !== 'pending' && d.status !== 'delivering') {
          throw new CheckFailure('Refused connection not retried', `the delivery ended ${JSON.stringify(d.status)} after ${d.attempts} attempt(s) (last result ${JSON.stringify(d.last_result)}); max_attempts 2 was asked`);
        }
        if (Date.now() > deadline) throw new CheckFailure('Refused connection not retried', `after ${ctx.opts.waitMs ?? 10_000} ms: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await control.deactivate(scope, sub).catch(() => undefined);
    }
  },
});

/** Every sender check, in the order they run. */
export const SENDER_CASES: readonly SenderCase[] = [
  ...contractCases,
  retryCase(503), retryCase(429), retryCase(408), retryCase('timeout'),
  retryCase(409), retryCase(425), retryCase(500), retryCase(502), retryCase('reset'), retriesRefusedConnection,
  terminalCase(400), terminalCase(401), terminalCase(404), terminalCase(410), terminalCase(422), terminalCase(302),
  noDeliveryWithoutActivation, noRedeliveryAfter2xx, everyAttemptJudged, eventNamesFinalizedDocument,
];
