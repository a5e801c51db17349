// Judges a served OpenAPI document by meaning against the harness contract (fixtures/contract/openapi.json):
// what the specification fixes (the five routes with GET under /external/v1, the two operation names §4.1
// and §4.2 give, the bearer scheme publicApiKeyBearer of §5.1, each route's statuses of §4) and, for every
// schema, what it accepts and rejects. Spelling never counts: component names, `$ref` layout, key order,
// annotations (descriptions, examples, tags, servers, bearerFormat), nullability written as `anyOf` with
// `{type: 'null'}`, closedness written as `unevaluatedProperties: false`, a base path moved into `servers`,
// media-type parameters and `+json` suffixes. Pure functions over two documents: nothing here talks to a
// target or imports the implementation. Each judge returns the list of differences (empty = agrees).
// A served schema is judged between two readings of the contract (judge/open-choices.ts): it must accept what
// the narrow reading accepts (every open choice of the catalog taken the narrowest way) and may accept no more than
// the wide one (the contract without the prose the body checks verify), so an open choice never counts either way.
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { judgingReadings, openParameterValue, openStatuses } from './open-choices.ts';

// ajv is loaded when a judge is first made, not imported: every process of a run loads this module with the suites,
// and only the one that judges a served document needs ajv for it.
const require = createRequire(import.meta.url);

export type Json = Record<string, any>;

/** §4.1 and §4.2 name these two operations; §4.3 to §4.5 give no name, so their operationIds are free. */
export const NAMED_OPERATIONS = ['listPublicEncounters', 'getPublicEncounter'] as const;
/** §5.1: "HTTP bearer scheme, named `publicApiKeyBearer`". */
export const SECURITY_SCHEME = 'publicApiKeyBearer';
/** §1: the REST routes live under this prefix. */
export const API_PREFIX = '/external/v1';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** §1: "No route creates, changes or deletes anything": documenting one of these on a route contradicts it. */
const MUTATING = new Set(['put', 'post', 'delete', 'patch']);
/** Differences listed per judge at most (the count is always complete up to this bound). */
const MAX_DIFFS = 200;

// ---------------------------------------------------------------- media types

import { isJsonMediaType } from './media-type.ts';
import { CATEGORY_BY_STATUS, FIELD_BY_REASON } from './assertions.ts';

export { isJsonMediaType };

// ---------------------------------------------------------------- operations by route

export interface OpView {
  method: string;
  /** The route as a client reaches it: the server's base path joined with the document path. */
  route: string;
  docPath: string;
  op: Json;
  /** Path-item parameters merged with the operation's own (which win). */
  parameters: Json[];
}

function serverBase(servers: unknown): string[] {
  const list = Array.isArray(servers) && servers.length > 0 ? (servers as Json[]) : [{ url: '/' }];
  const bases = new Set<string>();
  for (const s of list) {
    let url = typeof s?.url === 'string' ? s.url : '/';
    for (const [name, v] of Object.entries((s?.variables ?? {}) as Json)) url = url.replaceAll(`{${name}}`, String(v?.default ?? ''));
    let pathname: string;
    try {
      pathname = new URL(url, 'http://base.invalid/').pathname;
    } catch {
      pathname = '/';
    }
    bases.add(decodeURI(pathname).replace(/\/+$/, ''));
  }
  return [...bases];
}

/**
 * A local `$ref` (path item, parameter, response) followed to its target, so that the layout of responses and
 * parameters (inline or under components) does not matter; an unresolved reference stays as it is.
 */
export function resolveRef(doc: Json, node: unknown, depth = 0): any {
  if (!node || typeof node !== 'object' || typeof (node as Json).$ref !== 'string' || depth > 16) return node;
  const ref = (node as Json).$ref as string;
  if (!ref.startsWith('#/')) return node;
  const target = ref.slice(2).split('/').reduce<any>((n, k) => (n && typeof n === 'object' ? n[decodeURIComponent(k).replaceAll('~1', '/').replaceAll('~0', '~')] : undefined), doc);
  return target === undefined ? node : resolveRef(doc, target, depth + 1);
}

/** Every operation of the document keyed `METHOD route`, the route joined with each server base path. */
export function operationsByRoute(doc: Json): Map<string, OpView> {
  const out = new Map<string, OpView>();
  for (const [docPath, rawItem] of Object.entries((doc.paths ?? {}) as Json)) {
    const item = resolveRef(doc, rawItem);
    if (!item || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const op = (item as Json)[method];
      if (!op || typeof op !== 'object') continue;
      const merged = new Map<string, Json>();
      for (const raw of [...((item as Json).parameters ?? []), ...(op.parameters ?? [])] as Json[]) {
        const p = resolveRef(doc, raw);
        merged.set(`${p?.in}:${p?.name}`, p);
      }
      for (const base of serverBase(op.servers ?? (item as Json).servers ?? doc.servers)) {
        const route = `${base}${docPath}`;
        const key = `${method.toUpperCase()} ${route}`;
        if (!out.has(key)) out.set(key, { method, route, docPath, op, parameters: [...merged.values()] });
      }
    }
  }
  return out;
}

/** The contract's routes (all GET), each with its operation. */
function contractRoutes(contract: Json): Map<string, OpView> {
  return new Map([...operationsByRoute(contract)].filter(([, o]) => o.method === 'get'));
}

function capped(diffs: string[]): string[] {
  return diffs.length > MAX_DIFFS ? [...diffs.slice(0, MAX_DIFFS), `… and more (listing stopped at ${MAX_DIFFS})`] : diffs;
}

function short(v: unknown): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > 100 ? `${s.slice(0, 97)}…` : s;
}

// ---------------------------------------------------------------- dereferencing and compiling

/**
 * Parser options for a served document: references are resolved inside the document only. An external `$ref`
 * would make the harness read a local file or fetch a URL the target chose; it stays unresolved instead.
 */
export const PARSER_OPTIONS = { resolve: { external: false }, dereference: { circular: 'ignore' } } as const;

/**
 * swagger-parser, loaded when a check first needs it: every process of a run loads the suites (the runner only to
 * list them), and the parser with its dependencies is the heaviest of their imports.
 */
export async function swaggerParser(): Promise<{ dereference: (doc: unknown, options: unknown) => Promise<unknown>; validate: (doc: unknown, options: unknown) => Promise<unknown> }> {
  return (await import('@apidevtools/swagger-parser')).default as never;
}

