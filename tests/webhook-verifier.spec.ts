// Unit pairs for the webhook verifier (spec §6.3): for every reason a fabricated delivery that yields
// exactly that reason, and valid deliveries (including the boundary cases) that are accepted.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import {
  sign, verify, verifySignatureOnly, buildDelivery, VERIFY_REASONS, WEBHOOK_HEADERS, REASON_REQUIREMENTS, DECISION_REASONS,
} from '../judge/signature.ts';
import type { HeaderBag } from '../judge/signature.ts';
import { fabricateRejections, sampleEvent, validDelivery } from '../checks/receiver/adversarial.ts';

const SECRET = 'whsec_unit_3f9a1c7e5b';
const NOW = 1_778_000_000; // seconds; every case below runs with the receiver clock at NOW
const NOW_MS = NOW * 1000;
const cases = fabricateRejections({ secret: SECRET, nowSeconds: NOW });

test('VERIFY_REASONS are distinct snake_case strings', () => {
  expect(new Set(VERIFY_REASONS).size).toBe(VERIFY_REASONS.length);
  for (const reason of VERIFY_REASONS) expect(reason).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
});

test('reasons cite existing requirement ids; harness decisions cite unspecified ones', () => {
  const catalog = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../fixtures/requirements/requirements.json'), 'utf8')) as {
    requirements: { id: string; level: string }[];
  };
  const level = new Map(catalog.requirements.map(r => [r.id, r.level]));
  for (const ids of Object.values(REASON_REQUIREMENTS)) for (const id of ids) expect(level.has(id), id).toBe(true);
  for (const [reason, id] of Object.entries(DECISION_REASONS)) {
    expect(level.get(id), id).toBe('unspecified');
    expect(REASON_REQUIREMENTS[reason as keyof typeof DECISION_REASONS]).toContain(id);
  }
});

test('every reason has at least one fabricated delivery', () => {
  const covered = new Set(cases.map(c => c.expectedReason));
  expect(VERIFY_REASONS.filter(r => !covered.has(r))).toEqual([]);
  expect(new Set(cases.map(c => c.name)).size).toBe(cases.length);
});

for (const reason of VERIFY_REASONS) {
  for (const c of cases.filter(x => x.expectedReason === reason)) {
    test(`${reason} › fires on ${c.name}${c.catalogId ? ` (${c.catalogId})` : ''}`, () => {
      const result = verify({ headers: c.headers, rawBody: c.body as Buffer, secret: SECRET, nowMs: NOW_MS });
      expect(result).toMatchObject({ ok: false, reason });
      if (!result.ok) {
        expect(result.detail.length).toBeGreaterThan(0);
        expect(result.detail).not.toContain(SECRET);
      }
    });
  }
}

test.describe('accepted deliveries', () => {
  test('the valid delivery is accepted and its event returned', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
    const result = verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS });
    expect(result).toEqual({ ok: true, event: sampleEvent(), deliveryId: d.headers[WEBHOOK_HEADERS.deliveryId], timestamp: String(NOW) });
  });

  test('header names are matched case-insensitively', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
    for (const transform of [(n: string) => n.toLowerCase(), (n: string) => n.toUpperCase()]) {
      const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [transform(k), v]));
      expect(verify({ headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    }
  });

  test('single-element arrays (node headersDistinct) and undefined extras are accepted', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
    const headers: HeaderBag = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toLowerCase(), [v]]));
    headers['x-unrelated'] = undefined;
    expect(verify({ headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
  });

  test('a fetch Headers object is accepted; a repeated line it joined is still rejected', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
    expect(verify({ headers: new Headers(d.headers), rawBody: d.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    const joined = new Headers(d.headers);
    joined.append(WEBHOOK_HEADERS.timestamp, d.headers[WEBHOOK_HEADERS.timestamp]);
    expect(verify({ headers: joined, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'timestamp_malformed' });
  });

  test('a Uint8Array body and a byte-array secret are accepted', () => {
    const secret = Buffer.from(SECRET, 'utf8');
    const d = validDelivery({ secret, nowSeconds: NOW });
    const rawBody = new Uint8Array(d.body);
    expect(verify({ headers: d.headers, rawBody, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    expect(verify({ headers: d.headers, rawBody, secret, nowMs: NOW_MS }).ok).toBe(true);
  });

  test('timestamp exactly 300 s behind or ahead is accepted; 301 s is not', () => {
    for (const skew of [-300, 300]) {
      const d = validDelivery({ secret: SECRET, nowSeconds: NOW + skew });
      expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    }
    for (const skew of [-301, 301]) {
      const d = validDelivery({ secret: SECRET, nowSeconds: NOW + skew });
      expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'timestamp_outside_tolerance' });
    }
  });

  test('WEBHOOK-SIG-SUBSECOND-BOUNDARY: the clock is compared in whole seconds', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW - 300 });
    // 300.999 s after T: floor(now) − T = 300, accepted.
    expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS + 999 }).ok).toBe(true);
    // 301.000 s after T: rejected.
    expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS + 1000 })).toMatchObject({ reason: 'timestamp_outside_tolerance' });
    // T is 300 s ahead at now = NOW.000: accepted; 0.001 s earlier floor(now) − T = −301: rejected.
    const ahead = validDelivery({ secret: SECRET, nowSeconds: NOW + 300 });
    expect(verify({ headers: ahead.headers, rawBody: ahead.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    expect(verify({ headers: ahead.headers, rawBody: ahead.body, secret: SECRET, nowMs: NOW_MS - 1 })).toMatchObject({ reason: 'timestamp_outside_tolerance' });
  });

  test('timestamp "0" is canonical (only the clock rejects it)', () => {
    const d = buildDelivery(sampleEvent(), SECRET, 0, { timestamp: '0' });
    expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: 299_999 }).ok).toBe(true);
    expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'timestamp_outside_tolerance' });
  });
});

