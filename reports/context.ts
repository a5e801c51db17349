// Reads what the report needs besides the outcomes: harness version, target (from the profile: name and
// base URL only, never keys; loading it registers its secrets with the redaction layer), SHA-256 of the
// contract and of the catalog, the catalog itself, the waivers (validated against their schema) and the
// mutation result of the meta-suite. File reads only; a missing or broken input becomes a warning or a
// problem in the report, never a throw (Playwright swallows reporter errors).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { setting } from '../harness/config.ts';
import { deliveryNotActivated, DELIVERY_NOT_ACTIVATED, DELIVERY_NOT_ACTIVATED_REASON, loadProfile, registerProfileSecrets } from '../harness/profile.ts';
import { senderRequirementIds } from '../harness/webhook/sender-scope.ts';
import { todayUtc, type Catalog, type MutationInput, type OutOfScope, type RunContext, type VariantInput, type Waiver } from './model.ts';
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
}


export function loadRunContext(opts: ContextOptions): RunContext {
  const warnings: string[] = [];
  let target: RunContext['target'] = null;
  let outOfScope: OutOfScope[] = [];
  let notActivated = false;
  if (opts.profilePath) {
    try {
      const profile = loadProfile(opts.profilePath);
      // loadProfile registered every secret it resolves to (harness/profile.ts profileSecrets), keys held
      // in environment variables included; said again here, explicitly, for the reporter process.
      registerProfileSecrets(profile);
      target = { name: profile.name, baseUrl: profile.baseUrl };
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
  const ctx: RunContext = {
    harnessVersion: harnessVersion(),
    specSha256: sha256File(SPEC_PATH),
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