/** The document with every `$ref` resolved (a copy); throws with the parser's first line when it does not resolve. */
export async function dereference(doc: Json): Promise<Json> {
  try {
    return (await (await swaggerParser()).dereference(structuredClone(doc), PARSER_OPTIONS)) as Json;
  } catch (e) {
    throw new Error((e as Error).message.split('\n')[0]);
  }
}

/** The contract a served document is judged with, dereferenced, in its three readings (judge/open-choices.ts). */
export interface JudgingContract {
  /** fixtures/contract/openapi.json itself: what the body checks validate with. */
  contract: Json;
  /** Every open choice taken the narrowest way: a served schema accepts at least this. */
  narrow: Json;
  /** Without the prose the body checks verify: a served schema accepts at most this. */
  wide: Json;
}

export async function judgingContract(contract: Json): Promise<JudgingContract> {
  const { narrow, wide } = judgingReadings(contract);
  const [c, n, w] = await Promise.all([dereference(contract), dereference(narrow), dereference(wide)]);
  return { contract: c, narrow: n, wide: w };
}

/**
 * A tree copy without the keywords that would make ajv resolve identifiers of its own ($refs are resolved
 * already), and without OpenAPI 3.0's `nullable`: OpenAPI 3.1 (the version §9 fixes) has no such keyword, so
 * `nullable: true` is an annotation there, while ajv would otherwise let it admit null. A property that happens
 * to be named like one of these keywords has a schema (an object) as its value and is kept.
 */
function plain(node: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('the schema is nested more than 64 levels (circular?)');
  if (Array.isArray(node)) return node.map((n) => plain(n, depth + 1));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (['$schema', '$id', '$anchor', '$dynamicAnchor'].includes(k) && typeof v === 'string') continue;
    if (k === 'nullable' && typeof v === 'boolean') continue;
    out[k] = plain(v, depth + 1);
  }
  return out;
}

/**
 * The text a normalised schema is known by in a judge's cache: its JSON, in its own key order (an order can change
 * which error ajv reports first, and the judges quote that error). Undefined when the tree holds a value JSON does
 * not spell exactly (undefined in an array, a non-finite number, a function): such a schema is compiled uncached.
 */
function schemaText(normal: unknown): string | undefined {
  let exact = true;
  const text = JSON.stringify(normal, (_k, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) exact = false;
    else if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') exact = false;
    else if (Array.isArray(v) && v.includes(undefined)) exact = false;
    return typeof v === 'bigint' ? String(v) : v;
  });
  return exact ? text : undefined;
}

/**
 * A judge: ajv in the 2020-12 dialect (OpenAPI 3.1's), formats asserted for both sides alike, unknown keywords
 * (OpenAPI annotations such as discriminator, example, xml, x-*) ignored. Each distinct schema is compiled once per
 * judge: by identity first (a dereferenced document shares one object per `$ref` target, met by every pair and
 * check), then by its normalised text (the contract's parameter and a served copy of it, the contract's three
 * readings, a document served again: other objects, one validator). Two schemas of the same text compile to the
 * same code in the same ajv, so a validator found by text is the one compiling would give; the schema itself is
 * always the one the target served, never assumed from the fixture.
 */
export class SchemaJudge {
  private readonly ajv: Ajv2020;
  private readonly byObject = new WeakMap<object, ValidateFunction>();
  private readonly byText = new Map<string, ValidateFunction>();
  constructor() {
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    this.ajv = new Ajv({ strict: false, logger: false, allErrors: false, validateFormats: true });
    (require('ajv-formats') as { default: (ajv: Ajv2020) => Ajv2020 }).default(this.ajv);
  }

  compile(schema: unknown): ValidateFunction {
    const isObject = !!schema && typeof schema === 'object';
    if (isObject) {
      const hit = this.byObject.get(schema);
      if (hit) return hit;
    }
    const normal = isObject ? plain(schema) : (schema ?? true);
    const text = schemaText(normal);
    let v = text === undefined ? undefined : this.byText.get(text);
    if (!v) {
      // A schema that does not compile throws here every time it is asked for: nothing is kept of it.
      v = this.ajv.compile(normal as Json);
      if (text !== undefined) this.byText.set(text, v);
    }
    if (isObject) this.byObject.set(schema, v);
    return v;
  }
}

// ---------------------------------------------------------------- samples

interface Strategy {
  pick: number;
  minimal: boolean;
}

const STRATEGIES: Strategy[] = [
  { pick: 0, minimal: false }, { pick: 1, minimal: false }, { pick: 2, minimal: false }, { pick: 3, minimal: false },
  { pick: 0, minimal: true }, { pick: 1, minimal: true },
];

function mergeSchemas(a: Json, b: Json): Json {
  const out: Json = { ...a, ...b };
  if (a.properties || b.properties) out.properties = { ...(a.properties ?? {}), ...(b.properties ?? {}) };
  if (a.required || b.required) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  return out;
}

/** Whether an object built by `build` meets an `if` made of required names and `const`/`enum` properties. */
function meetsIf(cond: Json, value: Json): boolean {
  for (const k of (cond.required ?? []) as string[]) if (!(k in value)) return false;
  for (const [k, c] of Object.entries((cond.properties ?? {}) as Json)) {
    if (!(k in value) || !c || typeof c !== 'object') continue;
    if ('const' in c && !isDeepStrictEqual(c.const, value[k])) return false;
    if (Array.isArray(c.enum) && !c.enum.some((v: unknown) => isDeepStrictEqual(v, value[k]))) return false;
  }
  return true;
}

