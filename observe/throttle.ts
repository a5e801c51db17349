// A deployment's gateway asking the harness to slow down is not the service's answer to a check. A `429`
// (the contract defines none: it can only come from in front of the API) or a `503` with `Retry-After` whose
// body is not one of the API's own 503 errors (§7.1: digest_key_unavailable, audio_storage_unavailable) is
// throttling: the harness waits as asked (bounded), sends the exchange again, and keeps the throttled
// answers as evidence; a check that only ever sees throttling is not_verified, never fail. The worker's
// later requests wait as well, and `--max-rps` paces every worker from the start.

/** Longest single wait a Retry-After may ask for; longer asks are capped (and the wait recorded). */
export const MAX_WAIT_MS = 10_000;
/** Attempts of one exchange before its check gives up as not_verified. */
export const MAX_ATTEMPTS = 6;
const API_503_REASONS = new Set(['digest_key_unavailable', 'audio_storage_unavailable']);

/** Milliseconds a Retry-After value asks for (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,9}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/**
 * How long to wait before sending again when an answer is throttling, or undefined when it is the API's
 * own answer (to be judged). `attempt` counts from 1; without Retry-After a 429 backs off 1 s, 2 s, 4 s…
 */
export function throttleWaitMs(status: number, headers: Record<string, string>, body: string, attempt: number, now = Date.now()): number | undefined {
  const asked = retryAfterMs(headers['retry-after'], now);
  if (status === 503) {
    if (asked === undefined) return undefined;
    try {
      const reason = (JSON.parse(body) as { reason_code?: unknown }).reason_code;
      if (typeof reason === 'string' && API_503_REASONS.has(reason)) return undefined; // the API's own 503: judged
    } catch { /* not the API's error body: a gateway's */ }
  } else if (status !== 429) return undefined;
  return Math.min(MAX_WAIT_MS, asked ?? 1000 * 2 ** (attempt - 1));
}

/** Per-worker pacing: requests start no closer than `paceMs` apart, and not before a throttle's wait ended. */
export class Pace {
  #next = 0;
  #paceMs: number;
  constructor(paceMs = 0) {
    this.#paceMs = Number.isFinite(paceMs) && paceMs > 0 ? paceMs : 0;
  }

  /** Resolves when the next request may start. */
  async turn(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#paceMs;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  /** The target asked to slow down: nothing in this worker starts before `ms` from now. */
  holdFor(ms: number): void {
    this.#next = Math.max(this.#next, Date.now() + ms);
  }
}

/** The pace of this worker process for a least gap of `paceMs` (one per value: every target of the worker with that plan shares it). */
export function workerPace(paceMs: number): Pace {
  let p = PACES.get(paceMs);
  if (!p) PACES.set(paceMs, (p = new Pace(paceMs)));
  return p;
}
const PACES = new Map<number, Pace>();
