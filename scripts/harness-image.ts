// The harness image's tag names what it was built from: `cec-harness:<sha256 of its inputs, 12 hex>`. The inputs are
// what `npm pack` makes the package of (package.json, the shim, the sources tsconfig.build.json compiles, the files
// scripts/build-dist.ts copies beside them, and how it builds) and the image's own files (scripts/images/harness/).
// A change to any gives a new tag, so a test never judges an image older than the tree. README.md, which the package
// carries but nothing runs, is left out: a change to the documentation does not rebuild the image.
// `node scripts/harness-image.ts` prints the tag (scripts/container-images.sh builds the image under it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { RUNTIME_FILES } from './build-dist.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Generated or installed folders inside the inputs: never part of the package. */
const SKIPPED = new Set(['node_modules', 'out']);

function files(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (!fs.existsSync(abs)) return [];
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs.readdirSync(abs).sort().filter((name) => !SKIPPED.has(name)).flatMap((name) => files(path.join(rel, name)));
}

export function harnessImageInputs(): string[] {
  const build = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const roots = ['package.json', ...Object.values(pkg.bin), 'tsconfig.json', 'tsconfig.build.json', 'scripts/build-dist.ts',
    ...build.include, ...RUNTIME_FILES, 'scripts/images/harness'];
  return [...new Set(roots.flatMap(files))].sort();
}

export function harnessImageTag(): string {
  const hash = crypto.createHash('sha256');
  for (const rel of harnessImageInputs()) {
    hash.update(`${rel.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, rel)));
    hash.update('\0');
  }
  return `cec-harness:${hash.digest('hex').slice(0, 12)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) process.stdout.write(`${harnessImageTag()}\n`);
