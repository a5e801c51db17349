// Raw query-string handling for the public routes: exact bytes in, no form decoding.
// `+` stays a literal plus (never a space); percent-escapes are decoded as UTF-8 and a bad escape makes the
// value invalid. A key that appears twice is rejected with that parameter's own reason (invalid_limit, …).
import { ApiError, sanitizeField } from './errors.ts';
import type { MutantName } from './mutants.ts';

export interface QueryPair { key: string; value: string; keyOk: boolean; valueOk: boolean }

function decode(raw: string): { text: string; ok: boolean } {
  if (!raw.includes('%')) return { text: raw, ok: true };
  try {
    return { text: decodeURIComponent(raw), ok: true };
  } catch {
    return { text: raw, ok: false };
  }
}

/** Splits the raw query (without `?`) into pairs in order. Empty segments (`a=1&&b=2`, a trailing `&`) are skipped. */
export function parseRawQuery(raw: string, mutant: MutantName | null = null): QueryPair[] {
  const pairs: QueryPair[] = [];
  if (raw === '') return pairs;
  for (const segment of raw.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const rawKey = eq === -1 ? segment : segment.slice(0, eq);
    const rawValue = eq === -1 ? '' : segment.slice(eq + 1);
    const k = mutant === 'query-not-percent-decoded' ? { text: rawKey, ok: true } : decode(rawKey);
    const v = mutant === 'query-not-percent-decoded' ? { text: rawValue, ok: true } : decode(rawValue);
    pairs.push({ key: k.text, value: v.text, keyOk: k.ok, valueOk: v.ok });
  }
  return pairs;
}

export const LIST_KEYS = ['limit', 'offset', 'sort_order', 'start_at', 'end_at'] as const;

/** Step 4: the first key (in query order) the route does not support → 400 unsupported_filter, field = that key. */
export function rejectUnsupportedKeys(pairs: QueryPair[], allowed: readonly string[], mutant: MutantName | null, variants: ReadonlySet<string> = new Set()): void {
  if (mutant === 'query-keys-case-insensitive') for (const p of pairs) p.key = p.key.toLowerCase();
  // Mutant unsupported-keys-denylist: only the example keys of §4.1 are refused, other unknown keys are ignored.
  const refused = (key: string) => !allowed.includes(key) && (mutant !== 'unsupported-keys-denylist' || ['owners', 'record_kind', 'date_of_service', 'patient_id'].includes(key));
  // Variant unsupported-filter-names-last-key: of several unsupported keys, the last one is named.
  const offending = variants.has('unsupported-filter-names-last-key') ? pairs.findLast((p) => !p.keyOk || refused(p.key)) : pairs.find((p) => !p.keyOk || refused(p.key));
  if (!offending) return;
  if (mutant === 'multiple-query-errors-combined' && pairs.filter((p) => !p.keyOk || !allowed.includes(p.key)).length > 1) {
    throw new ApiError('invalid_query', null, 'several query keys are not supported');
  }
  let field = offending.key;
  if (mutant === 'field-unsupported-filter-wrong') field = pairs[pairs.length - 1] !== offending ? pairs[pairs.length - 1].key : 'query';
  throw new ApiError('unsupported_filter', sanitizeField(field, variants));
}

export interface ListQuery { limit: number; offset: number; sortOrder: 'asc' | 'desc'; startAt: string | null; endAt: string | null }

const CANONICAL = /^(0|[1-9][0-9]*)$/;

function canonicalInt(text: string, max: number, mutant: MutantName | null, which: 'limit' | 'offset'): number | null {
  let t = text;
  if (which === 'limit' && mutant === 'lenient-limit-plus' && /^\+[0-9]+$/.test(t)) t = t.slice(1);
  if (which === 'limit' && mutant === 'lenient-limit-leading-zero' && /^0+[1-9][0-9]*$/.test(t)) t = t.replace(/^0+/, '');
  if (which === 'offset' && mutant === 'offset-negative-accepted' && /^-[0-9]+$/.test(t)) return 0;
  if (which === 'offset' && mutant === 'lenient-offset-plus' && /^\+[0-9]+$/.test(t)) t = t.slice(1);
  if (which === 'offset' && mutant === 'lenient-offset-leading-zero' && /^0+[0-9]+$/.test(t)) t = t.replace(/^0+(?=[0-9])/, '');
  const fallback = which === 'limit' ? 50 : 0;
  if (mutant === 'lenient-whitespace') t = t.trim();
  if (mutant === 'lenient-decimal' && /^[0-9]+\.0*$/.test(t)) t = t.slice(0, t.indexOf('.'));
  if (mutant === 'lenient-exponent' && /^[0-9]+[eE]\+?[0-9]+$/.test(t) && Number.isSafeInteger(Number(t))) t = String(Number(t));
  if (mutant === 'lenient-hex' && /^0[xX][0-9a-fA-F]{1,6}$/.test(t)) t = String(parseInt(t.slice(2), 16));
  if (mutant === 'lenient-empty-as-default' && t === '') return fallback;
  if (mutant === 'lenient-non-numeric-as-default' && t !== '' && !/[0-9]/.test(t)) return fallback;
  if (mutant === 'lenient-nonascii-digits') t = t.replace(/\p{Nd}/gu, (c) => String(nonAsciiDigitValue(c)));
  if (mutant === 'lenient-integer-prefix' && /^[0-9]+[^0-9]/.test(t)) t = /^[0-9]+/.exec(t)![0];
  if (mutant === 'long-digits-overflow-accepted' && /^[1-9][0-9]{9,}$/.test(t)) return max;
  if (which === 'limit' && mutant === 'limit-zero-as-default' && t.trim() !== '' && Number(t) === 0) return fallback;
  // The length cap keeps Number() exact: anything longer is out of range anyway.
  if (!CANONICAL.test(t) || t.length > 6) return null;
  const n = Number(t);
  return n <= max ? n : null;
}

