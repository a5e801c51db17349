// The one redaction layer: every string that leaves the harness (evidence, logs, terminal output,
// every report format) passes through `redact`. It removes registered secrets in their plain,
// percent-encoded and base64 forms, bearer tokens, signature headers and signed URLs.

const secrets = new Set<string>();

/** Registers a secret (an API key, a signing secret, a signed URL) so it never appears in output. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 6 || secrets.has(value)) return;
  secrets.add(value);
  secretPattern = undefined;
}

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

const PATTERNS: [RegExp, string][] = [
  // Authorization values of any scheme.
  [/(authorization["']?\s*[:=]\s*["']?)(bearer|basic)?\s*[^"'\r\n,}]+/gi, `$1$2 ${REDACTED}`],
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
  // Webhook signature headers: the digest is derived from the secret.
  [/(service-signature["']?\s*[:=]\s*["']?)[^"'\r\n,}]+/gi, `$1${REDACTED}`],
  [/\bv1=[0-9a-fA-F]{16,}/g, `v1=${REDACTED}`],
  // Signed URLs: audio_url fields and any URL carrying a signature or expiry query.
  [/("audio_url"\s*:\s*")[^"]*(")/g, `$1${REDACTED}$2`],
  [/\bhttps?:\/\/[^\s"'<>]*[?&](?:sig|signature|x-amz-signature|token|expires)=[^\s"'<>]*/gi, REDACTED],
];

export function redact(text: string): string {
  return redactAt(text, 0);
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
// `limit=%2B1` and ordinary ids survive). Both run patterns are linear: no nested quantifiers.
const URL_RUN = /[A-Za-z0-9._~%+-]{6,}/g;
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const TEXT = /^[\t\n\r\x20-\x7e\u00a0-\ufffc]+$/;

function leaks(decoded: string, depth: number): boolean {
  return redactAt(decoded, depth + 1) !== decoded;
}

function redactEncoded(text: string, depth: number): string {
  const out = text.replace(URL_RUN, (run) => {
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
  });
  return out.replace(BASE64_RUN, (run) => {
    // The run may start inside a neighbouring token (`\nQmVh...` in escaped text): try each alignment.
    for (let skip = 0; skip < 4 && run.length - skip >= 16; skip++) {
      const decoded = Buffer.from(run.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (TEXT.test(decoded) && leaks(decoded, depth)) return skip === 0 ? REDACTED : `${run.slice(0, skip)}${REDACTED}`;
    }
    return run;
  });
}

const KEYED = /^(authorization|service-signature)$/i;

/**
 * Deep-redacts a JSON-able value string by string (a body is itself JSON text: a pattern run over the
 * escaped outer serialisation could eat an escape and break it, and `"audio_url"` would not match).
 */
export function redactValue<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v: unknown) => {
    if (typeof v !== 'string') return v;
    if (key === 'audio_url') return REDACTED;
    return KEYED.test(key) ? redact(`${key}: ${v}`).slice(key.length + 2) : redact(v);
  }) as T;
}
