// The run's plan as the engine hands it down: what the CLI chose for this run (the settings it set for this process
// and the runner's workers, which are child processes), read here once and given to the target, the checks and the
// redaction as data. Below the engine (checks/, observe/, judge/, profile/, record/) nothing reads a setting or the
// environment: tests/architecture.spec.ts holds that rule.
import { setting } from './config.ts';
import { runBreaker, type Breaker } from '../observe/breaker.ts';
import type { TargetPlan } from '../observe/target.ts';
import { setEvidenceMode } from '../record/redact.ts';
import { checkProfile, type Profile } from '../profile/profile.ts';
import { settingName } from './config.ts';

export interface RunPlan {
  /** What the run's targets carry to their checks. */
  readonly target: TargetPlan;
  /** The breaker file the run's workers share (consecutive transport failures of the target). */
  readonly breakerFile?: string;
  /** full: evidence keeps patient and clinical content (--evidence full); otherwise redacted. */
  readonly evidence: 'redacted' | 'full';
}

const int = (v: string | undefined): number | undefined => {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isInteger(n) ? n : undefined;
};

/** The plan of the run this process belongs to. */
export function runPlan(env: NodeJS.ProcessEnv = process.env): RunPlan {
  return {
    target: { env, paceMs: int(setting('paceMs', env)) ?? 0, listWindow: int(setting('listWindow', env)), audioExpiryWaitS: int(setting('audioExpiryWait', env)) },
    breakerFile: setting('breakerFile', env),
    evidence: setting('evidence', env) === 'full' ? 'full' : 'redacted',
  };
}

/** Applies the plan's process-wide parts (the evidence mode); returns the run's breaker. */
export function applyPlan(plan: RunPlan): Breaker {
  setEvidenceMode(plan.evidence === 'full' ? 'full' : undefined);
  return runBreaker(plan.breakerFile);
}

/** Validates the profile file now and lets this process's children trust these bytes (profile/profile.ts loadProfile). */
export function markProfileChecked(file: string, env: NodeJS.ProcessEnv = process.env): Profile {
  const { profile, digest } = checkProfile(file, process.env);
  env[settingName('profileChecked')] = digest;
  return profile;
}

/** The digest of the profile bytes a parent process validated, which this process may trust (loadProfile's `trusted`). */
export function trustedProfile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return setting('profileChecked', env);
}
