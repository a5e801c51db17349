// fast-check properties of the harness's own webhook signer and verifier (spec §6.2, §6.3, §8): tests of the
// harness, not of a target, so they run with the project's tests (unit project), never in a conformance run.
// Each property records its seed on its test (replay with CONFORMANCE_SEED). Green is paired with red (STYLE §8):
// deliberately broken verifiers/signers, built here around the real ones, must make a property fail.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { test, type TestInfo } from '@playwright/test';
import fc from 'fast-check';
import { numRuns, anyCodePoint, startProperty } from '../engine/seed.ts';
import {
  sign, verify, verifySignatureOnly, buildDelivery, VERIFY_REASONS, WEBHOOK_HEADERS, WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE,
} from '../judge/signature.ts';
import type { HeaderBag, Secret, SignInput, VerifyInput, VerifyResult, WebhookEvent } from '../judge/signature.ts';

const H = WEBHOOK_HEADERS;

// Plain node:assert inside the properties, not Playwright's expect: each expect call is a step that captures a
// stack trace (about a millisecond), and these properties make thousands of calls.
/** Equal as JSON values (what toEqual compared: fields left undefined count as absent, prototypes do not count). */
function sameJson(actual: unknown, expected: unknown): void {
  assert.deepEqual(JSON.parse(JSON.stringify(actual)), JSON.parse(JSON.stringify(expected)));
}
/** Every field of `expected` is deep-equal in `actual` (toMatchObject on a flat result). */
function hasFields(actual: object, expected: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(expected)) {
    if (!isDeepStrictEqual((actual as Record<string, unknown>)[k], v)) assert.fail(`${k}: expected ${JSON.stringify(v)}, got ${JSON.stringify(actual)}`);
  }
}
type Verifier = (input: VerifyInput) => VerifyResult;

function greenProperty<Ts>(testInfo: TestInfo, prop: fc.IProperty<Ts>): void {
  const { seed, runs } = startProperty(testInfo, 200);
  fc.assert(prop, { seed, numRuns: runs });
}

/** The property must find a counterexample against a deliberately broken variant. */
function redProperty<Ts>(testInfo: TestInfo, prop: fc.IProperty<Ts>): void {
  const { seed, runs } = startProperty(testInfo, 200);
  const out = fc.check(prop, { seed, numRuns: runs });
  assert.equal(out.failed, true, 'the property did not catch the broken variant');
  testInfo.annotations.push({ type: 'counterexample', description: `${testInfo.title}: found after ${out.numRuns} runs, shrunk ${out.numShrinks} times` });
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const secretArb: fc.Arbitrary<Secret> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 64, unit: anyCodePoint() }),
  fc.string({ minLength: 1, maxLength: 64 }),
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
);
/** Canonical decimal seconds, small and large (2^40 s keeps milliseconds exact in a double). */
const secondsArb = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1_600_000_000, max: 2_100_000_000 }));
const idArb = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' });
const eventArb: fc.Arbitrary<WebhookEvent> = fc.record({
  id: idArb,
  type: fc.constant(WEBHOOK_EVENT_TYPE),
  api_version: fc.constant(WEBHOOK_API_VERSION),
  occurred_at: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true }).map(d => d.toISOString()),
  organization_id: idArb,
  resources: fc.record({ encounter_id: idArb, document_id: idArb }),
});
const bodyBytesArb = fc.uint8Array({ maxLength: 2048 });
const casingArb = fc.constantFrom<(s: string) => string>(s => s, s => s.toLowerCase(), s => s.toUpperCase());

function recase(headers: Record<string, string>, casing: (s: string) => string): HeaderBag {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [casing(k), v]));
}

function headersFor(secret: Secret, timestamp: string, rawBody: Uint8Array): Record<string, string> {
  return {
    [H.eventId]: 'evt_prop',
    [H.deliveryId]: 'dlv_prop',
    [H.timestamp]: timestamp,
    [H.signature]: sign({ secret, timestamp, rawBody }),
    [H.version]: WEBHOOK_API_VERSION,
  };
}

/** Replace the character at `index` (mod length) with a different one. */
function changeOneChar(text: string, index: number, replacement: number): string {
  const i = index % text.length;
  const original = text.charCodeAt(i);
  const code = replacement === original ? (replacement + 1) % 128 : replacement;
  return text.slice(0, i) + String.fromCharCode(code) + text.slice(i + 1);
}

