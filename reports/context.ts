// Reads what the report needs besides the outcomes: harness version, target (from the profile: name and
// base URL only, never keys; loading it registers its secrets with the redaction layer), SHA-256 of the
// contract and of the catalog, the catalog itself, the waivers (validated against their schema) and the
// mutation result of the meta-suite. File reads only; a missing or broken input becomes a warning or a
// problem in the report, never a throw (Playwright swallows reporter errors).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { setting } from '../engine/config.ts';
import { redact } from '../record/redact.ts';
import { deliveryNotActivated, DELIVERY_NOT_ACTIVATED, DELIVERY_NOT_ACTIVATED_REASON, loadProfile, registerProfileSecrets, SECRET_HEADER, type Profile } from '../profile/profile.ts';
import { senderRequirementIds } from '../checks/sender/scope.ts';
import { todayUtc, type Catalog, type MutationInput, type OutOfScope, type RunContext, type Subject, type VariantInput, type Waiver } from './model.ts';
import { SPEC_PATH } from '../fixtures/paths.ts';
import { readNotTested } from './coverage.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const CONTRACT_PATH = path.join(ROOT, 'fixtures/contract/openapi.json');
export const CATALOG_PATH = path.join(ROOT, 'fixtures/requirements/requirements.json');
export const WAIVERS_SCHEMA_PATH = path.join(ROOT, 'fixtures/report/waivers.schema.json');

export function sha256File(file: string): string | null {
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
}

/** The version of the harness's package.json: at ROOT in a clone, one folder up in the npm package (ROOT is its dist/). */
/** The name `conformance profile init` writes: a placeholder, never a name the user gave the target. */
export const TEMPLATE_PROFILE_NAME = 'my-target';

/** The specification's title: its first `# ` heading (null when the file cannot be read). */
export function specTitle(file: string = SPEC_PATH): string | null {
  try {
    const m = /^#\s+(.+?)\s*$/m.exec(fs.readFileSync(file, 'utf8'));
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

/**
 * The target as a report names it: the profile's name when the profile names it, else its base URL. The
 * template's placeholder name is no name (a user who kept it would see "my-target" on an auditor's report).
 */
export function targetOf(profile: Pick<Profile, 'name' | 'baseUrl'>): { name: string; baseUrl: string } {
  const named = profile.name.trim() !== '' && profile.name !== TEMPLATE_PROFILE_NAME;
  return { name: named ? profile.name : profile.baseUrl, baseUrl: profile.baseUrl };
}

const SECRET_VALUE = '[secret value not digested]';

/** JSON with object keys sorted at every level: the same data gives the same bytes. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/**
 * The profile's digest with its secret values left out: SHA-256 of its canonical JSON (keys sorted) in which
 * every inline key, the inline signing secret and the value of every secret-named header (profile/profile.ts
 * SECRET_HEADER, the rule redaction uses) are replaced by one placeholder. Variable names (`keyEnv`) stay:
 * they are the profile's shape, not its secrets. Two runs with the same profile and rotated keys share the digest,
 * and the digest cannot be used to guess a key.
 */
export function profileSha256(profile: unknown): string {
  const p = JSON.parse(JSON.stringify(profile)) as Record<string, any>;
  for (const c of Object.values((p.credentials ?? {}) as Record<string, Record<string, unknown> | null>)) if (c && typeof c === 'object' && 'key' in c) c.key = SECRET_VALUE;
  if (p.webhook && typeof p.webhook === 'object' && 'signingSecret' in p.webhook) p.webhook.signingSecret = SECRET_VALUE;
  const headerSets = [p.requestHeaders, ...Object.values((p.faults ?? {}) as Record<string, { headers?: Record<string, string> } | null>).map((f) => f?.headers)];
  for (const h of headerSets) if (h && typeof h === 'object') for (const k of Object.keys(h)) if (SECRET_HEADER.test(k)) h[k] = SECRET_VALUE;
  return crypto.createHash('sha256').update(canonicalJson(p)).digest('hex');
}

/** Options whose value is a secret when given on a command line (`--api-key X`, `--token=X`). */
const SECRET_OPTION = /^--?[a-z0-9-]*(key|token|secret|password|passwd|auth)[a-z0-9-]*$/i;

/**
 * A command line with its secrets out: every registered secret and known secret shape (redact), the
 * user:password of a URL, and the value of an option named like a secret. A key *file* (`--attest FILE`) is a
 * path, not a secret, and stays.
 */
export function redactCommand(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let a = redact(argv[i]).replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, '$1[REDACTED]@');
    const eq = /^(--?[^=\s]+)=(.*)$/s.exec(a);
    if (eq && SECRET_OPTION.test(eq[1]) && !/file$/i.test(eq[1])) a = `${eq[1]}=[REDACTED]`;
    out.push(a);
    if (!eq && SECRET_OPTION.test(a) && !/file$/i.test(a) && i + 1 < argv.length && !argv[i + 1].startsWith('-')) {
      out.push('[REDACTED]');
      i++;
    }
  }
  return out;
}

