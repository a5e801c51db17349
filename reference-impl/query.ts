// Raw query-string handling for the public routes: exact bytes in, no form decoding.
// `+` stays a literal plus (never a space); percent-escapes are decoded as UTF-8 and a bad escape makes the
// value invalid. A key that appears twice is rejected with that parameter's own reason (invalid_limit, …).
// The rules read as the correct ones; each named point is asked of the request's hook (`rule`, context.ts).
import { correctRule, type Rule } from './context.ts';
import { ApiError, sanitizeField } from './errors.ts';
import type { ListQuery, QueryPair } from './records.ts';

export type { ListQuery, QueryPair } from './records.ts';

function decode(raw: string): { text: string; ok: boolean } {
  if (!raw.includes('%')) return { text: raw, ok: true };
  try {
    return { text: decodeURIComponent(raw), ok: true };
  } catch {
    return { text: raw, ok: false };
  }
}

/** Splits the raw query (without `?`) into pairs in order. Empty segments (`a=1&&b=2`, a trailing `&`) are skipped. */
export function parseRawQuery(raw: string, rule: Rule = correctRule): QueryPair[] {
  const pairs: QueryPair[] = [];
  if (raw === '') return pairs;
  const decodePart = rule('decodeQueryPart', decode);
  for (const segment of raw.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const k = decodePart(eq === -1 ? segment : segment.slice(0, eq));
    const v = decodePart(eq === -1 ? '' : segment.slice(eq + 1));
    pairs.push({ key: k.text, value: v.text, keyOk: k.ok, valueOk: v.ok });
  }
  return pairs;
}

export const LIST_KEYS = ['limit', 'offset', 'sort_order', 'start_at', 'end_at'] as const;

/** Step 4: the first key (in query order) the route does not support → 400 unsupported_filter, field = that key. */
export function rejectUnsupportedKeys(pairs: QueryPair[], allowed: readonly string[], rule: Rule = correctRule): void {
  const unsupported = rule('unsupportedKey', (key: string, keys: readonly string[]) => !keys.includes(key));
  const bad = (p: QueryPair): boolean => !p.keyOk || unsupported(p.key, allowed);
  const offending = rule('offendingPair', (all: QueryPair[], isBad: (p: QueryPair) => boolean) => all.find(isBad))(pairs, bad);
  if (!offending) return;
  const field = rule('unsupportedFilterField', (p: QueryPair) => p.key)(offending, pairs);
  throw new ApiError('unsupported_filter', rule('sanitizeField', sanitizeField)(field));
}

const CANONICAL = /^(0|[1-9][0-9]*)$/;

/** Canonical decimal integer text up to `max`, or null. */
function canonicalInt(text: string, max: number): number | null {
  // The length cap keeps Number() exact: anything longer is out of range anyway.
  if (!CANONICAL.test(text) || text.length > 6) return null;
  const n = Number(text);
  return n <= max ? n : null;
}

// RFC 3339 profile of ISO 8601 with a mandatory offset: date-only and timezone-less values are rejected. The
// fraction may have any number of digits (RFC 3339 §5.6 time-secfrac = "." 1*DIGIT).
const DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-]([0-9]{2}):([0-9]{2}))$/;

/**
 * A bound as read: the instant exactly (whole epoch seconds and the fraction's digits), and rounded UP to the
 * microsecond (PostgreSQL's precision): created_at is a whole microsecond, so `created_at >= b` and
 * `created_at < b` hold exactly when they hold for the bound rounded up. Truncating instead would list an
 * encounter created at X under start_at = X + 1 ns.
 */
export interface Bound { seconds: bigint; fraction: string; micros: bigint }

/** The two bounds on one scale of 10^-digits seconds, for an exact comparison (startBeforeEnd). */
function onCommonScale(a: Bound, b: Bound): [bigint, bigint] {
  const digits = Math.max(a.fraction.length, b.fraction.length);
  const scaled = (x: Bound) => x.seconds * 10n ** BigInt(digits) + BigInt(x.fraction.padEnd(digits, '0') || '0');
  return [scaled(a), scaled(b)];
}

