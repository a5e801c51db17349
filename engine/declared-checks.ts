// The loader of every declared check, for their declarations only: it imports every module that declares some and runs nothing.
// Every check the project declares, for every subject, read from the one registry (engine/registry.ts) after
// importing every module that declares some: the service's suites and properties, the webhook sender's cases, the
// receiver's and the client's checks. What `--requirement`, `profile init`, coverage and "what would unlock" know
// of the checks comes from here, never from a file a run once wrote. Importing a suite declares its checks without
// running anything (a suite's cases run only under engine/playwright/run.spec.ts). The one place outside a run that loads the
// suites: the CLI derives from their declarations (through this module), it never runs or judges them.
import { declaredChecks, type Declaration, type Subject } from './registry.ts';
import { loadCheckFiles } from './load.ts';

let loaded: Promise<void> | undefined;

/** Imports every module that declares checks (once per process). */
function loadAll(): Promise<void> {
  loaded ??= (async () => {
    await loadCheckFiles();
    // The other subjects' checks and the sender's cases: loaded only when asked for (not on every `run`).
    await import('../checks/sender/cases.ts');
    await import('../checks/receiver/cases.ts');
    await import('../checks/client/checks.ts');
  })();
  return loaded;
}

/** Every declared check (one subject's when given), in the order of declaration. */
export async function allDeclaredChecks(subject?: Subject): Promise<Declaration[]> {
  await loadAll();
  return declaredChecks(subject);
}

/** Requirement id → the ids of the checks that verify it (one subject's when given), each list sorted. */
export async function checksByRequirement(subject?: Subject): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  // A check that can only show a breach verifies nothing: its requirements stay without a verifying check.
  for (const d of await allDeclaredChecks(subject)) if (!d.breachOnly) for (const r of d.requirements) (out[r] ??= []).push(d.id);
  for (const ids of Object.values(out)) ids.sort();
  return out;
}
