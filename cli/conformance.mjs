#!/usr/bin/env node
// Shim for the `conformance` command: checks the Node version, then loads the CLI. In a clone it loads the
// TypeScript sources (cli/main.ts; Node strips the types, and the project pins Node 24 through its `node`
// devDependency, which `npx` and `npm run` put first on PATH). In the npm package, which ships no sources, it
// loads the JavaScript compiled into dist/ (Node strips no types under node_modules).
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

const clone = fs.existsSync(new URL('./main.ts', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(clone
    ? `conformance: Node ${process.versions.node} is too old; run it through npx or npm run (they use the project's Node 24)`
    : `conformance: Node ${process.versions.node} is too old; the harness needs Node 22 or later (package.json "engines"). Install Node 22 or 24 (nvm install 24, or your system's package), or run it once with a Node from npm: npx -p node@24 -p clinical-encounter-conformance conformance <command>`);
  process.exit(2);
}
compileCache();
await import(clone ? './main.ts' : '../dist/cli/main.js');

/**
 * Node's compile cache (V8 code cache on disk) for this process and, through NODE_COMPILE_CACHE, the runner and
 * its workers: each loads Playwright's bundles, a third of a second of compiling per process otherwise. The
 * folder is this user's own (created 0700, checked to be owned by this user and closed to others), never one
 * another user of a shared /tmp could have prepared. A caller's NODE_COMPILE_CACHE or
 * NODE_DISABLE_COMPILE_CACHE is left as it is; without the API (Node 22.0) nothing changes.
 */
function compileCache() {
  if (process.env.NODE_COMPILE_CACHE !== undefined || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return;
  if (typeof module.enableCompileCache !== 'function' || typeof process.getuid !== 'function') return;
  const dir = path.join(os.tmpdir(), `conformance-compile-cache-${process.getuid()}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (e.code !== 'EEXIST') return;
  }
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.getuid() || (st.mode & 0o077) !== 0) return;
    if (module.enableCompileCache(dir).status === module.constants.compileCacheStatus.FAILED) return;
    process.env.NODE_COMPILE_CACHE = dir;
  } catch {
    // no cache: only slower
  }
}
