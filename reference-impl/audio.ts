// Short-lived signed audio URLs: /storage/audio/<storage key>?expires=<unix seconds>&sig=<hex HMAC-SHA256>.
// The HMAC covers the path and the expiry with a per-process secret, so URLs die with the process at the latest.
// The storage key is split on '/' and each piece percent-encoded; the storage route splits the raw path the same
// way and decodes each piece after, so any key (an opaque one with '%', '?', '#', spaces, non-ASCII) round-trips.
import crypto from 'node:crypto';

/** The default lifetime of an audio URL (main.ts --audio-ttl-seconds sets another, 1..3600). */
export const AUDIO_URL_TTL_SECONDS = 300;
export const STORAGE_PREFIX = '/storage/audio/';

export class AudioSigner {
  readonly #secret: Buffer;
  /** Seconds from issue (truncated to the whole second) to expires_at. */
  readonly ttlSeconds: number;
  constructor(opts: { ttlSeconds?: number; secret?: Buffer } = {}) {
    this.#secret = opts.secret ?? crypto.randomBytes(32);
    this.ttlSeconds = opts.ttlSeconds ?? AUDIO_URL_TTL_SECONDS;
  }

  #sign(path: string, expires: number): string {
    return crypto.createHmac('sha256', this.#secret).update(`${path}\n${expires}`).digest('hex');
  }

  /** Returns the URL and its expiry; `skewSeconds` shifts the expiry (a replaced rule may put it in the past). */
  sign(base: string, storageKey: string, nowMs: number, skewSeconds = 0): { url: string; expiresAt: string } {
    const path = STORAGE_PREFIX + storageKey.split('/').map(encodeURIComponent).join('/');
    const expires = Math.floor(nowMs / 1000) + this.ttlSeconds + skewSeconds;
    return { url: `${base}${path}?expires=${expires}&sig=${this.#sign(path, expires)}`, expiresAt: new Date(expires * 1000).toISOString() };
  }

  /** Verifies a storage request; returns the storage key, or the reason it is refused. */
  verify(rawPath: string, rawQuery: string, nowMs: number): { storageKey: string } | { refused: 'bad_signature' | 'expired' } {
    const m = /^expires=([0-9]{1,12})&sig=([0-9a-f]{64})$/.exec(rawQuery);
    if (!m) return { refused: 'bad_signature' };
    const expires = Number(m[1]);
    const expected = Buffer.from(this.#sign(rawPath, expires), 'hex');
    const given = Buffer.from(m[2], 'hex');
    if (!crypto.timingSafeEqual(expected, given)) return { refused: 'bad_signature' };
    if (nowMs > expires * 1000) return { refused: 'expired' };
    let storageKey: string;
    try {
      storageKey = rawPath.slice(STORAGE_PREFIX.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return { refused: 'bad_signature' };
    }
    return { storageKey };
  }
}
