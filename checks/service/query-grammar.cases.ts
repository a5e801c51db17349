// The case tables of the query-grammar suite (checks/service/query-grammar.ts) and the functions that build its check
// ids: plain data and pure spellings, no Playwright, so the mutant matrix (tests/mutants/matrix/query-grammar.ts)
// names the same cases. Every case is FIXED: a defect at the edge of the grammar is met on every run, never only
// when a property's seed happens to draw it. Each class names the clause that decides it (CLAUSES).
import { fieldsAt, floorSecond, formatInstant, instant, isoWeek, plus, utc, type Instant } from '../../judge/instant.ts';

export type DateParam = 'start_at' | 'end_at';
export const DATE_PARAMS = ['start_at', 'end_at'] as const satisfies readonly DateParam[];

/** The clause each class of cases is judged by. */
export const CLAUSES = {
  notDateTime: '§4.1 (start_at/end_at: timezone-aware ISO datetime), §7.2 (not a valid timezone-aware ISO datetime: 422 invalid_query, field the date parameter); ISO 8601-1 / RFC 3339 §5.6 grammar',
  valid: '§4.1 (inclusive lower / exclusive upper bound on created_at, timezone-aware ISO datetime: an instant); RFC 3339 §5.6 (time-numoffset, four-digit years)',
  fraction: '§4.1; RFC 3339 §5.6 (time-secfrac = "." 1*DIGIT); how many digits are accepted is open (LIST-DATETIME-FORMAT-DETAILS), a value accepted is compared exactly',
  open: '§4.1 (timezone-aware ISO datetime); ISO 8601 forms the spec does not show as accepted or refused (LIST-DATETIME-FORMAT-DETAILS)',
  window: '§4.1 (start_at inclusive, end_at exclusive, start_at earlier than end_at; instants)',
  integer: '§4.1, §8 (integer, canonical decimal text), §7.2 (422 invalid_limit / invalid_offset, field the parameter)',
  sort: '§4.1 (enum `asc`, `desc`), §7.2 (422 invalid_sort, field sort_order); RFC 3986 §2.1 (a percent-encoded value is decoded before it is read)',
  emptyQuery: '§4.1 (query parameters all optional), §4.2/§4.3 (any query KEY yields unsupported_filter); RFC 3986 §3.4 (an empty query holds no key)',
  pathId: '§4.2/§4.3 (path parameters: opaque strings); RFC 3986 §2.3 and §6.2.2 (percent-encoded unreserved characters and lower-case hex digits name the same resource)',
} as const;

// ---------------------------------------------------------------- start_at / end_at: not a date-time → 422

export interface NotDateTime {
  name: string;
  /** The decoded value (percent-encoded on the wire); undefined with `raw`. */
  value?: string;
  /** The text after the key as it goes on the wire (`=`: empty value, '': the key alone). */
  raw?: string;
  what: string;
  /** Why it is not a timezone-aware ISO 8601 date-time. */
  why: string;
}

const notDateTimes = <const N extends string>(cases: readonly (NotDateTime & { name: N })[]) => cases;

