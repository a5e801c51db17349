// The partner's scenario for `conformance client` (fixtures/client/scenario.schema.json) and the client's scope
// derived from it: which parts of the API the client uses (`uses`), and what it does per reason code
// (`reasons`). A requirement about a part the client does not use is out of scope, with that reason, and the
// verdict says so; without `uses` the scope is what the traffic shows, and the verdict says it was inferred.
// Pure functions of the scenario and the recorded traffic; nothing here talks to the network.
import fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CLIENT_SCENARIO_SCHEMA_PATH } from '../../fixtures/paths.ts';
import { parseTarget, type ClientExchange, type ReasonAction, type Route, type Scenario, type ScopePart } from '../../observe/client-traffic.ts';

export type { Scenario, ScopePart };
export const SCOPE_PARTS: readonly ScopePart[] = ['list', 'paging', 'sort_order', 'date_window', 'encounter', 'document', 'transcript', 'audio'];
const ROUTE_PARTS: readonly Route[] = ['list', 'encounter', 'document', 'transcript', 'audio'];

/** How each part is named in the verdict and the terminal. */
export const PART_LABEL: Readonly<Record<ScopePart, string>> = {
  list: 'the list route', paging: 'paging (limit, offset)', sort_order: 'sort_order', date_window: 'the date window (start_at, end_at)',
  encounter: 'the encounter route', document: 'the document route', transcript: 'the transcript route', audio: 'audio',
};

/**
 * The client requirements that bind a client only when it uses one of these parts (one table, read by the scope,
 * the report and the tests); every other client requirement binds every client.
 */
export const REQUIREMENT_PARTS: Readonly<Record<string, readonly ScopePart[]>> = {
  'LIST-UNSUPPORTED-KEYS': ['list'],
  'LIST-LIMIT-RANGE': ['paging'], 'LIST-OFFSET-RANGE': ['paging'], 'LIST-CANONICAL-INTEGERS': ['paging'], 'FIELD-LIST-OFFSET': ['paging'],
  'LIST-SORT-ORDER-ENUM': ['sort_order'],
  'LIST-DATETIME-TZ-AWARE': ['date_window'], 'LIST-START-BEFORE-END': ['date_window'],
  'ENC-NO-QUERY': ['encounter'], 'DOC-NO-QUERY': ['document'], 'TRANSCRIPT-NO-QUERY': ['transcript'],
  'AUDIO-NO-QUERY': ['audio'], 'AUDIO-URL-NOT-DURABLE': ['audio'], 'AUDIO-URL-NOT-LOGGED': ['audio'], 'AUDIO-URL-NOT-AFTER-EXPIRY': ['audio'],
  // Ids in a path are sent only on the routes below the list.
  'CONTRACT-NO-ID-INFERENCE': ['encounter', 'document', 'transcript', 'audio'],
};

export class ScenarioError extends Error {}

/** What a top-level field looks like, said after an error in it: a partner writing the file from the prose needs the form. */
const FORM_HINT: Readonly<Record<string, string>> = {
  uses: `; "uses" is a list of the parts the client uses, from: ${SCOPE_PARTS.join(', ')} (e.g. "uses": ["list", "paging", "encounter"]; docs/client.md)`,
  reasons: '; "reasons" maps a reason_code of §7.1 to "stop", "retry-later" or "skip-resource" (e.g. "reasons": { "revoked_key": "stop" }; docs/client.md)',
};

let validateFn: ReturnType<Ajv2020['compile']> | undefined;
function validator() {
  validateFn ??= new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(fs.readFileSync(CLIENT_SCENARIO_SCHEMA_PATH, 'utf8')));
  return validateFn;
}

/** Checks a parsed scenario against its schema; throws ScenarioError naming the first offending field. */
export function parseScenario(data: unknown, source = 'scenario'): Scenario {
  const validate = validator();
  if (!validate(data)) {
    const errors = validate.errors!;
    const name = errors.find((x) => x.keyword === 'propertyNames');
    if (name) throw new ScenarioError(`${source}: field ${name.instancePath} names ${JSON.stringify((name.params as { propertyName: string }).propertyName)}, which is not a reason code of §7.1`);
    const e = errors.find((x) => x.keyword !== 'anyOf' && x.keyword !== 'required') ?? errors[0];
    const where = e.instancePath || '(root)';
    const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
    const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'`
      : allowed ? ` (${allowed.join(', ')})` : '';
    const message = e.keyword === 'anyOf' || e.keyword === 'required' ? 'must give "uses", "reasons" or both' : `${e.message}${extra}`;
    throw new ScenarioError(`${source}: field ${where} ${message}${FORM_HINT[where.split('/')[1] ?? ''] ?? ''}`);
  }
  const d = data as { uses?: ScopePart[]; reasons?: Record<string, ReasonAction> };
  const uses = d.uses ? [...d.uses] : null;
  if (uses && uses.some((p) => p === 'paging' || p === 'sort_order' || p === 'date_window') && !uses.includes('list')) {
    throw new ScenarioError(`${source}: field /uses names a feature of the list's query (${uses.filter((p) => p === 'paging' || p === 'sort_order' || p === 'date_window').join(', ')}) without "list"`);
  }
  return { uses, reasons: { ...(d.reasons ?? {}) } };
}

