// The §6.2 header word is a setting (profile webhook.headerWord, --header-word; default Service), read and written
// wherever the five names are: the sender judges, the capture's per-event scripts, the signer and verifier, the
// receiver deliveries. And a sender's uppercase hex digest is informational with the interop note, never a fail.
import { test, expect } from '@playwright/test';
import { DELIVERY_JUDGES, judgeRetryIds, UPPERCASE_HEX_NOTE } from '../checks/sender/cases.ts';
import type { CapturedDelivery } from '../observe/capture.ts';
import { buildDelivery, verify, webhookHeaders, withHeaderWord, WEBHOOK_HEADERS } from '../judge/signature.ts';
import { sampleEvent } from '../checks/receiver/adversarial.ts';
import { headerWordOf, validateProfile } from '../profile/profile.ts';

const SECRET = 'whsec_header_word_test_1f2e3d4c';

function captured(word: string, change: (h: Record<string, string>) => void = () => {}): CapturedDelivery {
  const d = buildDelivery(sampleEvent(), SECRET, Math.floor(Date.now() / 1000), { headerWord: word });
  const h = { ...d.headers };
  change(h);
  const headers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(h)) headers[k.toLowerCase()] = [v];
  return { seq: 1, path: '/r', method: 'POST', headers, body: d.body, receivedAtMs: Date.now(), answered: 204 };
}

const judge = (id: string) => DELIVERY_JUDGES.find((j) => j.id === id)!.judge;
const WORDED = ['webhook-sender-required-headers-present', 'webhook-sender-timestamp-current', 'webhook-sender-signature-valid', 'webhook-sender-event-id-header-matches', 'webhook-sender-version-header-matches'];

test('the names follow the word; the spec\'s own is Service; a word that is not a header token is refused', () => {
  expect(webhookHeaders('Ceapi')).toEqual({ eventId: 'Ceapi-Event-Id', deliveryId: 'Ceapi-Delivery-Id', timestamp: 'Ceapi-Timestamp', signature: 'Ceapi-Signature', version: 'Ceapi-Webhook-Version' });
  expect(webhookHeaders()).toEqual(WEBHOOK_HEADERS);
  for (const bad of ['', 'Ce api', 'Ceapi-', 'Ce:api', '-x']) expect(() => webhookHeaders(bad), bad).toThrow(TypeError);
  expect(withHeaderWord('Service-Timestamp', 'Ceapi')).toBe('Ceapi-Timestamp');
  expect(withHeaderWord('service-timestamp', 'Ceapi')).toBe('ceapi-timestamp');
  expect(withHeaderWord('SERVICE-WEBHOOK-VERSION', 'Ceapi')).toBe('CEAPI-WEBHOOK-VERSION');
  expect(withHeaderWord('Content-Type', 'Ceapi')).toBe('Content-Type');
  expect(withHeaderWord('Service-Other', 'Ceapi')).toBe('Service-Other');
});

test('a sender with its own word passes every delivery judge when the word is given, and fails the five worded ones without it', () => {
  const d = captured('Ceapi');
  for (const j of DELIVERY_JUDGES) expect(() => j.judge(d, SECRET, { headerWord: 'Ceapi' }), j.id).not.toThrow();
  for (const id of WORDED) expect(() => judge(id)(d, SECRET), id).toThrow(/Service-[A-Za-z-]+ missing/);
  expect(() => judgeRetryIds(d, d, webhookHeaders('Ceapi'))).not.toThrow();
});

test('a mix of words (one header with another word) is caught whichever word the setting names', () => {
  const mixed = captured('Service', (h) => {
    h['Ceapi-Signature'] = h['Service-Signature'];
    delete h['Service-Signature'];
  });
  expect(() => judge('webhook-sender-required-headers-present')(mixed, SECRET)).toThrow(/Service-Signature missing/);
  expect(() => judge('webhook-sender-signature-valid')(mixed, SECRET)).toThrow(/Service-Signature missing/);
  expect(() => judge('webhook-sender-required-headers-present')(mixed, SECRET, { headerWord: 'Ceapi' })).toThrow(/Ceapi-Event-Id missing/);
});

test('the verifier and the signer take the word; a receiver expecting another word reports the header absent', () => {
  const d = buildDelivery(sampleEvent(), SECRET, Math.floor(Date.now() / 1000), { headerWord: 'Ceapi' });
  expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, headerWord: 'Ceapi' }).ok).toBe(true);
  expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET })).toMatchObject({ ok: false, reason: 'event_id_missing' });
});

test('uppercase hex from a sender: the signature check observes it (informational, with the interop note), never fails it; a wrong digest in uppercase still fails', () => {
  const upper = captured('Service', (h) => { h['Service-Signature'] = `v1=${h['Service-Signature'].slice(3).toUpperCase()}`; });
  const note = judge('webhook-sender-signature-valid')(upper, SECRET);
  expect(note).toContain(UPPERCASE_HEX_NOTE);
  expect(note).toContain('WEBHOOK-SIG-UPPERCASE-HEX');
  expect(note).toMatch(/interop note/);
  expect(judge('webhook-sender-signature-valid')(captured('Service'), SECRET)).toBeUndefined();
  const wrong = captured('Service', (h) => { h['Service-Signature'] = `v1=${'AB'.repeat(32)}`; });
  expect(() => judge('webhook-sender-signature-valid')(wrong, SECRET)).toThrow(/does not match the HMAC-SHA256/);
  const notHex = captured('Service', (h) => { h['Service-Signature'] = `v1=${'G'.repeat(64)}`; });
  expect(() => judge('webhook-sender-signature-valid')(notHex, SECRET)).toThrow(/not v1= followed by 64 hex digits/);
});

test('the profile takes the word (default Service) and refuses one that is not a header token', () => {
  const base = { name: 'p', baseUrl: 'http://127.0.0.1:1', credentials: {} };
  expect(headerWordOf(validateProfile(base, 'profile', process.env))).toBe('Service');
  expect(headerWordOf(validateProfile({ ...base, webhook: { headerWord: 'Ceapi' } }, 'profile', process.env))).toBe('Ceapi');
  expect(() => validateProfile({ ...base, webhook: { headerWord: 'Ce api' } }, 'profile', process.env)).toThrow(/webhook\/headerWord must match pattern/);
  expect(() => validateProfile({ ...base, webhook: { delivery: 'maybe' } }, 'profile', process.env)).toThrow(/webhook\/delivery must be equal to one of the allowed values/);
});
