// The switched phase: a condition the profile gives as an on/off command pair (a process-wide switch: an operator
// route, an environment flag) holds for every request while it is on, so the checks that need it cannot run beside
// the others. They run after every other check of the run (the Playwright project `conformance-switched`, which
// depends on `conformance`), one condition at a time: `on`, the checks, and `off` always, even when a check or `on`
// failed. While it is on, only requests that name the condition are sent (observe/target.ts Target.switchedOn).
// Pure planning and the commands: the tests are declared by engine/playwright/fixtures.ts declareSwitched.
import fs from 'node:fs';
import { setting } from './config.ts';
import { describeEnd, type CommandResult } from '../observe/command.ts';
import { declaration } from './registry.ts';
import { switchedFaults, type FaultName, type Profile } from '../profile/profile.ts';

/**
 * The conditions the run's profile gives as commands, read when the run's tests are planned (before any worker has
 * its target). The profile is validated by the CLI; bytes that are not a readable object plan no switched test (the
 * target fixture reports what is wrong with them).
 */
export function plannedSwitches(env: NodeJS.ProcessEnv = process.env): FaultName[] {
  const file = setting('profile', env);
  if (!file) return [];
  try {
    return switchedFaults(JSON.parse(fs.readFileSync(file, 'utf8')) as Pick<Profile, 'faults'>);
  } catch {
    return [];
  }
}

/** Whether the check declared as `id` needs condition `f` (its declared needs). */
export function needsCondition(id: string, f: FaultName): boolean {
  return declaration(id)?.needs?.includes(`faults.${f}`) === true;
}

/** The first of `switches` the check declared as `id` needs, if any: the phase it runs in. */
export function switchOf(id: string, switches: readonly FaultName[]): FaultName | undefined {
  return switches.find((f) => needsCondition(id, f));
}

/** Why the checks of a condition were not judged when its `on` command failed. */
export function onFailed(f: FaultName, r: CommandResult): string {
  return `the command that switches ${f} on (faults.${f}.command.on) ended ${describeEnd(r)}: the checks that need the condition could not be judged`;
}

/** The run error when `off` failed: the deployment may still hold the condition. */
export function offFailed(f: FaultName, r: CommandResult): string {
  return `the command that switches ${f} off (faults.${f}.command.off) ended ${describeEnd(r)}: the deployment may still hold the condition; switch it off by hand`;
}
