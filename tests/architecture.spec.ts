// The import directions of the house (docs/architecture.md, its table): entry points on top, the oracle and the
// implementation apart. cli → harness, reports, fixtures (and the example receiver it starts); reports →
// harness, fixtures; suites and properties → harness, fixtures; harness → platform, fixtures; reference-impl
// and reference-receiver → fixtures only (the oracle never imports an implementation, nor the reverse);
// reference-switchboard (mutants and variants) → reference-impl, fixtures, and nothing imports it but cli/ and
// tests/; platform/ (machine support: the embedded PostgreSQL loader) imports nothing of the project.
// Inside a top folder no import circle (STYLE §13.6: shared types move to a lower module), and no file of
// reference-impl/ names a mutant or a variant (the reference runs the rules it is handed; the switchboard wraps
// it from outside). The run's planner (selection, batches, claims) lives in engine/planner.ts alone, apart from
// the Playwright fixtures (engine/playwright/fixtures.ts), and imports neither the fixtures nor Playwright at run time; a
// check of any subject is declared only through the one registry (engine/registry.ts `defineCheck`, or a suite's
// `check`, which declares through it). Each rule is a pure function over (file, source) pairs, proven on
// planted cases first.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { MUTANTS } from '../reference-switchboard/mutants.ts';
import { VARIANTS } from '../reference-switchboard/variants.ts';
import ts from 'typescript';
import { projectFiles } from './helpers/project-files.ts';

const ALLOWED: Record<string, readonly string[]> = {
  // cli/declared-checks.ts loads the suites and properties (engine/load.ts) for their declarations.
  cli: ['cli', 'harness', 'reports', 'fixtures', 'suites', 'reference-receiver', 'reference-switchboard'],
  reports: ['reports', 'harness', 'fixtures'],
  suites: ['suites', 'harness', 'fixtures'],
  properties: ['properties', 'harness', 'fixtures'],
  harness: ['harness', 'platform', 'fixtures'],
  'reference-impl': ['reference-impl', 'platform', 'fixtures'],
  // Mutants and variants: the reference wrapped from outside. Only cli/ and tests/ may import it (no other row lists it).
  'reference-switchboard': ['reference-switchboard', 'reference-impl', 'platform', 'fixtures'],
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

/** The project files a file imports (relative imports, type-only ones included), project-relative. */
function importsOf(file: string, source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith('.')) continue; // packages and node: builtins
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
  }
  return out;
}

/** Every import of a project folder that its row of ALLOWED does not list, as `file → target`. */
export function violations(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    const allowed = ALLOWED[top(file)];
    if (!allowed) continue;
    for (const target of importsOf(file, source)) if (!allowed.includes(top(target))) out.push(`${file} → ${target}`);
  }
  return out.sort();
}

/**
 * The import circles inside each top folder: every strongly connected set of files (Tarjan) of more than one file,
 * or one file importing itself, imports between top folders left out (their directions are the rule above). Each
 * circle as its files, sorted, joined with ' ↔ '.
 */
export function importCircles(files: { file: string; source: string }[]): string[] {
  const graph = new Map<string, string[]>();
  for (const { file, source } of files) graph.set(file, importsOf(file, source).filter((t) => top(t) === top(file)));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const members: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      members.push(w);
    } while (w !== v);
    if (members.length > 1 || graph.get(v)!.includes(v)) circles.push(members.sort().join(' ↔ '));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return circles.sort();
}

/** The files that name one of `names` in a string literal or a comment (as a whole word of kebab-case), as `file: name`. */
export function namesIn(files: { file: string; source: string }[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    for (const name of names) if (new RegExp(`(?<![A-Za-z0-9_-])${name.replace(/[-]/g, '\\-')}(?![A-Za-z0-9_-])`).test(source)) out.push(`${file}: ${name}`);
  }
  return out.sort();
}

const SWITCH_NAMES = [...Object.keys(MUTANTS), ...Object.keys(VARIANTS)];

