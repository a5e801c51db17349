// What a service check needs, as its declaration says it (engine/registry.ts `needs`): the profile settings without
// which it cannot be verified, named as the profile names them (`credentials.no_scopes`, `resources.own_encounter`,
// `faults.digest_key_unavailable`). Small builders for the declarations, so a suite states a need the way it asks
// for the value (`{ as: 'no_scopes' }` → `credentials.no_scopes`). tests/check-needs.spec.ts holds every declaration
// to what its check asks for on the reference and lacks on a profile with the full key alone.
import { settingPath } from '../../profile/profile.ts';
import type { As, CheckApi } from '../../observe/target.ts';

/** The credential a request is sent with, as a need (the full key and no key need nothing named). */
export function asNeeds(as: As | undefined): string[] {
  return typeof as === 'string' && as !== 'none' && as !== 'full' ? [settingPath('credential', as)] : [];
}

/** Fault switches, as needs. */
export function faultNeeds(faults: readonly string[] | undefined): string[] {
  return (faults ?? []).map((f) => settingPath('fault', f));
}

/** Resource roles, as needs. */
export function resourceNeeds(...roles: string[]): string[] {
  return roles.map((r) => settingPath('resource', r));
}

/** One list of needs from parts, each once, sorted. */
export function needs(...parts: (readonly string[] | string)[]): string[] {
  return [...new Set(parts.flat())].sort();
}

/** The part of the check API a request builder asks for profile values through. */
export type RoleAsker = Pick<CheckApi, 'key' | 'encounter' | 'document' | 'fault' | 'callerReplaced' | 'carries'>;

/**
 * The needs of a request builder that takes its values from the profile (observe/stage-faults.ts requestFor):
 * the builder is run once against an asker that records what it is asked for and answers placeholders, so the
 * declaration states exactly what the builder will ask the real profile for. Nothing is sent. The full key is
 * every service check's own and is not named.
 */
export function askedBy(build: (api: CheckApi) => unknown): string[] {
  const asked: string[] = [];
  const asker: RoleAsker = {
    key: (role) => (asked.push(...asNeeds(role)), 'placeholder-key'),
    encounter: (role) => (asked.push(...resourceNeeds(role)), 'placeholder-encounter'),
    document: (role) => (asked.push(...resourceNeeds(role)), { encounter_id: 'placeholder-encounter', document_id: 'placeholder-document' }),
    fault: (name) => (asked.push(...faultNeeds([name])), {}),
    // The declaration names the caller the combination is written with, whatever form the profile gives a condition in.
    callerReplaced: () => false,
    carries: () => undefined,
  };
  build(asker as CheckApi);
  return needs(asked);
}
