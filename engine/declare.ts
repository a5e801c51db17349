// Declaring the service's checks: `const check = suite(import.meta.filename)` in a file of checks/service/, then
// `check({ id, requirements, title, needs, run(api, scope, ctx) })` per check. Each check is declared in the one registry
// (engine/registry.ts) whether or not the run's selection keeps it; a kept one is registered here as a case of the run,
// which the Playwright adapter (engine/playwright/fixtures.ts) plans into tests. No Playwright and no I/O at load time
// (but the cases file of `playwright test --list`, CONFORMANCE_CASES_OUT).
import fs from 'node:fs';
import path from 'node:path';
import { setting } from './config.ts';
import { defineCheck, identity, type Declaration } from './registry.ts';
import { selection, type CaseBody, type Registered, type ServiceRun, type SuiteOptions } from './planner.ts';

/** Every case the loaded suite files declared (and the selection kept), in the order they were declared. */
export const registered: Registered[] = [];

/** A service check as a suite declares it: its declaration (the subject is the service) and how it runs. */
export interface ServiceCheck extends Omit<Declaration, 'subject'> {
  run: ServiceRun;
}

/** The `check` of one suite file: declares a check of the service and makes it a case of the run. */
export interface DeclareCheck {
  (decl: ServiceCheck): Declaration;
  /** Runs a check declared elsewhere (the webhook sender's cases: checks/sender/cases.ts) as a case of this suite. */
  declared(def: Declaration, run: ServiceRun): void;
}

/**
 * The `check` of one suite file: `const check = suite(import.meta.filename)`, then `check({ id, requirements, title,
 * run })` per check. Each is declared in the registry (engine/registry.ts) whether or not the selection keeps it,
 * and registers here as a case of the run when it does; engine/playwright/run.spec.ts loads every suite file, then
 * `declareRun` turns the cases into the run's Playwright tests.
 */
export function suite(file: string, opts: SuiteOptions = {}): DeclareCheck {
  const rel = path.relative(process.cwd(), file);
  const property = path.basename(path.dirname(file)) === 'properties';
  const chosen = selection();
  const casesOut = setting('casesOut');
  const enlist = (decl: Declaration, run: ServiceRun): void => {
    if (decl.subject !== 'service') throw new Error(`check ${decl.id} judges the ${decl.subject}, not the service: it is not a case of a service run`);
    if (!chosen(rel, decl.id)) return;
    if (casesOut) fs.appendFileSync(casesOut, `${rel}\t${decl.id}\n`);
    const def = identity(decl);
    const body: CaseBody = async (fx, testInfo) => {
      // The listener only when the check asks for it (fx.capture throws in a suite not declared with it).
      await fx.check(def, (api, scope) => run(decl.fresh ? api.freshReads() : api, scope, { get capture() { return fx.capture; }, testInfo }));
    };
    registered.push({ title: decl.id, body, file: rel, opts, property });
  };
  const declare = ((decl: ServiceCheck): Declaration => {
    const { run, ...rest } = decl;
    const d = defineCheck({ ...rest, fresh: rest.fresh ?? opts.fresh, subject: 'service' });
    enlist(d, run);
    return d;
  }) as DeclareCheck;
  declare.declared = (def, run) => enlist(def, run);
  return declare;
}

