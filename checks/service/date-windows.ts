// §4.1 date windows on the list route, judged against the caller's own data: a first walk without filters
// gives every listable encounter with its exact created_at instant; windows [start_at, end_at) are chosen
// from those instants (bounds on existing created_at values, so inclusive and exclusive both matter). Then
// `total` equals what walking every page of a window yields, the same instant written with `Z`, `+05:30`
// and `-08:00` (percent-encoded) selects the same encounters, both bounds in both sort directions give
// exactly the encounters in [start, end), and a window that matches nothing gives total 0 and no items.
// Offset pages are not snapshot-consistent (LIST-OFFSET-NO-SNAPSHOT): a total that moves during a walk is
// recorded, not judged.
import { suite } from '../../engine/declare.ts';
import { mapPool } from '../../engine/pool.ts';
import { expectSuccess, fail } from '../../judge/assertions.ts';
import { NotVerified } from '../../record/record.ts';
import { createdAt, formatInstant, listTarget, NS_PER_MS, sample, walkList, type EncounterSummary, type ListBody, type Walk } from '../../observe/list-walk.ts';
import type { CheckApi } from '../../observe/target.ts';
import { listWindow, type End } from '../../observe/list-window.ts';
import type { CheckScope } from '../../record/record.ts';

const check = suite(import.meta.filename);

/** A small page, so that a window spans several pages and `total` is compared across them. */
const PAGE = 10;

interface Window {
  start?: bigint;
  end?: bigint;
  /** The window of the list the first walk covered (observe/list-window.ts): its bound stands where this one has none. */
  base: Record<string, string>;
  /** The encounter ids of the first walk inside [start, end). */
  expected: Set<string>;
}

/**
 * Every listable encounter of the caller within the window at one end of the timeline (the whole list when it is
 * no larger than --list-window), ascending, with its instant. Not enough distinct instants → not verified.
 */
