// §4.1 list semantics on the target's own data: ordering by created_at in both directions and by
// default, the encounter_id tie-breaker, start_at inclusive / end_at exclusive on a boundary taken from
// the listed encounters, date-time validation, the start/end relation, total against the pages, each
// encounter exactly once, and organization scoping of the items. Every page passes expectSuccess, so
// each item is also checked against the closed PublicEncounterSummary.
import { suite } from '../../engine/declare.ts';
import { inPool } from '../../engine/pool.ts';
import { describe, expectDocumented, expectError, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { NotVerified, type CheckScope } from '../../record/record.ts';
import type { CheckApi } from '../../observe/target.ts';
import {
  createdAt, createdAtViolations, formatInstant, ID_ORDERS, listTarget, NS_PER_MS, sameWalk, sample, strictlyOrdered, tieGroups, walkList,
  type EncounterSummary, type ListBody, type Walk, type WalkOptions, WALK_LIMIT,
} from '../../observe/list-walk.ts';
import { listWindow, windowEnds, type End } from '../../observe/list-window.ts';
import { BAD_DATES, badDateId, DATE_PARAMS, RELATIONS, relationId } from './list.cases.ts';

const check = suite(import.meta.filename);

const ids = (items: EncounterSummary[]) => items.map((i) => i.encounter_id);

/** The first position where two id sequences differ, described; undefined when they are equal. */
function firstDifference(a: string[], b: string[]): string | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return `position ${i}: ${a[i] ?? '(end)'} in the first, ${b[i] ?? '(end)'} in the second (lengths ${a.length} and ${b.length})`;
  }
  return undefined;
}

/** The caller's organization, read from the detail of the profile's own encounter. */
async function callerOrganization(api: CheckApi): Promise<string> {
  const ex = await api.get(`/external/v1/encounters/${encodeURIComponent(api.encounter('own_encounter'))}`, { shared: true });
  return expectSuccess<{ encounter: EncounterSummary }>(ex, 'getPublicEncounter').encounter.organization_id;
}

interface Problem {
  title: string;
  detail: string;
}

/**
 * Offset pages carry no snapshot guarantee (LIST-OFFSET-NO-SNAPSHOT): a problem seen across pages or
 * queries fails only when the data is static, i.e. walking each query again gives the same pages. When
 * the data moved in between, the problem is recorded, not judged.
 */
async function judge(api: CheckApi, scope: CheckScope, problem: Problem | undefined, walks: Walk[]): Promise<void> {
  if (!problem) return;
  for (const w of walks) {
    if (!sameWalk(w, await walkList(api, w.params, w.limit, { fresh: true }))) {
      scope.observe(`the listed data changed between walks, so this was not judged: ${problem.title}: ${problem.detail}`);
      return;
    }
  }
  fail(problem.title, problem.detail);
}

/**
 * Walks the list within the window whole-list checks are judged on (observe/list-window.ts): the whole list
 * when it holds at most --list-window encounters, else the newest ones, so the cost does not grow with the
 * organization. The check's own parameters override the window's.
 */
async function walkWindow(api: CheckApi, params: Record<string, string | undefined> = {}, limit?: number, opts?: WalkOptions, end: End = 'newest'): Promise<Walk> {
  const window = await listWindow(api, end);
  // Bounded before the run's list was first read (end_at, exclusive): what stands still on a deployment with traffic,
  // the same bound for every walk of the worker, so two walks compare alike (issue 38).
  return walkList(api, { ...window.params, ...(window.params.end_at === undefined && !('end_at' in params) ? { end_at: window.still } : {}), ...params }, limit, opts);
}

/** Tie groups of the windows at both ends of the timeline (one walk when the list is walked whole): ties are sparse. */
async function tiesAtBothEnds(api: CheckApi, sort: 'asc' | 'desc'): Promise<{ start: number; items: EncounterSummary[] }[]> {
  const walks = await Promise.all((await windowEnds(api)).map((end) => walkWindow(api, { sort_order: sort }, undefined, undefined, end)));
  return needTies(walks.flatMap((w) => tieGroups(w.items)), 'the tie-breaker');
}

