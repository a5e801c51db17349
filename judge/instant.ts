// Exact instants for date-time bounds: an RFC 3339 date-time read without losing a digit (whole epoch seconds
// plus the fraction's digits, any number of them), compared, shifted by exact amounts, and written back in a
// chosen offset and spelling. Date.parse rounds to milliseconds and would hide a service that does the same;
// nothing here rounds. Pure functions: no target, no outcome.

/** An instant: whole seconds since the epoch (UTC) and the decimal fraction of the next second, without trailing zeros. */
export interface Instant {
  seconds: bigint;
  fraction: string;
}

const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/** Seconds since the epoch of a proleptic Gregorian UTC date and time (any year JS dates reach). */
function epochSeconds(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): bigint {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d); // not Date.UTC: it reads years 0..99 as 1900..1999
  t.setUTCHours(h, mi, s, 0);
  return BigInt(t.getTime() / 1000);
}

/** The instant an RFC 3339 date-time names, or undefined when the text is not one (or names no real date). */
export function parseInstant(text: string): Instant | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  const check = new Date(0);
  check.setUTCFullYear(y, mo - 1, d);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  const offset = m[9] === undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  return { seconds: epochSeconds(y, mo, d, h, mi, s) - BigInt(offset * 60), fraction: (m[7] ?? '').replace(/0+$/, '') };
}

/** An instant from whole seconds and a fraction given as digits (trailing zeros dropped). */
export function instant(seconds: bigint, fraction = ''): Instant {
  return { seconds, fraction: fraction.replace(/0+$/, '') };
}

/** The UTC instant of a calendar date and time. */
export function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, fraction = ''): Instant {
  return instant(epochSeconds(y, mo, d, h, mi, s), fraction);
}

function scaled(a: Instant, digits: number): bigint {
  return a.seconds * 10n ** BigInt(digits) + BigInt(a.fraction.padEnd(digits, '0') || '0');
}

function unscaled(v: bigint, digits: number): Instant {
  const unit = 10n ** BigInt(digits);
  let seconds = v / unit;
  let rest = v % unit;
  if (rest < 0n) {
    seconds -= 1n;
    rest += unit;
  }
  return instant(seconds, digits === 0 ? '' : rest.toString().padStart(digits, '0'));
}

/** -1, 0 or 1, exactly (every digit counts). */
export function compareInstants(a: Instant, b: Instant): number {
  const digits = Math.max(a.fraction.length, b.fraction.length);
  const x = scaled(a, digits);
  const y = scaled(b, digits);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `a` moved by `amount` units of 10^-digits seconds (negative: earlier). `plus(x, 1n, 6)` is one microsecond later. */
export function plus(a: Instant, amount: bigint, digits: number): Instant {
  const d = Math.max(digits, a.fraction.length);
  return unscaled(scaled(a, d) + amount * 10n ** BigInt(d - digits), d);
}

/** The instant with its fraction dropped (the whole second it falls in). */
export function floorSecond(a: Instant): Instant {
  return instant(a.seconds);
}

/** The calendar fields of an instant seen at a UTC offset (minutes). */
export function fieldsAt(a: Instant, offsetMinutes = 0): { y: number; mo: number; d: number; h: number; mi: number; s: number; dayOfYear: number; weekday: number } {
  const local = new Date(Number(a.seconds + BigInt(offsetMinutes * 60)) * 1000);
  const y = local.getUTCFullYear();
  const start = new Date(0);
  start.setUTCFullYear(y, 0, 1);
  start.setUTCHours(0, 0, 0, 0);
  const dayOfYear = Math.floor((local.getTime() - start.getTime()) / 86_400_000) + 1;
  // ISO weekday: Monday 1 … Sunday 7.
  const weekday = ((local.getUTCDay() + 6) % 7) + 1;
  return { y, mo: local.getUTCMonth() + 1, d: local.getUTCDate(), h: local.getUTCHours(), mi: local.getUTCMinutes(), s: local.getUTCSeconds(), dayOfYear, weekday };
}

const p2 = (n: number) => String(n).padStart(2, '0');
const p4 = (n: number) => String(n).padStart(4, '0');

/** `+hh:mm` / `-hh:mm` (or `Z` for 0 unless `zero` says otherwise). */
export function offsetText(offsetMinutes: number, zero = 'Z', colon = true): string {
  if (offsetMinutes === 0 && zero) return zero;
  const abs = Math.abs(offsetMinutes);
  return `${offsetMinutes < 0 ? '-' : '+'}${p2(Math.floor(abs / 60))}${colon ? ':' : ''}${p2(abs % 60)}`;
}

export interface Spelling {
  /** UTC offset in minutes the local time is written at (default 0). */
  offsetMinutes?: number;
  /** What stands for offset 0 (default `Z`; `+00:00` or `-00:00` spell it numerically). */
  zero?: string;
  /** At least this many fraction digits (zeros added); the instant's own digits are always all written. */
  digits?: number;
  /** The separator between date and time (default `T`). */
  separator?: string;
}

/** An RFC 3339 date-time (extended format, four-digit year) naming exactly the instant. Years must be 0..9999 locally. */
export function formatInstant(a: Instant, sp: Spelling = {}): string {
  const offset = sp.offsetMinutes ?? 0;
  const f = fieldsAt(a, offset);
  if (f.y < 0 || f.y > 9999) throw new Error(`year ${f.y} has no four-digit RFC 3339 spelling`);
  const fraction = a.fraction.padEnd(sp.digits ?? 0, '0');
  return `${p4(f.y)}-${p2(f.mo)}-${p2(f.d)}${sp.separator ?? 'T'}${p2(f.h)}:${p2(f.mi)}:${p2(f.s)}${fraction ? `.${fraction}` : ''}${offsetText(offset, sp.zero ?? 'Z')}`;
}

/** The ISO 8601 week-numbering year, week and weekday of a local date. */
export function isoWeek(y: number, mo: number, d: number): { year: number; week: number; weekday: number } {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(0, 0, 0, 0);
  const weekday = ((date.getUTCDay() + 6) % 7) + 1;
  // The Thursday of the same week decides the week-numbering year.
  const thursday = new Date(date.getTime() + (4 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const jan1 = new Date(0);
  jan1.setUTCFullYear(year, 0, 1);
  jan1.setUTCHours(0, 0, 0, 0);
  const week = Math.floor((thursday.getTime() - jan1.getTime()) / 86_400_000 / 7) + 1;
  return { year, week, weekday };
}

/** Instant as plain text for messages: UTC, every digit. */
export function describeInstant(a: Instant): string {
  try {
    return formatInstant(a);
  } catch {
    return `${a.seconds}${a.fraction ? `.${a.fraction}` : ''} s since the epoch`;
  }
}
