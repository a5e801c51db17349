// `conformance examples [--out DIR] [--force]`: copies the example API client and the example webhook receiver
// (their TypeScript sources, the client's scenario, the receiver's README and the contract its payload check
// reads) into DIR (default: the current folder), as reference-client/ and reference-receiver/, so a partner can
// read them and run them as the README says, from a clone or from the npm package alike. The package carries
// the same files, already prepared, under dist/examples/ (scripts/build-dist.ts calls exampleFiles()).
// Never overwrites a different file without --force; a file that is already the source itself is left alone.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { settingName } from '../engine/config.ts';
import { registerSecret } from '../record/redact.ts';
import { ROOT } from './common.ts';
import { SetupError } from './errors.ts';

/** Example files by their path in the output, with where they come from in a clone. */
const SOURCES: { rel: string; from: string }[] = [
  ...['client.ts', 'main.ts', 'scenario.json'].map((f) => ({ rel: `reference-client/${f}`, from: `reference-client/${f}` })),
  ...['README.md', 'event-schema.ts', 'receiver.ts', 'variants.ts', 'verify.ts'].map((f) => ({ rel: `reference-receiver/${f}`, from: `reference-receiver/${f}` })),
  { rel: 'reference-receiver/openapi.json', from: 'fixtures/contract/openapi.json' },
];

// In the harness the receiver's payload check reads the contract through fixtures/paths.ts; a copy reads the
// openapi.json copied beside it (its README: "point CONTRACT_PATH at your copy of the contract").
const CONTRACT_IMPORT = "import { CONTRACT_PATH } from '../fixtures/paths.ts';";
const CONTRACT_BESIDE = "// The contract, copied beside this file (in the harness: fixtures/contract/openapi.json).\nconst CONTRACT_PATH = new URL('./openapi.json', import.meta.url);";

/** Where the prepared files are: the package's dist/examples/, or none in a clone (it prepares them from the sources). */
function packagedDir(): string | undefined {
  const dir = path.join(ROOT, 'examples');
  return fs.existsSync(path.join(dir, 'reference-client', 'main.ts')) ? dir : undefined;
}

/**
 * Beside each copy, a package.json saying its .ts files are ES modules: in a project made with `npm init -y` (npm
 * writes "type": "commonjs") Node would otherwise load them as CommonJS, and `import` fails on every run.
 */
const MODULE_PACKAGE = Buffer.from(`${JSON.stringify({ $comment: 'written by conformance examples: these .ts files are ES modules, whatever the enclosing project says', private: true, type: 'module' }, null, 2)}\n`);
const GENERATED = ['reference-client/package.json', 'reference-receiver/package.json'];

/** The example files, prepared for a copy: from a clone's sources, or as the package carries them. */
export function exampleFiles(root: string = ROOT): { rel: string; content: Buffer; source: string }[] {
  return [...sourceFiles(root), ...GENERATED.map((rel) => ({ rel, content: MODULE_PACKAGE, source: '(generated)' }))];
}

function sourceFiles(root: string): { rel: string; content: Buffer; source: string }[] {
  const packaged = root === ROOT ? packagedDir() : undefined;
  return SOURCES.map(({ rel, from }) => {
    if (packaged) return { rel, content: fs.readFileSync(path.join(packaged, rel)), source: path.join(packaged, rel) };
    const source = path.join(root, from);
    let content = fs.readFileSync(source);
    if (rel === 'reference-receiver/event-schema.ts') {
      const text = content.toString('utf8');
      if (!text.includes(CONTRACT_IMPORT)) throw new Error(`reference-receiver/event-schema.ts no longer imports the contract path as the examples expect: ${CONTRACT_IMPORT}`);
      content = Buffer.from(text.replace(CONTRACT_IMPORT, CONTRACT_BESIDE));
    }
    return { rel, content, source };
  });
}

