// Groups the variants of the reference switchboard into bundles of mutually compatible variants (no two in a
// bundle exclude each other, in either direction): every variant lands in exactly one bundle, and few bundles
// keep the variant meta-suite fast. CONFORMANCE_VARIANTS_SINGLE=1 asks for one bundle per variant instead
// (slow; for finding which variant of a bundle a failing check reacts to).
import { VARIANTS, type Variant } from '../../reference-switchboard/variants.ts';

export type Bundles = Record<string, string[]>;

/** Variants the REST/OpenAPI/sender checks can meet: receiver variants concern the example receiver, not the service. */
export function serviceVariants(table: Record<string, Variant> = VARIANTS): string[] {
  return Object.keys(table).filter((name) => !/receiver/.test(table[name].area));
}

/** Two variants that declare different profile settings (two header words) cannot be judged with one profile. */
function conflict(a: string, b: string, table: Record<string, Variant>): boolean {
  const declares = (v: Variant) => JSON.stringify(v.profile ?? null);
  if (table[a].profile && table[b].profile && declares(table[a]) !== declares(table[b])) return true;
  return (table[a].excludes ?? []).includes(b) || (table[b].excludes ?? []).includes(a);
}

/** What each bundle's variants declare in the profile (merged), for the bundles that declare anything. */
export function bundleProfiles(bundles: Bundles, table: Record<string, Variant> = VARIANTS): Record<string, { webhook?: Record<string, unknown> }> {
  const out: Record<string, { webhook?: Record<string, unknown> }> = {};
  for (const [bundle, names] of Object.entries(bundles)) {
    for (const n of names) {
      const webhook = table[n].profile?.webhook;
      if (webhook) out[bundle] = { webhook: { ...out[bundle]?.webhook, ...webhook } };
    }
  }
  return out;
}

/** Greedy first fit, in table order: bundle-1 holds every variant that fits, bundle-2 the rest that fit, … */
export function makeBundles(names: string[], table: Record<string, Variant> = VARIANTS, single = false): Bundles {
  if (single) return Object.fromEntries(names.map((n) => [n, [n]]));
  const groups: string[][] = [];
  for (const name of names) {
    const home = groups.find((g) => g.every((other) => !conflict(name, other, table)));
    if (home) home.push(name);
    else groups.push([name]);
  }
  return Object.fromEntries(groups.map((g, i) => [`bundle-${i + 1}`, g]));
}

export interface VariantOutcome { id: string; outcome: string; variant?: string; detail?: string }

/** The fail outcomes that count against a variant: those recorded with any bundle that holds it. */
export function failsOf(variant: string, bundles: Bundles, outcomes: VariantOutcome[]): VariantOutcome[] {
  const mine = new Set(Object.entries(bundles).filter(([, vs]) => vs.includes(variant)).map(([b]) => b));
  return outcomes.filter((o) => o.variant !== undefined && mine.has(o.variant) && o.outcome === 'fail');
}

/** variants.json: how many variants no check failed on, and the failing check ids of the others. */
export function summarize(names: string[], bundles: Bundles, outcomes: VariantOutcome[]): { total: number; passed: number; failing: Record<string, string[]> } {
  const failing: Record<string, string[]> = {};
  for (const name of names) {
    const ids = [...new Set(failsOf(name, bundles, outcomes).map((o) => o.id))].sort();
    if (ids.length > 0) failing[name] = ids;
  }
  return { total: names.length, passed: names.length - Object.keys(failing).length, failing };
}