/**
 * A walk of the window over at least two pages: when the window fits in one page of 100, it is walked again
 * with pages of a third of it, so that what pagination does across pages (repeats, gaps, totals) shows.
 */
async function walkPages(api: CheckApi, params: Record<string, string | undefined> = {}): Promise<Walk> {
  const walk = await walkWindow(api, params);
  if (walk.pages.length >= 2 || walk.items.length < 2) return walk;
  return walkWindow(api, params, Math.ceil(walk.items.length / 3));
}

function needTies(groups: { start: number; items: EncounterSummary[] }[], what: string): { start: number; items: EncounterSummary[] }[] {
  if (groups.length === 0) throw new NotVerified(`no two listed encounters share a created_at, so ${what} cannot be observed`);
  return groups;
}

// ---------------------------------------------------------------- ordering

for (const dir of ['asc', 'desc'] as const) {
  const id = `list-sort-${dir}-by-created-at`;
  check({ id, requirements: ['LIST-ORDERING-CREATED-AT', 'LIST-SORT-ORDER-ENUM'], title: `sort_order=${dir} walks every page in ${dir === 'asc' ? 'non-decreasing' : 'non-increasing'} created_at order`, run: async (api) => {
    const walk = await walkWindow(api, { sort_order: dir });
    const bad = createdAtViolations(walk.items, dir);
    if (bad.length > 0) fail(`sort_order=${dir} is not ordered by created_at ${dir === 'asc' ? 'ascending' : 'descending'}`, bad.join('; '));
  } });
}

check({ id: 'list-sort-default-desc', requirements: ['LIST-SORT-DEFAULT-DESC', 'LIST-ORDERING-CREATED-AT', 'LIST-OFFSET-NO-SNAPSHOT'], title: 'without sort_order the list is ordered as with sort_order=desc', run: async (api, scope) => {
  const byDefault = await walkWindow(api);
  const bad = createdAtViolations(byDefault.items, 'desc');
  if (bad.length > 0) fail('the default order is not created_at descending', bad.join('; '));
  const desc = await walkWindow(api, { sort_order: 'desc' });
  const diff = firstDifference(ids(byDefault.items), ids(desc.items));
  await judge(api, scope, diff ? { title: 'the default order differs from sort_order=desc', detail: diff } : undefined, [byDefault, desc]);
  // A window cannot show the first page over everything, which is what a caller without filters sees first:
  // that page is compared on its own.
  if (Object.keys((await listWindow(api)).params).length > 0) {
    const [page, descPage] = await Promise.all([listTarget({ limit: WALK_LIMIT }), listTarget({ sort_order: 'desc', limit: WALK_LIMIT })].map(async (t) => expectSuccess<ListBody>(await api.get(t), 'listPublicEncounters')));
    const badFirst = createdAtViolations(page.items, 'desc');
    if (badFirst.length > 0) fail('the first page under the default order is not created_at descending', badFirst.join('; '));
    const firstDiff = firstDifference(ids(page.items), ids(descPage.items));
    // New encounters may arrive between the two reads (no snapshot guarantee): a moved total is recorded, not judged.
    if (firstDiff && page.total !== descPage.total) scope.observe(`the total moved between the two first pages (${page.total}, ${descPage.total}), so they were not compared (${firstDiff})`);
    else if (firstDiff) fail('the first page under the default order differs from the first page with sort_order=desc', firstDiff);
  }
} });

