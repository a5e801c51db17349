// Reads the project's own files for the tests that judge the tree as text (import directions, settings,
// self-containment): every file under the given project-relative paths whose name matches, skipping what
// is installed or generated. One walker for all of them.
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../fixtures/paths.ts';

const SKIPPED = new Set(['node_modules', '.git', 'out', 'test-results', 'dist']);
export const SOURCE_FILE = /\.(ts|mts|mjs|js)$/;

/** `{ file, source }` for every matching file under `roots` (project-relative; a missing root is skipped). */
export function projectFiles(roots: readonly string[], name: RegExp = SOURCE_FILE): { file: string; source: string }[] {
  const out: { file: string; source: string }[] = [];
  const visit = (rel: string) => {
    const abs = path.join(PROJECT_ROOT, rel);
    if (!fs.existsSync(abs)) return;
    if (fs.statSync(abs).isDirectory()) {
      for (const e of fs.readdirSync(abs)) if (!SKIPPED.has(e)) visit(rel ? `${rel}/${e}` : e);
    } else if (name.test(path.basename(rel))) out.push({ file: rel, source: fs.readFileSync(abs, 'utf8') });
  };
  for (const root of roots) visit(root);
  return out;
}
