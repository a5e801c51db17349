// The redaction layer: registered secrets in every encoding, bearer tokens, signature headers and
// signed URLs never survive `redact`/`redactValue`.
import { test, expect } from '@playwright/test';
import fc from 'fast-check';
import { redact, redactBody, redactValue, registerSecret, registeredSecretCount, replaceBase64Runs, replaceUrlRuns, REDACTED } from '../record/redact.ts';

// Chosen so that every encoding differs from the plain text: `/`, `+`, space and `~` percent-encode,
// and the bytes give `+` and `/` in base64 (hence a distinct base64url) and `=` padding.
const SECRET = 'pk_live/AbC+dE f~>>>???xy';
const forms = {
  plain: SECRET,
  percent: encodeURIComponent(SECRET),
  base64: Buffer.from(SECRET).toString('base64'),
  base64url: Buffer.from(SECRET).toString('base64url'),
};

test.beforeAll(() => {
  registerSecret(SECRET);
});

test('the encodings of the test secret are all distinct', () => {
  expect(new Set(Object.values(forms)).size).toBe(4);
  expect(forms.base64).toMatch(/[+/]/);
  expect(forms.base64).toMatch(/=$/);
});

for (const [name, form] of Object.entries(forms)) {
  test(`a registered secret is removed in its ${name} form`, () => {
    const out = redact(`before ${form} after`);
    expect(out).toBe(`before ${REDACTED} after`);
  });
}

test('a registered secret is removed as unpadded base64 and inside JSON escapes', () => {
  const quoted = 'sec"ret\\value';
  registerSecret(quoted);
  expect(redact(`x=${forms.base64.replace(/=+$/, '')};`)).toBe(`x=${REDACTED};`);
  expect(redact(JSON.stringify({ v: quoted }))).toBe(`{"v":"${REDACTED}"}`);
});

test('every occurrence is removed', () => {
  expect(redact(`${SECRET}${SECRET} and ${forms.percent}`)).toBe(`${REDACTED}${REDACTED} and ${REDACTED}`);
});

test('short and empty values are not registered (they would shred unrelated text)', () => {
  const before = registeredSecretCount();
  registerSecret('abc');
  registerSecret('');
  registerSecret(undefined);
  registerSecret(null);
  expect(registeredSecretCount()).toBe(before);
  expect(redact('abc')).toBe('abc');
});

test('an Authorization header is redacted, keeping the scheme', () => {
  expect(redact('Authorization: Bearer x')).toBe(`Authorization: Bearer ${REDACTED}`);
  expect(redact('authorization: Basic dXNlcjpwYXNz\r\nhost: a')).toBe(`authorization: Basic ${REDACTED}\r\nhost: a`);
  expect(redact('{"authorization":"Bearer abc.def"}')).toBe(`{"authorization":"Bearer ${REDACTED}"}`);
});

test('a bearer token in free text is redacted', () => {
  const out = redact('sent Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_~+/= to the target');
  expect(out).toBe(`sent Bearer ${REDACTED} to the target`);
});

test('an audio_url field is redacted, other fields kept', () => {
  const body = '{"audio_url":"https://storage.example.test/a/b.m4a?X-Goog-Signature=abc123","expires_at":"2030-01-01T00:00:00Z"}';
  expect(redact(body)).toBe(`{"audio_url":"${REDACTED}","expires_at":"2030-01-01T00:00:00Z"}`);
  expect(redact('{ "audio_url" : "https://x.test/y" }')).toBe(`{ "audio_url" : "${REDACTED}" }`);
});

for (const param of ['sig', 'signature', 'X-Amz-Signature', 'token', 'expires']) {
  test(`a URL carrying ${param}= is redacted whole`, () => {
    const url = `https://cdn.example.test/audio/1.mp3?a=1&${param}=deadbeef42`;
    expect(redact(`see ${url} for audio`)).toBe(`see ${REDACTED} for audio`);
  });
}

test('a URL without a signature is kept', () => {
  const url = 'https://api.example.test/external/v1/encounters?limit=10';
  expect(redact(url)).toBe(url);
});

test('a v1=<hex> signature is redacted; a Service-Signature header is redacted', () => {
  const hex = 'a3f1c2d4e5b60718293a4b5c6d7e8f90a3f1c2d4e5b60718293a4b5c6d7e8f90';
  expect(redact(`t=1700000000,v1=${hex}`)).toBe(`t=1700000000,v1=${REDACTED}`);
  const header = redact(`Service-Signature: t=1700000000,v1=${hex}`);
  expect(header).not.toContain(hex);
  expect(header).toContain(REDACTED);
  expect(redact('v1=short')).toBe('v1=short');
});

test('text without anything secret is unchanged', () => {
  const text = '{"error":"api_key_unauthorized","reason_code":"missing_bearer","message":"Missing bearer token","field":null}';
  expect(redact(text)).toBe(text);
});