/** The command line the CLI recorded for this run (CONFORMANCE_COMMAND, JSON), secrets out; null when none. */
export function recordedCommand(): string[] | null {
  const raw = setting('command');
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) ? redactCommand(v.map(String)) : null;
  } catch {
    return null;
  }
}

export function harnessVersion(): string {
  for (const file of [path.join(ROOT, 'package.json'), path.join(ROOT, '..', 'package.json')]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'clinical-encounter-conformance') return pkg.version;
    } catch {
      /* not here */
    }
  }
  return 'unknown';
}

export class WaiverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WaiverError';
  }
}

let waiverValidator: ReturnType<Ajv2020['compile']> | undefined;

/** Reads and validates a waiver file; throws WaiverError naming the file and the offending field. */
export function loadWaivers(file: string): Waiver[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new WaiverError(code ? `cannot read waivers ${file}: ${code}` : `waivers ${file} is not valid JSON: ${(e as Error).message}`);
  }
  waiverValidator ??= new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(fs.readFileSync(WAIVERS_SCHEMA_PATH, 'utf8')));
  if (!waiverValidator(data)) {
    const err = waiverValidator.errors![0];
    throw new WaiverError(`waivers ${file}: field ${err.instancePath || '(root)'} ${err.message}`);
  }
  const waivers = data as Waiver[];
  for (const w of waivers) {
    // The pattern admits 2026-02-31; a date that does not exist is a typo, not a waiver.
    const d = new Date(`${w.expires}T00:00:00Z`);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== w.expires) throw new WaiverError(`waivers ${file}: ${w.id} expires on a date that does not exist: ${w.expires}`);
  }
  return waivers;
}

export function loadCatalog(file: string = CATALOG_PATH): Catalog | null {
  try {
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as Catalog;
    return Array.isArray(c.requirements) ? c : null;
  } catch {
    return null;
  }
}

function loadMutation(file: string): MutationInput | null | string {
  if (!fs.existsSync(file)) return null;
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<MutationInput>;
    if (typeof m.total !== 'number' || typeof m.caught !== 'number') return `${file} lacks numeric total/caught`;
    return { total: m.total, caught: m.caught, survivors: (m.survivors ?? []).map(String), unproven: (m.unproven ?? []).map(String) };
  } catch (e) {
    return `${file} is not valid JSON: ${(e as Error).message}`;
  }
}

function loadVariants(file: string): VariantInput | null | string {
  if (!fs.existsSync(file)) return null;
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<VariantInput>;
    if (typeof v.total !== 'number' || typeof v.passed !== 'number') return `${file} lacks numeric total/passed`;
    const failing: Record<string, string[]> = {};
    for (const [k, ids] of Object.entries(v.failing ?? {})) failing[k] = Array.isArray(ids) ? ids.map(String) : [];
    return { total: v.total, passed: v.passed, failing };
  } catch (e) {
    return `${file} is not valid JSON: ${(e as Error).message}`;
  }
}

export interface ContextOptions {
  outDir: string;
  profilePath?: string;
  waiversPath?: string;
  catalogPath?: string;
  today?: string;
  /** --strict: warnings fail the run. */
  strict?: boolean;
  /** The command line (default: the one the CLI recorded in CONFORMANCE_COMMAND). */
  command?: string[] | null;
}