export const NOT_DATE_TIMES = notDateTimes([
  // A framework's datetime type that also reads epoch numbers (issue 30): a number names no calendar date.
  { name: 'epoch-seconds', value: '1767225600', what: 'the bare number 1767225600 (Unix seconds of 2026-01-01)', why: 'a number, no date, time or offset' },
  { name: 'epoch-milliseconds', value: '1767225600000', what: 'the bare number 1767225600000 (Unix milliseconds)', why: 'a number, no date, time or offset' },
  { name: 'zero', value: '0', what: 'the number 0', why: 'a number, no date, time or offset' },
  { name: 'negative-number', value: '-5', what: 'the number -5', why: 'a number, no date, time or offset' },
  { name: 'decimal-number', value: '1767225600.5', what: 'the decimal number 1767225600.5', why: 'a number, no date, time or offset' },
  // ISO 8601 and RFC 3339 offsets are ±hh:mm (or ±hhmm, ±hh): never with seconds.
  { name: 'offset-with-seconds', value: '2026-01-01T00:00:00+00:00:30', what: 'an offset with seconds (+00:00:30)', why: 'a UTC offset has hours and minutes only' },
  { name: 'offset-with-zero-seconds', value: '2026-01-01T00:00:00+05:30:00', what: 'an offset with seconds (+05:30:00)', why: 'a UTC offset has hours and minutes only' },
  { name: 'negative-offset-with-seconds', value: '2026-01-01T00:00:00-08:00:15', what: 'a negative offset with seconds (-08:00:15)', why: 'a UTC offset has hours and minutes only' },
  { name: 'offset-minute-60', value: '2026-01-01T00:00:00+05:60', what: 'an offset with minute 60', why: 'offset minutes are 00..59' },
  // Other date formats (a lenient parser's Date.parse): not ISO 8601 at all.
  { name: 'rfc-2822', value: 'Thu, 01 Jan 2026 00:00:00 +0000', what: 'an RFC 2822 date', why: 'another format (RFC 2822), not ISO 8601' },
  { name: 'http-date', value: 'Thu, 01 Jan 2026 00:00:00 GMT', what: 'an HTTP-date', why: 'another format (RFC 9110 IMF-fixdate), not ISO 8601' },
  { name: 'javascript-date-string', value: 'Thu Jan 01 2026 00:00:00 GMT+0000', what: 'a JavaScript Date string', why: 'another format, not ISO 8601' },
  { name: 'us-slashes', value: '01/31/2026 00:00:00Z', what: 'a US month/day/year date', why: 'another date format, not ISO 8601' },
  { name: 'slash-separated', value: '2026/01/31T00:00:00Z', what: 'a date separated by slashes', why: 'ISO 8601 separates date parts with hyphens' },
  { name: 'day-first', value: '31-01-2026T00:00:00Z', what: 'a day-month-year date', why: 'ISO 8601 dates are year first' },
  { name: 'duration', value: 'P1D', what: 'an ISO 8601 duration (P1D)', why: 'a duration, not a date-time' },
  { name: 'interval', value: '2026-01-01T00:00:00Z/2026-01-02T00:00:00Z', what: 'an ISO 8601 interval', why: 'an interval, not a date-time' },
  { name: 'word-now', value: 'now', what: 'the word now', why: 'a word, not a date-time' },
  // A missing offset: a local time names no instant.
  { name: 'missing-offset-fraction', value: '2026-01-01T10:20:30.123456', what: 'a date-time with a fraction and no offset', why: 'no zone designator: not timezone-aware' },
  { name: 'missing-offset-minutes', value: '2026-01-01T10:20', what: 'a date and hour:minute without an offset', why: 'no zone designator: not timezone-aware' },
  { name: 'date-and-hour-only', value: '2026-01-01T10', what: 'a date and an hour without an offset', why: 'no zone designator: not timezone-aware' },
  // Junk after the offset (a parser that reads a prefix and ignores the rest).
  { name: 'junk-after-z', value: '2026-01-01T00:00:00Zjunk', what: 'text after Z', why: 'characters after the zone designator' },
  { name: 'junk-after-offset', value: '2026-01-01T00:00:00+01:00abc', what: 'text after the offset', why: 'characters after the zone designator' },
  { name: 'double-z', value: '2026-01-01T00:00:00ZZ', what: 'Z twice', why: 'characters after the zone designator' },
  { name: 'offset-after-z', value: '2026-01-01T00:00:00Z+01:00', what: 'an offset after Z', why: 'two zone designators' },
  { name: 'trailing-space', value: '2026-01-01T00:00:00Z ', what: 'a trailing space (%20)', why: 'characters after the zone designator' },
  // A regular expression's `$` that also matches before a final newline (Python's re) lets this through.
  { name: 'trailing-newline', value: '2026-01-01T00:00:00Z\n', what: 'a trailing newline (%0A)', why: 'characters after the zone designator' },
  { name: 'trailing-nul', value: '2026-01-01T00:00:00Z\u0000', what: 'a trailing NUL (%00)', why: 'characters after the zone designator' },
  { name: 'leading-space', value: ' 2026-01-01T00:00:00Z', what: 'a leading space (%20)', why: 'characters before the date' },
  { name: 'fraction-without-digits', value: '2026-01-01T00:00:00.Z', what: 'a decimal point without digits', why: 'a decimal sign must be followed by a digit' },
  // Calendar values that do not exist.
  { name: 'february-30', value: '2026-02-30T00:00:00Z', what: 'February 30', why: 'no such day' },
  { name: 'february-29-common-year', value: '2025-02-29T00:00:00Z', what: 'February 29 of 2025 (not a leap year)', why: 'no such day' },
  { name: 'hour-25', value: '2026-01-01T25:00:00Z', what: 'hour 25', why: 'hours are 00..23 (24 only as 24:00)' },
  { name: 'minute-60', value: '2026-01-01T00:60:00Z', what: 'minute 60', why: 'minutes are 00..59' },
  // Digits of another script: ISO 8601 and RFC 3339 digits are ASCII (a \d that matches Unicode digits lets them in).
  { name: 'fullwidth-digits', value: '\uff12\uff10\uff12\uff16-01-01T00:00:00Z', what: 'a year in fullwidth digits', why: 'ISO 8601 digits are ASCII 0-9' },
  // Present but empty: a parameter given is read, and "" is no date-time (absent would mean "no bound").
  { name: 'empty-value', raw: '=', what: 'an empty value', why: 'an empty string is no date-time' },
  { name: 'key-without-value', raw: '', what: 'the key without =', why: 'an empty string is no date-time' },
]);