// The tie-breaker's direction is open (LIST-TIE-BREAKER-DIRECTION): the spec asks only for encounter_id as a
// deterministic tie-breaker. With sort_order=asc the usual readings ("follows sort_order", "always ascending")
// both give ascending ties, which passes; descending ties are a consistent total order too, recorded as
// informational; anything that is not one encounter_id order fails. (The id is permanent, from when
// ascending was required.)
check({ id: 'list-tie-breaker-asc-encounter-id-ascending', requirements: ['LIST-TIE-BREAKER-ENCOUNTER-ID', 'LIST-TIE-BREAKER-DIRECTION'], title: 'with sort_order=asc, encounters with equal created_at follow one consistent encounter_id order (ascending expected, descending recorded)', run: async (api, scope) => {
  const groups = await tiesAtBothEnds(api, 'asc');
  if (ID_ORDERS.some((o) => groups.every((g) => strictlyOrdered(ids(g.items), o.compare, 'asc')))) return;
  const desc = ID_ORDERS.find((o) => groups.every((g) => strictlyOrdered(ids(g.items), o.compare, 'desc')));
  if (desc) {
    scope.observe(`with sort_order=asc, ${groups.length} tie group(s) are ordered by encounter_id descending (against sort_order) in ${desc.name}`);
    return;
  }
  const bad = groups.filter((g) => !ID_ORDERS.some((o) => strictlyOrdered(ids(g.items), o.compare, 'asc') || strictlyOrdered(ids(g.items), o.compare, 'desc')));
  fail('ties on created_at are not in one consistent encounter_id order', (bad.length > 0 ? bad : groups).map((g) => `at ${g.start} (${g.items[0].created_at}): ${ids(g.items).join(', ')}`).join('; '));
} });

check({ id: 'list-tie-breaker-desc-consistent', requirements: ['LIST-TIE-BREAKER-ENCOUNTER-ID', 'LIST-TIE-BREAKER-DIRECTION'], title: 'with sort_order=desc, ties on created_at follow one consistent encounter_id order (direction recorded)', run: async (api, scope) => {
  const groups = await tiesAtBothEnds(api, 'desc');
  for (const dir of ['desc', 'asc'] as const) {
    const order = ID_ORDERS.find((o) => groups.every((g) => strictlyOrdered(ids(g.items), o.compare, dir)));
    if (order) {
      scope.observe(`with sort_order=desc, ${groups.length} tie group(s) are ordered by encounter_id ${dir === 'desc' ? 'descending (the tie-breaker follows sort_order)' : 'ascending (the tie-breaker is always ascending)'} in ${order.name}`);
      return;
    }
  }
  fail('ties on created_at are not in one consistent encounter_id order', groups.map((g) => `at ${g.start} (${g.items[0].created_at}): ${ids(g.items).join(', ')}`).join('; '));
} });

/** How likely two reads of these tie groups agree if ties were ordered at random: the product of 1/k! over the groups. */
function chanceOfAgreeing(groups: { items: EncounterSummary[] }[]): number {
  let p = 1;
  for (const g of groups) for (let k = 2; k <= g.items.length; k++) p /= k;
  return p;
}

/** A nondeterministic order shows only in ties; re-reads of a tie group stop once a random order would have shown this surely. */
const UNNOTICED = 1e-4;
const MAX_TIE_REREADS = 6;