// ---------------------------------------------------------------------------------------------
// Broken variants (red side). Each wraps the real function with one deliberate defect.

/** Normalises the body (JSON.parse → JSON.stringify) before verifying: §6.3 step 4 violated. */
const reserialisingVerifier: Verifier = input => {
  let rawBody = input.rawBody;
  try {
    rawBody = Buffer.from(JSON.stringify(JSON.parse(Buffer.from(input.rawBody).toString('utf8'))), 'utf8');
  } catch { /* keep the bytes */ }
  return verify({ ...input, rawBody });
};

/** Ignores the receiver clock: always judges the timestamp against itself (§6.3 step 3 skipped). */
const clocklessVerifier: Verifier = input => {
  const ts = Object.entries(input.headers).find(([k]) => k.toLowerCase() === H.timestamp.toLowerCase())?.[1];
  return verify({ ...input, nowMs: Number(ts) * 1000 });
};

/** Parses JSON before anything else (§6.3 step 8 out of order): throws on hostile bodies. */
const parseFirstVerifier: Verifier = input => {
  JSON.parse(Buffer.from(input.rawBody).toString('utf8'));
  return verify(input);
};

/** Signs `{timestamp}{body}` without the dot separator. */
const dotlessSigner = ({ secret, timestamp, rawBody }: SignInput): string =>
  `v1=${crypto.createHmac('sha256', secret).update(timestamp).update(rawBody).digest('hex')}`;

// ---------------------------------------------------------------------------------------------
// Properties

test('sign-then-verify holds for any body bytes, secret and timestamp', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(bodyBytesArb, secretArb, secondsArb, fc.integer({ min: 0, max: 999 }), (rawBody, secret, seconds, ms) => {
    const headers = headersFor(secret, String(seconds), rawBody);
    const result = verifySignatureOnly({ headers, rawBody, secret, nowMs: seconds * 1000 + ms });
    hasFields(result, { ok: true, timestamp: String(seconds) });
  }));
});

test('sign-then-verify holds for any valid event, whatever the header-name casing', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(eventArb, secretArb, secondsArb, casingArb, (event, secret, seconds, casing) => {
    const d = buildDelivery(event, secret, seconds);
    const result = verify({ headers: recase(d.headers, casing), rawBody: d.body, secret, nowMs: seconds * 1000 });
    sameJson(result, { ok: true, event, deliveryId: d.headers[H.deliveryId], timestamp: String(seconds) });
  }));
});

test('a signature made with another secret is rejected', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(bodyBytesArb, secretArb, secretArb, secondsArb, (rawBody, secret, other, seconds) => {
    fc.pre(!Buffer.from(secret).equals(Buffer.from(other)));
    const headers = headersFor(other, String(seconds), rawBody);
    hasFields(verifySignatureOnly({ headers, rawBody, secret, nowMs: seconds * 1000 }), { reason: 'signature_mismatch' });
  }));
});

const signerAgreement = (signer: (input: SignInput) => string) =>
  fc.property(bodyBytesArb, secretArb, fc.string({ maxLength: 24 }), (rawBody, secret, timestamp) => {
    // Independent oracle: node:crypto directly, input built as one buffer.
    const input = Buffer.concat([Buffer.from(timestamp, 'utf8'), Buffer.from('.'), rawBody]);
    const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    const expected = 'v1=' + crypto.createHmac('sha256', key).update(input).digest('hex');
    const actual = signer({ secret, timestamp, rawBody });
    assert.match(actual, /^v1=[0-9a-f]{64}$/);
    assert.equal(actual, expected);
  });

test('the signer agrees with an independent node:crypto HMAC', ({}, testInfo) => {
  greenProperty(testInfo, signerAgreement(sign));
});

test('red: a signer that drops the dot separator is caught by the agreement property', ({}, testInfo) => {
  redProperty(testInfo, signerAgreement(dotlessSigner));
});

test('any one-byte change to the body is rejected', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(
    fc.uint8Array({ minLength: 1, maxLength: 2048 }), secretArb, secondsArb, fc.nat(), fc.integer({ min: 1, max: 255 }),
    (rawBody, secret, seconds, index, mask) => {
      const headers = headersFor(secret, String(seconds), rawBody);
      const changed = Buffer.from(rawBody);
      changed[index % changed.length] ^= mask;
      hasFields(verifySignatureOnly({ headers, rawBody: changed, secret, nowMs: seconds * 1000 }), { ok: false, reason: 'signature_mismatch' });
    },
  ));
});

