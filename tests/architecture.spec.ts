// The house by job (docs/architecture.md): entry points (cli/) select and print; engine/ plans, runs and records the
// checks of every subject; checks/<subject>/ declares them (service, sender, receiver, client), loadable without
// Playwright; observe/ sees a subject, judge/ says what a response means, profile/ reads the target profile, record/
// holds the check record and its redaction. Each room has a row of the rooms it may import (ALLOWED); below the engine
// nothing reads a setting or the environment (the run's plan is handed down, engine/plan.ts); no file of checks/
// reaches Playwright at run time; a check of any subject is declared only through the one registry (engine/registry.ts
// `defineCheck`, or a service file's `check`, which declares through it); the oracle and the implementation stay apart
// (reference-impl/ and reference-receiver/ import fixtures/ only; the switchboard wraps the reference from outside and
// no file of reference-impl/ names a mutant or a variant); no import circle inside a room (STYLE §13.6). Each rule is a
// pure function over (file, source) pairs, proven on planted cases first.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { MUTANTS } from '../reference-switchboard/mutants.ts';
import { VARIANTS } from '../reference-switchboard/variants.ts';
import ts from 'typescript';
import { projectFiles } from './helpers/project-files.ts';

/** The rooms of the house below the entry points, lowest first: each may import its own room and those it lists. */
const BELOW_ENGINE = ['checks', 'observe', 'judge', 'profile', 'record'];
/** What a check may use of the engine: the ways to declare a check (and a property's seed and runs), nothing that runs one. */
const ENGINE_API = ['engine/registry.ts', 'engine/declare.ts', 'engine/planner.ts', 'engine/pool.ts', 'engine/property-check.ts', 'engine/seed.ts'];
const CHECKS_ROW = (own: string) => [own, ...ENGINE_API, 'observe', 'judge', 'profile', 'record', 'fixtures'];