export type NotDateTimeName = (typeof NOT_DATE_TIMES)[number]['name'];
export const notDateTimeId = (param: DateParam, name: NotDateTimeName) => `query-grammar-${param.replace('_', '-')}-${name}-rejected`;

// ---------------------------------------------------------------- start_at / end_at: instants spelled many ways

/** How a bound's text goes on the wire: percent-encoded with upper-case hex (default), lower-case hex, or every byte. */
export type ValueEncoding = 'upper' | 'lower' | 'all';

/** A bound as sent, and the instants it names: `lo` = `hi` for an exact instant; a leap second lies between them. */
export interface SpelledBound {
  text: string;
  lo: Instant;
  hi: Instant;
}

export type BoundKind = 'valid' | 'fraction' | 'open';

export interface BoundCase {
  name: string;
  /**
   * `valid`: a timezone-aware ISO 8601 / RFC 3339 date-time: must be accepted and compared as an instant.
   * `fraction`: valid with fractional seconds: a 422 invalid_query is recorded (how many digits are accepted is
   * open), an acceptance must compare at every digit. `open`: a spelling whose status the spec leaves open: a 422
   * invalid_query or an acceptance that compares as the instant is recorded; an acceptance that reads another
   * instant fails.
   */
  kind: BoundKind;
  what: string;
  /**
   * Where the bound is placed. `second`: on the target's data, at the whole second s of the newest created_at x
   * and at s + 1 s (x lies in [s, s + 1 s), so a reading of either bound one second or more off, later or earlier,
   * puts x on the wrong side); `exact`: at x itself (digits below the second); `fixed`: a fixed instant.
   */
  anchor: 'second' | 'exact' | 'fixed';
  /** The bound from the anchor instant (ignored when fixed). */
  spell: (a: Instant) => SpelledBound;
  encoding?: ValueEncoding;
}

const exact = (text: string, i: Instant): SpelledBound => ({ text, lo: i, hi: i });
const p2 = (n: number) => String(n).padStart(2, '0');
const p3 = (n: number) => String(n).padStart(3, '0');
const p4 = (n: number) => String(n).padStart(4, '0');

/** A whole second written with `offset` minutes (the must cases avoid fractions: their acceptance is open). */
const second = (offsetMinutes: number, zero?: string) => (s: Instant) => exact(formatInstant(s, { offsetMinutes, ...(zero ? { zero } : {}) }), s);

/** The local calendar of an instant at an offset, as ISO 8601 pieces. */
function pieces(i: Instant, offsetMinutes = 0) {
  const f = fieldsAt(i, offsetMinutes);
  return { ...f, date: `${p4(f.y)}-${p2(f.mo)}-${p2(f.d)}`, basicDate: `${p4(f.y)}${p2(f.mo)}${p2(f.d)}`, time: `${p2(f.h)}:${p2(f.mi)}:${p2(f.s)}`, basicTime: `${p2(f.h)}${p2(f.mi)}${p2(f.s)}` };
}

const fixed = (text: string, i: Instant): ((a: Instant) => SpelledBound) => () => exact(text, i);
/** x moved by `amount` units of 10^-digits s, written with at least `digits` fraction digits (and `offset` minutes). */
const shifted = (amount: bigint, digits: number, written = digits, offsetMinutes = 0) => (x: Instant) => {
  const b = plus(x, amount, digits);
  return exact(formatInstant(b, { digits: written, offsetMinutes }), b);
};
const retext = (f: (text: string) => string) => (s: Instant) => {
  const b = second(0)(s);
  return { ...b, text: f(b.text) };
};