/** The instant of a timezone-aware date-time, or null when the text is not one. */
export function parseDateTime(text: string, rule: Rule = correctRule): Bound | null {
  const m = rule('matchDateTime', (t: string) => DATE_TIME.exec(t))(rule('dateTimeText', (t: string) => t)(text));
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
  offsetMinutes = rule('dateOffsetMinutes', offsetMinutes);
  const fraction = (m[7] ?? '.').slice(1).replace(/0+$/, '');
  // Not Date.UTC: it reads years 0..99 as 1900..1999.
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, 0);
  const seconds = BigInt(utc.getTime() / 1000 - offsetMinutes * 60);
  const micros = seconds * 1_000_000n + BigInt(fraction.slice(0, 6).padEnd(6, '0')) + (/[1-9]/.test(fraction.slice(6)) ? 1n : 0n);
  return { seconds, fraction, micros };
}

/**
 * Step 5 (list route only). Parameters are validated in a fixed order — limit, offset, sort_order, start_at,
 * end_at, then the start/end relation — so one request with several bad values always gives the same answer.
 */
export function validateListQuery(pairs: QueryPair[], rule: Rule = correctRule): ListQuery {
  const seen = new Map<string, QueryPair[]>();
  for (const p of pairs) seen.set(p.key, [...(seen.get(p.key) ?? []), p]);
  const duplicate = rule('duplicateQueryKey', (key: string): QueryPair => {
    throw new ApiError(reasonFor(key), key, 'the parameter appears more than once');
  });
  const one = (key: string): QueryPair | undefined => {
    const all = seen.get(key);
    if (!all) return undefined;
    return all.length > 1 ? duplicate(key, all) : all[0];
  };
  const out: ListQuery = rule('listDefaults', { limit: 50, offset: 0, sortOrder: 'desc', startAt: null, endAt: null });
  const toInt = rule('canonicalInt', canonicalInt);
  const inRange = rule('inRange', (n: number, min: number) => n >= min);
  const field = rule('invalidValueField', (key: string): string | null => key);
  const rejectDate = rule('rejectInvalidDate', (f: string | null, message: string): void => {
    throw new ApiError('invalid_query', f, message);
  });

  let startBound: Bound | null = null;
  let endBound: Bound | null = null;
  // limit and offset: one rule, canonical decimal text within [min, max] (§4.1, §8), each with its reason.
  const checkInteger = (key: 'limit' | 'offset', min: number, maxOf: () => number, reason: 'invalid_limit' | 'invalid_offset') => (): void => {
    const param = one(key);
    if (param) {
      const max = maxOf();
      const n = param.valueOk ? toInt(param.value, max, key) : null;
      if (n === null || !inRange(n, min, max)) throw new ApiError(reason, field(key));
      out[key] = n;
    }
  };
  const checkLimit = checkInteger('limit', 1, () => rule('limitMax', 100), 'invalid_limit');
  const checkOffset = checkInteger('offset', 0, () => rule('offsetMax', 10000), 'invalid_offset');
  const checkSort = (): void => {
    const sort = one('sort_order');
    if (sort) {
      if (!sort.valueOk || (sort.value !== 'asc' && sort.value !== 'desc')) throw new ApiError(rule('invalidSortReason', 'invalid_sort'), field('sort_order'));
      out.sortOrder = sort.value;
    }
  };
  const checkStart = (): void => {
    const start = one('start_at');
    if (start) {
      startBound = start.valueOk ? parseDateTime(start.value, rule) : null;
      if (startBound === null) rejectDate(field('start_at'), 'start_at must be a timezone-aware ISO 8601 date-time');
      else out.startAt = toPgTimestamp(startBound.micros);
    }
  };
  const checkEnd = (): void => {
    const end = one('end_at');
    if (end) {
      endBound = end.valueOk ? parseDateTime(end.value, rule) : null;
      if (endBound === null) rejectDate(field('end_at'), 'end_at must be a timezone-aware ISO 8601 date-time');
      else out.endAt = toPgTimestamp(endBound.micros);
    }
  };
  for (const check of rule('listCheckOrder', [checkLimit, checkOffset, checkSort, checkStart, checkEnd])) check();
  // §4.1 leaves the reason open. Our choice: 422 invalid_query with field "start_at".
  // Compared exactly, at every digit given: start_at = X and end_at = X + 1 ns is a valid window.
  const bounds = startBound !== null && endBound !== null ? onCommonScale(startBound, endBound) : null;
  if (bounds !== null && !rule('startBeforeEnd', (a: bigint, b: bigint) => a < b)(bounds[0], bounds[1])) {
    throw new ApiError('invalid_query', rule('startEndField', 'start_at'), 'start_at must be earlier than end_at');
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
 * here under a replaced rule and was read as UTC. Years outside 1..9999 after the shift use PostgreSQL's forms.
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
