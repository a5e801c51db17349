// The tag of the reference's image, from the hash of its build context (no image is built here).
// The reference image's tag names what it was built from: `cec-reference:<sha256 of the build context, 12 hex>`.
// A change to reference-impl/, fixtures/, the Dockerfile or the lockfile gives a new tag, so `--reference
// container` never runs an image older than the working tree. `node engine/reference/image.ts` prints the tag
// (scripts/container-images.sh builds it under that name).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** What reference-impl/Dockerfile copies (the build context .dockerignore lets through), and the Dockerfile itself. */
const INPUTS = ['package.json', 'package-lock.json', '.dockerignore', 'fixtures', 'reference-impl'];

function files(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs.readdirSync(abs).sort().flatMap((name) => files(path.join(rel, name)));
}

export function referenceImageTag(): string {
  const hash = crypto.createHash('sha256');
  for (const rel of INPUTS.flatMap(files)) {
    hash.update(`${rel.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, rel)));
    hash.update('\0');
  }
  return `cec-reference:${hash.digest('hex').slice(0, 12)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) process.stdout.write(`${referenceImageTag()}\n`);
