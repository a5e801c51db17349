// Loading every module that declares service checks (checks/service/, its properties, and the sender's cases as the
// service run declares them), each once per process. engine/playwright/run.spec.ts loads them to run their cases;
// engine/declared-checks.ts loads them for their declarations (engine/registry.ts) alone. Importing a file declares its checks; nothing runs here.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
/** `.ts` in a clone, `.js` in the npm package. */
const EXT = path.extname(import.meta.filename);
/** Modules of checks/service/ that declare no check themselves: case tables and helpers, imported by the files that do. */
const HELPER = (f: string) => f.endsWith(`.cases${EXT}`) || f === `needs${EXT}`;

/**
 * Every module that declares service checks, in the order they are loaded: the areas of checks/service/ by name, the
 * webhook sender's cases as the service run declares them (engine/playwright/sender.ts), then the properties.
 */
export function checkFiles(): string[] {
  const inDir = (dir: string) => fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(EXT) && !HELPER(e.name)).map((e) => path.join(ROOT, dir, e.name)).sort();
  return [...inDir('checks/service'), path.join(ROOT, 'engine', 'playwright', `sender${EXT}`), ...inDir('checks/service/properties')];
}

export async function loadCheckFiles(): Promise<void> {
  for (const f of checkFiles()) await import(pathToFileURL(f).href);
}
