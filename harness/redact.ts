// The one redaction layer: every string that leaves the harness (evidence, logs, terminal output,
// every report format) passes through `redact`. It removes registered secrets in their plain,
// percent-encoded and base64 forms, bearer tokens, signature headers and signed URLs.

const secrets = new Set<string>();

/** Registers a secret (an API key, a signing secret, a signed URL) so it never appears in output. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 6) return;
  secrets.add(value);
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
  let out = text;
  for (const s of secrets) for (const f of forms(s)) if (f) out = out.split(f).join(REDACTED);
  for (const [re, rep] of PATTERNS) out = out.replace(re, rep);
  return out;
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