test('the rule catches planted wrong imports in every direction and lets the right ones through', () => {
  const planted = [
    { file: 'observe/target.ts', source: "import { x } from '../reports/model.ts';\nimport { y } from '../fixtures/paths.ts';" },
    { file: 'harness/a.ts', source: "const m = await import('../cli/run.ts');" },
    { file: 'checks/service/list.ts', source: "import { startServer } from '../reference-impl/server.ts';\nimport { test } from '../engine/playwright/fixtures.ts';" },
    { file: 'reference-impl/server.ts', source: "export { redact } from '../record/redact.ts';\nimport fs from 'node:fs';" },
    { file: 'reports/html.ts', source: "import type { Profile } from '../cli/profile.ts';\nimport { OUTCOMES } from '../record/record.ts';" },
    { file: 'cli/run.ts', source: "import { toHtml } from '../reports/html.ts';\nimport { Target } from '../observe/target.ts';" },
    { file: 'reference-receiver/receiver.ts', source: "import { verify } from '../judge/signature.ts';" },
    { file: 'reference-switchboard/overrides.ts', source: "import type { Points } from '../reference-impl/context.ts';\nimport { x } from '../record/record.ts';" },
    { file: 'reference-impl/server.ts', source: "import { switchboardHook } from '../reference-switchboard/switchboard.ts';" },
    { file: 'checks/service/errors.ts', source: "import { MUTANTS } from '../reference-switchboard/mutants.ts';" },
    { file: 'cli/reference-process.ts', source: "import type { MutantName } from '../reference-switchboard/mutants.ts';" },
  ];
  expect(violations(planted)).toEqual([
    'harness/a.ts → cli/run.ts',
    'observe/target.ts → reports/model.ts',
    'reference-impl/server.ts → record/redact.ts',
    'reference-impl/server.ts → reference-switchboard/switchboard.ts',
    'reference-receiver/receiver.ts → judge/signature.ts',
    'reference-switchboard/overrides.ts → record/record.ts',
    'reports/html.ts → cli/profile.ts',
    'checks/service/errors.ts → reference-switchboard/mutants.ts',
    'checks/service/list.ts → reference-impl/server.ts',
  ]);
});

test('every import of the project follows the directions of the house', () => {
  const files = projectFiles(Object.keys(ALLOWED));
  expect(files.length).toBeGreaterThan(50);
  expect(violations(files)).toEqual([]);
});

test('the circle rule finds a planted import circle inside a folder, and leaves chains and circles across folders alone', () => {
  const planted = [
    { file: 'reference-impl/a.ts', source: "import type { B } from './b.ts';" },
    { file: 'reference-impl/b.ts', source: "import { c } from './nested/c.ts';" },
    { file: 'reference-impl/nested/c.ts', source: "export { a } from '../a.ts';" },
    { file: 'reference-impl/d.ts', source: "const self = await import('./d.ts');" },
    { file: 'reference-impl/e.ts', source: "import { a } from './a.ts';\nimport { x } from '../fixtures/x.ts';" },
    { file: 'fixtures/x.ts', source: "import { e } from '../reference-impl/e.ts';" },
    { file: 'harness/one.ts', source: "import { two } from './two.ts';" },
    { file: 'harness/two.ts', source: "export const two = 2;" },
  ];
  expect(importCircles(planted)).toEqual([
    'reference-impl/a.ts ↔ reference-impl/b.ts ↔ reference-impl/nested/c.ts',
    'reference-impl/d.ts',
  ]);
});

test('no top folder of the project has an import circle inside it', () => {
  const files = projectFiles([...Object.keys(ALLOWED), 'reference-switchboard', 'tests', 'bench']);
  expect(importCircles(files)).toEqual([]);
});

test('the name rule finds a planted mutant or variant name and leaves longer words and other names alone', () => {
  const planted = [
    { file: 'reference-impl/repo.ts', source: "if (mutant === 'sort-order-inverted') dir = 'ASC';" },
    { file: 'reference-impl/send.ts', source: '// variant json-pretty-printed: indented' },
    { file: 'reference-impl/bodies.ts', source: "const t = 'x-sort-order-inverted-y'; const workflow_variant = null;" },
  ];
  expect(namesIn(planted, SWITCH_NAMES)).toEqual(['reference-impl/repo.ts: sort-order-inverted', 'reference-impl/send.ts: json-pretty-printed']);
});

test('no file of reference-impl/ names a mutant or a variant (the switchboard holds them all)', () => {
  expect(SWITCH_NAMES.length).toBeGreaterThan(150);
  const files = projectFiles(['reference-impl'], /\.(ts|mts|mjs|js|sql|json|md)$|^Dockerfile$/);
  expect(files.length).toBeGreaterThan(20);
  expect(namesIn(files, SWITCH_NAMES)).toEqual([]);
});

/** The planner's functions: declared in engine/planner.ts and nowhere else. */
const PLANNER_FUNCTIONS = ['selection', 'planRun', 'runGroups', 'claimBatch'];

/**
 * Where the run's planner leaks: a planner function declared outside engine/planner.ts, or planner.ts importing
 * the fixtures or Playwright at run time (a type import is fine), as `file: what`.
 */