test('any one-character change to the timestamp header is rejected', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(bodyBytesArb, secretArb, secondsArb, fc.nat(), fc.integer({ min: 0, max: 127 }), (rawBody, secret, seconds, index, code) => {
    const headers = headersFor(secret, String(seconds), rawBody);
    const tampered = { ...headers, [H.timestamp]: changeOneChar(headers[H.timestamp], index, code) };
    assert.equal(verifySignatureOnly({ headers: tampered, rawBody, secret, nowMs: seconds * 1000 }).ok, false);
  }));
});

test('any one-character change to the signature header is rejected', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(bodyBytesArb, secretArb, secondsArb, fc.nat(), fc.integer({ min: 0, max: 127 }), (rawBody, secret, seconds, index, code) => {
    const headers = headersFor(secret, String(seconds), rawBody);
    const tampered = { ...headers, [H.signature]: changeOneChar(headers[H.signature], index, code) };
    assert.equal(verifySignatureOnly({ headers: tampered, rawBody, secret, nowMs: seconds * 1000 }).ok, false);
  }));
});

/** Timestamp texts that are not canonical decimal seconds, each paired with the instant they suggest. */
const oddTimestampArb: fc.Arbitrary<{ text: string; seconds: number }> = fc.oneof(
  // Leading zeros (WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS).
  fc.tuple(secondsArb, fc.integer({ min: 1, max: 4 })).map(([s, zeros]) => ({ text: '0'.repeat(zeros) + String(s), seconds: s })),
  // Spellings a lenient parser (Number, parseInt) would accept.
  fc.tuple(secondsArb, fc.constantFrom(
    (s: number) => `+${s}`, (s: number) => ` ${s}`, (s: number) => `${s} `, (s: number) => `${s}.0`, (s: number) => `${s}.`,
    (s: number) => `${s}e0`, (s: number) => `0x${s.toString(16)}`, (s: number) => `${s}\t`, (s: number) => `${s}n`,
    (s: number) => `${s}`.replace(/[0-9]/g, d => String.fromCharCode(0x660 + Number(d))), // Arabic-Indic digits
    (s: number) => `${s}`.replace(/[0-9]/g, d => String.fromCharCode(0xff10 + Number(d))), // full-width digits
  )).map(([s, spell]) => ({ text: spell(s), seconds: s })),
  // Anything else that is not canonical.
  fc.tuple(fc.string({ maxLength: 16, unit: anyCodePoint() }), secondsArb).map(([text, s]) => ({ text, seconds: s })),
).filter(({ text }) => !/^(0|[1-9][0-9]*)$/.test(text));

test('a validly signed timestamp that is not canonical decimal seconds is rejected', ({}, testInfo) => {
  greenProperty(testInfo, fc.property(oddTimestampArb, secretArb, eventArb, ({ text, seconds }, secret, event) => {
    // Signed over the odd text and the clock set to the instant it suggests: only the format check can reject.
    const d = buildDelivery(event, secret, seconds, { timestamp: text });
    const result = verify({ headers: d.headers, rawBody: d.body, secret, nowMs: seconds * 1000 });
    assert.equal(result.ok, false);
    if (!result.ok) assert.ok(['timestamp_malformed', 'timestamp_not_canonical'].includes(result.reason), result.reason);
  }));
});

const clockProperty = (verifier: Verifier) => fc.property(
  eventArb, secretArb, fc.integer({ min: 1_000_000_000, max: 3_000_000_000 }),
  fc.oneof(fc.integer({ min: -2000, max: 2000 }), fc.constantFrom(-301, -300, 300, 301)),
  fc.integer({ min: 0, max: 999 }),
  (event, secret, signedAt, skew, ms) => {
    // Receiver clock = T + skew seconds + ms; whole-second comparison (WEBHOOK-SIG-SUBSECOND-BOUNDARY).
    const d = buildDelivery(event, secret, signedAt);
    const result = verifier({ headers: d.headers, rawBody: d.body, secret, nowMs: (signedAt + skew) * 1000 + ms });
    if (Math.abs(skew) <= 300) assert.equal(result.ok, true);
    else hasFields(result, { ok: false, reason: 'timestamp_outside_tolerance' });
  },
);