/** Mutant lenient-nonascii-digits: the value of a digit of another script (blocks of ten from DIGIT ZERO). */
function nonAsciiDigitValue(c: string): number {
  const cp = c.codePointAt(0)!;
  for (const zero of [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50, 0xff10, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6]) if (cp >= zero && cp < zero + 10) return cp - zero;
  return 0;
}

// RFC 3339 profile of ISO 8601 with a mandatory offset: date-only and timezone-less values are rejected.
const DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|[+-]([0-9]{2}):([0-9]{2}))$/;
const DATE_TIME_NO_TZ = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?$/;

/** Returns epoch microseconds (exact, as bigint) or null when the text is not a valid timezone-aware date-time. */
export function parseDateTime(text: string, mutant: MutantName | null = null, variants: ReadonlySet<string> = new Set()): bigint | null {
  // Variant datetime-extra-iso-forms: lowercase t/z, a space separator and an hour-only offset read as their RFC 3339 form.
  if (variants.has('datetime-extra-iso-forms')) text = text.replace(/^(.{10})[t ]/, '$1T').replace(/z$/, 'Z').replace(/([+-][0-9]{2})$/, '$1:00');
  let m = DATE_TIME.exec(text);
  if (!m && mutant === 'timezone-less-accepted') m = DATE_TIME_NO_TZ.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days[mo - 1] || h > 23 || mi > 59 || s > 59) return null;
  let offsetMinutes = 0;
  if (m[8] !== undefined && m[8] !== 'Z') {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  if (mutant === 'date-offset-ignored') offsetMinutes = 0; // the local date and time read as UTC
  const micros = BigInt(((m[7] ?? '.').slice(1) + '000000').slice(0, 6));
  // Not Date.UTC: it reads years 0..99 as 1900..1999.
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, 0);
  const baseMs = utc.getTime() - offsetMinutes * 60_000;
  return BigInt(baseMs) * 1000n + micros;
}

/**
 * Step 5 (list route only). Parameters are validated in a fixed order — limit, offset, sort_order, start_at,
 * end_at, then the start/end relation — so one request with several bad values always gives the same answer.
 */
