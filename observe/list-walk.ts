// Reading the encounter list for the list and resources suites: request targets with exact query text,
// a page-by-page walk in which every page passes through expectSuccess (closed contract schema), and
// exact instants and tie groups for ordering checks. Nothing here decides an outcome about ordering,
// totals or bounds: the checks do that from what the walk returns.
import type { CheckApi, Target } from './target.ts';
import { expectSuccess } from '../judge/assertions.ts';
import { NotVerified, type Exchange } from '../record/record.ts';

export interface DocumentSummary {
  document_id: string;
  schema_type: string;
  [field: string]: unknown;
}

export interface EncounterSummary {
  encounter_id: string;
  organization_id: string;
  created_at: string;
  updated_at: string;
  documents?: DocumentSummary[];
  [field: string]: unknown;
}

export interface ListBody {
  items: EncounterSummary[];
  limit: number;
  offset: number;
  total: number;
}

export interface Walk {
  /** The query walked (without limit and offset) and the page size. */
  params: Record<string, string | undefined>;
  limit: number;
  /** Every page in the order fetched, with the offset the walk asked for. */
  pages: { offset: number; body: ListBody; exchange: Exchange }[];
  /** The items of all pages, concatenated. */
  items: EncounterSummary[];
}

export const LIST_PATH = '/external/v1/encounters';
/** The largest page the contract allows (§4.1): the fewest requests per walk. */
export const WALK_LIMIT = 100;
const OFFSET_MAX = 10_000;

/** A query value as sent: percent-encoded except `:` (so `+` in an offset is `%2B`, never a space). */
export function queryValue(value: string): string {
  return encodeURIComponent(value).replaceAll('%3A', ':');
}

