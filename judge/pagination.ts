// Query text on the wire and list pages for the pagination suite and the query properties: percent-encoding
// of arbitrary text exactly as chosen (no URL object, no normalisation), the canonical-integer rule of
// §4.1/§8 as the oracle reads it, and the check that a 200 page honours limit, offset and total.
import { expectSuccess, fail } from './assertions.ts';
import type { Exchange } from '../record/record.ts';

export const LIST_PATH = '/external/v1/encounters';

export interface ListPage {
  items: { encounter_id: string }[];
  limit: number;
  offset: number;
  total: number;
}

/** How text is percent-encoded: `component` keeps RFC 3986 unreserved ASCII, `all` encodes every byte. */
export type Encoding = 'component' | 'all' | 'lower' | 'plus-raw';
export const ENCODINGS: Encoding[] = ['component', 'all', 'lower', 'plus-raw'];

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * Percent-encodes the UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as in any UTF-8 encoder).
 * `lower` uses lower-case hex digits; `plus-raw` leaves `+` raw (form decoding may read it as a space).
 * The result never holds a space, a control character or a non-ASCII byte, so it is a valid request-target.
 */
export function percentEncode(text: string, encoding: Encoding = 'component'): string {
  let out = '';
  for (const b of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(b);
    if (encoding !== 'all' && b < 0x80 && UNRESERVED.test(ch)) out += ch;
    else if (encoding === 'plus-raw' && ch === '+') out += '+';
    else {
      const hex = b.toString(16).padStart(2, '0');
      out += `%${encoding === 'lower' ? hex : hex.toUpperCase()}`;
    }
  }
  return out;
}

/** The oracle's reading of "canonical decimal text" in range: ASCII digits, no sign, no leading zero except "0". */
export function isCanonicalInRange(text: string, min: number, max: number): boolean {
  if (!/^(0|[1-9][0-9]*)$/.test(text) || text.length > 15) return false;
  const n = Number(text);
  return n >= min && n <= max;
}

export const LIMIT_RANGE = { min: 1, max: 100, default: 50 } as const;
export const OFFSET_RANGE = { min: 0, max: 10_000, default: 0 } as const;

/**
 * Requires a 200 list page that honours the parameters: limit and offset echoed, at most `limit` items,
 * and exactly min(limit, total − offset) of them (total is counted in the same evaluation as the page).
 */
export function expectPage(ex: Exchange, want: { limit: number; offset: number }): ListPage {
  const body = expectSuccess<ListPage>(ex, 'listPublicEncounters');
  if (body.limit !== want.limit) fail(`limit echoed as ${body.limit}, not ${want.limit}`, ex.request.target);
  if (body.offset !== want.offset) fail(`offset echoed as ${body.offset}, not ${want.offset}`, ex.request.target);
  if (body.items.length > want.limit) fail(`page holds ${body.items.length} items, more than limit ${want.limit}`, ex.request.target);
  const expected = Math.max(0, Math.min(want.limit, body.total - want.offset));
  if (body.items.length !== expected) {
    fail('page size does not match limit, offset and total', `${body.items.length} item(s) with limit ${want.limit}, offset ${want.offset}, total ${body.total} (expected ${expected})`);
  }
  return body;
}