test('redactValue redacts deeply and keeps the shape and non-string values', () => {
  const value = {
    n: 1,
    ok: true,
    none: null,
    list: [SECRET, { deeper: [`x ${forms.base64url} y`] }],
    request: { headers: { authorization: 'Basic dXNlcjpwYXNz', 'service-signature': 't=1,v1=00112233445566778899aabb' } },
    response: {
      // A body is itself JSON text inside the value.
      body: JSON.stringify({ audio_url: 'https://s.example.test/a.m4a?expires=1&sig=abc', note: `Bearer tok.en-1`, k: forms.percent }),
    },
    audio_url: 'https://s.example.test/plain-unsigned.m4a',
  };
  const out = redactValue(value);
  expect(out.n).toBe(1);
  expect(out.ok).toBe(true);
  expect(out.none).toBeNull();
  expect(out.list[0]).toBe(REDACTED);
  expect(out.list[1]).toEqual({ deeper: [`x ${REDACTED} y`] });
  expect(out.request.headers.authorization).toBe(`Basic ${REDACTED}`);
  expect(out.request.headers['service-signature']).not.toContain('00112233445566778899aabb');
  expect(JSON.parse(out.response.body)).toEqual({ audio_url: REDACTED, note: `Bearer ${REDACTED}`, k: REDACTED });
  expect(out.audio_url).toBe(REDACTED);
  expect(value.list[0]).toBe(SECRET); // the input is not mutated
});

test('redactValue survives bodies whose redaction would break an escaped serialisation', () => {
  const bodies = [
    '{"message":"Authorization: Bearer required"}',
    '{"audio_url":"https://s.example.test/a?sig=1","x":"\\"quoted\\""}',
    'url https://s.example.test/a?token=abc" then \\ backslash',
  ];
  for (const body of bodies) {
    const out = redactValue({ body });
    expect(typeof out.body).toBe('string');
    expect(out.body).toContain(REDACTED);
  }
});

/**
 * A run scanner replaces exactly what `pattern` matches, on texts drawn from `units`: every run marked, and every other
 * run given back as it is (the text is then rebuilt around the others only).
 */
function expectRunsOf(scan: (text: string, fn: (run: string) => string) => string, pattern: RegExp, units: string[], maxLength: number): void {
  fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...units), maxLength, size: 'max' }), (t) => {
    const mark = (run: string) => `<${run}>`;
    expect(scan(t, mark)).toBe(t.replace(pattern, mark));
    const some = (run: string) => (run.length % 2 === 0 ? run : mark(run));
    expect(scan(t, some)).toBe(t.replace(pattern, some));
  }), { numRuns: 2000, seed: 7 });
}

test('percent-encoded runs are found exactly as the run pattern defines them: maximal, six or more URL characters, holding a %', () => {
  // The definition the scanner replaced (a lookbehind pattern tried at every character), kept here as the oracle.
  const PATTERN = /(?<![A-Za-z0-9._~%+-])(?=[A-Za-z0-9._~%+-]{6})[A-Za-z0-9._~+-]*%[A-Za-z0-9._~%+-]*/g;
  expectRunsOf(replaceUrlRuns, PATTERN, ['%', 'a', 'Z', '0', '.', '_', '~', '+', '-', ' ', '/', '"', '=', '\n', 'é'], 80);
  expect(replaceUrlRuns('GET /a?x=%2B1&token=abc%20def ok', (r) => `[${r}]`)).toBe('GET /a?x=%2B1&token=[abc%20def] ok');
  expect(replaceUrlRuns('100% of 5%', (r) => `[${r}]`)).toBe('100% of 5%');
});

test('base64 runs are found exactly as the run pattern defines them: maximal, sixteen or more base64 characters, up to two = after', () => {
  // The definition the scanner replaced (a lookbehind pattern tried at every character), kept here as the oracle.
  const PATTERN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}/g;
  // Mostly base64 characters: a maximal run of 15 or 16 (the bound) is drawn in most runs of the property.
  expectRunsOf(replaceBase64Runs, PATTERN, ['A', 'z', '0', '+', '/', '_', '-', 'B', 'y', '9', 'Q', 'r', '=', ' ', '"', '%', '\n', 'é', '\u{1F600}'], 120);
});

test('redactValue copies a value as a JSON round trip does: members left out, -0 and non-finite numbers, order, prototypes', () => {
  // Words with nothing to redact in them: the redacted copy of such a value is exactly its JSON round trip, whether the
  // value is plain data (copied directly) or not (a Date, a Map, a boxed value: the round trip itself).
  const word = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '1'), maxLength: 6 });
  const value = fc.anything({
    key: fc.oneof(word, fc.constant('__proto__'), fc.constant('2')),
    values: [word, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant(-0), fc.constant(Symbol.for('s')), fc.constant(() => 1)],
    withNullPrototype: true, withSparseArray: true, withDate: true, withBoxedValues: true, withMap: true, maxDepth: 3,
  });
  fc.assert(fc.property(value, (v) => {
    fc.pre(v !== undefined && typeof v !== 'symbol' && typeof v !== 'function');
    expect(redactValue(v)).toStrictEqual(JSON.parse(JSON.stringify(v)));
  }), { numRuns: 1000, seed: 7 });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  expect(() => redactValue(cyclic)).toThrow(TypeError);
});

test('a JSON-looking body with a bad escape is redacted, never thrown on (a hostile target\'s body)', () => {
  const body = `{"a\\x":"${SECRET}","b\\q${SECRET}":1}`;
  expect(() => JSON.parse(body)).toThrow();
  const out = redactBody(body);
  expect(out).not.toContain(SECRET);
  expect(out).toContain(REDACTED);
});
