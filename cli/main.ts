// The `conformance` command: one module per command (run.ts, serve.ts, merge.ts, webhook.ts, profile.ts) and
// this dispatcher. Exit codes: 0 conformant, 1 not conformant (or incomplete), 2 usage or setup error — always
// ONE line `conformance: <reason>` on stderr, never a stack trace.
import { HELP } from './common.ts';
import fs from 'node:fs';
import { errorExit, SetupError, UsageError } from './errors.ts';
import { settingName } from '../engine/config.ts';
import { SECRET_HEADER } from '../profile/profile.ts';
import { registerSecret } from '../record/redact.ts';

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

/**
 * `--env-file FILE`, on every command (before a `--` that starts a partner's command): NAME=value lines, the format
 * of a CI secret, loaded into this process's environment before anything reads a key; a variable already set
 * wins (as Node's own --env-file). Taken out of the arguments; the values are never printed, and those whose
 * name says secret are registered with redaction.
 */
function loadEnvFiles(argv: string[]): string[] {
  const end = argv.indexOf('--');
  const head = end === -1 ? argv : argv.slice(0, end);
  const tail = end === -1 ? [] : argv.slice(end);
  const kept: string[] = [];
  for (let i = 0; i < head.length; i++) {
    const a = head[i];
    const file = a === '--env-file' ? head[++i] : a.startsWith('--env-file=') ? a.slice('--env-file='.length) : undefined;
    if (file === undefined) {
      if (a === '--env-file') throw new UsageError('--env-file needs a file of NAME=value lines');
      kept.push(a);
      continue;
    }
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new SetupError(`--env-file ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    const before = new Set(Object.keys(process.env));
    process.loadEnvFile(file);
    for (const line of text.split('\n')) {
      const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
      if (m && !before.has(m[1]) && SECRET_HEADER.test(m[1])) registerSecret(process.env[m[1]]);
    }
  }
  return [...kept, ...tail];
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = loadEnvFiles(argv);
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
