// One seed per run for every fast-check property, so a failing run can be replayed with --seed.
// CONFORMANCE_SEED wins; otherwise a seed is drawn once per process and recorded by the caller.
import type { TestInfo } from '@playwright/test';
import { integer as fcInteger, type Arbitrary } from 'fast-check';
import { setting } from './config.ts';

let drawn: number | undefined;

export function runSeed(): number {
  const fromEnv = setting('seed');
  if (fromEnv !== undefined && /^-?[0-9]+$/.test(fromEnv)) return Number(fromEnv) | 0;
  drawn ??= (Date.now() ^ (process.pid << 8)) | 0;
  return drawn;
}

/**
 * Number of runs per property: its own base (100), or `--property-runs N` (CONFORMANCE_PROPERTY_RUNS) for every
 * property, a target behind a rate limiter trading drawn cases for requests (the fixed examples are always sent);
 * CONFORMANCE_RUNS_SCALE then scales every property at once (benchmarks use it).
 */
export function numRuns(base: number): number {
  const given = Number(setting('propertyRuns'));
  const runs = Number.isInteger(given) && given > 0 ? given : base;
  const scale = Number(setting('runsScale') ?? '1');
  return Math.max(1, Math.round(runs * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

/**
 * Records the seed on the test so reports show it and `--seed` replays it. `name` is the property's (its check
 * id): a test may run several properties at once (a batch), each printed on its own line.
 */
export function recordSeed(testInfo: TestInfo, seed: number, runs: number, name = testInfo.title): void {
  testInfo.annotations.push({ type: 'seed', description: `${seed} (${runs} runs)` });
  console.log(`[seed] ${name}: seed=${seed} runs=${runs}`);
}

/**
 * Any code point, lone surrogate halves included: what fast-check's `unit: 'binary'` draws, without the
 * ~0.7 s that building that unit costs in every process that loads a property file (Playwright's main
 * process lists every file, each worker loads the ones it runs).
 */
export function anyCodePoint(): Arbitrary<string> {
  return fcInteger({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp));
}

/** Draws the run's seed and the case count for one property, and records both on the test. */
export function startProperty(testInfo: TestInfo, baseRuns: number, name = testInfo.title): { seed: number; runs: number } {
  const seed = runSeed();
  const runs = numRuns(baseRuns);
  recordSeed(testInfo, seed, runs, name);
  return { seed, runs };
}