check({ id: 'list-order-deterministic', requirements: ['CONTRACT-DISCLOSURE-NO-EFFECT', 'LIST-TIE-BREAKER-ENCOUNTER-ID', 'LIST-ORDERING-CREATED-AT', 'LIST-OFFSET-NO-SNAPSHOT'], title: 'the same list query walked twice gives the same order, in both directions', run: async (api, scope) => {
  // Both directions at once; within one, the second walk follows the first (a read must not change what the next sees).
  // On a windowed list, both ends of the timeline: ties are sparse, and an order that varies shows in ties only.
  const runs = (await windowEnds(api)).flatMap((end) => (['asc', 'desc'] as const).map((dir) => ({ end, dir })));
  let unnoticed = 1;
  const groups: { items: EncounterSummary[] }[] = [];
  await inPool(runs, 2, async ({ end, dir }) => {
    // Both walks are bounded before the run (walkWindow): encounters a live deployment creates meanwhile stay out.
    const first = await walkWindow(api, { sort_order: dir }, undefined, undefined, end);
    const second = await walkWindow(api, { sort_order: dir }, undefined, { fresh: true }, end);
    const diff = firstDifference(ids(first.items), ids(second.items));
    // A changed total means the data moved (no snapshot guarantee); the same total and another order does not.
    const totals = (w: Walk) => w.pages.map((p) => p.body.total).join(',');
    if (diff && totals(first) !== totals(second)) return scope.observe(`sort_order=${dir}: the total changed between two walks, so their order was not compared (${diff})`);
    if (diff) fail(`two identical sort_order=${dir} walks disagree`, diff);
    const ties = tieGroups(first.items);
    groups.push(...ties);
    unnoticed *= chanceOfAgreeing(ties);
  });
  if (unnoticed <= UNNOTICED || groups.length === 0) return;
  // The walks held few ties (a window of a large list, say): the largest tie group is read alone, again and
  // again, until an order that varies would have shown.
  const largest = groups.reduce((a, b) => (b.items.length > a.items.length ? b : a));
  const at = createdAt(largest.items[0]);
  const q = { sort_order: 'asc', start_at: largest.items[0].created_at, end_at: formatInstant(at + NS_PER_MS) };
  const read = async () => expectSuccess<ListBody>(await api.get(listTarget(q), { fresh: true }), 'listPublicEncounters');
  const base = await read();
  for (let n = 0; n < MAX_TIE_REREADS && unnoticed > UNNOTICED; n++) {
    const again = await read();
    const diff = firstDifference(ids(base.items), ids(again.items));
    if (diff && again.total !== base.total) return scope.observe(`the total of ${listTarget(q)} changed between two reads, so their order was not compared (${diff})`);
    if (diff) fail(`two identical reads of the encounters created at ${largest.items[0].created_at} disagree`, `${listTarget(q)}: ${diff}`);
    unnoticed *= chanceOfAgreeing(tieGroups(again.items));
  }
} });

// ---------------------------------------------------------------- start_at / end_at on the target's own data

/** The middle encounter of the ascending walk: there is data on both sides of its created_at. */
function boundary(walk: Walk): EncounterSummary {
  if (walk.items.length < 2) throw new NotVerified('fewer than two listable encounters: no boundary with data on both sides');
  return walk.items[Math.floor(walk.items.length / 2)];
}

// start_at is inclusive and end_at exclusive: one check each, on a boundary taken from the target's data.
const BOUNDS = [
  {
    param: 'start_at', id: 'list-start-at-inclusive', requirement: 'LIST-START-AT-INCLUSIVE', boundaryListed: true, inside: 'at or after', outside: 'before',
    isInside: (created: bigint, t: bigint) => created >= t,
    title: 'start_at=T lists exactly the encounters created at or after T, including one created at T',
  },
  {
    param: 'end_at', id: 'list-end-at-exclusive', requirement: 'LIST-END-AT-EXCLUSIVE', boundaryListed: false, inside: 'before', outside: 'at or after',
    isInside: (created: bigint, t: bigint) => created < t,
    title: 'end_at=T lists exactly the encounters created before T, excluding one created at T',
  },
] as const;

