// `conformance examples [--out DIR] [--force]`: copies the example API client and the example webhook receiver
// (their TypeScript sources, the client's scenario, the receiver's README and the contract its payload check
// reads) into DIR (default: the current folder), as reference-client/ and reference-receiver/, so a partner can
// read them and run them as the README says, from a clone or from the npm package alike. The package carries
// the same files, already prepared, under dist/examples/ (scripts/build-dist.ts calls exampleFiles()).
// Never overwrites a different file without --force; a file that is already the source itself is left alone.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
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

/** The example files, prepared for a copy: from a clone's sources, or as the package carries them. */
export function exampleFiles(root: string = ROOT): { rel: string; content: Buffer; source: string }[] {
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

Copies the example API client and the example webhook receiver into DIR (default: the current folder):
  reference-client/    client.ts, main.ts (the client), scenario.json (its reason-code handling)
  reference-receiver/  README.md, verify.ts (§6.3 step by step), receiver.ts, event-schema.ts, variants.ts,
                       openapi.json (the contract its payload check reads)
Then, from DIR:
  npx conformance client --scenario reference-client/scenario.json -- node reference-client/main.ts
A different file already there is left alone and named (exit 2) unless --force.`;

export function examplesCommand(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): number {
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