const boundCases = <const N extends string>(cases: readonly (BoundCase & { name: N })[]) => cases;

export const BOUND_CASES = boundCases([
  // valid: every real UTC offset and the range of four-digit years (ISO 8601's default range 1583..9999).
  { name: 'utc-z', kind: 'valid', anchor: 'second', what: 'a whole second written with Z', spell: second(0) },
  { name: 'offset-plus-00-00', kind: 'valid', anchor: 'second', what: 'a whole second written with +00:00', spell: second(0, '+00:00') },
  { name: 'offset-plus-14-00', kind: 'valid', anchor: 'second', what: 'a whole second written with +14:00 (the easternmost zone)', spell: second(14 * 60) },
  { name: 'offset-minus-12-00', kind: 'valid', anchor: 'second', what: 'a whole second written with -12:00 (the westernmost zone)', spell: second(-12 * 60) },
  { name: 'offset-plus-05-45', kind: 'valid', anchor: 'second', what: 'a whole second written with +05:45', spell: second(5 * 60 + 45) },
  { name: 'offset-minus-09-30', kind: 'valid', anchor: 'second', what: 'a whole second written with -09:30', spell: second(-(9 * 60 + 30)) },
  // The same text with lower-case escapes (%2b, %3a) and with every byte escaped: RFC 3986 §2.1, §6.2.2.
  { name: 'offset-lowercase-hex-escapes', kind: 'valid', anchor: 'second', encoding: 'lower', what: 'a whole second with +05:30, its "+" and ":" escaped with lower-case hex (%2b, %3a)', spell: second(5 * 60 + 30) },
  { name: 'offset-every-byte-escaped', kind: 'valid', anchor: 'second', encoding: 'all', what: 'a whole second with -08:00, every byte percent-encoded', spell: second(-8 * 60) },
  { name: 'year-1583', kind: 'valid', anchor: 'fixed', what: '1583-01-01T00:00:00Z (the first year of ISO 8601\'s default range)', spell: fixed('1583-01-01T00:00:00Z', utc(1583, 1, 1)) },
  { name: 'year-1583-minus-12-00', kind: 'valid', anchor: 'fixed', what: '1583-01-01T00:00:00-12:00', spell: fixed('1583-01-01T00:00:00-12:00', utc(1583, 1, 1, 12)) },
  { name: 'year-1970-plus-01-00', kind: 'valid', anchor: 'fixed', what: '1970-01-01T00:00:00+01:00 (an hour before the Unix epoch)', spell: fixed('1970-01-01T00:00:00+01:00', utc(1969, 12, 31, 23)) },
  { name: 'year-2038', kind: 'valid', anchor: 'fixed', what: '2038-01-19T03:14:08Z (one second past a signed 32-bit Unix time)', spell: fixed('2038-01-19T03:14:08Z', utc(2038, 1, 19, 3, 14, 8)) },
  { name: 'leap-day', kind: 'valid', anchor: 'fixed', what: '2024-02-29T12:00:00+01:00 (a leap day)', spell: fixed('2024-02-29T12:00:00+01:00', utc(2024, 2, 29, 11)) },
  { name: 'year-9999', kind: 'valid', anchor: 'fixed', what: '9999-12-31T23:59:59Z (the last second of four-digit years)', spell: fixed('9999-12-31T23:59:59Z', utc(9999, 12, 31, 23, 59, 59)) },
  { name: 'year-9999-plus-14-00', kind: 'valid', anchor: 'fixed', what: '9999-12-31T23:59:59+14:00', spell: fixed('9999-12-31T23:59:59+14:00', utc(9999, 12, 31, 9, 59, 59)) },
  // fraction: sub-millisecond digits compared exactly (a bound read at millisecond precision lists the encounter
  // created at x under start_at = x + 1 µs).
  { name: 'fraction-as-listed', kind: 'fraction', anchor: 'exact', what: 'a created_at instant itself, with at least millisecond digits', spell: shifted(0n, 3) },
  { name: 'fraction-microsecond-after', kind: 'fraction', anchor: 'exact', what: 'one microsecond after a created_at (six fraction digits)', spell: shifted(1n, 6) },
  { name: 'fraction-nanosecond-after', kind: 'fraction', anchor: 'exact', what: 'one nanosecond after a created_at (nine fraction digits)', spell: shifted(1n, 9) },
  { name: 'fraction-fifteen-digits', kind: 'fraction', anchor: 'exact', what: 'one microsecond after a created_at, written with fifteen fraction digits', spell: shifted(1n, 6, 15) },
  { name: 'fraction-microsecond-after-offset', kind: 'fraction', anchor: 'exact', what: 'one microsecond after a created_at, written with +05:30', spell: shifted(1n, 6, 6, 330) },
  // open: ISO 8601 spellings the spec neither shows nor refuses.
  { name: 'lowercase-t', kind: 'open', anchor: 'second', what: 'a lower-case t separator', spell: retext((t) => t.replace('T', 't')) },
  { name: 'lowercase-z', kind: 'open', anchor: 'second', what: 'a lower-case z', spell: retext((t) => t.replace(/Z$/, 'z')) },
  { name: 'space-separator', kind: 'open', anchor: 'second', what: 'a space between date and time (RFC 3339 §5.6 NOTE)', spell: retext((t) => t.replace('T', ' ')) },
  { name: 'basic-format', kind: 'open', anchor: 'second', what: 'ISO 8601 basic format (20260105T103000Z)', spell: (s) => { const q = pieces(s); return exact(`${q.basicDate}T${q.basicTime}Z`, s); } },
  { name: 'basic-format-offset', kind: 'open', anchor: 'second', what: 'ISO 8601 basic format with a basic offset (+0530)', spell: (s) => { const q = pieces(s, 330); return exact(`${q.basicDate}T${q.basicTime}+0530`, s); } },
  { name: 'extended-time-basic-offset', kind: 'open', anchor: 'second', what: 'an extended date-time with an offset without colon (+0530)', spell: (s) => { const q = pieces(s, 330); return exact(`${q.date}T${q.time}+0530`, s); } },
  { name: 'hour-only-offset', kind: 'open', anchor: 'second', what: 'an hour-only offset (+05)', spell: (s) => { const q = pieces(s, 300); return exact(`${q.date}T${q.time}+05`, s); } },
  { name: 'minutes-precision', kind: 'open', anchor: 'second', what: 'a time to the minute (hh:mmZ, ISO 8601 reduced precision)', spell: (s) => { const q = pieces(s); return exact(`${q.date}T${p2(q.h)}:${p2(q.mi)}Z`, instant(s.seconds - BigInt(q.s))); } },
  { name: 'hours-precision', kind: 'open', anchor: 'second', what: 'a time to the hour (hhZ, ISO 8601 reduced precision)', spell: (s) => { const q = pieces(s); return exact(`${q.date}T${p2(q.h)}Z`, instant(s.seconds - BigInt(q.mi * 60 + q.s))); } },
  { name: 'week-date', kind: 'open', anchor: 'second', what: 'an ISO 8601 week date (2026-W02-1T10:30:00Z)', spell: (s) => { const q = pieces(s); const w = isoWeek(q.y, q.mo, q.d); return exact(`${p4(w.year)}-W${p2(w.week)}-${w.weekday}T${q.time}Z`, s); } },
  { name: 'ordinal-date', kind: 'open', anchor: 'second', what: 'an ISO 8601 ordinal date (2026-005T10:30:00Z)', spell: (s) => { const q = pieces(s); return exact(`${p4(q.y)}-${p3(q.dayOfYear)}T${q.time}Z`, s); } },
  // Half a second before the anchor, so that the bound on the newest created_at's second lies at or before it.
  { name: 'comma-fraction', kind: 'open', anchor: 'second', what: 'a decimal comma (10:29:59,5Z)', spell: (s) => { const b = plus(s, -5n, 1); const q = pieces(b); return exact(`${q.date}T${q.time},5Z`, b); } },
  { name: 'end-of-day-24-00', kind: 'open', anchor: 'second', what: '24:00:00, the end of a day (the next midnight)', spell: (s) => { const q = pieces(s); return exact(`${q.date}T24:00:00Z`, instant(s.seconds - BigInt(q.h * 3600 + q.mi * 60 + q.s) + 86_400n)); } },
  { name: 'negative-zero-offset', kind: 'open', anchor: 'second', what: 'the offset -00:00 (RFC 3339 §4.3: UTC, local offset unknown)', spell: second(0, '-00:00') },
  { name: 'offset-plus-23-59', kind: 'open', anchor: 'second', what: 'the offset +23:59 (allowed by RFC 3339\'s grammar, used by no zone)', spell: second(23 * 60 + 59) },
  { name: 'offset-minus-23-59', kind: 'open', anchor: 'second', what: 'the offset -23:59', spell: second(-(23 * 60 + 59)) },
  { name: 'rfc-9557-suffix', kind: 'open', anchor: 'second', what: 'an RFC 9557 time-zone suffix ([UTC])', spell: retext((t) => `${t}[UTC]`) },
  { name: 'expanded-year', kind: 'open', anchor: 'second', what: 'an expanded year (+002026, by agreement in ISO 8601)', spell: retext((t) => `+00${t}`) },
  { name: 'leap-second', kind: 'open', anchor: 'fixed', what: 'the leap second 2016-12-31T23:59:60Z', spell: () => ({ text: '2016-12-31T23:59:60Z', lo: utc(2016, 12, 31, 23, 59, 59), hi: utc(2017, 1, 1) }) },
  { name: 'year-0000', kind: 'open', anchor: 'fixed', what: 'year 0000 (by agreement in ISO 8601)', spell: fixed('0000-01-01T00:00:00Z', utc(0, 1, 1)) },
  // Before 0001-01-01 in UTC: a date type whose range ends there cannot hold it.
  { name: 'year-0001-plus-01-00', kind: 'open', anchor: 'fixed', what: '0001-01-01T00:00:00+01:00 (before 1583: by agreement in ISO 8601; in UTC still year 0000)', spell: fixed('0001-01-01T00:00:00+01:00', utc(0, 12, 31, 23)) },
  { name: 'year-10000-expanded', kind: 'open', anchor: 'fixed', what: 'the expanded year +10000', spell: fixed('+10000-01-01T00:00:00Z', utc(10000, 1, 1)) },
]);