export const EXAMPLES_HELP = `Usage: conformance examples [--out DIR] [--force]
       conformance examples receiver [--port 9000] [--api-base-url http://127.0.0.1:9400]

Copies the example API client and the example webhook receiver into DIR (default: the current folder):
  reference-client/    client.ts, main.ts (the client), scenario.json (its reason-code handling)
  reference-receiver/  README.md, verify.ts (§6.3 step by step), receiver.ts, event-schema.ts, variants.ts,
                       openapi.json (the contract its payload check reads)
Then, from DIR:
  npx conformance client --scenario reference-client/scenario.json -- node reference-client/main.ts
A different file already there is left alone and named (exit 2) unless --force.

\`examples receiver\` starts the example receiver (no PostgreSQL of your own: its dedupe table lives in a
throw-away embedded PostgreSQL) at http://127.0.0.1:PORT/webhook, until Ctrl-C. Its signing secret is
CONFORMANCE_WEBHOOK_SECRET; its follow-up fetches go to --api-base-url (default http://127.0.0.1:9400: the
--follow-up-port of \`conformance webhook receiver\`), with CONFORMANCE_API_KEY as their key when set.`;

/** `conformance examples receiver`: the example receiver on a throw-away embedded PostgreSQL, until a signal. */
async function serveReceiver(argv: string[], out: (line: string) => void): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, 'api-base-url': { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
  if (values.help) {
    out(EXAMPLES_HELP);
    return 0;
  }
  const port = Number(values.port ?? 9000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SetupError(`--port must be a port number (got ${values.port})`);
  const secret = process.env[settingName('webhookSecret')];
  if (!secret) throw new SetupError(`examples receiver needs its signing secret in ${settingName('webhookSecret')} (the same value \`conformance webhook receiver\` signs with)`);
  registerSecret(secret);
  const apiBaseUrl = (values['api-base-url'] ?? 'http://127.0.0.1:9400').replace(/\/+$/, '');
  const { startEmbeddedDatabase } = await import('../engine/reference/embedded-database.ts');
  const { startReferenceReceiver } = await import('../reference-receiver/receiver.ts');
  const db = await startEmbeddedDatabase();
  const apiKey = process.env[settingName('apiKey')] ?? 'cek_live_example_receiver_key';
  registerSecret(apiKey);
  let receiver;
  try {
    receiver = await startReferenceReceiver({ secret, pool: db.pool, apiBaseUrl, apiKey, port, host: values.host ?? '127.0.0.1' });
  } catch (e) {
    await db.stop();
    throw new SetupError(`the example receiver did not start: ${(e as Error).message}`);
  }
  out(`conformance examples receiver: listening at ${receiver.url}; follow-up fetches to ${apiBaseUrl}; Ctrl-C stops it`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await receiver.close();
  await db.stop();
  return 0;
}

export async function examplesCommand(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  if (argv[0] === 'receiver') return serveReceiver(argv.slice(1), out);
  const { values } = parseArgs({ args: argv, options: { out: { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
  if (values.help) {
    out(EXAMPLES_HELP);
    return 0;
  }
  const dir = path.resolve(values.out ?? '.');
  if (!packagedDir() && dir === path.resolve(ROOT)) {
    out('conformance examples: in this clone the examples are the sources themselves, reference-client/ and reference-receiver/');
    return 0;
  }
  const files = exampleFiles();
  const conflicts = files.filter((f) => {
    const dest = path.join(dir, f.rel);
    return fs.existsSync(dest) && path.resolve(dest) !== path.resolve(f.source) && !fs.readFileSync(dest).equals(f.content);
  });
  if (conflicts.length && !values.force) throw new SetupError(`examples: ${conflicts.map((f) => path.join(dir, f.rel)).join(', ')} already exist${conflicts.length === 1 ? 's' : ''} with other content; --force overwrites`);
  let written = 0;
  for (const f of files) {
    const dest = path.join(dir, f.rel);
    if (path.resolve(dest) === path.resolve(f.source)) continue; // a clone's own sources
    try {
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, f.content);
      written++;
    } catch (e) {
      throw new SetupError(`examples: cannot write ${dest}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  out(`conformance examples: ${written} files in ${path.join(dir, 'reference-client')}${path.sep} and ${path.join(dir, 'reference-receiver')}${path.sep}${written < files.length ? ` (${files.length - written} already there: the sources themselves)` : ''}`);
  out(`run the example client: npx conformance client --scenario ${path.relative(process.cwd(), path.join(dir, 'reference-client', 'scenario.json')) || 'reference-client/scenario.json'} -- node ${path.relative(process.cwd(), path.join(dir, 'reference-client', 'main.ts'))}`);
  return 0;
}
