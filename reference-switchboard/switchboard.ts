// The switchboard's headers: `x-switchboard-mutant: NAME` and `x-switchboard-variant: name[,name]`, counted only
// with the sandbox's token (`x-switchboard-token`, the reference's one token check), and the hook the reference is
// created with (reference-impl/context.ts Hook): the rules of what a request switched on (overrides.ts ruleFor).
// A reference started WITH a token refuses a switch header (these two, or the sandbox's fault header) that comes
// without it (400 switchboard_token_required) or with a wrong one (403 switchboard_token_invalid), so a partner's
// typo never passes silently as a normal 200, and an unknown name (400 switchboard_rejected). A reference started
// WITHOUT a token ignores them as if absent. A token alone, with no switch header, switches nothing either way.
import type http from 'node:http';
import type { Hook, Rule } from '../reference-impl/context.ts';
import { FAULT_HEADER, headerNames, tokenMatches, tokenRefusal, TOKEN_HEADER, type Refusal } from '../reference-impl/faults.ts';
import { isMutantName, type MutantName } from './mutants.ts';
import { ruleFor, type Switches } from './overrides.ts';
import { isVariantName, type VariantName } from './variants.ts';

export const MUTANT_HEADER = 'x-switchboard-mutant';
export const VARIANT_HEADER = 'x-switchboard-variant';
/** Every switch header, in the order a refusal names them. */
const SWITCH_HEADERS = [FAULT_HEADER, MUTANT_HEADER, VARIANT_HEADER];

/**
 * What a request switched on, or its refusal. `defaultMutant` (the --mutant flag) applies unless the request names
 * another. The fault header is the reference's (faults.ts reads it); it is named here only in the token refusal.
 */
export function readSwitches(req: http.IncomingMessage, token: string | null, defaultMutant: MutantName | null): Switches | Refusal {
  const none: Switches = { mutant: defaultMutant, variants: new Set() };
  if (token === null) return none;
  const refusal = tokenRefusal(req, token, SWITCH_HEADERS);
  if (refusal) return refusal;
  const given = req.headers[TOKEN_HEADER];
  if (typeof given !== 'string' || !tokenMatches(given, token)) return none;
  const rejected = (message: string): Refusal => ({ refused: 400, error: 'switchboard_rejected', message });
  const mutantHeader = req.headers[MUTANT_HEADER];
  let mutant = none.mutant;
  if (typeof mutantHeader === 'string' && mutantHeader.trim() !== '') {
    if (!isMutantName(mutantHeader.trim())) return rejected(`unknown mutant "${mutantHeader.trim()}"`);
    mutant = mutantHeader.trim() as MutantName;
  }
  const variants = new Set<VariantName>();
  for (const name of headerNames(req.headers[VARIANT_HEADER])) {
    if (!isVariantName(name)) return rejected(`unknown variant "${name}"`);
    variants.add(name);
  }
  return { mutant, variants };
}

/**
 * What outlives a request (a webhook subscription) keeps: the mutant's name, then `+` and the variants, so the
 * subscription's deliveries are made the mutant's way and with the variants' choices (the sender's header word).
 */
export function switchesKey(sw: Switches): string | null {
  if (sw.variants.size === 0) return sw.mutant;
  return `${sw.mutant ?? ''}+${[...sw.variants].join(',')}`;
}

function switchesOfKey(key: string | null): Switches {
  const [mutant, variants] = (key ?? '').split('+');
  return {
    mutant: mutant && isMutantName(mutant) ? mutant : null,
    variants: new Set((variants ?? '').split(',').filter((v): v is VariantName => isVariantName(v))),
  };
}

/**
 * The hook of a reference with a switchboard. A subscription keeps the key of its activating request's hook (its
 * mutant and variants, switchesKey), so its deliveries are made that way.
 */
export function switchboardHook(token: string | null, defaultMutant: MutantName | null): Hook {
  return {
    forRequest(req) {
      const sw = readSwitches(req, token, defaultMutant);
      return 'refused' in sw ? sw : { rule: ruleFor(sw), key: switchesKey(sw) };
    },
    // A request head node:http refused: its mutant and variants, read with the same token rule (it never reached
    // the parser). An unknown name is ignored here: the answer is the refusal's either way.
    forRawHead(headers) {
      if (token === null || !tokenMatches(headers[TOKEN_HEADER] ?? '', token)) return null;
      const mutant = headers[MUTANT_HEADER]?.trim();
      const variants = new Set(headerNames(headers[VARIANT_HEADER]).filter((v): v is VariantName => isVariantName(v)));
      if ((mutant === undefined || !isMutantName(mutant)) && variants.size === 0) return null;
      return ruleFor({ mutant: mutant !== undefined && isMutantName(mutant) ? mutant : null, variants });
    },
    fromKey: (key) => ruleFor(switchesOfKey(key)),
  };
}