export type BoundCaseName = (typeof BOUND_CASES)[number]['name'];
export const boundId = (name: BoundCaseName) => `query-grammar-bound-${name}-${BOUND_CASES.find((c) => c.name === name)!.kind === 'valid' ? 'accepted' : 'recorded'}`;

// ---------------------------------------------------------------- start_at and end_at together

export interface WindowCase {
  name: string;
  kind: 'valid' | 'fraction' | 'equal';
  what: string;
  spell: (x: Instant) => { start: SpelledBound; end: SpelledBound };
}

const windowCases = <const N extends string>(cases: readonly (WindowCase & { name: N })[]) => cases;

export const WINDOW_CASES = windowCases([
  {
    name: 'different-offsets', kind: 'valid', what: 'start_at written with +14:00 and end_at one second later written with -12:00',
    spell: (x) => { const f = floorSecond(x); const e = plus(f, 1n, 0); return { start: exact(formatInstant(f, { offsetMinutes: 840 }), f), end: exact(formatInstant(e, { offsetMinutes: -720 }), e) }; },
  },
  {
    name: 'one-nanosecond', kind: 'fraction', what: 'start_at a created_at and end_at one nanosecond later (nine fraction digits)',
    spell: (x) => { const e = plus(x, 1n, 9); return { start: exact(formatInstant(x, { digits: 9 }), x), end: exact(formatInstant(e, { digits: 9 }), e) }; },
  },
  {
    // The same instant: start_at is not earlier than end_at, whatever the text says (-12:00 sorts before +14:00 as text).
    name: 'equal-instants-different-offsets', kind: 'equal', what: 'start_at and end_at the same instant, written with -12:00 and +14:00',
    spell: (x) => { const f = floorSecond(x); return { start: exact(formatInstant(f, { offsetMinutes: -720 }), f), end: exact(formatInstant(f, { offsetMinutes: 840 }), f) }; },
  },
]);

