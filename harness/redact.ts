// The one redaction layer: every string that leaves the harness (evidence, logs, terminal output,
// every report format) passes through it. It removes registered secrets in their plain,
// percent-encoded and base64 forms, bearer tokens, signature headers and signed URLs.
//
// Two kinds of input, never confused: structured values (`redactValue`: headers by name, bodies that
// are JSON by value, with the body text kept and only the string tokens that carry a secret
// re-encoded, so it stays the same valid JSON) and free text (`redact`: terminal lines, details, a
// rendered page). No pattern ever runs across a line break, so a header line can never swallow the
// name of the next one (`www-authenticate: Bearer` then `date: ...`).

const secrets = new Set<string>();

/** Registers a secret (an API key, a signing secret, a signed URL) so it never appears in output. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 6 || secrets.has(value)) return;
  secrets.add(value);
  secretPattern = undefined;
  redacted.clear();
  redactedBodies.clear();
  runVerdicts.clear();
}

// Redaction is a pure function of the text and the registered secrets, and a report passes the same strings
// through it several times (outcomes, the report object, each format): the answers are kept until a secret
// is added. Bounded: cleared whole when full.
const redacted = new Map<string, string>();
const redactedBodies = new Map<string, string>();
const REDACTED_CACHE_MAX = 50_000;

// Every form of every secret in one alternation (longest first), rebuilt only when a secret is added:
// one pass over the text instead of one split/join per form per secret.
let secretPattern: RegExp | null | undefined;

function secretsRegex(): RegExp | null {
  if (secretPattern === undefined) {
    const all = new Set<string>();
    for (const s of secrets) for (const f of forms(s)) if (f) all.add(f);
    const alts = [...all].sort((a, b) => b.length - a.length).map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    secretPattern = alts.length ? new RegExp(alts.join('|'), 'g') : null;
  }
  return secretPattern;
}

export function registeredSecretCount(): number {
  return secrets.size;
}

export const REDACTED = '[REDACTED]';

function forms(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [secret, encodeURIComponent(secret), b64, b64.replace(/=+$/, ''), Buffer.from(secret).toString('base64url'), JSON.stringify(secret).slice(1, -1)];
}

// Patterns safe inside any single value (a header value, a JSON string): they match a whole token
// that is a secret by its shape, never a part of the surrounding structure.
function VALUE_PATTERNS(): [RegExp, string][] {
  return [
    // A bearer credential (token68), unless what follows the scheme is an auth-param
    // (`Bearer realm="api"`, `error=invalid_token`, `realm=&quot;` in a rendered page): a challenge.
    [/\b(Bearer)[ \t]+(?![A-Za-z0-9_-]+=(?:"|&quot;|[A-Za-z0-9_-]))[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
    [/\bv1=[0-9a-fA-F]{16,}/g, `v1=${REDACTED}`],
    // Signed URLs: audio_url fields and any URL carrying a signature or expiry query.
    [/("audio_url"[ \t]*:[ \t]*")[^"]*(")/g, `$1${REDACTED}$2`],
    [/\bhttps?:\/\/[^\s"'<>]*[?&](?:sig|signature|x-amz-signature|token|expires)=[^\s"'<>]*/gi, REDACTED],
  ];
}
const VALUE_ONLY = VALUE_PATTERNS();

// Patterns for free text. Whitespace inside a match is horizontal only ([ \t]): a value ends at the end
// of its line, so `www-authenticate: Bearer` followed by `date: Sun, ...` on the next line stays intact.
const PATTERNS: [RegExp, string][] = [
  // Authorization values of any scheme.
  [/(authorization["']?[ \t]*[:=][ \t]*["']?)(bearer|basic)?[ \t]*[^"'\r\n,}]+/gi, `$1$2 ${REDACTED}`],
  // Webhook signature headers: the digest is derived from the secret.
  [/(service-signature["']?[ \t]*[:=][ \t]*["']?)[^"'\r\n,}]+/gi, `$1${REDACTED}`],
  ...VALUE_PATTERNS(),
];

export function redact(text: string): string {
  return remembered(redacted, text, () => redactAt(text, 0));
}