/** The list request target with the given parameters in the given order (undefined ones left out). */
export function listTarget(params: Record<string, string | number | undefined> = {}): string {
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${queryValue(String(v))}`)
    .join('&');
  return q ? `${LIST_PATH}?${q}` : LIST_PATH;
}

export interface WalkOptions {
  /**
   * A fresh walk, never one shared with an earlier check: for checks that compare two walks in time
   * (repeat-walk determinism, "did the data move" re-walks). Without it, a walk of the same query and page
   * size already made in this worker against the same target is shared (each distinct read once per run).
   */
  fresh?: boolean;
}

/** Walks made in this worker, per target (a meta-suite's switched target is one per switch setting: its checks share as a run's do). */
const walks = new WeakMap<Target, Map<string, Promise<Walk>>>();

/**
 * Walks every page of one list query (limit 100, offsets 0, 100, …) until a page is shorter than the
 * limit. A result larger than the offset range allows cannot be walked: the check is not_verified.
 * A walk already made in this worker is shared (its exchanges recorded as this check's evidence too) unless
 * `fresh`; a shared walk that ended in an error is walked again by the check that needs it, so its own
 * evidence shows what happened.
 */
export async function walkList(api: CheckApi, params: Record<string, string | undefined> = {}, limit = WALK_LIMIT, opts: WalkOptions = {}): Promise<Walk> {
  if (opts.fresh) return walkPages(api, params, limit, true);
  let byKey = walks.get(api.target);
  if (!byKey) walks.set(api.target, (byKey = new Map()));
  const key = `${limit} ${JSON.stringify(Object.entries(params).filter(([, v]) => v !== undefined))}`;
  const shared = byKey.get(key);
  if (shared) {
    try {
      const walk = await shared;
      for (const p of walk.pages) api.scope.record(p.exchange);
      return walk;
    } catch {
      return walkPages(api, params, limit);
    }
  }
  const mine = walkPages(api, params, limit);
  byKey.set(key, mine);
  mine.catch(() => byKey.delete(key));
  return mine;
}

/** Sends the walk's pages one after another; `fresh`: none of them answered from another check's read. */
async function walkPages(api: CheckApi, params: Record<string, string | undefined>, limit: number, fresh = false): Promise<Walk> {
  const walk: Walk = { params, limit, pages: [], items: [] };
  for (let offset = 0; ; offset += limit) {
    if (offset > OFFSET_MAX) {
      throw new NotVerified(`the query matches more than ${OFFSET_MAX + limit} encounters, more than offset pagination can reach`);
    }
    const exchange = await api.get(listTarget({ ...params, limit, offset }), { fresh });
    const body = expectSuccess<ListBody>(exchange, 'listPublicEncounters');
    walk.pages.push({ offset, body, exchange });
    walk.items.push(...body.items);
    if (body.items.length < limit) return walk;
  }
}

/** Whether a second walk of the same query gave the same items in the same order and the same totals. */
export function sameWalk(a: Walk, b: Walk): boolean {
  const totals = (w: Walk) => w.pages.map((p) => p.body.total).join(',');
  return a.items.length === b.items.length && a.items.every((x, i) => x.encounter_id === b.items[i].encounter_id) && totals(a) === totals(b);
}

const DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * The exact instant of an RFC 3339 date-time in nanoseconds since the epoch (fractions beyond
 * nanoseconds are cut). Undefined when the text is not such a date-time. Date.parse would round to
 * milliseconds and could merge distinct created_at values into a false tie.
 */
export function instantNs(text: string): bigint | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(ms)) return undefined;
  const fraction = BigInt(((m[7] ?? '.').slice(1) + '000000000').slice(0, 9));
  const offsetMinutes = m[9] === undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  return (BigInt(ms) - BigInt(offsetMinutes) * 60_000n) * 1_000_000n + fraction;
}

/** created_at of an item as an instant; a value that does not parse is a harness-visible defect. */
export function createdAt(item: EncounterSummary): bigint {
  const t = instantNs(item.created_at);
  if (t === undefined) throw new Error(`created_at ${JSON.stringify(item.created_at)} of ${item.encounter_id} is not an RFC 3339 date-time`);
  return t;
}

/** Runs of two or more consecutive items with the same created_at instant, with their start index. */
export function tieGroups(items: EncounterSummary[]): { start: number; items: EncounterSummary[] }[] {
  const groups: { start: number; items: EncounterSummary[] }[] = [];
  let i = 0;
  while (i < items.length) {
    let j = i + 1;
    while (j < items.length && createdAt(items[j]) === createdAt(items[i])) j++;
    if (j - i >= 2) groups.push({ start: i, items: items.slice(i, j) });
    i = j;
  }
  return groups;
}

/** How opaque ids may be compared: by UTF-16 code units (byte order for ASCII, "C" collation) or by a locale collation. */
export const ID_ORDERS: { name: string; compare: (a: string, b: string) => number }[] = [
  { name: 'code-unit order', compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0) },
  { name: 'locale collation', compare: new Intl.Collator('en').compare },
];

/** Whether ids are strictly ascending (or descending) under `compare`. */
export function strictlyOrdered(ids: string[], compare: (a: string, b: string) => number, dir: 'asc' | 'desc'): boolean {
  for (let i = 1; i < ids.length; i++) {
    const c = compare(ids[i - 1], ids[i]);
    if (dir === 'asc' ? c >= 0 : c <= 0) return false;
  }
  return true;
}

/** Positions where created_at goes against the direction (at most `max` of them, described). */
export function createdAtViolations(items: EncounterSummary[], dir: 'asc' | 'desc', max = 5): string[] {
  const out: string[] = [];
  for (let i = 1; i < items.length && out.length < max; i++) {
    const a = createdAt(items[i - 1]);
    const b = createdAt(items[i]);
    if (dir === 'asc' ? a > b : a < b) {
      out.push(`position ${i - 1}→${i}: ${items[i - 1].encounter_id} ${items[i - 1].created_at} then ${items[i].encounter_id} ${items[i].created_at}`);
    }
  }
  return out;
}

export const NS_PER_MS = 1_000_000n;

/** An instant (ns since the epoch) as RFC 3339 text with the given offset in minutes; the fraction only when not zero. */
export function formatInstant(ns: bigint, offsetMinutes = 0): string {
  const shiftedNs = ns + BigInt(offsetMinutes) * 60_000n * NS_PER_MS;
  const ms = shiftedNs >= 0n ? shiftedNs / NS_PER_MS : -((-shiftedNs + NS_PER_MS - 1n) / NS_PER_MS);
  const subMs = shiftedNs - ms * NS_PER_MS; // 0 … 999999
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = `${iso.slice(20, 23)}${String(subMs).padStart(6, '0')}`.replace(/0+$/, '');
  const clock = `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}`;
  if (offsetMinutes === 0) return `${clock}Z`;
  const abs = Math.abs(offsetMinutes);
  return `${clock}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** At most `max` entries of a list, with a count of the rest. */
export function sample(values: string[], max = 5): string {
  return values.length <= max ? values.join(', ') : `${values.slice(0, max).join(', ')} … (+${values.length - max} more)`;
}