test('with an injected clock, a delivery is accepted exactly when |skew| <= 300 s', ({}, testInfo) => {
  greenProperty(testInfo, clockProperty(verify));
});

test('red: a verifier that ignores the clock is caught by the clock property', ({}, testInfo) => {
  redProperty(testInfo, clockProperty(clocklessVerifier));
});

/** Same data, other bytes: whitespace, key order, or a \uXXXX escape of one character. */
function reserialisations(event: WebhookEvent): fc.Arbitrary<string> {
  const canonical = JSON.stringify(event);
  const keys = Object.keys(event) as (keyof WebhookEvent)[];
  return fc.oneof(
    fc.constantFrom<string | number>(1, 2, 4, '\t').map(indent => JSON.stringify(event, null, indent)),
    fc.tuple(fc.constantFrom(' ', '\n', '\r\n', '\t'), fc.boolean()).map(([ws, leading]) => (leading ? ws + canonical : canonical + ws)),
    fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length })
      .map(order => JSON.stringify(Object.fromEntries(order.map(k => [k, event[k]])))),
    fc.nat({ max: WEBHOOK_EVENT_TYPE.length - 1 }).map(i => {
      const escaped = WEBHOOK_EVENT_TYPE.slice(0, i) + `\\u${WEBHOOK_EVENT_TYPE.charCodeAt(i).toString(16).padStart(4, '0')}` + WEBHOOK_EVENT_TYPE.slice(i + 1);
      return canonical.replace(`"type":"${WEBHOOK_EVENT_TYPE}"`, `"type":"${escaped}"`);
    }),
  );
}

const reserialisationProperty = (verifier: Verifier) => fc.property(
  eventArb.chain(event => fc.tuple(fc.constant(event), reserialisations(event))), secretArb, secondsArb,
  ([event, variant], secret, seconds) => {
    const d = buildDelivery(event, secret, seconds);
    fc.pre(variant !== d.body.toString('utf8')); // a shuffle can return the original order
    sameJson(JSON.parse(variant), event);
    const result = verifier({ headers: d.headers, rawBody: Buffer.from(variant, 'utf8'), secret, nowMs: seconds * 1000 });
    hasFields(result, { ok: false, reason: 'signature_mismatch' });
  },
);

test('a re-serialisation of the signed JSON with the same data is rejected', ({}, testInfo) => {
  greenProperty(testInfo, reserialisationProperty(verify));
});

test('red: a verifier that re-serialises the body before the HMAC is caught', ({}, testInfo) => {
  redProperty(testInfo, reserialisationProperty(reserialisingVerifier));
});

/** Headers objects: random names (including the five, any casing), values of any shape. */
const hostileHeadersArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.dictionary(
    fc.oneof(fc.constantFrom(...Object.values(H)).chain(n => casingArb.map(c => c(n))), fc.string()),
    fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined), fc.anything()),
  ),
  fc.anything(),
);

const neverThrowsProperty = (verifier: Verifier) => fc.property(
  fc.oneof(
    // Entirely random input.
    fc.record({ headers: hostileHeadersArb, rawBody: fc.oneof(bodyBytesArb, fc.anything()), secret: fc.oneof(secretArb, fc.anything()), nowMs: fc.oneof(fc.double(), fc.anything()) }),
    // A valid delivery with random bytes or random header overrides: reaches the later steps.
    fc.tuple(eventArb, secretArb, secondsArb, fc.option(bodyBytesArb), fc.dictionary(fc.constantFrom(...Object.values(H)), fc.oneof(fc.string(), fc.anything()), { maxKeys: 2 }))
      .map(([event, secret, seconds, body, overrides]) => {
        const d = buildDelivery(event, secret, seconds, body === null ? {} : { rawBody: body });
        return { headers: { ...d.headers, ...overrides }, rawBody: d.body, secret, nowMs: seconds * 1000 };
      }),
  ),
  input => {
    const result = verifier(input as VerifyInput);
    assert.equal(typeof result.ok, 'boolean');
    if (!result.ok) assert.ok((VERIFY_REASONS as readonly string[]).includes(result.reason), result.reason);
  },
);

test('no input ever throws out of the verifier', ({}, testInfo) => {
  greenProperty(testInfo, neverThrowsProperty(verify));
});

test('red: a verifier that parses JSON first throws on hostile input', ({}, testInfo) => {
  redProperty(testInfo, neverThrowsProperty(parseFirstVerifier));
});
