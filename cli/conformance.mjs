#!/usr/bin/env node
// Shim for the `conformance` command: checks the Node version (the project pins Node 24 through its
// `node` devDependency, which `npx` and `npm run` put first on PATH), then loads the TypeScript CLI.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(`conformance: Node ${process.versions.node} is too old; run it through npx or npm run (they use the project's Node 24)`);
  process.exit(2);
}
await import('./main.ts');
