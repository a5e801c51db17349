// §1 and §4: every route is GET only and no route creates, changes or deletes anything. With the full key,
// POST, PUT, PATCH and DELETE (no body) on the route's own-data path must not be answered 2xx (which non-2xx
// status is not shown: any is accepted, and its body is not judged since the contract documents none), and
// a GET before and after them must agree (§1: repeated reads have no effect on the response; on the audio
// route only audio_url and expires_at, minted per call, may differ).
import { suite } from '../../engine/declare.ts';
import { expectSuccess, fail } from '../../judge/assertions.ts';
import type { Exchange } from '../../record/record.ts';
import type { CheckApi } from '../../observe/target.ts';
import { ROUTES, type RouteRef } from '../../observe/routes.ts';

const check = suite(import.meta.filename, { fresh: true });

const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** JSON text with object members in sorted order: two bodies compare by value, not by spelling (RFC 8259 §4). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The success body as compared, by value: the audio URL response without the values minted per call. */
function comparable(route: RouteRef, ex: Exchange): string {
  const body = expectSuccess<Record<string, unknown>>(ex, route.operationId);
  if (route.name !== 'audio') return canonical(body);
  const { audio_url: _url, expires_at: _expires, ...rest } = body;
  return canonical(rest);
}

/** The list's total in a comparable body (undefined elsewhere). */
function totalOf(comparableBody: string): unknown {
  try {
    return (JSON.parse(comparableBody) as { total?: unknown }).total;
  } catch {
    return undefined;
  }
}

/**
 * Whether two bodies differ only by encounters whose updated_at moved later, none gone: an update recorded meanwhile,
 * which live traffic, the webhook sender's trigger (run by the harness itself, beside this check) or the non-GET
 * requests themselves may have made. Anything else that differs (an encounter gone, changed without a later
 * updated_at, any other member) is not that.
 */
function onlyUpdatedLater(before: string, after: string): boolean {
  const [was, now] = [new Map<string, Stamped>(), new Map<string, Stamped>()];
  if (canonical(encountersApart(JSON.parse(before), was)) !== canonical(encountersApart(JSON.parse(after), now))) return false;
  for (const [id, e] of was) {
    const later = now.get(id);
    if (!later || (later.text !== e.text && !(later.updatedAt > e.updatedAt))) return false;
  }
  return [...was].some(([id, e]) => now.get(id)!.text !== e.text);
}

/** An encounter as compared: its whole text, and when it says it was last updated. */
interface Stamped {
  text: string;
  updatedAt: number;
}

/** `value` with each encounter (an object with encounter_id and updated_at) reduced to its id, put in `into` by id. */
function encountersApart(value: unknown, into: Map<string, Stamped>): unknown {
  if (Array.isArray(value)) return value.map((v) => encountersApart(v, into));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (typeof o.encounter_id === 'string' && typeof o.updated_at === 'string') {
    into.set(o.encounter_id, { text: canonical(o), updatedAt: Date.parse(o.updated_at) });
    return { encounter_id: o.encounter_id };
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, encountersApart(v, into)]));
}

/** Rounds of non-GET requests a change made meanwhile may take before it is judged theirs: one made by the requests recurs in each. */
const ROUNDS = 3;

/**
 * One round: the GETs before, POST, PUT, PATCH and DELETE, the GETs after. Undefined when nothing changed; else what
 * changed, and whether only by encounters updated later (onlyUpdatedLater). A non-GET accepted fails at once.
 */
async function round(api: CheckApi, route: RouteRef, path: string): Promise<{ detail: string; updatedLater: boolean } | undefined> {
  // On the list, encounters a deployment creates meanwhile change the page: the same list bounded before the check
  // began (end_at is exclusive, §4.1) is read beside it, and judged when the total moved.
  const still = route.name === 'list' ? `${path}${path.includes('?') ? '&' : '?'}end_at=${new Date(Date.now() - 1_000).toISOString()}` : undefined;
  const before = comparable(route, await api.get(path));
  const stillBefore = still ? comparable(route, await api.get(still)) : undefined;
  const accepted: string[] = [];
  for (const method of METHODS) {
    const ex = await api.get(path, { method });
    if (ex.error) fail(`No response to ${method}`, `${ex.error.kind}: ${ex.error.message}`);
    const status = ex.response!.status;
    if (status >= 200 && status < 300) accepted.push(`${method} → ${status}`);
  }
  const after = comparable(route, await api.get(path));
  if (accepted.length > 0) fail('A method other than GET was accepted', `${accepted.join(', ')} on ${path}; every route is GET only and changes nothing`);
  if (after === before) return undefined;
  if (still && totalOf(before) !== totalOf(after)) {
    const stillAfter = comparable(route, await api.get(still));
    if (stillAfter === stillBefore) return undefined;
    return { detail: `a GET of ${still} (encounters created before the check began) after POST, PUT, PATCH and DELETE answered another body than before`, updatedLater: onlyUpdatedLater(stillBefore!, stillAfter) };
  }
  return { detail: `a GET of ${path} after POST, PUT, PATCH and DELETE answered another body than before`, updatedLater: onlyUpdatedLater(before, after) };
}

for (const route of ROUTES) {
  const id = `contract-non-get-methods-change-nothing-${route.name}`;
  check({
    id, requirements: ['CONTRACT-NO-MUTATION', 'CONTRACT-GET-ONLY', 'CONTRACT-NON-GET-METHODS'],
    title: `${route.name}: POST, PUT, PATCH and DELETE with the full key are not answered 2xx, and a GET after them answers as before`,
    needs: route.needs,
    run: async (api, scope) => {
      const path = route.path(api);
      // A change by encounters updated later may be someone else's, made meanwhile: judged again, up to ROUNDS rounds.
      // One the requests make recurs in every round; any other change fails at once.
      for (let n = 1; ; n++) {
        const change = await round(api, route, path);
        if (!change) return;
        if (!change.updatedLater || n >= ROUNDS) fail('The resource changed after non-GET requests', n > 1 ? `${change.detail}, in each of ${n} rounds` : change.detail);
        scope.note(`round ${n}: ${change.detail}, only by encounters whose updated_at moved later (an update made meanwhile, by live traffic, the sender's trigger or the requests): asked again`);
      }
    },
  });
}
