// The `conformance` command: one module per command (run.ts, serve.ts, merge.ts, webhook.ts, profile.ts) and
// this dispatcher. Exit codes: 0 conformant, 1 not conformant (or incomplete), 2 usage or setup error — always
// ONE line `conformance: <reason>` on stderr, never a stack trace.
import { HELP } from './common.ts';
import { errorExit, SetupError } from './errors.ts';
import { settingName } from '../harness/config.ts';

// Each command's module is loaded when it is the one asked for: `run` starts its runner sooner without loading
// the webhook sender, the client proxy or the sandbox server it does not use.
const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  run: async (argv) => (await import('./run.ts')).run(argv),
  serve: async (argv) => (await import('./serve.ts')).serve(argv),
  merge: async (argv) => (await import('./merge.ts')).merge(argv),
  webhook: async (argv) => (await import('./webhook.ts')).webhookCommand(argv),
  profile: async (argv) => (await import('./profile.ts')).profileCommand(argv),
  client: async (argv) => (await import('./client.ts')).client(argv),
  diff: async (argv) => (await import('./diff.ts')).diff(argv),
  attest: async (argv) => (await import('./attest.ts')).attest(argv),
  verify: async (argv) => (await import('./attest.ts')).verify(argv),
  examples: async (argv) => (await import('./examples.ts')).examplesCommand(argv),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) throw new SetupError(`missing command (${Object.keys(COMMANDS).join(', ')}; see conformance --help)`);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP.main}\n`);
    return 0;
  }
  const fn = COMMANDS[command];
  if (!fn) throw new SetupError(`unknown command ${command} (commands: ${Object.keys(COMMANDS).join(', ')})`);
  // The command line, for the reports' provenance (reports/context.ts redacts it): every process this one
  // starts (the runner, its reporter) inherits it.
  process.env[settingName('command')] = JSON.stringify(['conformance', ...argv]);
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
