// Fabricated webhook deliveries: one valid, and adversarial ones each of which a conforming receiver
// must reject, labelled with the verifier reason they exercise. Used by the verifier unit pairs, the
// reference-receiver tests and (later) `conformance webhook` against a partner receiver.
// Everything is signed with the real signer so that only the intended defect differs.
import { buildDelivery, sign, WEBHOOK_HEADERS, WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE } from '../../judge/signature.ts';
import type { Delivery, HeaderBag, Secret, VerifyReason, WebhookEvent } from '../../judge/signature.ts';

export interface FabricatedDelivery {
  /** kebab-case, stable: the rule broken, stated as the defect. */
  name: string;
  expectedReason: VerifyReason;
  /** Requirement catalog id when the case pins a harness decision. */
  catalogId?: string;
  headers: HeaderBag;
  /** Usually bytes; `invalid_input` cases carry something else on purpose. */
  body: Buffer | string;
  /** False for cases that cannot exist on the wire (they test the verifier API only). */
  overHttp: boolean;
}

export function sampleEvent(overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  return {
    id: 'evt_01HZX3Q8R2',
    type: WEBHOOK_EVENT_TYPE,
    api_version: WEBHOOK_API_VERSION,
    occurred_at: '2026-05-01T12:00:00Z',
    organization_id: 'org_alpha',
    resources: { encounter_id: 'enc_001', document_id: 'doc_001' },
    ...overrides,
  };
}

function withoutHeader(headers: Record<string, string>, name: string): HeaderBag {
  const out: HeaderBag = { ...headers };
  delete out[name];
  return out;
}

function withHeader(headers: Record<string, string>, name: string, value: string | string[]): HeaderBag {
  return { ...headers, [name]: value };
}

export interface FabricateOptions {
  secret: Secret;
  nowSeconds: number;
  event?: WebhookEvent;
}

/** The valid delivery every adversarial case is derived from. */
export function validDelivery({ secret, nowSeconds, event = sampleEvent() }: FabricateOptions): Delivery {
  return buildDelivery(event, secret, nowSeconds);
}

