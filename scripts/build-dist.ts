// Builds dist/, what the npm package runs (`npm pack` runs it as `prepack`): the TypeScript of the harness,
// the reference and the examples compiled to JavaScript in the source layout (tsconfig.build.json; Node strips no
// types under node_modules), and beside it the files they read at run time through import.meta.dirname paths:
// the fixtures, the reference's migrations and the example client's scenario; and, under dist/examples/, the
// example client's and receiver's TypeScript sources that `conformance examples` copies. The sources stay the truth:
// a clone never runs dist/ (cli/conformance.mjs loads cli/main.ts when it is there).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist');

/** Files read at run time, relative to the project root (folders: every file in them that is not TypeScript). */
export const RUNTIME_FILES = ['fixtures', 'reference-impl/migrations', 'reference-client/scenario.json'];

function copyRuntimeFiles(): number {
  let copied = 0;
  const visit = (rel: string) => {
    const abs = path.join(ROOT, rel);
    if (fs.statSync(abs).isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) visit(path.join(rel, name));
    } else if (!rel.endsWith('.ts')) {
      fs.mkdirSync(path.dirname(path.join(DIST, rel)), { recursive: true });
      fs.copyFileSync(abs, path.join(DIST, rel));
      copied++;
    }
  };
  for (const rel of RUNTIME_FILES) visit(rel);
  return copied;
}

/** The example client's and receiver's sources, as `conformance examples` copies them, into dist/examples/. */
async function copyExamples(): Promise<number> {
  const { exampleFiles } = await import('../cli/examples.ts');
  const files = exampleFiles(ROOT);
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(DIST, 'examples', f.rel)), { recursive: true });
    fs.writeFileSync(path.join(DIST, 'examples', f.rel), f.content);
  }
  return files.length;
}

async function build(): Promise<void> {
  fs.rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`build-dist: tsc -p tsconfig.build.json failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
  const copied = copyRuntimeFiles() + (await copyExamples());
  const compiled = fs.readdirSync(DIST, { recursive: true }).filter((f) => String(f).endsWith('.js')).length;
  process.stderr.write(`build-dist: ${compiled} modules compiled and ${copied} runtime files copied into dist/\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) await build();
