// §1 and §4: every route is GET only and no route creates, changes or deletes anything. With the full key,
// POST, PUT, PATCH and DELETE (no body) on the route's own-data path must not be answered 2xx (which non-2xx
// status is not shown: any is accepted, and its body is not judged since the contract documents none), and
// a GET before and after them must agree (§1: repeated reads have no effect on the response; on the audio
// route only audio_url and expires_at, minted per call, may differ).
import { suite } from '../../engine/declare.ts';
import { expectSuccess, fail } from '../../judge/assertions.ts';
import type { Exchange } from '../../record/record.ts';
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

for (const route of ROUTES) {
  const id = `contract-non-get-methods-change-nothing-${route.name}`;
  check({
    id, requirements: ['CONTRACT-NO-MUTATION', 'CONTRACT-GET-ONLY', 'CONTRACT-NON-GET-METHODS'],
    title: `${route.name}: POST, PUT, PATCH and DELETE with the full key are not answered 2xx, and a GET after them answers as before`,
    needs: route.needs,
    run: async (api) => {
      const path = route.path(api);
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
      const afterEx = await api.get(path);
      const after = comparable(route, afterEx);
      if (accepted.length > 0) fail('A method other than GET was accepted', `${accepted.join(', ')} on ${path}; every route is GET only and changes nothing`);
      if (after !== before && still && totalOf(before) !== totalOf(after)) {
        if (comparable(route, await api.get(still)) === stillBefore) return;
        fail('The resource changed after non-GET requests', `a GET of ${still} (encounters created before the check began) after POST, PUT, PATCH and DELETE answered another body than before`);
      }
      if (after !== before) fail('The resource changed after non-GET requests', `a GET of ${path} after POST, PUT, PATCH and DELETE answered another body than before`);
    },
  });
}