export function plannerLeaks(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    if (file === 'engine/planner.ts') {
      for (const m of source.matchAll(/(?:^|\n)\s*import\s+(?!type\s)[^'"`;]*?from\s+['"]([^'"]+)['"]/g)) {
        if (m[1] === '@playwright/test' || m[1].endsWith('/fixtures.ts')) out.push(`${file}: imports ${m[1]}`);
      }
      continue;
    }
    for (const name of PLANNER_FUNCTIONS) if (new RegExp(`\\bfunction\\s+${name}\\s*\\(`).test(source)) out.push(`${file}: declares ${name}`);
  }
  return out.sort();
}

test('the planner rule finds planner code outside engine/planner.ts and a runtime import of the fixtures in it', () => {
  const planted = [
    { file: 'engine/playwright/fixtures.ts', source: 'export function planRun(cases: Case[]) {}' },
    { file: 'engine/planner.ts', source: "import { test } from '@playwright/test';\nimport type { TestInfo } from '@playwright/test';\nimport { suite } from './fixtures.ts';\nexport function planRun() {}" },
    { file: 'harness/other.ts', source: 'const plan = planRun(registered); // a call, not a declaration' },
  ];
  expect(plannerLeaks(planted)).toEqual(['engine/playwright/fixtures.ts: declares planRun', 'engine/planner.ts: imports ./fixtures.ts', 'engine/planner.ts: imports @playwright/test']);
});

test('the run planner lives in engine/planner.ts alone, apart from the fixtures', () => {
  const files = projectFiles(['harness', 'suites', 'properties', 'cli', 'reports']);
  expect(files.some((f) => f.file === 'engine/planner.ts')).toBe(true);
  expect(plannerLeaks(files)).toEqual([]);
});

/**
 * The registry rule (docs/architecture.md: a check of any subject is declared only through the one registry): a check's identity (an object with `id`, `requirements` and `title`,
 * not a record: no `outcome`) is written only as the argument of `defineCheck` (engine/registry.ts) or of a suite's
 * `check` (which declares through it); a suite or property file has no other kind of case (`test(`). At run time
 * engine/evaluate.ts refuses to run a check the registry does not hold; this catches a second way before it runs.
 */
export function checksDeclaredElsewhere(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    // The registry, and the record that carries a declared identity to the reports, are where identities are made.
    if (!/^(harness|suites|properties|cli|reports)\//.test(file) || file === 'engine/registry.ts' || file === 'record/record.ts') continue;
    const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isObjectLiteralExpression(node)) {
        const names = new Set(node.properties.map((p) => (p.name ? p.name.getText(sf) : '')));
        if (names.has('id') && names.has('requirements') && names.has('title') && !names.has('outcome')) {
          const call = node.parent;
          const callee = ts.isCallExpression(call) && call.arguments[0] === node ? call.expression.getText(sf) : '';
          if (callee !== 'defineCheck' && callee !== 'check') out.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: a check identity outside defineCheck`);
        }
      }
      if (/^(suites|properties)\//.test(file) && ts.isCallExpression(node) && node.expression.getText(sf) === 'test') {
        out.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: a case declared with test()`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

test('the registry rule finds a check identity written outside defineCheck and a test() case, and leaves declarations and records alone', () => {
  const planted = [
    { file: 'harness/webhook/x.ts', source: "export const A = { def: { id: 'a', requirements: ['R'], title: 't' } };\nexport const B = { def: defineCheck({ subject: 'receiver', id: 'b', requirements: ['R'], title: 't' }) };" },
    { file: 'suites/x.spec.ts', source: "const check = suite(import.meta.filename);\ncheck({ id: 'c', requirements: ['R'], title: 't', run: async () => {} });\ntest('d', async ({ check }) => { await check(def, body); });" },
    { file: 'reports/x.ts', source: "const rec = { id: 'e', requirements: ['R'], title: 't', outcome: 'pass' };" },
    { file: 'tests/x.spec.ts', source: "const def = { id: 'f', requirements: ['R'], title: 't' };" },
  ];
  expect(checksDeclaredElsewhere(planted)).toEqual(['harness/webhook/x.ts:1: a check identity outside defineCheck', 'suites/x.spec.ts:3: a case declared with test()']);
});

test('every check of every subject is declared through the one registry', () => {
  const files = projectFiles(['harness', 'suites', 'properties', 'cli', 'reports']);
  expect(files.length).toBeGreaterThan(50);
  expect(checksDeclaredElsewhere(files)).toEqual([]);
});