export type WindowCaseName = (typeof WINDOW_CASES)[number]['name'];
export const windowId = (name: WindowCaseName) => `query-grammar-window-${name}-${WINDOW_CASES.find((c) => c.name === name)!.kind === 'equal' ? 'rejected' : 'exact'}`;

// ---------------------------------------------------------------- limit / offset / sort_order with stray characters

export type IntParam = 'limit' | 'offset';
export const INT_PARAMS = ['limit', 'offset'] as const satisfies readonly IntParam[];

export interface StrayCase {
  name: string;
  /** The text after `key=`, exactly as it goes on the wire. */
  raw: string;
  what: string;
}

const strays = <const N extends string>(cases: readonly (StrayCase & { name: N })[]) => cases;

// Beside checks/service/pagination.cases.ts (signs, leading zeros, spaces and tabs around, decimals, exponents, other
// scripts' digits): characters inside the digits, after them, and invisible ones before them.
export const INTEGER_STRAYS = strays([
  { name: 'inner-space', raw: '1%200', what: '"1 0" (a space inside)' },
  { name: 'inner-underscore', raw: '1_0', what: '"1_0" (a digit separator, as Python\'s int() reads it)' },
  { name: 'inner-nul', raw: '1%000', what: '"1", NUL, "0"' },
  { name: 'trailing-nul', raw: '1%00', what: '"1" then NUL' },
  { name: 'trailing-newline', raw: '1%0A', what: '"1" then a newline' },
  { name: 'trailing-letters', raw: '10abc', what: '"10abc" (parseInt reads 10)' },
  { name: 'unit-suffix', raw: '10px', what: '"10px"' },
  { name: 'trailing-percent-sign', raw: '1%25', what: '"1%"' },
  { name: 'trailing-hash', raw: '1%23', what: '"1#"' },
  { name: 'leading-no-break-space', raw: '%C2%A01', what: 'NO-BREAK SPACE then "1"' },
  { name: 'leading-byte-order-mark', raw: '%EF%BB%BF1', what: 'a byte order mark then "1"' },
  { name: 'leading-zero-width-space', raw: '%E2%80%8B1', what: 'ZERO WIDTH SPACE then "1"' },
  { name: 'trailing-zero-width-space', raw: '1%E2%80%8B', what: '"1" then ZERO WIDTH SPACE' },
  { name: 'quoted', raw: '%221%22', what: '"\\"1\\"" (in double quotes)' },
]);