export function validateListQuery(pairs: QueryPair[], mutant: MutantName | null, variants: ReadonlySet<string> = new Set()): ListQuery {
  if (mutant === 'multiple-query-errors-combined') {
    const failing = LIST_KEYS.filter((k) => {
      try {
        validateListQuery(pairs.filter((p) => p.key === k), null);
        return false;
      } catch {
        return true;
      }
    });
    if (failing.length > 1) throw new ApiError('invalid_query', null, `several query parameters are invalid: ${failing.join(', ')}`);
  }
  const seen = new Map<string, QueryPair[]>();
  for (const p of pairs) seen.set(p.key, [...(seen.get(p.key) ?? []), p]);
  const one = (key: string): QueryPair | undefined => {
    const all = seen.get(key);
    if (!all) return undefined;
    if (all.length > 1 && mutant === 'duplicate-keys-crash') throw new TypeError(`${key}.match is not a function`);
    // Variants duplicate-keys-last-wins / duplicate-keys-first-wins: one occurrence of a repeated key is read (LIST-DUPLICATE-KEYS is open).
    if (all.length > 1 && variants.has('duplicate-keys-last-wins')) return all[all.length - 1];
    if (all.length > 1 && variants.has('duplicate-keys-first-wins')) return all[0];
    if (all.length > 1) throw new ApiError(reasonFor(key), key, 'the parameter appears more than once');
    return all[0];
  };
  const out: ListQuery = { limit: mutant === 'default-limit-20' ? 20 : 50, offset: mutant === 'default-offset-1' ? 1 : 0, sortOrder: 'desc', startAt: null, endAt: null };

  let startMicros: bigint | null = null;
  let endMicros: bigint | null = null;
  const checkLimit = (): void => {
    const limit = one('limit');
    if (limit) {
      const max = mutant === 'limit-max-101' ? 101 : 100;
      const n = limit.valueOk ? canonicalInt(limit.value, max, mutant, 'limit') : null;
      const atBound = mutant === 'range-bounds-exclusive' && (n === 1 || n === max);
      if (n === null || n < 1 || atBound) throw new ApiError('invalid_limit', mutant === 'field-limit-null' ? null : 'limit');
      out.limit = n;
    }
  };
  const checkOffset = (): void => {
    const offset = one('offset');
    if (offset) {
      const max = mutant === 'offset-max-10001' ? 10001 : 10000;
      const n = offset.valueOk ? canonicalInt(offset.value, max, mutant, 'offset') : null;
      const atBound = mutant === 'range-bounds-exclusive' && (n === 0 || n === max);
      if (n === null || atBound) throw new ApiError('invalid_offset', mutant === 'field-offset-wrong' ? 'limit' : 'offset');
      out.offset = n;
    }
  };
  const checkSort = (): void => {
    const sort = one('sort_order');
    if (sort) {
      if (!sort.valueOk || (sort.value !== 'asc' && sort.value !== 'desc')) {
        throw new ApiError(mutant === 'reason-invalid-sort-as-invalid-query' ? 'invalid_query' : 'invalid_sort', mutant === 'field-sort-null' ? null : 'sort_order');
      }
      out.sortOrder = sort.value;
    }
  };
  const checkStart = (): void => {
    const start = one('start_at');
    if (start) {
      startMicros = start.valueOk ? parseDateTime(start.value, mutant, variants) : null;
      if (startMicros === null && mutant !== 'date-invalid-ignored') throw new ApiError('invalid_query', 'start_at', 'start_at must be a timezone-aware ISO 8601 date-time');
      if (startMicros !== null) out.startAt = toPgTimestamp(startMicros);
    }
  };
  const checkEnd = (): void => {
    const end = one('end_at');
    if (end) {
      endMicros = end.valueOk ? parseDateTime(end.value, mutant, variants) : null;
      if (endMicros === null && mutant !== 'date-invalid-ignored') {
        throw new ApiError('invalid_query', mutant === 'date-error-field-wrong' ? 'start_at' : 'end_at', 'end_at must be a timezone-aware ISO 8601 date-time');
      }
      if (endMicros !== null) out.endAt = toPgTimestamp(endMicros);
    }
  };
  const steps = [checkLimit, checkOffset, checkSort, checkStart, checkEnd];
  // Variant query-errors-reverse-order: with several invalid parameters another one is reported first (ORDER-MULTIPLE-QUERY-ERRORS).
  if (variants.has('query-errors-reverse-order')) steps.reverse();
  for (const step of steps) step();
  // §4.1 leaves the reason open. Our choice: 422 invalid_query with field "start_at".
  if (startMicros !== null && endMicros !== null && startMicros >= endMicros && mutant !== 'start-not-before-end-accepted') {
    // Variant start-not-before-end-field-end-at: the same refusal naming the other parameter of the pair.
    throw new ApiError('invalid_query', variants.has('start-not-before-end-field-end-at') ? 'end_at' : 'start_at', 'start_at must be earlier than end_at');
  }
  return out;
}

function reasonFor(key: string): 'invalid_limit' | 'invalid_offset' | 'invalid_sort' | 'invalid_query' {
  if (key === 'limit') return 'invalid_limit';
  if (key === 'offset') return 'invalid_offset';
  if (key === 'sort_order') return 'invalid_sort';
  return 'invalid_query';
}

/**
 * The instant as exact UTC text for PostgreSQL. The client's text is not passed through: PostgreSQL refuses
 * offsets beyond ±15:59 (RFC 3339 allows up to ±23:59), which ended in a 500. A timezone-less value only gets
 * here under a mutant and was read as UTC. Years outside 1..9999 after the shift use PostgreSQL's forms.
 */
function toPgTimestamp(micros: bigint): string {
  const ms = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
  const d = new Date(Number(ms));
  const p = (n: number | bigint, w = 2) => String(n).padStart(w, '0');
  const y = d.getUTCFullYear();
  const frac = `${p(d.getUTCMilliseconds(), 3)}${p(micros - ms * 1000n, 3)}`;
  const clock = `${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${frac}+00`;
  return y > 0 ? `${p(y, 4)}-${clock}` : `${p(1 - y, 4)}-${clock} BC`;
}