const ALLOWED: Record<string, readonly string[]> = {
  // The entry points: they select and print; the example receiver and the switchboard are started from here.
  cli: ['cli', 'engine', 'checks', 'observe', 'judge', 'profile', 'record', 'reports', 'fixtures', 'platform', 'reference-receiver', 'reference-switchboard'],
  // Plans, runs and records checks of every subject: the registry, the planner, the Playwright adapter, the standalone runners.
  engine: ['engine', 'checks', 'observe', 'judge', 'profile', 'record', 'reports', 'fixtures', 'platform'],
  // The checks, one room per subject: declarations only; a subject's checks do not reach into another's.
  'checks/service': CHECKS_ROW('checks/service'),
  'checks/sender': CHECKS_ROW('checks/sender'),
  'checks/receiver': CHECKS_ROW('checks/receiver'),
  'checks/client': CHECKS_ROW('checks/client'),
  // How the harness sees a subject: HTTP, the target, listeners, proxies, commands (told the variables a command
  // gets by their names in engine/config.ts: naming one is not a read, which the plan rule below holds).
  observe: ['observe', 'judge', 'profile', 'record', 'fixtures', 'engine/config.ts'],
  // What a response means: assertions, the OpenAPI document's meaning, signatures, instants.
  judge: ['judge', 'record', 'fixtures'],
  // The target profile: its schema, roles and conditions.
  profile: ['profile', 'record', 'fixtures'],
  // The check record, its outcomes and the redaction of everything that leaves a run.
  record: ['record', 'fixtures'],
  // The writers read the model and the declarations; the plan's settings name the report folder and the CI's wishes.
  reports: ['reports', 'record', 'engine/config.ts', 'engine/registry.ts', 'engine/errors.ts', 'engine/ready.ts', 'checks/sender/scope.ts', 'profile', 'fixtures'],
  'reference-impl': ['reference-impl', 'platform', 'fixtures'],
  // Mutants and variants: the reference wrapped from outside. Only cli/ and tests/ may import it (no other row lists it).
  'reference-switchboard': ['reference-switchboard', 'reference-impl', 'platform', 'fixtures'],
  // Machine support neither side judges with (where the embedded PostgreSQL binaries run from): it imports nothing else of the project.
  platform: ['platform'],
  'reference-receiver': ['reference-receiver', 'fixtures'],
  // The example API client partners read: nothing of the harness or the reference.
  'reference-client': ['reference-client', 'fixtures'],
  fixtures: ['fixtures'],
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Top-level folder of a project-relative path. */
const top = (rel: string) => rel.split('/')[0];
/** The room of a project-relative path: its top folder, or checks/<subject> for a check. */
const room = (rel: string) => (top(rel) === 'checks' ? rel.split('/').slice(0, 2).join('/') : top(rel));
/** True when `target` is inside what an entry of a row names: a room (a folder) or one file. */
const within = (target: string, entry: string) => (entry.endsWith('.ts') ? target === entry : target === entry || target.startsWith(`${entry}/`));

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
    const allowed = ALLOWED[room(file)];
    if (!allowed) continue;
    for (const target of importsOf(file, source)) if (!allowed.some((e) => within(target, e))) out.push(`${file} → ${target}`);
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

/** Two folders up, spelled so no scan of the project's paths mistakes a planted import for a path outside it. */
const UP2 = ['..', '..'].join('/');

const SWITCH_NAMES = [...Object.keys(MUTANTS), ...Object.keys(VARIANTS)];

test('the rule catches planted wrong imports in every direction and lets the right ones through', () => {
  const planted = [
    { file: 'observe/target.ts', source: "import { x } from '../reports/model.ts';\nimport { y } from '../fixtures/paths.ts';\nimport { p } from '../profile/profile.ts';" },
    { file: 'judge/assertions.ts', source: "const m = await import('../cli/run.ts');\nimport { t } from '../observe/target.ts';" },
    { file: 'checks/service/list.ts', source: `import { startServer } from '${UP2}/reference-impl/server.ts';\nimport { test } from '${UP2}/engine/playwright/fixtures.ts';\nimport { suite } from '${UP2}/engine/declare.ts';` },
    { file: 'checks/client/checks.ts', source: `import { RECEIVER_CASES } from '../receiver/cases.ts';\nimport { runChecks } from '${UP2}/engine/standalone.ts';\nimport { defineCheck } from '${UP2}/engine/registry.ts';` },
    { file: 'record/redact.ts', source: "import { setting } from '../engine/config.ts';\nimport { PATIENT } from './patient-fields.ts';" },
    { file: 'profile/profile.ts', source: "import { sendRaw } from '../observe/http.ts';" },
    { file: 'engine/standalone.ts', source: "import { RECEIVER_CASES } from '../checks/receiver/cases.ts';\nimport { x } from '../cli/common.ts';" },
    { file: 'reference-impl/server.ts', source: "export { redact } from '../record/redact.ts';\nimport fs from 'node:fs';" },
    { file: 'reports/html.ts', source: "import type { Profile } from '../cli/profile.ts';\nimport { OUTCOMES } from '../record/record.ts';\nimport { planRun } from '../engine/planner.ts';" },
    { file: 'cli/run.ts', source: "import { toHtml } from '../reports/html.ts';\nimport { Target } from '../observe/target.ts';" },
    { file: 'reference-receiver/receiver.ts', source: "import { verify } from '../judge/signature.ts';" },
    { file: 'reference-switchboard/overrides.ts', source: "import type { Points } from '../reference-impl/context.ts';\nimport { x } from '../record/record.ts';" },
    { file: 'reference-impl/server.ts', source: "import { switchboardHook } from '../reference-switchboard/switchboard.ts';" },
    { file: 'checks/service/errors.ts', source: `import { MUTANTS } from '${UP2}/reference-switchboard/mutants.ts';` },
    { file: 'cli/reference-process.ts', source: "import type { MutantName } from '../reference-switchboard/mutants.ts';" },
  ];
  expect(violations(planted)).toEqual([
    'checks/client/checks.ts → checks/receiver/cases.ts',
    'checks/client/checks.ts → engine/standalone.ts',
    'checks/service/errors.ts → reference-switchboard/mutants.ts',
    'checks/service/list.ts → engine/playwright/fixtures.ts',
    'checks/service/list.ts → reference-impl/server.ts',
    'engine/standalone.ts → cli/common.ts',
    'judge/assertions.ts → cli/run.ts',
    'judge/assertions.ts → observe/target.ts',
    'observe/target.ts → reports/model.ts',
    'profile/profile.ts → observe/http.ts',
    'record/redact.ts → engine/config.ts',
    'reference-impl/server.ts → record/redact.ts',
    'reference-impl/server.ts → reference-switchboard/switchboard.ts',
    'reference-receiver/receiver.ts → judge/signature.ts',
    'reference-switchboard/overrides.ts → record/record.ts',
    'reports/html.ts → cli/profile.ts',
    'reports/html.ts → engine/planner.ts',
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
    { file: 'judge/one.ts', source: "import { two } from './two.ts';" },
    { file: 'judge/two.ts', source: "export const two = 2;" },
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
    { file: 'engine/other.ts', source: 'const plan = planRun(registered); // a call, not a declaration' },
  ];
  expect(plannerLeaks(planted)).toEqual(['engine/planner.ts: imports ./fixtures.ts', 'engine/planner.ts: imports @playwright/test', 'engine/playwright/fixtures.ts: declares planRun']);
});

test('the run planner lives in engine/planner.ts alone, apart from the fixtures', () => {
  const files = projectFiles(['engine', 'checks', 'observe', 'judge', 'profile', 'record', 'cli', 'reports']);
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
    if (!/^(checks|engine|observe|judge|profile|record|cli|reports)\//.test(file) || file === 'engine/registry.ts' || file === 'record/record.ts') continue;
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
      if (/^checks\//.test(file) && ts.isCallExpression(node) && node.expression.getText(sf) === 'test') {
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
    { file: 'checks/receiver/x.ts', source: "export const A = { def: { id: 'a', requirements: ['R'], title: 't' } };\nexport const B = defineCheck({ subject: 'receiver', id: 'b', requirements: ['R'], title: 't', run: async () => {} });" },
    { file: 'checks/service/x.ts', source: "const check = suite(import.meta.filename);\ncheck({ id: 'c', requirements: ['R'], title: 't', run: async () => {} });\ntest('d', async ({ check }) => { await check(def, body); });" },
    { file: 'reports/x.ts', source: "const rec = { id: 'e', requirements: ['R'], title: 't', outcome: 'pass' };" },
    { file: 'tests/x.spec.ts', source: "const def = { id: 'f', requirements: ['R'], title: 't' };" },
  ];
  expect(checksDeclaredElsewhere(planted)).toEqual(['checks/receiver/x.ts:1: a check identity outside defineCheck', 'checks/service/x.ts:3: a case declared with test()']);
});

test('every check of every subject is declared through the one registry', () => {
  const files = projectFiles(['checks', 'engine', 'observe', 'judge', 'profile', 'record', 'cli', 'reports']);
  expect(files.length).toBeGreaterThan(50);
  expect(checksDeclaredElsewhere(files)).toEqual([]);
});

/**
 * Reads of the run's settings or the environment below the engine (checks/, observe/, judge/, profile/, record/), as
 * `file:line: what`: a `setting(` call or `process.env`. Naming a variable (settingName) for a child's environment is
 * not a read. Comments are not code.
 */
export function readsBelowEngine(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) {
    if (!BELOW_ENGINE.includes(top(file))) continue;
    const code = source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
    code.split('\n').forEach((line, i) => {
      if (/(?<![\w.])setting\(/.test(line)) out.push(`${file}:${i + 1}: setting()`);
      if (/\bprocess\.env\b/.test(line)) out.push(`${file}:${i + 1}: process.env`);
    });
  }
  return out;
}

test('the plan rule finds a planted setting() or process.env read below the engine, and leaves the engine, names and comments alone', () => {
  const planted = [
    { file: 'observe/throttle.ts', source: "import { setting } from '../engine/config.ts';\nconst pace = Number(setting('paceMs') ?? 0);" },
    { file: 'checks/service/audio.ts', source: "// setting('audioExpiryWait') was read here\nconst wait = process.env.CONFORMANCE_AUDIO_EXPIRY_WAIT;" },
    { file: 'profile/profile.ts', source: "export function key(env = process.env) { return env.X; }" },
    { file: 'observe/command.ts', source: "const env = { [settingName('baseUrl')]: url };" },
    { file: 'engine/plan.ts', source: "const plan = { paceMs: setting('paceMs'), env: process.env };" },
  ];
  expect(readsBelowEngine(planted)).toEqual(['observe/throttle.ts:2: setting()', 'checks/service/audio.ts:2: process.env', 'profile/profile.ts:1: process.env']);
});

test('nothing below the engine reads a setting or the environment (the plan is handed down)', () => {
  const files = projectFiles(BELOW_ENGINE);
  expect(files.length).toBeGreaterThan(40);
  expect(readsBelowEngine(files)).toEqual([]);
});

/**
 * The files of checks/ that reach Playwright when loaded: a runtime import of `@playwright/test` in the file or in any
 * project file it imports at run time (type-only imports are erased), as `file → the file that imports it`.
 */
export function playwrightReach(files: { file: string; source: string }[]): string[] {
  const byFile = new Map(files.map((f) => [f.file, f.source]));
  const runtime = (source: string): string[] => [...source.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"`;]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  const out: string[] = [];
  for (const start of files.filter((f) => top(f.file) === 'checks')) {
    const seen = new Set<string>();
    const stack = [start.file];
    while (stack.length) {
      const f = stack.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const spec of runtime(byFile.get(f) ?? '')) {
        if (spec === '@playwright/test') {
          out.push(`${start.file} → ${f}`);
          continue;
        }
        if (spec.startsWith('.')) stack.push(path.posix.normalize(path.posix.join(path.posix.dirname(f), spec)));
      }
    }
  }
  return out.sort();
}

test('the Playwright rule follows runtime imports from checks/ and leaves type imports alone', () => {
  const planted = [
    { file: 'checks/service/a.ts', source: `import { suite } from '${UP2}/engine/declare.ts';\nimport type { TestInfo } from '@playwright/test';` },
    { file: 'checks/service/b.ts', source: `import { test } from '${UP2}/engine/playwright/fixtures.ts';` },
    { file: 'checks/client/c.ts', source: "import { expect } from '@playwright/test';" },
    { file: 'engine/declare.ts', source: "import type { TestInfo } from '@playwright/test';\nimport { planRun } from './planner.ts';" },
    { file: 'engine/planner.ts', source: "export const x = 1;" },
    { file: 'engine/playwright/fixtures.ts', source: "import * as playwrightTest from '@playwright/test';" },
  ];
  expect(playwrightReach(planted)).toEqual(['checks/client/c.ts → checks/client/c.ts', 'checks/service/b.ts → engine/playwright/fixtures.ts']);
});

test('no file of checks/ imports Playwright, itself or through what it imports', () => {
  const files = projectFiles(['checks', 'engine', 'observe', 'judge', 'profile', 'record', 'fixtures']);
  expect(files.filter((f) => top(f.file) === 'checks').length).toBeGreaterThan(20);
  expect(files.filter((f) => top(f.file) === 'checks' && /['"]@playwright\/test['"]/.test(f.source)).map((f) => f.file)).toEqual([]);
  expect(playwrightReach(files)).toEqual([]);
});
