// Entry point of the reference with its switchboard: reference-impl/main.ts's startup, the server created with the
// switchboard's hook (switchboard.ts), and one option of its own.
//   node reference-switchboard/main.ts [the options of reference-impl/main.ts] [--mutant NAME]
// --mutant NAME applies a mutant to every request (per-request headers override it). The CLI starts this entry
// point whenever it gives the reference a switchboard token (every sandbox the harness starts); the image partners
// get is built from reference-impl/ alone.
import { startReference, UsageError } from '../reference-impl/main.ts';
import { isMutantName, MUTANTS, type MutantName } from './mutants.ts';
import { switchboardHook } from './switchboard.ts';

startReference({
  options: { mutant: { type: 'string' } },
  hook(values, token) {
    const mutant = values.mutant;
    if (typeof mutant === 'string' && !isMutantName(mutant)) throw new UsageError(`unknown mutant "${mutant}" (known: ${Object.keys(MUTANTS).join(', ')})`);
    return switchboardHook(token, (mutant ?? null) as MutantName | null);
  },
  describe: (values) => (typeof values.mutant === 'string' ? `, mutant ${values.mutant}` : ''),
});
