// The bounded part of the caller's encounter list that whole-list checks walk. A real organization has years
// of encounters; walking all of them costs requests, time and memory that grow with the target, and offset
// pagination stops at 10,000 anyway. Order, tie-breaker, totals, "each encounter once", organization scoping
// and the start/end bounds are properties of every part of the list, so they are judged on a date window of
// at most `bound` encounters found by asking `total` (one request per step of a bisection on created_at).
// A list no larger than the bound is walked whole, as before: no extra request beyond the first count.
//
// Two windows, one at each end of the timeline: `newest` is `start_at=T` (every encounter created at or after
// T; what the default sort shows first), `oldest` is `end_at=T` (every encounter created before T). Each is
// found once per worker and target and shared by the checks (the requests that find it are not any check's
// evidence; the walks of the window are).
import { expectSuccess } from '../judge/assertions.ts';
import { CheckFailure, NotVerified } from '../record/record.ts';
import { TargetStoppedAnswering, type CheckApi, type Target } from './target.ts';
import { createdAt, formatInstant, listTarget, NS_PER_MS, type ListBody } from './list-walk.ts';

/** Default bound: about what a seeded sandbox organization holds, so a walk of a window costs what a whole walk of it does. */
export const DEFAULT_LIST_WINDOW = 200;

/** The most encounters a whole-list check walks (--list-window, in the target's plan). */
export function listWindowBound(target: Target): number {
  const v = target.plan.listWindow;
  return v !== undefined && Number.isInteger(v) && v >= 10 ? v : DEFAULT_LIST_WINDOW;
}

export type End = 'newest' | 'oldest';

/** Query parameters selecting the window (empty: the whole list), and what it is, for details. */
export interface ListWindow {
  params: Record<string, string>;
  /** Whole list, or the window's bound and size. */
  about: string;
  /** How many encounters the whole list holds (the first count). */
  total: number;
  /**
   * An instant just before the window was found (end_at, exclusive): the walks that compare reads over time bound
   * themselves by it, so encounters a live deployment creates during the run never enter them (issue 38).
   */
  still: string;
}

const found = new WeakMap<Target, Map<End, Promise<ListWindow>>>();

/**
 * The window at one end of the caller's timeline, found once per worker and target. When the target stopped
 * answering meanwhile, the attempts that showed it are this check's evidence, as for any request it sends.
 */
export async function listWindow(api: CheckApi, end: End = 'newest'): Promise<ListWindow> {
  try {
    return await sharedWindow(api, end);
  } catch (e) {
    if (e instanceof TargetStoppedAnswering) for (const x of e.exchanges()) api.scope.record(x);
    throw e;
  }
}

/** The ends of the timeline whose windows differ: one (`newest`) when the list is walked whole, else both. */
export async function windowEnds(api: CheckApi): Promise<End[]> {
  const [newest, oldest] = await Promise.all([listWindow(api, 'newest'), listWindow(api, 'oldest')]);
  return JSON.stringify(newest.params) === JSON.stringify(oldest.params) ? ['newest'] : ['newest', 'oldest'];
}

function sharedWindow(api: CheckApi, end: End): Promise<ListWindow> {
  api.key('full');
  let byEnd = found.get(api.target);
  if (!byEnd) found.set(api.target, (byEnd = new Map()));
  let w = byEnd.get(end);
  if (!w) {
    w = findWindow(api.target, end, listWindowBound(api.target));
    byEnd.set(end, w);
    // A failure (a broken page, a stopped target) is not kept: the next check asks again and records its own evidence.
    w.catch(() => byEnd.delete(end));
  }
  return w;
}

/** One page of limit 1: the total and the first item (unrecorded: finding the window is no check's evidence). */
async function first(target: Target, params: Record<string, string>): Promise<{ total: number; created?: bigint }> {
  const ex = await target.send(listTarget({ ...params, limit: 1 }));
  const body = expectSuccess<ListBody>(ex, 'listPublicEncounters');
  return { total: body.total, created: body.items[0] ? createdAt(body.items[0]) : undefined };
}

async function findWindow(target: Target, end: End, bound: number): Promise<ListWindow> {
  const still = formatInstant(BigInt(Date.now() - 1_000) * NS_PER_MS);
  const whole = await first(target, {});
  if (whole.total <= bound) return { params: {}, about: `the whole list (${whole.total} encounters)`, total: whole.total, still };
  const [lo0, hi0] = await Promise.all([first(target, { sort_order: 'asc' }), first(target, { sort_order: 'desc' })]);
  if (lo0.created === undefined || hi0.created === undefined) throw new NotVerified('the list reports a total but its first pages are empty: no window can be found');
  // The ends of the timeline, whatever order the two sorts really gave (a target may get sort_order wrong; the checks judge that).
  const [lo, hi] = lo0.created <= hi0.created ? [lo0.created, hi0.created] : [hi0.created, lo0.created];
  // newest: the smallest T (ms steps) with count(created_at ≥ T) ≤ bound; oldest: the largest T with count(created_at < T) ≤ bound.
  const param = end === 'newest' ? 'start_at' : 'end_at';
  const count = async (t: bigint) => (await first(target, { [param]: formatInstant(t) })).total;
  let tooMany = end === 'newest' ? lo : hi + NS_PER_MS; // count(tooMany) > bound
  let fits = end === 'newest' ? hi : lo + NS_PER_MS; // count(fits) ≤ bound (unless more than bound share the first or last instant)
  let size = await count(fits);
  if (size > bound) {
    // Either that many encounters share the instant, or `total` does not count what the bound selects: a page tells.
    const q = { [param]: formatInstant(fits), limit: '100' };
    const page = expectSuccess<ListBody>(await target.send(listTarget(q)), 'listPublicEncounters');
    if (page.items.length < 100 && page.items.length !== size) {
      throw new CheckFailure('total does not count the encounters of a date window', `${listTarget(q)} lists ${page.items.length} encounter(s) on its only page but says total ${size}`);
    }
    throw new NotVerified(`more than ${bound} encounters share the ${end === 'newest' ? 'latest' : 'earliest'} created_at; raise --list-window`);
  }
  // Bisection on milliseconds; stop as soon as the window holds at least half the bound.
  while ((tooMany > fits ? tooMany - fits : fits - tooMany) > NS_PER_MS && size < bound / 2) {
    const mid = ((tooMany + fits) / 2n / NS_PER_MS) * NS_PER_MS;
    if (mid === tooMany || mid === fits) break;
    const n = await count(mid);
    if (n > bound) tooMany = mid;
    else {
      fits = mid;
      size = n;
    }
  }
  const t = formatInstant(fits);
  return { params: { [param]: t }, about: `the ${size} ${end} encounters (${param}=${t}) of ${whole.total}`, total: whole.total, still };
}