/** Adversarial deliveries; every VERIFY_REASONS entry is produced by at least one case. */
export function fabricateRejections({ secret, nowSeconds, event = sampleEvent() }: FabricateOptions): FabricatedDelivery[] {
  const now = Math.floor(nowSeconds);
  const valid = buildDelivery(event, secret, now);
  const h = valid.headers;
  const body = valid.body;
  const H = WEBHOOK_HEADERS;
  const signedWith = (timestamp: string, raw: Buffer | string = body) => buildDelivery(event, secret, now, { timestamp, rawBody: raw });
  const signedBody = (raw: string) => buildDelivery(event, secret, now, { rawBody: raw });
  const digest = h[H.signature].slice(3);
  const otherDigest = sign({ secret: 'another-secret', timestamp: h[H.timestamp], rawBody: body }).slice(3);
  const flipped = Buffer.from(body);
  flipped[flipped.length - 3] ^= 0x01;
  const json = JSON.stringify(event);
  const cases: FabricatedDelivery[] = [];
  const add = (c: Omit<FabricatedDelivery, 'overHttp'> & { overHttp?: boolean }) => cases.push({ overHttp: true, ...c });

  // Not reachable over HTTP: the verifier API itself.
  add({ name: 'body-not-bytes', expectedReason: 'invalid_input', headers: h, body: json, overHttp: false });
  add({
    name: 'headers-unreadable',
    expectedReason: 'internal_error',
    headers: new Proxy({}, { ownKeys() { throw new Error('unreadable headers'); } }),
    body,
    overHttp: false,
  });

  // Required headers, absent or repeated.
  const names: [string, VerifyReason, VerifyReason][] = [
    [H.eventId, 'event_id_missing', 'event_id_duplicate'],
    [H.deliveryId, 'delivery_id_missing', 'delivery_id_duplicate'],
    [H.timestamp, 'timestamp_missing', 'timestamp_duplicate'],
    [H.signature, 'signature_missing', 'signature_duplicate'],
    [H.version, 'webhook_version_missing', 'webhook_version_duplicate'],
  ];
  for (const [name, missing, duplicate] of names) {
    const slug = name.toLowerCase();
    add({ name: `${slug}-absent`, expectedReason: missing, headers: withoutHeader(h, name), body });
    add({ name: `${slug}-repeated`, expectedReason: duplicate, headers: withHeader(h, name, [h[name], h[name]]), body });
  }
  add({
    name: 'service-timestamp-two-spellings',
    expectedReason: 'timestamp_duplicate',
    headers: { ...h, [H.timestamp.toLowerCase()]: h[H.timestamp] },
    body,
    overHttp: false,
  });

  // Timestamp text: validly signed over the odd text, so only the format check can reject it.
  for (const [name, ts] of [
    ['timestamp-plus-sign', `+${now}`],
    ['timestamp-fraction', `${now}.0`],
    ['timestamp-exponent', `${(now / 1e9).toFixed(9)}e9`],
    ['timestamp-milliseconds-iso', new Date(now * 1000).toISOString()],
    ['timestamp-empty', ''],
    ['timestamp-negative', `-${now}`],
  ] as const) {
    const d = signedWith(ts);
    add({ name, expectedReason: 'timestamp_malformed', headers: d.headers, body: d.body });
  }
  {
    const d = signedWith(`0${now}`);
    add({ name: 'timestamp-leading-zero', expectedReason: 'timestamp_not_canonical', catalogId: 'WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS', headers: d.headers, body: d.body });
  }
  for (const [name, ts] of [['timestamp-301-s-old', now - 301], ['timestamp-301-s-ahead', now + 301]] as const) {
    const d = signedWith(String(ts));
    add({ name, expectedReason: 'timestamp_outside_tolerance', headers: d.headers, body: d.body });
  }

  // Signature header form.
  add({ name: 'signature-two-v1-comma', expectedReason: 'multiple_signatures', catalogId: 'WEBHOOK-SIG-MULTIPLE-SIGNATURES', headers: withHeader(h, H.signature, `v1=${otherDigest},v1=${digest}`), body });
  add({ name: 'signature-two-versions-space', expectedReason: 'multiple_signatures', catalogId: 'WEBHOOK-SIG-MULTIPLE-SIGNATURES', headers: withHeader(h, H.signature, `v1=${digest} v0=${otherDigest}`), body });
  add({ name: 'signature-version-v0', expectedReason: 'unsupported_signature_version', headers: withHeader(h, H.signature, `v0=${digest}`), body });
  add({ name: 'signature-version-v2', expectedReason: 'unsupported_signature_version', headers: withHeader(h, H.signature, `v2=${digest}`), body });
  add({ name: 'signature-uppercase-hex', expectedReason: 'signature_uppercase_hex', catalogId: 'WEBHOOK-SIG-UPPERCASE-HEX', headers: withHeader(h, H.signature, `v1=${digest.toUpperCase()}`), body });
  add({ name: 'signature-no-prefix', expectedReason: 'malformed_signature', headers: withHeader(h, H.signature, digest), body });
  add({ name: 'signature-sha256-prefix', expectedReason: 'malformed_signature', headers: withHeader(h, H.signature, `sha256=${digest}`), body });
  add({ name: 'signature-truncated', expectedReason: 'malformed_signature', headers: withHeader(h, H.signature, `v1=${digest.slice(0, 63)}`), body });
  add({ name: 'signature-base64', expectedReason: 'malformed_signature', headers: withHeader(h, H.signature, `v1=${Buffer.from(digest, 'hex').toString('base64')}`), body });

  // Digest.
  add({ name: 'signature-other-secret', expectedReason: 'signature_mismatch', headers: withHeader(h, H.signature, `v1=${otherDigest}`), body });
  add({ name: 'body-one-bit-flipped', expectedReason: 'signature_mismatch', headers: h, body: flipped });
  add({ name: 'body-reserialised-pretty', expectedReason: 'signature_mismatch', headers: h, body: Buffer.from(JSON.stringify(event, null, 2)) });
  add({ name: 'body-trailing-newline', expectedReason: 'signature_mismatch', headers: h, body: Buffer.concat([body, Buffer.from('\n')]) });
  {
    const d = signedWith(String(now - 1));
    add({ name: 'timestamp-changed-after-signing', expectedReason: 'signature_mismatch', headers: withHeader(h, H.timestamp, d.headers[H.timestamp]), body });
  }

  // Payload, validly signed.
  for (const [name, raw] of [
    ['body-truncated-json', json.slice(0, -1)],
    ['body-with-bom', `\uFEFF${json}`],
    ['body-empty', ''],
  ] as const) {
    const d = signedBody(raw);
    add({ name, expectedReason: 'invalid_json', headers: d.headers, body: d.body });
  }
  {
    const d = buildDelivery(event, secret, now, { rawBody: Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) });
    add({ name: 'body-invalid-utf8', expectedReason: 'invalid_json', headers: d.headers, body: d.body });
  }
  for (const [name, value] of [
    ['payload-extra-field', { ...event, patient_name: 'x' }],
    ['payload-extra-resource-field', { ...event, resources: { ...event.resources, audio_url: 'https://x.test/a' } }],
    ['payload-missing-document-id', { ...event, resources: { encounter_id: event.resources.encounter_id } }],
    ['payload-other-event-type', { ...event, type: 'recording.deleted' }],
    ['payload-empty-id', { ...event, id: '' }],
    ['payload-occurred-at-not-datetime', { ...event, occurred_at: 'yesterday' }],
    ['payload-array', [event]],
  ] as const) {
    const d = signedBody(JSON.stringify(value));
    add({ name, expectedReason: 'schema_violation', headers: { ...d.headers, [H.eventId]: h[H.eventId] }, body: d.body });
  }
  {
    const d = buildDelivery(event, secret, now, { eventIdHeader: `${event.id}_other` });
    add({ name: 'event-id-header-differs', expectedReason: 'event_id_mismatch', headers: d.headers, body: d.body });
  }
  {
    const d = buildDelivery(event, secret, now, { versionHeader: '2026-06-01' });
    add({ name: 'version-header-differs', expectedReason: 'webhook_version_mismatch', headers: d.headers, body: d.body });
  }
  return cases;
}
