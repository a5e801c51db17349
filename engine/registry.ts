// The one registry of checks, for every subject (docs/architecture.md: one shape for a check). A check is declared once, when its module
// is imported, with `defineCheck({ id, subject, requirements, title, needs })`: the service's checks (suites/ and
// properties/, through engine/playwright/fixtures.ts `suite`, and the webhook sender's cases), the partner's receiver
// (checks/receiver/cases.ts) and the partner's client (checks/client/checks.ts). The registry refuses a
// second declaration of an id, and nothing runs a check that was not declared here (engine/evaluate.ts
// evaluateCheck): what the reports, `--requirement`, coverage and "what would unlock" know of the checks is read
// from these declarations (engine/declared-checks.ts loads every module that declares some), never from a run.
// No Playwright, no target, no I/O: a table and its rules.
import type { CheckDef } from '../record/record.ts';

/** What a check judges: the service (REST API and webhook sender), a partner's webhook receiver, or a partner's API client. */
export type Subject = 'service' | 'receiver' | 'client';
export const SUBJECTS: readonly Subject[] = ['service', 'receiver', 'client'];

/** A declared check: its identity, what it judges, the requirements it verifies and what it needs to judge them. */
export interface Declaration extends CheckDef {
  subject: Subject;
  /**
   * What the check cannot judge without, as the settings that give it: profile roles (`credentials.no_scopes`,
   * `resources.other_org_encounter`, `faults.audio_storage_unavailable`, `webhook.sandboxControlUrl`) or, for
   * the other subjects, the traffic or option that must be there. Read by "what would unlock" and `profile init`.
   * A check may still end not_verified for a reason it cannot declare (the target's data): its record says why.
   */
  needs?: readonly string[];
  /**
   * Every read of the check is sent when it asks, never answered from a read another check of its worker made
   * (principle 9's exception): for a check that compares reads in time (before and after other requests, a repeat
   * walk) or follows what expires. Without it a plain read of the API is shared (observe/target.ts CheckApi.get).
   */
  fresh?: boolean;
  /**
   * The check can show a breach of its requirements but never their observance: a pass proves nothing about them
   * (storage of an audio URL is not seen in traffic; only sending it back to the API is). Its requirements are listed
   * as observable by no run (fixtures/requirements/not-tested.json); a failure still counts.
   */
  breachOnly?: boolean;
  /**
   * Declared by the project's own tests to exercise the harness (a fabricated check): held by the registry like any
   * other, so it can run, but never part of what is derived from the declarations (coverage, needs, selection).
   */
  probe?: boolean;
}

const ID_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const registry = new Map<string, Declaration>();

/**
 * Declares a check. Its id must be kebab-case and new, and it must name at least one requirement. Returns the
 * declaration itself (with whatever the caller added: a `run`, a `judge`), frozen.
 */
export function defineCheck<T extends Declaration>(decl: T): Readonly<T> {
  if (!ID_RE.test(decl.id)) throw new Error(`check id must be kebab-case: ${decl.id}`);
  if (decl.requirements.length === 0) throw new Error(`check ${decl.id} names no requirement`);
  if (registry.has(decl.id)) throw new Error(`duplicate check id ${decl.id}: declared twice`);
  const frozen = Object.freeze({ ...decl, requirements: Object.freeze([...decl.requirements]) as string[] });
  registry.set(decl.id, frozen);
  return frozen;
}

/** The declaration of `id`, if some imported module declared it. */
export function declaration(id: string): Declaration | undefined {
  return registry.get(id);
}

/** True when `def` is a check the registry holds (same id, title and requirements). */
export function isDeclared(def: CheckDef): boolean {
  const d = registry.get(def.id);
  return !!d && d.title === def.title && d.requirements.length === def.requirements.length && d.requirements.every((r, i) => r === def.requirements[i]);
}

/** The identity of a declared check, as a run records it (no subject, needs or run function in a record). */
export function identity(d: CheckDef): CheckDef {
  return { id: d.id, requirements: [...d.requirements], title: d.title };
}

/** Every check the imported modules declared (probes aside), in the order they were declared; one subject's when given. */
export function declaredChecks(subject?: Subject): Declaration[] {
  const all = [...registry.values()].filter((d) => !d.probe);
  return subject ? all.filter((d) => d.subject === subject) : all;
}