for (const bound of BOUNDS) {
  check({ id: bound.id, requirements: [bound.requirement, 'LIST-OFFSET-NO-SNAPSHOT'], title: bound.title, run: async (api, scope) => {
    const all = await walkWindow(api, { sort_order: 'asc' });
    const b = boundary(all);
    const t = createdAt(b);
    const bounded = await walkWindow(api, { sort_order: 'asc', [bound.param]: b.created_at });
    const got = new Set(ids(bounded.items));
    const known = new Set(ids(all.items));
    const q = `${bound.param}=${b.created_at}`;
    const missing = ids(all.items.filter((i) => bound.isInside(createdAt(i), t))).filter((x) => !got.has(x));
    const outside = bounded.items.filter((i) => !bound.isInside(createdAt(i), t)).map((i) => `${i.encounter_id} ${i.created_at}`);
    const unknown = bounded.items.filter((i) => !known.has(i.encounter_id)).map((i) => i.encounter_id);
    let problem: Problem | undefined;
    if (got.has(b.encounter_id) !== bound.boundaryListed) {
      problem = { title: `${bound.param} is not ${bound.boundaryListed ? 'inclusive' : 'exclusive'}`, detail: `${b.encounter_id} (created_at ${b.created_at}) is ${bound.boundaryListed ? 'missing' : 'listed'} with ${q}` };
    } else if (missing.length > 0) problem = { title: `${q} leaves out encounters created ${bound.inside} it`, detail: sample(missing) };
    else if (outside.length > 0) problem = { title: `${q} lists encounters created ${bound.outside} it`, detail: sample(outside) };
    else if (unknown.length > 0) problem = { title: `${q} lists encounters the unbounded list does not`, detail: sample(unknown) };
    await judge(api, scope, problem, [all, bounded]);
  } });
}

// ---------------------------------------------------------------- date-time validation

for (const param of DATE_PARAMS) {
  for (const bad of BAD_DATES) {
    const id = badDateId(param, bad.name);
    check({ id, requirements: ['LIST-DATETIME-TZ-AWARE', 'COND-INVALID-QUERY-DATE'], title: `${param} as ${bad.what} is rejected with 422 invalid_query naming ${param}`, run: async (api) => {
      expectError(await api.get(listTarget({ [param]: bad.value })), { reason: 'invalid_query', field: param });
    } });
  }
}

// ---------------------------------------------------------------- start_at must be earlier than end_at

for (const rel of RELATIONS) {
  const id = relationId(rel.name);
  check({ id, requirements: ['LIST-START-BEFORE-END', 'LIST-START-BEFORE-END-REASON'], title: `start_at ${rel.what} end_at is rejected with a documented 4xx error (reason recorded)`, run: async (api, scope) => {
    const ex = await api.get(listTarget({ start_at: rel.start, end_at: rel.end }));
    const body = expectDocumented(ex, 'listPublicEncounters');
    const status = ex.response!.status;
    if (status === 200) fail(`start_at ${rel.what} end_at was accepted`, `200 with ${(body as { items: unknown[] }).items.length} item(s)`);
    if (status < 400 || status > 499) fail(`start_at ${rel.what} end_at did not get a 4xx`, describe(ex));
    const e = body as ErrorBody;
    // The rejection is decided (a must); which reason it carries is not shown (LIST-START-BEFORE-END-REASON): noted beside the pass.
    scope.note(`start_at ${rel.what} end_at answered ${status} ${e.reason_code} with field ${JSON.stringify(e.field)} (reason not shown in §4.1; 422 invalid_query is the closest reading)`);
  } });
}

// ---------------------------------------------------------------- total and pagination

check({ id: 'list-total-same-on-every-page', requirements: ['FIELD-LIST-TOTAL', 'LIST-PAGINATION-OFFSET-BASED', 'LIST-OFFSET-NO-SNAPSHOT'], title: 'total is the same on every page of one query', run: async (api, scope) => {
  const walk = await walkPages(api);
  if (walk.pages.length < 2) throw new NotVerified('fewer than two listable encounters: no second page');
  const totals = walk.pages.map((p) => p.body.total);
  const problem = new Set(totals).size === 1 ? undefined : { title: 'total changes from page to page', detail: walk.pages.map((p) => `offset ${p.offset}: total ${p.body.total}`).join(', ') };
  await judge(api, scope, problem, [walk]);
} });

check({ id: 'list-total-equals-items-walked', requirements: ['FIELD-LIST-TOTAL', 'LIST-PAGINATION-OFFSET-BASED', 'LIST-OFFSET-NO-SNAPSHOT'], title: 'total equals the number of items found by walking every page (limit 100; smaller pages when one page would hold them all)', run: async (api, scope) => {
  const walk = await walkPages(api);
  const bad = walk.pages.filter((p) => p.body.total !== walk.items.length);
  const problem = bad.length === 0 ? undefined : { title: 'total differs from the number of items on all pages', detail: `${walk.items.length} item(s) on ${walk.pages.length} page(s); ${bad.map((p) => `offset ${p.offset} says total ${p.body.total}`).join(', ')}` };
  await judge(api, scope, problem, [walk]);
} });

