// `conformance run --property-runs N` (CONFORMANCE_PROPERTY_RUNS): every property draws N cases beside its fixed
// examples instead of its own base; the benchmarks' scale still multiplies it; a value that is not a positive
// integer leaves the base (the CLI refuses it before: tests/cli-bad-input.spec.ts).
import { test, expect } from '@playwright/test';
import { numRuns } from '../engine/seed.ts';
import { settingName } from '../engine/config.ts';
import { withEnv } from './helpers/env.ts';

const RUNS = settingName('propertyRuns');
const SCALE = settingName('runsScale');

test('without the setting a property draws its base; with it, the given number for every property', () => {
  expect(withEnv({ [RUNS]: undefined, [SCALE]: undefined }, () => numRuns(100))).toBe(100);
  expect(withEnv({ [RUNS]: '20', [SCALE]: undefined }, () => [numRuns(100), numRuns(50)])).toEqual([20, 20]);
});

test('the scale multiplies what is given; a value that is not a positive integer is not read', () => {
  expect(withEnv({ [RUNS]: '20', [SCALE]: '2' }, () => numRuns(100))).toBe(40);
  for (const bad of ['0', '-3', '2.5', 'many']) expect(withEnv({ [RUNS]: bad, [SCALE]: undefined }, () => numRuns(100)), bad).toBe(100);
});