test.describe('order of the checks (§6.3)', () => {
  const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
  const H = WEBHOOK_HEADERS;

  test('a missing header is reported before a bad timestamp or signature', () => {
    const headers: HeaderBag = { ...d.headers, [H.timestamp]: 'soon', [H.signature]: 'nope' };
    delete headers[H.version];
    expect(verify({ headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'webhook_version_missing' });
  });

  test('the timestamp format and clock are checked before the signature', () => {
    const stale = { ...d.headers, [H.timestamp]: String(NOW - 1000), [H.signature]: 'v2=zz' };
    expect(verify({ headers: stale, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'timestamp_outside_tolerance' });
    const odd = { ...d.headers, [H.timestamp]: `0${NOW}`, [H.signature]: 'v2=zz' };
    expect(verify({ headers: odd, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'timestamp_not_canonical' });
  });

  test('JSON is not parsed before the signature holds', () => {
    const body = Buffer.from('{not json');
    expect(verify({ headers: d.headers, rawBody: body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'signature_mismatch' });
  });

  test('the schema is checked before the header/body equalities', () => {
    const event = { ...sampleEvent(), extra: true };
    const bad = buildDelivery(event, SECRET, NOW, { eventIdHeader: 'other', versionHeader: 'other' });
    expect(verify({ headers: bad.headers, rawBody: bad.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'schema_violation' });
  });

  test('the event id is compared before the version', () => {
    const bad = buildDelivery(sampleEvent(), SECRET, NOW, { eventIdHeader: 'other', versionHeader: 'other' });
    expect(verify({ headers: bad.headers, rawBody: bad.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'event_id_mismatch' });
  });
});

test.describe('verifier hygiene', () => {
  test('no detail ever carries the secret or the expected digest', () => {
    for (const c of cases) {
      const result = verify({ headers: c.headers, rawBody: c.body as Buffer, secret: SECRET, nowMs: NOW_MS });
      if (result.ok || !(c.body instanceof Buffer)) continue;
      const ts = String(NOW);
      const expected = sign({ secret: SECRET, timestamp: ts, rawBody: c.body }).slice(3);
      expect(result.detail).not.toContain(SECRET);
      expect(result.detail).not.toContain(expected);
    }
  });

  test('verifySignatureOnly accepts a signed non-JSON body that verify rejects as invalid_json', () => {
    const d = buildDelivery(sampleEvent(), SECRET, NOW, { rawBody: Buffer.from([0, 1, 2, 255]) });
    expect(verifySignatureOnly({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS }).ok).toBe(true);
    expect(verify({ headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: NOW_MS })).toMatchObject({ reason: 'invalid_json' });
  });

  test('nonsense inputs are answered, never thrown', () => {
    const d = validDelivery({ secret: SECRET, nowSeconds: NOW });
    const inputs: unknown[] = [
      undefined, null, 42, 'x', [],
      { headers: null, rawBody: d.body, secret: SECRET },
      { headers: d.headers, rawBody: d.body, secret: '' },
      { headers: d.headers, rawBody: d.body, secret: SECRET, nowMs: Number.NaN },
      { headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: { toString() { throw new Error('boom'); } } }, rawBody: d.body, secret: SECRET },
      { get headers() { throw new Error('boom'); }, rawBody: d.body, secret: SECRET },
    ];
    for (const input of inputs) {
      const result = verify(input as never);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(['invalid_input', 'internal_error']).toContain(result.reason);
    }
  });

  test('sign rejects an empty secret instead of signing with it', () => {
    expect(() => sign({ secret: '', timestamp: '1', rawBody: Buffer.alloc(0) })).toThrow(TypeError);
  });
});