/** One instance of the schema, choosing alternative `pick` wherever there is a choice. */
function build(schema: unknown, s: Strategy, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 24) return 'sample';
  let sch = schema as Json;
  if ('const' in sch) return sch.const;
  if (Array.isArray(sch.enum) && sch.enum.length > 0) return sch.enum[s.pick % sch.enum.length];
  if (Array.isArray(sch.allOf)) {
    const { allOf, ...rest } = sch;
    sch = (allOf as Json[]).reduce((acc, x) => mergeSchemas(acc, x ?? {}), rest);
    return build(sch, s, depth + 1);
  }
  const branches = (sch.oneOf ?? sch.anyOf) as Json[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    const { oneOf, anyOf, ...rest } = sch;
    return build(mergeSchemas(rest, branches[s.pick % branches.length] ?? {}), s, depth + 1);
  }
  const types: string[] = Array.isArray(sch.type) ? sch.type : typeof sch.type === 'string' ? [sch.type] : sch.properties ? ['object'] : sch.items ? ['array'] : ['string'];
  const t = types[s.pick % types.length];
  switch (t) {
    case 'null':
      return null;
    case 'boolean':
      return true;
    case 'integer':
      return typeof sch.minimum === 'number' ? sch.minimum : 7;
    case 'number':
      return typeof sch.minimum === 'number' ? sch.minimum : 2.5;
    case 'array':
      return [build(sch.items, s, depth + 1)];
    case 'object': {
      const out: Json = {};
      const props = (sch.properties ?? {}) as Json;
      const keys = s.minimal ? ((sch.required ?? []) as string[]) : [...new Set([...Object.keys(props), ...((sch.required ?? []) as string[])])];
      for (const k of keys) out[k] = build(props[k], s, depth + 1);
      // A conditional (§2.3's clinical nulls): where the instance meets `if`, the properties of `then` are built
      // from it, so that the base is one the schema accepts and its changes probe the rest.
      if (sch.if && typeof sch.if === 'object' && sch.then && typeof sch.then === 'object' && meetsIf(sch.if as Json, out)) {
        for (const [k, sub] of Object.entries(((sch.then as Json).properties ?? {}) as Json)) if (k in out) out[k] = build(sub, s, depth + 1);
      }
      return out;
    }
    default:
      if (sch.format === 'date-time') return '2026-01-02T03:04:05Z';
      if (sch.format === 'date') return '1980-02-29';
      return 'sample';
  }
}

/** String and number values tried at every node: the formats' edges, and other shapes of value. */
const STRING_PROBES = ['sample', 'unexpected_value', '2026-01-02T03:04:05+05:30', '2026-01-02T03:04:05.123456Z', '2026-01-02T03:04:05', '2026-01-02', 'not-a-date', '1980-02-29', '1980-02-30'];
/** Values of another type, tried at every node. Numbers stay inside every range the contract gives, so a
 * served schema that documents a narrower range of a response value (e.g. limit 1..100) is not a difference. */
const OTHER_VALUES: unknown[] = [null, 'sample', 7, 2.5, true, {}, []];
const UNDECLARED = 'x_undeclared_property';

/** Every string of an `enum` or `const` in the schema (both sides are searched, so a drifted enum value is tried). */
function literals(node: unknown, into: Set<string>, depth = 0): void {
  if (depth > 64 || !node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) literals(n, into, depth + 1);
    return;
  }
  const s = node as Json;
  if (typeof s.const === 'string') into.add(s.const);
  if (Array.isArray(s.enum)) for (const v of s.enum) if (typeof v === 'string') into.add(v);
  for (const [k, v] of Object.entries(s)) if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples' && k !== 'example') literals(v, into, depth + 1);
}

export type SampleKind = 'base' | 'value' | 'closedness' | 'missing' | 'array';

export interface Sample {
  kind: SampleKind;
  /** Where the change was made (JSON pointer) and what it is. */
  label: string;
  /** JSON pointer of the changed node ('' for a base instance). */
  pointer: string;
  value: unknown;
  /** The base instance this sample was made from (its index among the bases). */
  base: number;
  /** That base instance itself. */
  from: unknown;
}

/**
 * `root` with the node at `path` replaced by `fn(node)` (or removed, for DELETE): a new value that copies only
 * the objects and arrays along the path and shares the rest with `root`. Samples are only ever read (judged
 * and printed), never changed, so sharing is safe, and it spares a deep copy of the whole base per sample.
 */
function setAt(root: unknown, path: readonly (string | number)[], fn: (node: unknown) => unknown): unknown {
  if (path.length === 0) return fn(root);
  const [k, ...rest] = path;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as Json) };
  const next = setAt(copy[k!], rest, fn);
  if (next === DELETE) delete copy[k!];
  else copy[k!] = next;
  return copy;
}
const DELETE = Symbol('delete');

function pointer(path: (string | number)[]): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Instances that probe what a schema accepts: base instances built from the contract schema (each choice of
 * enum value, type, oneOf/anyOf branch; all properties or only the required ones), and each base changed at
 * one node (another value or literal, a property removed, an undeclared property added, an array emptied or
 * doubled). Which of them are valid is decided by the contract, never assumed here.
 */
export function samplesFor(contractSchema: unknown, extraLiterals: Iterable<string> = [], adapt: (base: unknown) => unknown = (b) => b, alsoFrom: unknown[] = []): Sample[] {
  const lits = new Set<string>([...STRING_PROBES, ...extraLiterals]);
  literals(contractSchema, lits);
  const out: Sample[] = [];
  const seen = new Set<string>();
  const add = (s: Sample) => {
    const key = JSON.stringify(s.value);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(s);
  };
  // Bases from each schema given (another reading of the same contract builds other instances: statuses that a
  // conditional would make null), each base numbered apart.
  const plan = [contractSchema, ...alsoFrom].flatMap((schema, i) => STRATEGIES.map((strategy, k) => ({ schema, strategy, b: i * STRATEGIES.length + k })));
  plan.forEach(({ schema, strategy, b }) => {
    const base = adapt(build(schema, strategy));
    add({ kind: 'base', label: `instance ${short(base)}`, pointer: '', value: base, base: b, from: base });
    const walk = (node: unknown, path: (string | number)[]) => {
      const at = pointer(path) || '(root)';
      const replacements: unknown[] = [...OTHER_VALUES, ...(typeof node === 'string' ? lits : [])];
      for (const r of replacements) add({ kind: 'value', label: `${at} = ${short(r)}`, pointer: pointer(path), value: setAt(base, path, () => r), base: b, from: base });
      if (Array.isArray(node)) {
        add({ kind: 'array', label: `${at} = []`, pointer: pointer(path), value: setAt(base, path, () => []), base: b, from: base });
        if (node.length > 0) add({ kind: 'array', label: `${at} with its item twice`, pointer: pointer(path), value: setAt(base, path, (n) => [...(n as unknown[]), (n as unknown[])[0]]), base: b, from: base });
        node.forEach((item, i) => walk(item, [...path, i]));
      } else if (node && typeof node === 'object') {
        add({ kind: 'closedness', label: `${at} with an undeclared property "${UNDECLARED}"`, pointer: pointer(path), value: setAt(base, path, (n) => ({ ...(n as Json), [UNDECLARED]: 'x' })), base: b, from: base });
        for (const [k, v] of Object.entries(node as Json)) {
          add({ kind: 'missing', label: `${pointer([...path, k])} left out`, pointer: pointer([...path, k]), value: setAt(base, [...path, k], () => DELETE), base: b, from: base });
          walk(v, [...path, k]);
        }
      }
    };
    walk(base, []);
  });
  return out;
}