export type IntegerStrayName = (typeof INTEGER_STRAYS)[number]['name'];
export const integerStrayId = (param: IntParam, name: IntegerStrayName) => `query-grammar-${param}-${name}-rejected`;

export const SORT_STRAYS = strays([
  { name: 'trailing-space', raw: 'asc%20', what: '"asc "' },
  { name: 'leading-space', raw: '%20desc', what: '" desc"' },
  { name: 'inner-space', raw: 'as%20c', what: '"as c"' },
  { name: 'trailing-tab', raw: 'desc%09', what: '"desc" then a tab' },
  { name: 'trailing-newline', raw: 'asc%0A', what: '"asc" then a newline' },
  { name: 'trailing-nul', raw: 'asc%00', what: '"asc" then NUL' },
  { name: 'leading-byte-order-mark', raw: '%EF%BB%BFasc', what: 'a byte order mark then "asc"' },
  { name: 'trailing-zero-width-space', raw: 'desc%E2%80%8B', what: '"desc" then ZERO WIDTH SPACE' },
  { name: 'raw-plus', raw: 'asc+', what: '"asc+" (a raw "+": a plus, or a space under form decoding)' },
  { name: 'trailing-dot', raw: 'asc.', what: '"asc."' },
  { name: 'word-ascending', raw: 'ascending', what: '"ascending"' },
  { name: 'both-values', raw: 'asc,desc', what: '"asc,desc"' },
  { name: 'quoted', raw: '%22desc%22', what: '"\\"desc\\"" (in double quotes)' },
  { name: 'mixed-case', raw: 'Desc', what: '"Desc"' },
  { name: 'fullwidth', raw: '%EF%BD%81%EF%BD%93%EF%BD%83', what: '"ａｓｃ" (fullwidth letters)' },
]);

export type SortStrayName = (typeof SORT_STRAYS)[number]['name'];
export const sortStrayId = (name: SortStrayName) => `query-grammar-sort-order-${name}-rejected`;

/** Percent-encoded spellings of the two values: decoded first (RFC 3986 §2.1), they are the values themselves. */
export const SORT_ENCODED = [
  { name: 'asc-every-byte-escaped', raw: '%61%73%63', value: 'asc' },
  { name: 'desc-first-byte-escaped', raw: '%64esc', value: 'desc' },
] as const;
export type SortEncodedName = (typeof SORT_ENCODED)[number]['name'];
export const sortEncodedId = (name: SortEncodedName) => `query-grammar-sort-order-${name}-accepted`;

