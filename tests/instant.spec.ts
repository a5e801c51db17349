// judge/instant.ts: exact instants for the query-grammar bounds. Every digit counts, offsets and calendars are
// read and written exactly, and the spellings the query-grammar cases build name the instants they claim.
import { test, expect } from '@playwright/test';
import { compareInstants, floorSecond, formatInstant, instant, isoWeek, parseInstant, plus, utc } from '../judge/instant.ts';
import { BOUND_CASES, WINDOW_CASES } from '../checks/service/query-grammar.cases.ts';

test('parses RFC 3339 exactly, any offset, any number of fraction digits', () => {
  expect(parseInstant('2026-01-05T10:30:00Z')).toEqual({ seconds: BigInt(Date.UTC(2026, 0, 5, 10, 30) / 1000), fraction: '' });
  expect(parseInstant('2026-01-05T16:00:00.120+05:30')).toEqual({ seconds: BigInt(Date.UTC(2026, 0, 5, 10, 30) / 1000), fraction: '12' });
  expect(parseInstant('2026-01-05T10:30:00.000000000000001z')?.fraction).toBe('000000000000001');
  expect(parseInstant('0001-01-01T00:00:00+01:00')).toEqual(utc(0, 12, 31, 23));
  for (const bad of ['2026-02-30T00:00:00Z', '2026-01-05T10:30:00', '2026-01-05T24:00:00Z', '1767225600', '2026-01-05T10:30:00+00:00:30']) expect(parseInstant(bad), bad).toBeUndefined();
});

test('compares at every digit and shifts by exact amounts', () => {
  const x = parseInstant('2026-01-05T10:30:00.123Z')!;
  expect(compareInstants(plus(x, 1n, 9), x)).toBe(1);
  expect(compareInstants(plus(x, -1n, 6), x)).toBe(-1);
  expect(compareInstants(parseInstant('2026-01-05T10:30:00.1230Z')!, x)).toBe(0);
  expect(formatInstant(plus(x, 1n, 9), { digits: 9 })).toBe('2026-01-05T10:30:00.123000001Z');
  expect(formatInstant(plus(instant(0n), -1n, 6), { digits: 6 })).toBe('1969-12-31T23:59:59.999999Z');
  expect(formatInstant(floorSecond(x), { offsetMinutes: 840 })).toBe('2026-01-06T00:30:00+14:00');
  expect(formatInstant(floorSecond(x), { offsetMinutes: -720 })).toBe('2026-01-04T22:30:00-12:00');
});

test('ISO weeks follow the first Thursday', () => {
  expect(isoWeek(2026, 1, 1)).toEqual({ year: 2026, week: 1, weekday: 4 });
  expect(isoWeek(2021, 1, 3)).toEqual({ year: 2020, week: 53, weekday: 7 });
  expect(isoWeek(2024, 12, 30)).toEqual({ year: 2025, week: 1, weekday: 1 });
});

test('every bound and window case names the instant it claims wherever RFC 3339 can say it', () => {
  // Anchors on awkward days: year ends, a leap day, the ISO week-year boundary, just before midnight.
  const anchors = ['2026-01-05T10:30:00.123Z', '2024-12-30T23:59:59.999999Z', '2020-12-31T00:00:00Z', '2024-02-29T12:00:00.5Z', '2021-01-03T23:30:00Z'].map((t) => parseInstant(t)!);
  for (const x of anchors) {
    for (const c of BOUND_CASES) {
      const b = c.spell(c.anchor === 'second' ? floorSecond(x) : x);
      expect(compareInstants(b.lo, b.hi), c.name).toBeLessThanOrEqual(0);
      // The RFC 3339 ones are read back by the parser; the ISO 8601 ones are checked by their own rule below.
      const back = parseInstant(b.text);
      if (back) expect(compareInstants(back, b.lo), `${c.name}: ${b.text}`).toBe(0);
    }
    for (const c of WINDOW_CASES) {
      const w = c.spell(x);
      expect(compareInstants(parseInstant(w.start.text)!, w.start.lo), c.name).toBe(0);
      expect(compareInstants(parseInstant(w.end.text)!, w.end.lo), c.name).toBe(0);
    }
    const f = floorSecond(x);
    const find = (name: string) => BOUND_CASES.find((c) => c.name === name)!.spell(f);
    const iso = formatInstant(f);
    expect(find('basic-format').text).toBe(`${iso.slice(0, 10).replaceAll('-', '')}T${iso.slice(11, 19).replaceAll(':', '')}Z`);
    expect(find('end-of-day-24-00').lo).toEqual(utc(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)), Number(iso.slice(8, 10)) + 1));
    const week = find('week-date').text;
    const w = /^([0-9]{4})-W([0-9]{2})-([1-7])T/.exec(week)!;
    const jan4 = new Date(Date.UTC(Number(w[1]), 0, 4));
    const monday = jan4.getTime() - ((jan4.getUTCDay() + 6) % 7) * 86_400_000;
    expect(new Date(monday + ((Number(w[2]) - 1) * 7 + Number(w[3]) - 1) * 86_400_000).toISOString().slice(0, 10)).toBe(iso.slice(0, 10));
  }
});
