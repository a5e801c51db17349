#!/usr/bin/env node
// Shim for the `conformance` command: checks the Node version, then loads the CLI. In a clone it loads the
// TypeScript sources (cli/main.ts; Node strips the types, and the project pins Node 24 through its `node`
// devDependency, which `npx` and `npm run` put first on PATH). In the npm package, which ships no sources, it
// loads the JavaScript compiled into dist/ (Node strips no types under node_modules).
import fs from 'node:fs';

const clone = fs.existsSync(new URL('./main.ts', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(clone
    ? `conformance: Node ${process.versions.node} is too old; run it through npx or npm run (they use the project's Node 24)`
    : `conformance: Node ${process.versions.node} is too old; the harness needs Node 22 or later (package.json "engines")`);
  process.exit(2);
}
await import(clone ? './main.ts' : '../dist/cli/main.js');