/** Keywords by which a served schema may narrow a string the contract leaves free (§2.5: maximum lengths not
 * shown; §3: enumerated status values not shown; a URL may be documented as one): an allowed refinement. */
const REFINEMENTS = new Set(['format', 'pattern', 'minLength', 'maxLength', 'enum', 'const']);
/** Strings tried when a base instance meets such a refinement, beside the served schema's own literals. */
const FREE_TEXT = ['https://files.example.test/audio/a1b2?sig=c3d4', 'a1b2c3d4', '7f3c9a2e-0d1b-4c5a-8e6f-123456789abc', 'Sample text', 'x'];

function parsePointer(p: string): string[] {
  return p === '' ? [] : p.slice(1).split('/').map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function valueAt(root: unknown, path: string[]): unknown {
  return path.reduce<any>((n, k) => (n && typeof n === 'object' ? n[k] : undefined), root);
}

/** True when `err` (the served schema's) only narrows a string node the contract accepts any string at. */
function freeTextRefinement(want: ValidateFunction, value: unknown, err: { keyword: string; instancePath: string } | undefined): boolean {
  if (!err || !REFINEMENTS.has(err.keyword)) return false;
  const path = parsePointer(err.instancePath);
  if (typeof valueAt(value, path) !== 'string') return false;
  return ['unexpected_value', 'Sample text'].every((t) => want(setAt(value, path, () => t)));
}

export interface AgreementOptions {
  /** Only these kinds of sample besides the bases (default: all). */
  kinds?: ReadonlySet<SampleKind>;
  /** Only samples changed at this pointer (and the bases). */
  pointer?: string;
}

/**
 * The contract schema a served schema is judged against at one place, in its three readings (judge/open-choices.ts):
 * the served schema must accept what `narrow` accepts and may accept no more than `wide` accepts; `contract` is the
 * fixture's own (between the two), which a served schema may copy. A plain schema is its own three readings.
 */
export class SchemaBounds {
  readonly narrow: unknown;
  readonly contract: unknown;
  readonly wide: unknown;
  constructor(narrow: unknown, contract: unknown, wide: unknown) {
    this.narrow = narrow;
    this.contract = contract;
    this.wide = wide;
  }
  static of(schema: unknown): SchemaBounds {
    return schema instanceof SchemaBounds ? schema : new SchemaBounds(schema, schema, schema);
  }
}

// The samples of a (contract, served) pair depend on those two schemas alone. Dereferenced documents share one
// object per $ref target, so the error schema, say, is met once per route and status and by three checks
// (schema agreement, closedness, reason codes): its samples are made once per pair of objects.
const samplesByPair = new WeakMap<object, WeakMap<object, Sample[]>>();
function pairSamples(contractSchema: unknown, servedSchema: unknown, make: () => Sample[]): Sample[] {
  return perPair(samplesByPair, contractSchema, servedSchema, make) ?? make();
}

/** What `make` gives for a (contract, served) pair of schema objects, made once per pair; undefined for a non-object. */
function perPair<T>(cache: WeakMap<object, WeakMap<object, T>>, contractSchema: unknown, servedSchema: unknown, make: () => T): T | undefined {
  if (!contractSchema || typeof contractSchema !== 'object' || !servedSchema || typeof servedSchema !== 'object') return undefined;
  let inner = cache.get(contractSchema);
  if (!inner) cache.set(contractSchema, (inner = new WeakMap()));
  let value = inner.get(servedSchema);
  if (value === undefined) inner.set(servedSchema, (value = make()));
  return value;
}

// Two schemas that are the same JSON once `plain` has normalised them compile to the same validator in the same
// judge, so no sample can tell them apart: they agree without sampling (a served document that copies the
// contract, or one of its readings, key order aside). Anything else, however small the difference, is sampled in
// full. Kept per pair of objects, as the samples are.
const sameByPair = new WeakMap<object, WeakMap<object, boolean>>();
function sameSchema(contractSchema: unknown, servedSchema: unknown): boolean {
  return perPair(sameByPair, contractSchema, servedSchema, () => {
    try {
      return isDeepStrictEqual(plain(contractSchema), plain(servedSchema));
    } catch {
      return false; // too deep to normalise: the full comparison says why
    }
  }) ?? false;
}

function sameAsAReading(b: SchemaBounds, servedSchema: unknown): boolean {
  return sameSchema(b.contract, servedSchema) || (b.narrow !== b.contract && sameSchema(b.narrow, servedSchema)) || (b.wide !== b.contract && sameSchema(b.wide, servedSchema));
}

interface Compiled {
  narrow: ValidateFunction;
  wide: ValidateFunction;
  got: ValidateFunction;
  samples: Sample[];
}

/** The three validators of a pair and its samples (made from the narrow reading); a string when the served schema does not compile. */
function compilePair(judge: SchemaJudge, b: SchemaBounds, servedSchema: unknown, where: string): Compiled | string {
  let narrow: ValidateFunction;
  let wide: ValidateFunction;
  let got: ValidateFunction;
  try {
    narrow = judge.compile(b.narrow);
    wide = b.wide === b.narrow ? narrow : judge.compile(b.wide);
  } catch (e) {
    throw new Error(`the contract schema for ${where} does not compile: ${(e as Error).message}`);
  }
  try {
    got = judge.compile(servedSchema);
  } catch (e) {
    return `${where}: the served schema cannot be compiled as JSON Schema 2020-12 (${(e as Error).message.split('\n')[0]})`;
  }
  const served = new Set<string>();
  literals(servedSchema, served);
  // A base the served schema refuses only for narrowing free text (a URL format on audio_url, a length, an
  // enum of status values) is given strings that satisfy both, so that its changes still probe the schema.
  const adapt = (base: unknown): unknown => {
    let cur = base;
    for (let i = 0; i < 24; i++) {
      if (!narrow(cur) || got(cur)) return cur;
      const err = got.errors?.[0];
      if (!freeTextRefinement(narrow, cur, err)) return cur;
      const path = parsePointer(err!.instancePath);
      const fix = [...FREE_TEXT, ...served].map((t) => setAt(cur, path, () => t)).find((c) => narrow(c) && (got(c) || got.errors?.[0]?.instancePath !== err!.instancePath));
      if (fix === undefined) return cur;
      cur = fix;
    }
    return cur;
  };
  // Bases from the narrow reading (instances every served schema must accept) and, where it differs, from the wide
  // one (more instances a served schema taking the open choices accepts, so its other objects are probed too).
  const alsoFrom = b.wide !== b.narrow && !sameSchema(b.narrow, b.wide) ? [b.wide] : [];
  return { narrow, wide, got, samples: pairSamples(b.narrow, servedSchema, () => samplesFor(b.narrow, served, adapt, alsoFrom)) };
}

/**
 * Compares what two schemas accept: every sample is judged by the contract's readings and by the served schema,
 * and each disagreement is a difference: "rejects …, which the contract accepts" (the narrow reading accepts it) or
 * "accepts …, which the contract rejects" (the wide reading rejects it). `want` is a schema or its SchemaBounds.
 */
export function agreement(judge: SchemaJudge, want: unknown, servedSchema: unknown, where: string, opts: AgreementOptions = {}): string[] {
  const b = SchemaBounds.of(want);
  if (sameAsAReading(b, servedSchema)) return [];
  const c = compilePair(judge, b, servedSchema, where);
  if (typeof c === 'string') return [c];
  const diffs: string[] = [];
  // A base instance judged otherwise makes most of its changed copies judged otherwise the same way: only the
  // base is listed for that direction (its reason names the node), changes in the other direction still are.
  const baseVerdict = new Map<number, boolean>();
  const listed = new Set<string>();
  for (const s of c.samples) {
    if (opts.kinds && s.kind !== 'base' && !opts.kinds.has(s.kind)) continue;
    if (opts.pointer !== undefined && s.kind !== 'base' && s.pointer !== opts.pointer) continue;
    const n = c.narrow(s.value) as boolean;
    const g = c.got(s.value) as boolean;
    const servedError = c.got.errors?.[0];
    let lenient: boolean;
    if (n && !g) lenient = false;
    else if (g && !(c.wide(s.value) as boolean)) lenient = true;
    else continue;
    if (!lenient && freeTextRefinement(c.narrow, s.value, servedError ?? undefined)) continue;
    if (s.kind === 'base') baseVerdict.set(s.base, lenient);
    else if (baseVerdict.get(s.base) === lenient) continue;
    // The same change made to several bases is listed once.
    if (s.kind !== 'base' && listed.has(`${lenient} ${s.label}`)) continue;
    listed.add(`${lenient} ${s.label}`);
    const why = lenient ? (c.wide(s.value), c.wide.errors?.[0]) : servedError;
    const reason = why ? ` (${lenient ? 'the contract' : 'the served schema'}: ${why.instancePath || '(root)'} ${why.message})` : '';
    diffs.push(lenient ? `${where}: the served schema accepts ${s.label}, which the contract rejects${reason}` : `${where}: the served schema rejects ${s.label}, which the contract accepts${reason}`);
    if (diffs.length >= MAX_DIFFS) break;
  }
  return capped(diffs);
}

/**
 * §2 closedness alone: an object the contract closes, given an undeclared property, is accepted by the served
 * schema. Judged on closedness samples only, and only those made from a base the contract accepts, so that the
 * contract's rejection is the undeclared property's; a base judged otherwise (a nullability, a conditional)
 * is another judge's difference, never evidence of an open object.
 */
export function openObjects(judge: SchemaJudge, want: unknown, servedSchema: unknown, where: string): string[] {
  const b = SchemaBounds.of(want);
  if (sameAsAReading(b, servedSchema)) return [];
  const c = compilePair(judge, b, servedSchema, where);
  if (typeof c === 'string') return [c];
  const diffs: string[] = [];
  const listed = new Set<string>();
  for (const s of c.samples) {
    if (s.kind !== 'closedness' || listed.has(s.label)) continue;
    if (!c.wide(s.from) || c.wide(s.value) || !c.got(s.value)) continue;
    listed.add(s.label);
    diffs.push(`${where}: the served schema accepts ${s.label}, which the contract rejects (the object is closed by §2)`);
    if (diffs.length >= MAX_DIFFS) break;
  }
  return capped(diffs);
}

// ---------------------------------------------------------------- responses

function statusCovers(key: string, status: string): boolean {
  return key === status || (/^[1-5]XX$/i.test(key) && key[0] === status[0]);
}

/** The served response that documents `status`: the explicit code first, else its range (OpenAPI 3.1 §4.8.16). */
function servedResponse(responses: Json | undefined, status: string): Json | undefined {
  if (!responses) return undefined;
  if (responses[status]) return responses[status];
  const range = Object.keys(responses).find((k) => k !== status && statusCovers(k, status));
  return range ? responses[range] : undefined;
}

/** The schemas of the response's JSON media types (any JSON media type counts, parameters and +json included). */
function jsonSchemas(response: Json | undefined): { media: string; schema: unknown }[] {
  return Object.entries((response?.content ?? {}) as Json).filter(([m, c]) => isJsonMediaType(m) && c && 'schema' in c).map(([media, c]) => ({ media, schema: (c as Json).schema }));
}

function contractJsonSchema(response: Json | undefined): unknown {
  return jsonSchemas(response)[0]?.schema;
}

// ---------------------------------------------------------------- the judges

/** §1, §9: "OpenAPI 3.1.0": the field is exactly 3.1.0 (the specification names the patch version). */
export function openapiVersionDiffs(served: Json): string[] {
  return served.openapi === '3.1.0' ? [] : [`openapi ${short(served.openapi)}, the specification says 3.1.0`];
}

/** §9: "the info version `v1`". */
export function infoVersionDiffs(served: Json): string[] {
  return served.info?.version === 'v1' ? [] : [`info.version ${short(served.info?.version)}, the specification says v1`];
}

/** §1, §4: each of the five routes with GET; no other route under /external/v1; no route that changes anything. */
export function pathDiffs(contract: Json, served: Json): string[] {
  const want = contractRoutes(contract);
  const got = operationsByRoute(served);
  const diffs: string[] = [];
  for (const key of want.keys()) if (!got.has(key)) diffs.push(`${key} is not described`);
  const wantPaths = new Set([...want.values()].map((o) => o.route));
  for (const [key, o] of got) {
    const under = o.route === API_PREFIX || o.route.startsWith(`${API_PREFIX}/`);
    if (!under) continue;
    if (!wantPaths.has(o.route)) diffs.push(`${key}: the specification has no such route under ${API_PREFIX} (§1: five routes)`);
    else if (MUTATING.has(o.method)) diffs.push(`${key}: §1 says no route creates, changes or deletes anything`);
  }
  return capped(diffs);
}

/** §4.1, §4.2: the two named operations are the GETs of their routes; the other operationIds are free. */
export function operationNameDiffs(contract: Json, served: Json): string[] {
  const want = contractRoutes(contract);
  const got = operationsByRoute(served);
  const diffs: string[] = [];
  for (const name of NAMED_OPERATIONS) {
    const route = [...want.entries()].find(([, o]) => o.op.operationId === name)?.[0];
    if (!route) throw new Error(`the contract has no operation ${name}`);
    const served = got.get(route);
    if (!served) diffs.push(`${name}: ${route} is not described`);
    else if (served.op.operationId !== name) diffs.push(`${route}: operationId ${short(served.op.operationId)}, the specification names it ${name}`);
    const elsewhere = [...got.entries()].filter(([k, o]) => k !== route && o.op.operationId === name).map(([k]) => k);
    if (elsewhere.length > 0) diffs.push(`${name} also names ${elsewhere.join(', ')}`);
  }
  return diffs;
}

/** §5.1: the scheme publicApiKeyBearer is HTTP bearer, and every route requires it (and nothing else, nor nothing). */
export function securityDiffs(contract: Json, served: Json): string[] {
  const diffs: string[] = [];
  const scheme = resolveRef(served, served.components?.securitySchemes?.[SECURITY_SCHEME]) as Json | undefined;
  if (!scheme) diffs.push(`no security scheme named ${SECURITY_SCHEME}`);
  else {
    if (scheme.type !== 'http') diffs.push(`${SECURITY_SCHEME}: type ${short(scheme.type)}, not http`);
    // RFC 9110 §11.1: the auth-scheme token is case-insensitive.
    if (typeof scheme.scheme !== 'string' || scheme.scheme.toLowerCase() !== 'bearer') diffs.push(`${SECURITY_SCHEME}: scheme ${short(scheme.scheme)}, not bearer`);
  }
  const got = operationsByRoute(served);
  for (const key of contractRoutes(contract).keys()) {
    const o = got.get(key);
    if (!o) continue;
    const effective = o.op.security ?? served.security;
    if (!Array.isArray(effective) || effective.length === 0) {
      diffs.push(`${key}: requires no authentication (§5.1: every REST route requires the bearer key)`);
      continue;
    }
    for (const alt of effective as Json[]) {
      const names = Object.keys(alt ?? {});
      if (names.length === 0) diffs.push(`${key}: an empty security requirement lets a caller in without a key`);
      else if (!names.includes(SECURITY_SCHEME)) diffs.push(`${key}: the alternative ${short(alt)} does not require ${SECURITY_SCHEME}`);
      else if (names.length > 1) diffs.push(`${key}: the alternative ${short(alt)} requires more than ${SECURITY_SCHEME}`);
    }
  }
  return diffs;
}

/**
 * §4: each route documents exactly its statuses (200 and the error statuses of its §4 list), every one with a
 * JSON body and no other media type (§1: all routes return JSON). A range (4XX) documents the statuses it
 * covers; `default` documents no particular status and is neither required nor refused.
 */
export function statusDiffs(contract: Json, served: Json): string[] {
  const got = operationsByRoute(served);
  const diffs: string[] = [];
  // A status the catalog leaves open (a 429 where rate limits are not shown) may be documented.
  const open = openStatuses();
  for (const [key, o] of contractRoutes(contract)) {
    const s = got.get(key);
    if (!s) continue;
    const want = Object.keys(o.op.responses ?? {});
    const responses = (s.op.responses ?? {}) as Json;
    for (const status of want) {
      const r = resolveRef(served, servedResponse(responses, status));
      if (!r) {
        diffs.push(`${key} ${status}: not documented`);
        continue;
      }
      const media = Object.keys((r.content ?? {}) as Json);
      if (!media.some(isJsonMediaType)) diffs.push(`${key} ${status}: no JSON media type (${media.length > 0 ? media.join(', ') : 'no content'})`);
      const other = media.filter((m) => !isJsonMediaType(m));
      if (other.length > 0) diffs.push(`${key} ${status}: non-JSON media type ${other.join(', ')} (§1: all routes return JSON)`);
    }
    for (const k of Object.keys(responses)) {
      if (k === 'default' || k.startsWith('x-') || open.has(k)) continue;
      if (!want.some((status) => statusCovers(k, status))) diffs.push(`${key} ${k}: documented, but §4 gives this route no such status`);
    }
  }
  return capped(diffs);
}

export interface SchemaPair {
  where: string;
  contract: SchemaBounds;
  served: unknown;
}

/** A JudgingContract from one dereferenced document (its three readings the same): for tests and plain comparisons. */
function readings(j: JudgingContract | Json): JudgingContract {
  return 'narrow' in j && 'wide' in j && !('paths' in j) ? (j as JudgingContract) : { contract: j, narrow: j, wide: j };
}

/**
 * The three readings of one place; a reading that is the same JSON as the contract's is the contract's own object,
 * so that most places (where no open choice lies) compile one validator and are sampled once.
 */
function boundsOf(narrow: unknown, want: unknown, wide: unknown): SchemaBounds {
  const same = (x: unknown) => (x === undefined || sameSchema(want, x) ? want : x);
  return new SchemaBounds(same(narrow), want, same(wide));
}

// §7.1 and §7.2 decide more of an error body than the contract's one error schema says: each status has its category
// (404's is not shown), each route and status its reasons (§4, the contract's x-reason-codes), each reason its
// field. A served document may say so in its schemas, as many do (an `allOf` pinning `error` and `reason_code`
// per response): the narrow reading of an error response is that body as the specification decides it, so a
// served schema is never failed for refusing a body no conformant service sends. The wide reading stays the
// contract's, so a served document with one shared error schema agrees as before.

/** §7.2's field of a reason as a schema (FIELD_BY_REASON): a string for unsupported_filter, the parameter's name, or null. */
function fieldSchema(reason: string): Json {
  const f = FIELD_BY_REASON[reason];
  return f === undefined ? { type: 'null' } : f === 'key' ? { type: 'string' } : { enum: [...f] };
}

/** The one category a served schema gives a 404 body, when it pins one (§7.1 shows none, so any is the service's choice). */
function pinned404Category(judge: SchemaJudge, narrowed: Json, served: unknown): string | undefined {
  const candidates = new Set<string>();
  literals(served, candidates);
  let got: ValidateFunction;
  try {
    got = judge.compile(served);
  } catch {
    return undefined;
  }
  const base = build(narrowed, STRATEGIES[0]) as Json;
  const accepted = [...candidates].filter((c) => got({ ...base, error: c }));
  return accepted.length === 1 && !got({ ...base, error: 'x_any_other_category' }) ? accepted[0] : undefined;
}

const narrowedErrors = new WeakMap<object, Map<string, Json>>();

/** The narrow reading of an error response: the contract's error schema with the status's category, the route's reasons and each reason's field. */
function narrowError(error: Json, status: string, reasons: string[], category: string | undefined): Json {
  const key = `${status} ${reasons.join(',')} ${category ?? ''}`;
  let byKey = narrowedErrors.get(error);
  if (!byKey) narrowedErrors.set(error, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit) return hit;
  const props = (error.properties ?? {}) as Json;
  const out: Json = {
    ...error,
    properties: { ...props, ...(category !== undefined ? { error: { type: 'string', const: category } } : {}), reason_code: { type: 'string', enum: reasons } },
    oneOf: reasons.map((r) => ({ properties: { reason_code: { const: r }, field: fieldSchema(r) } })),
  };
  byKey.set(key, out);
  return out;
}

/**
 * Each contract response schema (route and status, in its three readings) beside the served one(s) for the same route
 * and status. `judge` compiles the served 404 schemas whose category is looked for: the judge that compares the pairs
 * next, so that each served schema is compiled once (a judge of its own compiled every served 404 schema twice).
 */
export function responsePairs(judging: JudgingContract | Json, servedDeref: Json, statuses?: (status: string) => boolean, judge: SchemaJudge = new SchemaJudge()): SchemaPair[] {
  const j = readings(judging);
  const got = operationsByRoute(servedDeref);
  const narrowRoutes = contractRoutes(j.narrow);
  const wideRoutes = contractRoutes(j.wide);
  const pairs: SchemaPair[] = [];
  for (const [key, o] of contractRoutes(j.contract)) {
    const s = got.get(key);
    if (!s) continue;
    for (const [status, r] of Object.entries((o.op.responses ?? {}) as Json)) {
      if (statuses && !statuses(status)) continue;
      const want = contractJsonSchema(r);
      if (want === undefined) continue;
      const narrow = contractJsonSchema(narrowRoutes.get(key)?.op.responses?.[status]);
      const wide = contractJsonSchema(wideRoutes.get(key)?.op.responses?.[status]);
      const reasons = (r as Json)['x-reason-codes'] as string[] | undefined;
      for (const { media, schema } of jsonSchemas(servedResponse(s.op.responses, status))) {
        let bounds = boundsOf(narrow, want, wide);
        if (Array.isArray(reasons) && reasons.length > 0 && bounds.narrow && typeof bounds.narrow === 'object') {
          const error = bounds.narrow as Json;
          const category = CATEGORY_BY_STATUS[Number(status)] ?? (status === '404' ? pinned404Category(judge, narrowError(error, status, reasons, undefined), schema) : undefined);
          bounds = new SchemaBounds(narrowError(error, status, reasons, category), bounds.contract, bounds.wide);
        }
        pairs.push({ where: `${key} ${status} ${media}`, contract: bounds, served: schema });
      }
    }
  }
  return pairs;
}

/**
 * The webhook event schema, where the served document describes the webhook (§2.10, §6.1). The specification
 * does not require the REST document to describe it, so an absent webhook gives no pair.
 */
export function webhookPairs(judging: JudgingContract | Json, servedDeref: Json): SchemaPair[] {
  const j = readings(judging);
  const pairs: SchemaPair[] = [];
  const servedHooks = (servedDeref.webhooks ?? {}) as Json;
  const servedOps = Object.values(servedHooks).flatMap((item) => METHODS.map((m) => (item as Json)?.[m]).filter(Boolean)) as Json[];
  for (const [name, item] of Object.entries((j.contract.webhooks ?? {}) as Json)) {
    for (const m of METHODS) {
      const op = (item as Json)?.[m];
      if (!op) continue;
      const want = contractJsonSchema(op.requestBody);
      const s = (servedHooks[name] as Json | undefined)?.[m] ?? (servedOps.length === 1 ? servedOps[0] : undefined);
      if (!s || want === undefined) continue;
      const bounds = boundsOf(contractJsonSchema(j.narrow.webhooks?.[name]?.[m]?.requestBody), want, contractJsonSchema(j.wide.webhooks?.[name]?.[m]?.requestBody));
      const schemas = jsonSchemas(s.requestBody);
      if (schemas.length === 0) pairs.push({ where: `webhook ${name}`, contract: bounds, served: { not: {} } });
      for (const { media, schema } of schemas) pairs.push({ where: `webhook ${name} ${m.toUpperCase()} ${media}`, contract: bounds, served: schema });
    }
  }
  return pairs;
}

/**
 * Sampling a rewritten document takes seconds of CPU: the judges below let the event loop turn between two schema
 * pairs, so that the checks running beside them in the same worker (a batch runs its cases together) receive their
 * responses instead of timing out behind a blocked loop.
 */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Every response schema (and the webhook event, when described) accepts exactly what the contract's accepts, up to
 * the open choices and the prose of judge/open-choices.ts.
 */
export async function schemaDiffs(judge: SchemaJudge, judging: JudgingContract | Json, servedDeref: Json): Promise<string[]> {
  const diffs: string[] = [];
  for (const p of [...responsePairs(judging, servedDeref, undefined, judge), ...webhookPairs(judging, servedDeref)]) {
    await turn();
    diffs.push(...agreement(judge, p.contract, p.served, p.where));
    if (diffs.length >= MAX_DIFFS) break;
  }
  return capped(diffs);
}

/** §2: every object of every response rejects undeclared properties, judged on closedness samples alone (openObjects). */
export async function closednessDiffs(judge: SchemaJudge, judging: JudgingContract | Json, servedDeref: Json): Promise<string[]> {
  const diffs: string[] = [];
  for (const p of [...responsePairs(judging, servedDeref, undefined, judge), ...webhookPairs(judging, servedDeref)]) {
    await turn();
    diffs.push(...openObjects(judge, p.contract, p.served, p.where));
    if (diffs.length >= MAX_DIFFS) break;
  }
  return capped(diffs);
}

/** §7.1: in every error response, reason_code takes exactly the 27 codes (the contract's and the served schema's literals are tried). */
export async function reasonCodeDiffs(judge: SchemaJudge, judging: JudgingContract | Json, servedDeref: Json): Promise<string[]> {
  const diffs: string[] = [];
  for (const p of responsePairs(judging, servedDeref, (status) => /^[45]/.test(status), judge)) {
    await turn();
    diffs.push(...agreement(judge, p.contract, p.served, p.where, { pointer: '/reason_code', kinds: new Set(['value']) }));
    if (diffs.length >= MAX_DIFFS) break;
  }
  return capped(diffs);
}

// ---------------------------------------------------------------- parameters

/** Values of a parameter tried on both schemas: the bounds and one past them, the enum and near misses, dates. */
function parameterProbes(schema: Json | undefined, where: 'path' | 'query' | string): unknown[] {
  const out: unknown[] = [7, 2.5, -1, true, null, 'sample', 'ENC-1', 'enc_0001', '0', 'asc', 'desc', 'ASC', 'random'];
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'default']) {
    const v = schema?.[k];
    if (typeof v === 'number') out.push(v - 1, v, v + 1);
  }
  const lits = new Set<string>();
  literals(schema, lits);
  out.push(...lits, ...STRING_PROBES);
  if (where !== 'path') out.push('');
  return [...new Set(out)];
}

