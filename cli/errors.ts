// The CLI's errors, one table: each error a command may end with, its code, how its one line reads and its
// exit status. The dispatcher (cli/main.ts, and `webhook`'s own for its two subcommands) reads it; a
// command only throws. Anything not in the table is an internal error: exit 2, one line, never a stack.
import { ProfileError } from '../profile/profile.ts';
import { redact } from '../record/redact.ts';
import { WaiverError } from '../reports/context.ts';
import { ContainerSetupError, SetupError, UsageError } from '../engine/errors.ts';

// A usage or setup error (exit 2 with one line), a command line that cannot be run as written, and the container
// path's (engine/errors.ts: raised below the CLI too).
export { ContainerSetupError, SetupError, UsageError };

interface Row { code: string; is: abstract new (...args: never[]) => Error; exit: number; line: (e: Error) => string }

const first = (e: Error) => e.message.split('\n')[0];

export const CLI_ERRORS: readonly Row[] = [
  { code: 'usage', is: UsageError, exit: 2, line: first },
  { code: 'container', is: ContainerSetupError, exit: 2, line: first },
  { code: 'setup', is: SetupError, exit: 2, line: first },
  { code: 'profile', is: ProfileError, exit: 2, line: first },
  { code: 'waivers', is: WaiverError, exit: 2, line: first },
];

/** The one line (`conformance: …`, redacted, whitespace folded) and exit status an error ends a command with. */
export function errorExit(e: unknown): { code: string; line: string; exit: number } {
  const err = e instanceof Error ? e : new Error(String(e));
  // node:util parseArgs errors are usage errors too.
  const row = CLI_ERRORS.find((r) => err instanceof r.is) ?? ((err as NodeJS.ErrnoException).code?.startsWith?.('ERR_PARSE_ARGS') ? CLI_ERRORS[0] : undefined);
  const text = row ? row.line(err) : `internal error: ${err.message}`;
  return { code: row?.code ?? 'internal', line: `conformance: ${fold(redact(text).replace(/\s+/g, ' ').trim(), MAX_LINE)}`, exit: row?.exit ?? 2 };
}

/** The longest error line; a longer one ends at a word, saying how much was left out. */
const MAX_LINE = 1200;

function fold(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max - 40);
  const kept = text.slice(0, cut > max / 2 ? cut : max - 40);
  return `${kept} … (${text.length - kept.length} more characters)`;
}