/** The answer kept in `cache` for `key`, computed once; the cache is cleared whole when full. */
function remembered(cache: Map<string, string>, key: string, compute: () => string): string {
  let v = cache.get(key);
  if (v === undefined) {
    v = compute();
    if (cache.size >= REDACTED_CACHE_MAX) cache.clear();
    cache.set(key, v);
  }
  return v;
}

function redactAt(text: string, depth: number): string {
  let out = text;
  const re = secretsRegex();
  if (re) out = out.replace(re, REDACTED);
  for (const [re, rep] of PATTERNS) out = out.replace(re, rep);
  return depth < 2 ? redactEncoded(out, depth) : out;
}

// Encoded runs: a signed URL or a bearer header that was never registered is only recognisable by its
// shape, which percent-encoding or base64 hides. Each run is decoded and redacted as text; a run whose
// decoded text carries anything redactable is replaced whole, any other run is kept byte for byte (so
// `limit=%2B1` and ordinary ids survive). A base64 run is found by a linear pattern: no nested quantifiers, and
// a run only starts where the previous character cannot belong to it (the lookbehind), so a short word is tried
// once, not once per character. A URL run (a maximal run of URL characters, six or more) is only worth decoding
// when it holds a `%`: those runs are found from each `%` outwards (replaceUrlRuns), not by a pattern tried at
// every character of the text (which made it most of a report's redaction time).
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}/g;
const TEXT = /^[\t\n\r\x20-\x7e\u00a0-\ufffc]+$/;

function leaks(decoded: string, depth: number): boolean {
  return redactAt(decoded, depth + 1) !== decoded;
}

/** [A-Za-z0-9._~%+-]: the characters of a URL run. */
function urlChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 126 || c === 37 || c === 43 || c === 45;
}

/** Replaces every maximal run of URL characters that is six or more long and holds a `%` with `fn(run)`. */
export function replaceUrlRuns(text: string, fn: (run: string) => string): string {
  let at = text.indexOf('%');
  if (at < 0) return text;
  let out = '';
  let done = 0;
  while (at >= 0) {
    let start = at;
    while (start > done && urlChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && urlChar(text.charCodeAt(end))) end++;
    if (end - start >= 6) {
      out += text.slice(done, start) + fn(text.slice(start, end));
      done = end;
    }
    at = text.indexOf('%', end);
  }
  return out + text.slice(done);
}

function redactEncoded(text: string, depth: number): string {
  const out = replaceUrlRuns(text, (run) => runVerdict('u', run, depth, () => {
    if (!/%[0-9A-Fa-f]{2}/.test(run)) return run;
    for (const candidate of [run, run.replace(/\+/g, ' ')]) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(candidate);
      } catch {
        continue;
      }
      if (decoded !== run && leaks(decoded, depth)) return REDACTED;
    }
    return run;
  }));
  return out.replace(BASE64_RUN, (run) => runVerdict('b', run, depth, () => {
    // The run may start inside a neighbouring token (`\nQmVh...` in escaped text): try each alignment.
    for (let skip = 0; skip < 4 && run.length - skip >= 16; skip++) {
      const decoded = Buffer.from(run.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (TEXT.test(decoded) && leaks(decoded, depth)) return skip === 0 ? REDACTED : `${run.slice(0, skip)}${REDACTED}`;
    }
    return run;
  }));
}

// What an encoded run becomes depends only on the run, the depth and the secrets: a report repeats the same
// runs (check ids are base64url-shaped) thousands of times, so each is decoded once (cleared with `redacted`).
const runVerdicts = new Map<string, string>();
function runVerdict(kind: string, run: string, depth: number, decide: () => string): string {
  return remembered(runVerdicts, `${kind}${depth}:${run}`, decide);
}

/** Secrets and secret-shaped tokens only (no free-text patterns): for one value that is not prose. */
function redactToken(text: string): string {
  let out = text;
  const re = secretsRegex();
  if (re) out = out.replace(re, REDACTED);
  for (const [p, rep] of VALUE_ONLY) out = out.replace(p, rep);
  return redactEncoded(out, 0);
}

// Header names whose whole value is a credential (keep nothing), whose value is `scheme credentials`
// (keep the scheme), or a list of `name=value` pairs (keep the names).
const SECRET_HEADER = /token|secret|api[-_]?key|password|session/i;
const AUTH_HEADER = /authorization/i;
const COOKIE_HEADER = /^(set-)?cookie$/i;
const SIGNATURE_HEADER = /signature/i;