function parameterSchema(p: Json): unknown {
  if (p.schema !== undefined) return p.schema;
  const media = Object.entries((p.content ?? {}) as Json).find(([m]) => isJsonMediaType(m));
  return media ? (media[1] as Json).schema : undefined;
}

/**
 * §4: each route's parameters: the list route's five optional query parameters and the path parameters,
 * each accepting what the contract's accepts (limit 1..100, offset 0..10000, sort_order asc/desc, timezone-aware
 * date-times, any id string), with the defaults of §4.1 where the served document states one. No other query
 * parameter (§4: any other key yields 400), no other required parameter.
 */
export function parameterDiffs(judge: SchemaJudge, judging: JudgingContract | Json, servedDeref: Json): string[] {
  const got = operationsByRoute(servedDeref);
  const diffs: string[] = [];
  for (const [key, o] of contractRoutes(readings(judging).contract)) {
    const s = got.get(key);
    if (!s) continue;
    const servedParams = new Map(s.parameters.map((p) => [`${p?.in}:${p?.name}`, p]));
    const wantKeys = new Set(o.parameters.map((p) => `${p.in}:${p.name}`));
    for (const p of o.parameters) {
      const id = `${p.in}:${p.name}`;
      const q = servedParams.get(id);
      if (!q) {
        diffs.push(`${key} ${p.in} parameter ${p.name}: not described`);
        continue;
      }
      if ((p.required ?? false) !== (q.required ?? false)) diffs.push(`${key} ${p.in} parameter ${p.name}: required ${q.required ?? false}, the specification makes it ${p.required ?? false}`);
      const defaultStyle = p.in === 'query' ? 'form' : 'simple';
      if ((q.style ?? defaultStyle) !== (p.style ?? defaultStyle)) diffs.push(`${key} ${p.in} parameter ${p.name}: style ${short(q.style)} serialises the value otherwise than ${p.style ?? defaultStyle}`);
      if (q.allowEmptyValue === true && p.allowEmptyValue !== true) diffs.push(`${key} ${p.in} parameter ${p.name}: allowEmptyValue true, but an empty value is invalid (§7.2)`);
      const want = parameterSchema(p) as Json | undefined;
      const have = parameterSchema(q) as Json | undefined;
      if (have === undefined) {
        diffs.push(`${key} ${p.in} parameter ${p.name}: no schema`);
        continue;
      }
      if (want && 'default' in want && have && typeof have === 'object' && 'default' in have && JSON.stringify(have.default) !== JSON.stringify(want.default)) {
        diffs.push(`${key} ${p.in} parameter ${p.name}: default ${short(have.default)}, the specification's default is ${short(want.default)}`);
      }
      let a: ValidateFunction;
      let b: ValidateFunction;
      try {
        a = judge.compile(want);
        b = judge.compile(have);
      } catch (e) {
        diffs.push(`${key} ${p.in} parameter ${p.name}: the schema cannot be compiled (${(e as Error).message.split('\n')[0]})`);
        continue;
      }
      for (const v of parameterProbes(want, p.in)) {
        // A value of a form the catalog leaves open (LIST-DATETIME-FORMAT-DETAILS) may be accepted or refused.
        if (openParameterValue(p.name, v)) continue;
        const wa = a(v) as boolean;
        const wb = b(v) as boolean;
        if (wa !== wb) diffs.push(`${key} ${p.in} parameter ${p.name}: the served schema ${wb ? 'accepts' : 'rejects'} ${short(v)}, which the contract ${wa ? 'accepts' : 'rejects'}`);
      }
    }
    for (const [id, q] of servedParams) {
      if (wantKeys.has(id)) continue;
      if (q?.in === 'query') diffs.push(`${key} query parameter ${q.name}: the specification accepts no such key (it yields 400 unsupported_filter)`);
      else if (q?.in === 'path') diffs.push(`${key} path parameter ${q.name}: not in the route`);
      else if (q?.required === true) diffs.push(`${key} ${q?.in} parameter ${q?.name}: required, but the specification requires no such ${q?.in}`);
    }
  }
  return capped(diffs);
}
