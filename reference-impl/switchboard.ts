// The fault switchboard: the ONE check of x-switchboard-token, the parsing of the fault, mutant and variant
// headers, and the 400/403 answers for switch headers without a valid token. A reference started without a token
// ignores every switchboard header as if absent (a production-like deployment must not reveal that one exists).
import crypto from 'node:crypto';
import type http from 'node:http';
import { isFaultName, isMutantName, type FaultName, type MutantName } from './mutants.ts';
import type { RawHead, Switches } from './overrides.ts';
import { isVariantName, type VariantName } from './variants.ts';

/** What one request switched on: environment faults besides its mutant and variants. */
export interface RequestSwitches extends Switches { faults: Set<FaultName> }
export interface Refusal { refused: number; error: string; message: string }

/** The one token check (constant time over digests, so the length of the token does not leak). */
export function tokenMatches(given: string, token: string): boolean {
  return crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), crypto.createHash('sha256').update(token).digest());
}

const SWITCH_HEADERS = ['x-switchboard-fault', 'x-switchboard-mutant', 'x-switchboard-variant'];

/** The names of a comma-separated switch header. */
function names(header: string | string[] | undefined): string[] {
  return (typeof header === 'string' ? header : '').split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Switchboard headers count only with the right token. A reference started WITH a token (sandbox, meta-suites)
 * refuses a switch header that comes without it (400 switchboard_token_required) or with a wrong one (403
 * switchboard_token_invalid), so a partner's typo never passes silently as a normal 200. A reference started
 * WITHOUT a token ignores them as if absent. A token alone, with no switch header, switches nothing either way.
 * `defaultMutant` (the --mutant flag) applies unless the request names another.
 */
export function readSwitches(req: http.IncomingMessage, token: string | null, defaultMutant: MutantName | null): RequestSwitches | Refusal {
  const given = req.headers['x-switchboard-token'];
  const none = { faults: new Set<FaultName>(), mutant: defaultMutant, variants: new Set<VariantName>() };
  if (token === null) return none;
  // The headers that switch something on; x-switchboard-token is the key to them.
  const switches = SWITCH_HEADERS.filter((h) => { const v = req.headers[h]; return typeof v === 'string' && v.trim() !== ''; });
  if (typeof given !== 'string' || !tokenMatches(given, token)) {
    if (switches.length === 0) return none;
    return typeof given === 'string'
      ? { refused: 403, error: 'switchboard_token_invalid', message: `${switches.join(', ')} sent with a wrong x-switchboard-token; use the token this sandbox was started with (printed by its guide)` }
      : { refused: 400, error: 'switchboard_token_required', message: `${switches.join(', ')} needs x-switchboard-token: the token this sandbox was started with (printed by its guide)` };
  }
  // With the right token, an unknown switch name is refused so that a typo does not pass silently.
  const rejected = (message: string): Refusal => ({ refused: 400, error: 'switchboard_rejected', message });
  const faults = new Set<FaultName>();
  for (const name of names(req.headers['x-switchboard-fault'])) {
    if (!isFaultName(name)) return rejected(`unknown fault "${name}"`);
    faults.add(name);
  }
  const mutantHeader = req.headers['x-switchboard-mutant'];
  let mutant = none.mutant;
  if (typeof mutantHeader === 'string' && mutantHeader.trim() !== '') {
    if (!isMutantName(mutantHeader.trim())) return rejected(`unknown mutant "${mutantHeader.trim()}"`);
    mutant = mutantHeader.trim() as MutantName;
  }
  const variants = new Set<VariantName>();
  for (const name of names(req.headers['x-switchboard-variant'])) {
    if (!isVariantName(name)) return rejected(`unknown variant "${name}"`);
    variants.add(name);
  }
  return { faults, mutant, variants };
}

/**
 * A request head node:http refused (malformed request line): its mutant, read from the raw head with the same
 * token rule (the request never reached the parser). Null without a token, with a wrong one, or without a mutant.
 */
export function readRawHead(raw: Buffer | undefined, token: string | null): { head: RawHead; switches: Switches } | null {
  if (!raw || token === null) return null;
  const lines = raw.toString('latin1').split('\r\n\r\n')[0].split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const mutant = headers['x-switchboard-mutant'];
  if (!tokenMatches(headers['x-switchboard-token'] ?? '', token) || mutant === undefined || !isMutantName(mutant)) return null;
  return { head: { requestLine: lines[0], headers }, switches: { mutant, variants: new Set() } };
}
