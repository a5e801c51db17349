// Which runs of the partner's command `conformance client` makes, and why a declared reason ended unjudged.
// Run 1 is answered normally (every traffic check has a normal run to judge); the runs after it inject the
// scenario's reasons: every non-stop reason, carried over to a further run while some are still waiting and the
// last run injected at least one; then one run per declared `stop` reason (a stop ends the client's work, so
// one is seen per run). Bounded by MAX_RUNS; `--reasons` narrows what is injected. Pure functions.
import { INJECTABLE_REASONS, notInjectable } from '../observe/client-traffic.ts';
import type { ClientScope } from '../checks/client/scenario.ts';
import type { ReasonAction, ReasonNote, Route } from '../observe/client-traffic.ts';

/** At most this many runs of the command (the normal one included). */
export const MAX_RUNS = 40;

export interface ReasonPlan {
  /** Injected together, in as few runs as the client's requests allow. */
  nonStop: string[];
  /** One run each. */
  stops: string[];
  /** Declared reasons that are never injected, with why. */
  notes: Record<string, ReasonNote>;
}

/** Splits the declared reasons into what the runs inject; `only` (--reasons) narrows them. */
export function planReasons(reasons: Record<string, ReasonAction>, only: readonly string[] | null): ReasonPlan {
  const notes: Record<string, ReasonNote> = {};
  const chosen: string[] = [];
  for (const r of Object.keys(reasons)) {
    const why = notInjectable(r);
    if (why) notes[r] = { why, blocks: false };
    else if (only && !only.includes(r)) notes[r] = { why: `not judged in this run: --reasons narrows it to ${only.join(', ')}`, blocks: true };
    else chosen.push(r);
  }
  return { nonStop: chosen.filter((r) => reasons[r] !== 'stop'), stops: chosen.filter((r) => reasons[r] === 'stop'), notes };
}

/** Reads `--reasons a,b,c`: each must be a reason the scenario declares. */
export function parseReasonsOption(value: string, declared: Record<string, ReasonAction>): string[] {
  const list = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (list.length === 0) throw new Error('--reasons needs a comma-separated list of reason codes');
  const unknown = list.filter((r) => !(r in declared));
  if (unknown.length) throw new Error(`--reasons names ${unknown.join(', ')}, which the scenario does not declare`);
  return [...new Set(list)];
}

/**
 * Where a stop reason is judged: each route group the client used in its normal run, so that a stop answered on
 * the list and one answered inside its per-encounter loop are both seen (a client may handle them apart). The
 * encounter routes are split in two (the list, an encounter's detail), the document routes are one group.
 */
export const STOP_TARGETS: readonly { name: string; routes: readonly Route[] }[] = [
  { name: 'list', routes: ['list'] },
  { name: 'encounter', routes: ['encounter'] },
  { name: 'document routes', routes: ['document', 'transcript', 'audio'] },
];

/** The stop targets the client's normal run reached (at least one route of each), in STOP_TARGETS order. */
export function stopTargets(used: ReadonlySet<Route>): { name: string; routes: readonly Route[] }[] {
  const out = STOP_TARGETS.filter((s) => s.routes.some((r) => used.has(r)));
  return out.length ? out : [{ name: 'any route', routes: ['list', 'encounter', 'document', 'transcript', 'audio'] }];
}

/** The routes a reason is injected on, as the terminal names them. */
export const routesText = (reason: string): string => {
  const routes = INJECTABLE_REASONS[reason] ?? [];
  return routes.length === 5 ? 'any route' : `the ${routes.join(', ')} route${routes.length === 1 ? '' : 's'}`;
};

/**
 * The notes of the reasons no run injected: out of the client's scope (every route it belongs to unused) does not
 * block; in scope, it leaves the declared handling not verified.
 */
export function reasonNotes(plan: ReasonPlan, missed: Record<string, string>, scope: ClientScope): Record<string, ReasonNote> {
  const notes: Record<string, ReasonNote> = { ...plan.notes };
  for (const [r, why] of Object.entries(missed)) {
    const routes = INJECTABLE_REASONS[r] ?? [];
    const inScope = routes.some((x: Route) => scope.parts.includes(x));
    notes[r] = inScope ? { why, blocks: true } : { why: `the client does not use ${routes.length === 1 ? `the ${routes[0]} route` : `the ${routes.join(', ')} routes`} it belongs to`, blocks: false };
  }
  return notes;
}