/** Reads and checks a scenario file. */
export function loadScenario(file: string): Scenario {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ScenarioError(`scenario ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not JSON (${(e as Error).message})`}`);
  }
  return parseScenario(data, `scenario ${file}`);
}

/** The parts the recorded traffic shows the client used: each route it called, each list feature it sent. */
export function partsUsed(exchanges: readonly ClientExchange[]): Set<ScopePart> {
  const used = new Set<ScopePart>();
  for (const e of exchanges) {
    if (e.kind !== 'api') continue;
    const p = parseTarget(e.target);
    if (!p.route) continue;
    used.add(p.route.name);
    if (p.route.name !== 'list') continue;
    for (const q of p.query) {
      if (q.key === 'limit' || q.key === 'offset') used.add('paging');
      else if (q.key === 'sort_order') used.add('sort_order');
      else if (q.key === 'start_at' || q.key === 'end_at') used.add('date_window');
    }
  }
  return used;
}

export interface ClientScope {
  /** `declared`: the scenario's `uses`; `inferred`: the traffic's. */
  origin: 'declared' | 'inferred';
  /** Parts in scope: declared (or used), plus any the client used without declaring them. */
  parts: ScopePart[];
  /** Parts out of scope (neither declared nor used). */
  unused: ScopePart[];
  /** Declared parts the traffic never shows. */
  unexercised: ScopePart[];
  /** Parts the client used although its `uses` leaves them out: judged anyway. */
  undeclaredUsed: ScopePart[];
}

export function resolveScope(declared: readonly ScopePart[] | null, used: ReadonlySet<ScopePart>): ClientScope {
  const base = new Set<ScopePart>(declared ?? used);
  const undeclaredUsed = declared ? SCOPE_PARTS.filter((p) => used.has(p) && !base.has(p)) : [];
  const parts = SCOPE_PARTS.filter((p) => base.has(p) || used.has(p));
  return {
    origin: declared ? 'declared' : 'inferred',
    parts,
    unused: SCOPE_PARTS.filter((p) => !parts.includes(p)),
    unexercised: declared ? SCOPE_PARTS.filter((p) => base.has(p) && !used.has(p)) : [],
    undeclaredUsed,
  };
}

/** The scope of a record: its scenario's `uses`, or the parts its traffic shows. */
export const scopeOf = (scenario: Scenario | null, exchanges: readonly ClientExchange[]): ClientScope => resolveScope(scenario?.uses ?? null, partsUsed(exchanges));

/** Why a requirement is out of this scope, or undefined when it binds this client. */
export function requirementOutOfScope(requirement: string, scope: ClientScope): string | undefined {
  const parts = REQUIREMENT_PARTS[requirement];
  if (!parts || parts.some((p) => scope.parts.includes(p))) return undefined;
  const how = scope.origin === 'declared' ? 'not in the scenario\'s `uses`' : 'not in the traffic (scope inferred: no `uses` in a scenario)';
  return `${parts.map((p) => PART_LABEL[p]).join(', ')} not used (${how})`;
}

/** Out-of-scope entries for the report: one per client requirement this scope leaves out. */
export function outOfScopeRequirements(scope: ClientScope): { part: string; reason: string }[] {
  return Object.keys(REQUIREMENT_PARTS).flatMap((id) => {
    const reason = requirementOutOfScope(id, scope);
    return reason === undefined ? [] : [{ part: id, reason }];
  });
}

/** How the verdict names the scope: its label and what the client does not use, e.g. `audio not used`. */
export function scopeNote(scope: ClientScope): { label: string; notes: string[] } {
  const label = scope.origin === 'declared' ? 'in its declared scope' : 'in the scope inferred from its traffic (no `uses` declared)';
  const unusedRoutes = scope.unused.filter((p) => (ROUTE_PARTS as readonly string[]).includes(p));
  const short = (p: ScopePart) => (p === 'audio' ? 'audio' : p === 'date_window' ? 'date window' : p === 'paging' ? 'paging' : p === 'sort_order' ? 'sort_order' : `${p} route`);
  // A list feature is not named when the list itself is unused.
  const unused = scope.unused.filter((p) => !(unusedRoutes.includes('list') && (p === 'paging' || p === 'sort_order' || p === 'date_window')));
  const notes: string[] = [];
  if (unused.length) notes.push(`${unused.map(short).join(', ')} not used`);
  if (scope.unexercised.length) notes.push(`declared but never exercised: ${scope.unexercised.map(short).join(', ')}`);
  if (scope.undeclaredUsed.length) notes.push(`used without being declared (judged): ${scope.undeclaredUsed.map(short).join(', ')}`);
  return { label, notes };
}