/**
 * The context of a run judged outside Playwright (a partner's receiver or client, a sender on its own): the subject
 * it judges and its target, with no mutation or variant score (those measure the service suites, not this run).
 * One place says so, instead of each command overwriting the fields of `loadRunContext`'s answer.
 */
export function subjectRunContext(subject: Subject, target: RunContext['target'] | undefined, opts: ContextOptions): RunContext {
  const ctx = loadRunContext(opts);
  return { ...ctx, subject, mutation: null, variants: null, target: target ?? ctx.target };
}

export function loadRunContext(opts: ContextOptions): RunContext {
  const warnings: string[] = [];
  let target: RunContext['target'] = null;
  let outOfScope: OutOfScope[] = [];
  let profileDigest: string | null = null;
  let notActivated = false;
  if (opts.profilePath) {
    try {
      const profile = loadProfile(opts.profilePath, process.env, setting('profileChecked'));
      // loadProfile registered every secret it resolves to (profile/profile.ts profileSecrets), keys held
      // in environment variables included; said again here, explicitly, for the reporter process.
      registerProfileSecrets(profile, process.env);
      target = targetOf(profile);
      profileDigest = profileSha256(profile);
      outOfScope = (profile.outOfScope ?? []).map((p) => ({ part: p.part, reason: p.reason }));
      notActivated = deliveryNotActivated(profile);
    } catch (e) {
      warnings.push(`the target profile could not be read: ${(e as Error).message}`);
    }
  }
  const catalogPath = opts.catalogPath ?? CATALOG_PATH;
  const catalog = loadCatalog(catalogPath);
  // Webhook delivery declared not activated (§6): every requirement of the sender is out of scope, said in the verdict.
  if (notActivated && catalog) outOfScope.push({ part: 'webhook.delivery', reason: DELIVERY_NOT_ACTIVATED_REASON, requirements: senderRequirementIds(catalog) });
  let waivers: Waiver[] = [];
  let waiverError: string | undefined;
  if (opts.waiversPath) {
    try {
      waivers = loadWaivers(opts.waiversPath);
    } catch (e) {
      waiverError = (e as Error).message;
    }
  }
  const mutation = loadMutation(path.join(opts.outDir, 'mutation.json'));
  if (typeof mutation === 'string') warnings.push(`mutation result ignored: ${mutation}`);
  const variants = loadVariants(path.join(opts.outDir, 'variants.json'));
  if (typeof variants === 'string') warnings.push(`variant result ignored: ${variants}`);
  const absent = typeof mutation === 'string' ? `Not known: ${mutation}.`
    : setting('sandbox') === '1' ? 'Not measured for this run: it was not asked for (`conformance run --mutants` measures the mutation and variant scores against this sandbox, a few minutes more).'
      : opts.profilePath ? 'Not measured for a target run: the scores measure the harness itself, every check against the reference\'s deliberately broken (mutants) and legitimately different (variants) services; `conformance run --mutants` in a clone of the harness measures them.'
        : undefined;
  const ctx: RunContext = {
    harnessVersion: harnessVersion(),
    specSha256: sha256File(SPEC_PATH),
    specTitle: specTitle(),
    command: opts.command !== undefined ? (opts.command ? redactCommand(opts.command) : null) : recordedCommand(),
    profileSha256: profileDigest,
    // Only the run that started the reference itself is a sandbox run (cli/run.ts sets it).
    sandbox: setting('sandbox') === '1',
    scoresAbsent: absent ?? null,
    outOfScope,
    strict: opts.strict ?? setting('strict') === '1',
    variants: typeof variants === 'string' ? null : variants,
    target,
    contractSha256: sha256File(CONTRACT_PATH),
    catalogSha256: sha256File(catalogPath),
    catalog,
    notTested: readNotTested(), // the reviewed reasons (fixtures/requirements/not-tested.json)
    waivers,
    mutation: typeof mutation === 'string' ? null : mutation,
    today: opts.today ?? todayUtc(),
    warnings,
  };
  if (waiverError !== undefined) ctx.waiverError = waiverError;
  if (notActivated) ctx.scopeLabel = `REST API; ${DELIVERY_NOT_ACTIVATED}`;
  return ctx;
}
