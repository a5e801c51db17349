// The bookkeeping of the variant meta-suite on fabricated tables and outcomes: bundles never hold two variants
// that exclude each other, every variant lands in one, and a fail recorded with a bundle counts against every
// variant in it (so a check stricter than the spec is reported, never lost).
import { test, expect } from '@playwright/test';
import { failsOf, makeBundles, serviceVariants, summarize } from './bundles.ts';
import { VARIANTS } from '../../reference-switchboard/variants.ts';

const TABLE = {
  a: { area: 'http', clause: 'c', justification: 'j' },
  b: { area: 'open-choice', clause: 'c', justification: 'j', excludes: ['c'] },
  c: { area: 'open-choice', clause: 'c', justification: 'j' },
  d: { area: 'open-choice', clause: 'c', justification: 'j', excludes: ['b'] },
  e: { area: 'webhook-receiver', clause: 'c', justification: 'j' },
};

test('bundles respect excludes in both directions and hold every variant once', () => {
  const names = serviceVariants(TABLE);
  expect(names).toEqual(['a', 'b', 'c', 'd']);
  expect(makeBundles(names, TABLE)).toEqual({ 'bundle-1': ['a', 'b'], 'bundle-2': ['c', 'd'] });
  expect(makeBundles(names, TABLE, true)).toEqual({ a: ['a'], b: ['b'], c: ['c'], d: ['d'] });
});

test('a fail recorded with a bundle counts against each of its variants; other outcomes do not', () => {
  const bundles = makeBundles(['a', 'b', 'c', 'd'], TABLE);
  const outcomes = [
    { id: 'too-strict', outcome: 'fail', variant: 'bundle-2', detail: 'rejected a legitimate choice' },
    { id: 'open-point', outcome: 'informational', variant: 'bundle-1' },
    { id: 'plain-run', outcome: 'fail' },
  ];
  expect(failsOf('c', bundles, outcomes).map((o) => o.id)).toEqual(['too-strict']);
  expect(failsOf('a', bundles, outcomes)).toEqual([]);
  expect(summarize(['a', 'b', 'c', 'd'], bundles, outcomes)).toEqual({ total: 4, passed: 2, failing: { c: ['too-strict'], d: ['too-strict'] } });
});

test('the real table bundles without conflicts', () => {
  const names = serviceVariants();
  const bundles = makeBundles(names);
  expect(Object.values(bundles).flat().sort()).toEqual([...names].sort());
  for (const vs of Object.values(bundles)) {
    for (const a of vs) expect(vs.filter((b) => ((VARIANTS as Record<string, { excludes?: readonly string[] }>)[a].excludes ?? []).includes(b))).toEqual([]);
  }
});