async function everything(api: CheckApi, end: End = 'newest'): Promise<{ items: EncounterSummary[]; instants: bigint[]; base: Record<string, string> }> {
  const base = (await listWindow(api, end)).params;
  const walk = await walkList(api, { ...base, sort_order: 'asc' });
  const items = walk.items;
  const instants = [...new Set(items.map(createdAt))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (instants.length < 4) throw new NotVerified(`the caller's organization lists ${items.length} encounters at ${instants.length} distinct created_at instants; a date window needs at least 4`);
  return { items, instants, base };
}

function windowOf(items: EncounterSummary[], base: Record<string, string>, start?: bigint, end?: bigint): Window {
  const inside = items.filter((i) => (start === undefined || createdAt(i) >= start) && (end === undefined || createdAt(i) < end));
  return { start, end, base, expected: new Set(inside.map((i) => i.encounter_id)) };
}

/** A window whose bounds are existing created_at instants, from about a quarter to about two thirds of the list. */
function middleWindow({ items, instants, base }: { items: EncounterSummary[]; instants: bigint[]; base: Record<string, string> }): Window {
  const start = instants[Math.floor(instants.length / 4)];
  const end = instants[Math.max(Math.floor((instants.length * 2) / 3), Math.floor(instants.length / 4) + 1)];
  return windowOf(items, base, start, end);
}

function params(w: Window, offsetMinutes = 0, sort: 'asc' | 'desc' = 'asc'): Record<string, string | undefined> {
  return {
    sort_order: sort,
    start_at: w.start === undefined ? w.base.start_at : formatInstant(w.start, offsetMinutes),
    end_at: w.end === undefined ? w.base.end_at : formatInstant(w.end, offsetMinutes),
  };
}

function describeWindow(w: Window, offsetMinutes = 0): string {
  return `[${w.start === undefined ? '-∞' : formatInstant(w.start, offsetMinutes)}, ${w.end === undefined ? '+∞' : formatInstant(w.end, offsetMinutes)})`;
}

/** The totals of a walk, or undefined (recorded) when they moved between pages. */
function stableTotal(walk: Walk, scope: CheckScope, what: string): number | undefined {
  const totals = [...new Set(walk.pages.map((p) => p.body.total))];
  if (totals.length === 1) return totals[0];
  scope.observe(`${what}: total moved during the walk (${totals.join(' → ')}); offset pages are not snapshot-consistent, not judged`);
  return undefined;
}

/** Differences between the ids walked and the ids expected, described. */
function setDifferences(walked: EncounterSummary[], expected: Set<string>): string[] {
  const got = walked.map((i) => i.encounter_id);
  const gotSet = new Set(got);
  const out: string[] = [];
  const extra = got.filter((id) => !expected.has(id));
  const missing = [...expected].filter((id) => !gotSet.has(id));
  const repeated = got.length - gotSet.size;
  if (extra.length > 0) out.push(`outside the window: ${sample(extra)}`);
  if (missing.length > 0) out.push(`missing: ${sample(missing)}`);
  if (repeated > 0) out.push(`${repeated} repeated`);
  return out;
}

check({ id: 'date-window-total-equals-items-walked', requirements: ['FIELD-LIST-TOTAL', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE'], title: `with start_at, end_at or both, total equals the number of encounters walked through every page of the window (limit ${PAGE})`, run: async (api, scope) => {
  const newest = await everything(api);
  const mid = middleWindow(newest);
  // The end-only window is taken at the oldest end of the timeline, so that it stays bounded on a large list.
  const oldest = await everything(api, 'oldest');
  const windows = [windowOf(newest.items, newest.base, mid.start), windowOf(oldest.items, oldest.base, undefined, middleWindow(oldest).end), mid];
  const problems: string[] = [];
  // The three windows are walked at once (each walk goes page by page).
  const walks = await mapPool(windows, windows.length, (w) => walkList(api, params(w), PAGE));
  windows.forEach((w, i) => {
    const walk = walks[i];
    const total = stableTotal(walk, scope, describeWindow(w));
    if (total !== undefined && total !== walk.items.length) problems.push(`${describeWindow(w)}: total ${total}, ${walk.items.length} encounters walked in ${walk.pages.length} pages`);
  });
  if (problems.length > 0) fail('total does not count the encounters of the date window', problems.join('; '));
} });

check({ id: 'date-window-offset-forms-same-set', requirements: ['LIST-DATETIME-SAME-INSTANT', 'LIST-DATETIME-TZ-AWARE', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE'], title: 'the same window written with Z, +05:30 and -08:00 (percent-encoded) selects the same encounters and the same total', run: async (api, scope) => {
  const w = middleWindow(await everything(api));
  const offsets = [330, -480];
  // The same window in three spellings, walked at once.
  const [reference, ...others] = await mapPool([0, ...offsets], 3, (offset) => walkList(api, params(w, offset)));
  const refIds = reference.items.map((i) => i.encounter_id);
  const problems: string[] = [];
  for (const [k, offset] of offsets.entries()) {
    const walk = others[k];
    const ids = walk.items.map((i) => i.encounter_id);
    const diffs = setDifferences(walk.items, new Set(refIds));
    if (diffs.length > 0 || ids.length !== refIds.length) {
      problems.push(`${describeWindow(w, offset)} gave ${ids.length} encounters where ${describeWindow(w)} gave ${refIds.length} (${diffs.join('; ')})`);
      continue;
    }
    const a = stableTotal(walk, scope, describeWindow(w, offset));
    const b = stableTotal(reference, scope, describeWindow(w));
    if (a !== undefined && b !== undefined && a !== b) problems.push(`${describeWindow(w, offset)}: total ${a}, with Z: ${b}`);
  }
  if (problems.length > 0) fail('the same instant written with another offset selects other encounters', problems.join(' | '));
} });

for (const sort of ['asc', 'desc'] as const) {
  const id = `date-window-both-bounds-exact-${sort}`;
  check({ id, requirements: ['LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE', 'FIELD-LIST-ITEMS'], title: `start_at and end_at together, sort_order=${sort}, give exactly the encounters created in [start_at, end_at)`, run: async (api) => {
    const w = middleWindow(await everything(api));
    const walk = await walkList(api, params(w, 0, sort));
    const diffs = setDifferences(walk.items, w.expected);
    if (diffs.length > 0) fail(`the window ${describeWindow(w)} (${sort}) does not give exactly its encounters`, `${walk.items.length} walked, ${w.expected.size} expected: ${diffs.join('; ')}`);
  } });
}

check({ id: 'date-window-empty-total-zero', requirements: ['FIELD-LIST-TOTAL', 'FIELD-LIST-ITEMS', 'LIST-START-AT-INCLUSIVE', 'LIST-END-AT-EXCLUSIVE'], title: 'a date window that matches no encounter gives total 0 and no items', run: async (api) => {
  const { items, instants, base } = await everything(api);
  // A gap between two consecutive instants (start just after one, end at the next), else a day before the first.
  let w: Window | undefined;
  for (let i = 1; i < instants.length && !w; i++) {
    if (instants[i] - instants[i - 1] >= 2n * NS_PER_MS) w = windowOf(items, base, instants[i - 1] + NS_PER_MS, instants[i]);
  }
  if (!w || w.expected.size > 0) w = windowOf(items, base, instants[0] - 2n * 86_400_000n * NS_PER_MS, instants[0] - 86_400_000n * NS_PER_MS);
  if (w.expected.size > 0) throw new NotVerified('no window without encounters could be found in the first walk');
  const page = expectSuccess<ListBody>(await api.get(listTarget({ ...params(w), limit: PAGE })), 'listPublicEncounters');
  if (page.total !== 0 || page.items.length > 0) {
    fail('a date window without encounters is not empty', `${describeWindow(w)}: total ${page.total}, ${page.items.length} items (${sample(page.items.map((i) => i.encounter_id))})`);
  }
} });
