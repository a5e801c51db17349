// The partner sandbox's faults: environment switches a request turns on with `x-switchboard-fault: name[,name]`
// and the sandbox's token (`x-switchboard-token`), and the ONE token check. A reference started without a token
// ignores the header as if absent (a production-like deployment must not reveal that a switchboard exists).
import crypto from 'node:crypto';
import type http from 'node:http';

/** Environment switches that a sandbox request may turn on (profile `faults`). */
export const FAULTS = ['api_keys_disabled', 'test_prefix_not_allowed', 'digest_key_unavailable', 'audio_storage_unavailable', 'audio_url_expires_soon'] as const;
export type FaultName = (typeof FAULTS)[number];
export function isFaultName(name: string): name is FaultName {
  return (FAULTS as readonly string[]).includes(name);
}

export const FAULT_HEADER = 'x-switchboard-fault';
export const TOKEN_HEADER = 'x-switchboard-token';

/** A request refused before it reaches a route: a JSON {error, message} with this status. */
export interface Refusal { refused: number; error: string; message: string }

/** The one token check (constant time over digests, so the length of the token does not leak). */
export function tokenMatches(given: string, token: string): boolean {
  return crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), crypto.createHash('sha256').update(token).digest());
}

/** The names of a comma-separated switch header. */
export function headerNames(header: string | string[] | undefined): string[] {
  return (typeof header === 'string' ? header : '').split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * The header names of `headers` that switch something on (non-blank), refused when the request lacks the right
 * token: 400 switchboard_token_required without one, 403 switchboard_token_invalid with a wrong one. Null when
 * nothing is switched on or the token is right. A token alone, with no switch header, switches nothing.
 */
export function tokenRefusal(req: http.IncomingMessage, token: string, switchHeaders: readonly string[]): Refusal | null {
  const given = req.headers[TOKEN_HEADER];
  if (typeof given === 'string' && tokenMatches(given, token)) return null;
  const on = switchHeaders.filter((h) => { const v = req.headers[h]; return typeof v === 'string' && v.trim() !== ''; });
  if (on.length === 0) return null;
  return typeof given === 'string'
    ? { refused: 403, error: 'switchboard_token_invalid', message: `${on.join(', ')} sent with a wrong x-switchboard-token; use the token this sandbox was started with (printed by its guide)` }
    : { refused: 400, error: 'switchboard_token_required', message: `${on.join(', ')} needs x-switchboard-token: the token this sandbox was started with (printed by its guide)` };
}

/** The faults a request switched on, or its refusal (no or a wrong token; an unknown fault, so a typo does not pass silently). */
export function readFaults(req: http.IncomingMessage, token: string | null): Set<FaultName> | Refusal {
  const faults = new Set<FaultName>();
  if (token === null) return faults;
  const refusal = tokenRefusal(req, token, [FAULT_HEADER]);
  if (refusal) return refusal;
  const given = req.headers[TOKEN_HEADER];
  if (typeof given !== 'string' || !tokenMatches(given, token)) return faults;
  for (const name of headerNames(req.headers[FAULT_HEADER])) {
    if (!isFaultName(name)) return { refused: 400, error: 'switchboard_rejected', message: `unknown fault "${name}"` };
    faults.add(name);
  }
  return faults;
}