check({ id: 'list-walk-yields-each-encounter-once', requirements: ['LIST-PAGINATION-OFFSET-BASED', 'LIST-TIE-BREAKER-ENCOUNTER-ID', 'LIST-OFFSET-NO-SNAPSHOT'], title: 'walking every page lists each encounter exactly once', run: async (api, scope) => {
  for (const dir of ['desc', 'asc'] as const) {
    const walk = await walkPages(api, { sort_order: dir });
    const seen = new Map<string, number>();
    const repeated: string[] = [];
    walk.items.forEach((item, i) => {
      const before = seen.get(item.encounter_id);
      if (before !== undefined) repeated.push(`${item.encounter_id} at ${before} and ${i}`);
      else seen.set(item.encounter_id, i);
    });
    const problem = repeated.length === 0 ? undefined : { title: `sort_order=${dir}: an encounter appears more than once across the pages`, detail: sample(repeated) };
    await judge(api, scope, problem, [walk]);
  }
} });

check({ id: 'list-total-at-least-profile-minimum', requirements: ['FIELD-LIST-TOTAL'], title: 'total counts every matching encounter, not just the page (at least the profile\'s list_min_total)', needs: ['resources.list_min_total'], run: async (api, scope) => {
  const min = scope.need(api.target.profile.resources?.list_min_total, 'resources.list_min_total', 'resources.list_min_total');
  const body = expectSuccess<{ total: number; items: unknown[] }>(await api.get(listTarget(), { shared: true }), 'listPublicEncounters');
  if (body.total < min) fail('total is below the number of listable encounters', `total ${body.total} with ${body.items.length} item(s) on the page; the profile says at least ${min}`);
} });

// ---------------------------------------------------------------- organization scoping

check({ id: 'list-items-own-organization', requirements: ['LIST-ORG-SCOPED', 'CONTRACT-ORG-SCOPED-RESULTS'], title: 'every listed encounter belongs to the caller\'s organization', needs: ['resources.own_encounter'], run: async (api) => {
  const org = await callerOrganization(api);
  const walk = await walkWindow(api);
  const foreign = walk.items.filter((i) => i.organization_id !== org).map((i) => `${i.encounter_id} (${i.organization_id})`);
  if (foreign.length > 0) fail('the list contains encounters of another organization', `caller organization ${org}: ${sample(foreign)}`);
} });

check({ id: 'list-excludes-other-org-encounter', requirements: ['LIST-ORG-SCOPED', 'ENC-OTHER-ORG-NOT-RETURNED'], title: 'the encounter of another organization is never listed', needs: ['resources.other_org_encounter'], run: async (api) => {
  const foreign = api.encounter('other_org_encounter');
  const walk = await walkWindow(api);
  if (walk.items.some((i) => i.encounter_id === foreign)) fail('the list contains the other organization\'s encounter', foreign);
} });

// §4.2 states "Demo/training encounters ... are not returned" for the detail route only; whether the
// list includes them is open (LIST-DEMO-TRAINING is unspecified), so what the target does is recorded
// as informational. The walk itself still validates every page against the contract.
check({ id: 'list-excludes-demo-encounter', requirements: ['LIST-DEMO-TRAINING'], title: 'whether the demo/training encounter is listed is recorded', needs: ['resources.demo_encounter'], run: async (api, scope) => {
  const demo = api.encounter('demo_encounter');
  const walk = await walkWindow(api);
  const listed = walk.items.some((i) => i.encounter_id === demo);
  scope.observe(listed ? 'the list includes the demo/training encounter (the detail route must refuse it)' : 'the list excludes the demo/training encounter');
} });