// ---------------------------------------------------------------- empty query strings

export interface EmptyQueryCase {
  name: string;
  route: 'list' | 'encounter' | 'document';
  /** What follows the path, from the `?` on. */
  query: string;
  /** `must`: no key at all, so the request is the route's plain one. `open`: empty pairs, whose reading is not settled. */
  kind: 'must' | 'open';
  what: string;
}

export const EMPTY_QUERIES = [
  { name: 'list-question-mark', route: 'list', query: '?', kind: 'must', what: 'the list route with "?" and nothing after it' },
  { name: 'encounter-question-mark', route: 'encounter', query: '?', kind: 'must', what: 'an encounter with "?" and nothing after it' },
  { name: 'document-question-mark', route: 'document', query: '?', kind: 'must', what: 'a clinical document with "?" and nothing after it' },
  { name: 'list-lone-ampersand', route: 'list', query: '?&', kind: 'open', what: 'the list route with "?&" (one empty pair)' },
  { name: 'list-empty-pairs-around-limit', route: 'list', query: '?&limit=5&', kind: 'open', what: 'the list route with "?&limit=5&" (empty pairs around limit=5)' },
] as const satisfies readonly EmptyQueryCase[];

export type EmptyQueryName = (typeof EMPTY_QUERIES)[number]['name'];
export const emptyQueryId = (name: EmptyQueryName) => `query-grammar-empty-query-${name}-${EMPTY_QUERIES.find((c) => c.name === name)!.kind === 'must' ? 'accepted' : 'recorded'}`;

// ---------------------------------------------------------------- path ids in equivalent encodings

export type IdRoute = 'encounter' | 'document';
export const ID_ROUTES = ['encounter', 'document'] as const satisfies readonly IdRoute[];

/**
 * Another percent-encoding of an id that names the same resource (RFC 3986 §2.3: an unreserved character and
 * its %XX are equivalent; §6.2.2.1: hex digits in either case). Reserved characters are never changed from
 * or to their escapes (that changes meaning).
 */
export interface IdEncoding {
  name: string;
  what: string;
  /** Whether the encoding changes anything for an id (an id without a letter in its hex digits has no lower-case form). */
  applies: (id: string) => boolean;
  encode: (id: string) => string;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const hex = (b: number, lower: boolean) => `%${lower ? b.toString(16).padStart(2, '0') : b.toString(16).padStart(2, '0').toUpperCase()}`;

/** The usual encoding of a path segment: unreserved ASCII as is, every other byte %XX with upper-case hex. */
export function plainSegment(id: string): string {
  let out = '';
  for (const b of Buffer.from(id, 'utf8')) out += b < 0x80 && UNRESERVED.test(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b, false);
  return out;
}

/** Every byte as %xx (lower-case hex digits when `lower`). */
function everyByte(id: string, lower: boolean): string {
  let out = '';
  for (const b of Buffer.from(id, 'utf8')) out += hex(b, lower);
  return out;
}

export const ID_ENCODINGS = [
  {
    name: 'first-unreserved-escaped', what: 'its first unreserved character percent-encoded (as %41 for "A")',
    applies: (id: string) => [...id].some((c) => UNRESERVED.test(c)),
    encode: (id: string) => {
      const i = [...id].findIndex((c) => UNRESERVED.test(c));
      const chars = [...id];
      return chars.map((c, k) => (k === i ? hex(c.charCodeAt(0), false) : plainSegment(c))).join('');
    },
  },
  {
    name: 'every-byte-escaped-upper-hex', what: 'every byte percent-encoded with upper-case hex digits',
    applies: (id: string) => id.length > 0,
    encode: (id: string) => everyByte(id, false),
  },
  {
    name: 'every-byte-escaped-lower-hex', what: 'every byte percent-encoded with lower-case hex digits',
    applies: (id: string) => /[a-f]/.test(everyByte(id, true)),
    encode: (id: string) => everyByte(id, true),
  },
] as const satisfies readonly IdEncoding[];

export type IdEncodingName = (typeof ID_ENCODINGS)[number]['name'];
export const idEncodingId = (route: IdRoute, name: IdEncodingName) => `query-grammar-${route}-id-${name}-same-resource`;
