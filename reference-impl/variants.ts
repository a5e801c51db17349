// The switchboard's variants: the dual of the mutants. Each variant is one legitimate choice the
// specification allows (its clause and a one-line justification beside it); the variant meta-suite
// (tests/variants.spec.ts) runs every check with every variant on and requires zero `fail`. Off unless a
// request carries the switchboard token and `x-switchboard-variant: NAME[,NAME...]`. Several variants may be
// on at once: they are independent choices, and a conformant service may make all of them together.
// Variants apply as named overrides beside the correct rule (grep the name to find where).

export interface Variant {
  /** The part of the service the choice concerns. */
  area: string;
  /** Where the specification leaves the choice open (section, or an RFC the spec brings in). */
  clause: string;
  /** Why a conformant service may do this. */
  justification: string;
  /** Variants that cannot be on together with this one (two answers to the same open question). */
  excludes?: readonly string[];
}

export const VARIANTS = {
  'front-proxy-outside-routes': { area: 'http', clause: '§1 (five routes under /external/v1); RFC 3986 §5.2.4 (dot segments)', justification: 'A path with a dot segment, an encoded slash or backslash or a NUL names none of the five routes; a front proxy (nginx) may refuse it itself, here 400 text/html, before the service sees it.' },
} as const satisfies Record<string, Variant>;

export type VariantName = keyof typeof VARIANTS;

export function isVariantName(name: string): name is VariantName {
  return Object.hasOwn(VARIANTS, name);
}