/** Redacts one header value by the header's name; other headers lose only secrets and signed URLs. */
export function redactHeader(name: string, value: string): string {
  if (value === REDACTED) return value;
  if (AUTH_HEADER.test(name)) {
    // `Bearer <token>` keeps its scheme; a lone word that could be a scheme (`Bearer`, `Basic`) is kept.
    const m = /^([ \t]*)([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)([ \t]+)(.*)$/s.exec(value);
    if (m) return m[4] === '' ? value : `${m[1]}${m[2]}${m[3]}${REDACTED}`;
    return /^[ \t]*[A-Za-z]{1,12}[ \t]*$/.test(value) ? value : value === '' ? value : REDACTED;
  }
  if (SIGNATURE_HEADER.test(name)) {
    // `t=1700000000,v1=<hex>`: the timestamp stays readable, every digest goes.
    return value.split(',').map((part) => (/^[ \t]*t=[0-9]*[ \t]*$/.test(part) ? part : part.includes('=') ? `${part.slice(0, part.indexOf('=') + 1)}${REDACTED}` : REDACTED)).join(',');
  }
  if (COOKIE_HEADER.test(name)) {
    return value.split(';').map((pair, i) => {
      const eq = pair.indexOf('=');
      // In set-cookie only the first pair is the cookie; the rest are attributes (Path, Expires).
      if (i > 0 && /^set-/i.test(name)) return redactToken(pair);
      return eq < 0 ? pair : `${pair.slice(0, eq + 1)}${REDACTED}`;
    }).join(';');
  }
  if (SECRET_HEADER.test(name)) return value === '' ? value : REDACTED;
  return redactToken(value);
}

export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' ? redactHeader(k, v) : redactValue(v)]));
}

// A JSON string token (the quotes included), and what may follow it to make it a key.
const STRING_TOKEN = /"(?:[^"\\\u0000-\u001f]|\\.)*"(\s*:)?/g;

/**
 * Redacts a body. A body that is JSON keeps its text byte for byte except the string tokens whose
 * decoded value carried a secret: those are re-encoded after redaction, so the result is the same
 * valid JSON (a secret between quotes and backslashes leaves no half-escape behind). The value of an
 * `audio_url` member is redacted whole. A body that is not JSON is free text.
 */
export function redactBody(text: string): string {
  // A report passes each evidence body through here several times (on arrival, outcomes, the report): one
  // JSON.parse and one pass over its string tokens per distinct body, not per pass.
  return remembered(redactedBodies, text, () => redactBodyNow(text));
}

function redactBodyNow(text: string): string {
  try {
    JSON.parse(text);
  } catch {
    return redact(text);
  }
  let pendingKey: string | undefined;
  const out = text.replace(STRING_TOKEN, (token: string, colon: string | undefined) => {
    const literal = colon ? token.slice(0, token.length - colon.length) : token;
    const decoded = JSON.parse(literal) as string;
    const key = pendingKey;
    pendingKey = colon ? decoded : undefined;
    const next = !colon && key === 'audio_url' ? REDACTED : redact(decoded);
    return next === decoded ? token : `${JSON.stringify(next)}${colon ?? ''}`;
  });
  return out;
}

function walk(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') {
    if (key === 'audio_url') return REDACTED;
    if (key === 'body') return redactBody(value);
    return redact(value);
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, undefined));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => {
      if (/^(headers|requestHeaders)$/i.test(k) && v && typeof v === 'object' && !Array.isArray(v)) return [k, redactHeaders(v as Record<string, unknown>)];
      if (AUTH_HEADER.test(k) || SIGNATURE_HEADER.test(k)) return [k, typeof v === 'string' ? redactHeader(k, v) : walk(v, k)];
      return [k, walk(v, k)];
    }));
  }
  return value;
}

/**
 * Deep-redacts a JSON-able value (evidence, a record, a report) by structure: header objects by name
 * (`headers`), bodies by JSON value (`body`), `audio_url` whole, every other string as text. The
 * result is a new value; the input is not changed.
 */
export function redactValue<T>(value: T): T {
  if (value === undefined) return value;
  return walk(JSON.parse(JSON.stringify(value)), undefined) as T;
}
