// The `conformance` command: one module per command (run.ts, serve.ts, merge.ts, webhook.ts, profile.ts) and
// this dispatcher. Exit codes: 0 conformant, 1 not conformant (or incomplete), 2 usage or setup error — always
// ONE line `conformance: <reason>` on stderr, never a stack trace.
import { HELP } from './common.ts';
import { errorExit, SetupError } from './errors.ts';
import { run } from './run.ts';
import { serve } from './serve.ts';
import { merge } from './merge.ts';
import { webhookCommand } from './webhook.ts';
import { profileCommand } from './profile.ts';
import { client } from './client.ts';

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = { run, serve, merge, webhook: (argv) => webhookCommand(argv), profile: (argv) => profileCommand(argv), client };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) throw new SetupError(`missing command (${Object.keys(COMMANDS).join(', ')}; see conformance --help)`);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP.main}\n`);
    return 0;
  }
  const fn = COMMANDS[command];
  if (!fn) throw new SetupError(`unknown command ${command} (commands: ${Object.keys(COMMANDS).join(', ')})`);
  return fn(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  const { line, exit } = errorExit(e);
  process.stderr.write(`${line}\n`);
  process.exitCode = exit;
}
// Nothing we started may keep the process alive past the decision (sockets, timers of a stopped child).
process.exit(process.exitCode);
