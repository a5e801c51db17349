// The import directions of the house (DESIGN.md "Layout"): entry points on top, the oracle and the
// implementation apart. cli → harness, reports, fixtures (and the example receiver it starts); reports →
// harness, fixtures; suites and properties → harness, fixtures; harness → platform, fixtures; reference-impl
// and reference-receiver → fixtures only (the oracle never imports an implementation, nor the reverse);
// platform/ (machine support: the embedded PostgreSQL loader) imports nothing of the project.
// The rule is a pure function over (file, source) pairs, proven on planted wrong imports first.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { projectFiles } from './helpers/project-files.ts';

const ALLOWED: Record<string, readonly string[]> = {
  cli: ['cli', 'harness', 'reports', 'fixtures', 'reference-receiver'],
  reports: ['reports', 'harness', 'fixtures'],
  suites: ['suites', 'harness', 'fixtures'],
  properties: ['properties', 'harness', 'fixtures'],
  harness: ['harness', 'platform', 'fixtures'],
  'reference-impl': ['reference-impl', 'platform', 'fixtures'],
  // Machine support neither side judges with (where the embedded PostgreSQL binaries run from): it imports nothing of the project.
  platform: ['platform'],
  'reference-receiver': ['reference-receiver', 'fixtures'],
  // The example API client partners read: nothing of the harness or the reference.
  'reference-client': ['reference-client', 'fixtures'],
  fixtures: ['fixtures'],
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Top-level folder of a project-relative path. */
const top = (rel: string) => rel.split('/')[0];

/** Every import of a project folder that its row of ALLOWED does not list, as `file → target`. */
export function violations(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    const allowed = ALLOWED[top(file)];
    if (!allowed) continue;
    for (const m of source.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith('.')) continue; // packages and node: builtins
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      if (!allowed.includes(top(target))) out.push(`${file} → ${target}`);
    }
  }
  return out.sort();
}

test('the rule catches planted wrong imports in every direction and lets the right ones through', () => {
  const planted = [
    { file: 'harness/target.ts', source: "import { x } from '../reports/model.ts';\nimport { y } from '../fixtures/paths.ts';" },
    { file: 'harness/a.ts', source: "const m = await import('../cli/run.ts');" },
    { file: 'suites/list.spec.ts', source: "import { startServer } from '../reference-impl/server.ts';\nimport { test } from '../harness/fixtures.ts';" },
    { file: 'reference-impl/server.ts', source: "export { redact } from '../harness/redact.ts';\nimport fs from 'node:fs';" },
    { file: 'reports/html.ts', source: "import type { Profile } from '../cli/profile.ts';\nimport { OUTCOMES } from '../harness/record.ts';" },
    { file: 'cli/run.ts', source: "import { toHtml } from '../reports/html.ts';\nimport { Target } from '../harness/target.ts';" },
    { file: 'reference-receiver/receiver.ts', source: "import { verify } from '../harness/webhook/signature.ts';" },
  ];
  expect(violations(planted)).toEqual([
    'harness/a.ts → cli/run.ts',
    'harness/target.ts → reports/model.ts',
    'reference-impl/server.ts → harness/redact.ts',
    'reference-receiver/receiver.ts → harness/webhook/signature.ts',
    'reports/html.ts → cli/profile.ts',
    'suites/list.spec.ts → reference-impl/server.ts',
  ]);
});

test('every import of the project follows the directions of the house', () => {
  const files = projectFiles(Object.keys(ALLOWED));
  expect(files.length).toBeGreaterThan(50);
  expect(violations(files)).toEqual([]);
});
