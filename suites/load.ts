// Loading every file that declares service checks: the suites of suites/ and the properties of properties/, in name
// order, each once per process. suites/run.spec.ts loads them to run their cases; cli/declared-checks.ts loads them
// for their declarations (harness/registry.ts) alone. Importing a file declares its checks; nothing runs here.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
/** `.ts` in a clone, `.js` in the npm package. */
const EXT = path.extname(import.meta.filename);
/** The test files of the conformance projects (the run, its switched phase), which load the others: never among them. */
const RUNNERS = new Set([`run.spec${EXT}`, `switched.spec${EXT}`]);

export async function loadCheckFiles(): Promise<void> {
  for (const dir of ['suites', 'properties']) {
    const files = fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith(`.spec${EXT}`) && !RUNNERS.has(f)).sort();
    for (const f of files) await import(pathToFileURL(path.join(ROOT, dir, f)).href);
  }
}
