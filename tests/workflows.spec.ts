// The GitHub workflows and the composite action cannot run here, so each is validated against its
// schema with @action-validator/cli (a devDependency): a broken workflow fails here, not on a user's
// runner. Without the binary the test FAILS, naming the missing devDependency.
import { test, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const VALIDATOR = path.join(ROOT, 'node_modules/.bin/action-validator');
const FILES = [
  ...fs.readdirSync(path.join(ROOT, '.github/workflows')).filter((f) => /\.ya?ml$/.test(f)).map((f) => `.github/workflows/${f}`),
  ...fs.readdirSync(path.join(ROOT, '.github/actions'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `.github/actions/${d.name}/action.yml`),
];

function validate(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(VALIDATOR, [file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', (e) => resolve({ code: -1, output: e.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('the expected workflow and action files exist', () => {
  expect(FILES).toEqual(expect.arrayContaining(['.github/workflows/ci.yml', '.github/workflows/conformance-gate.yml', '.github/workflows/conformance-gate-package.yml', '.github/actions/conformance/action.yml']));
});

for (const file of FILES) {
  test(`${file} is valid (action-validator)`, async () => {
    expect(fs.existsSync(VALIDATOR), 'node_modules/.bin/action-validator is missing: add the devDependency @action-validator/cli and run npm ci').toBe(true);
    const r = await validate(file);
    expect(r.code, r.output).toBe(0);
  });
}

test('ci.yml runs the typecheck and the tests on Node 24 in both database variants and keeps the reports', () => {
  const ci = fs.readFileSync(path.join(ROOT, '.github/workflows/ci.yml'), 'utf8');
  expect(ci).toContain('node-version: "24"');
  expect(ci).toContain('npx tsc --noEmit');
  expect(ci).toContain('npm test');
  expect(ci).toMatch(/db: \[embedded, container\]/);
  expect(ci).toContain('CONFORMANCE_DB: ${{ matrix.db }}');
  expect(ci).toContain('path: reports/out');
});

test('the reusable gate takes base-url, profile and waivers and never echoes its secret', () => {
  const gate = fs.readFileSync(path.join(ROOT, '.github/workflows/conformance-gate.yml'), 'utf8');
  expect(gate).toMatch(/on:\n\s+workflow_call:/);
  for (const input of ['base-url:', 'profile:', 'waivers:', 'conformance-env:']) expect(gate).toContain(input);
  const action = fs.readFileSync(path.join(ROOT, '.github/actions/conformance/action.yml'), 'utf8');
  expect(action).toContain('::add-mask::');
  expect(action).not.toMatch(/echo "\$value"\s*$/m);
});

test('the gate requires its secret: a forgotten secret is a setup error, never a green gate', () => {
  const gate = fs.readFileSync(path.join(ROOT, '.github/workflows/conformance-gate.yml'), 'utf8');
  // The secret's own lines: those indented deeper than its name (the next secret ends it).
  const secret = /secrets:\n( +)conformance-env:\n(?:\1 +[a-z-]+:.*\n)*/.exec(gate)?.[0] ?? '';
  expect(secret).toMatch(/required: true/);
  expect(secret).not.toMatch(/required: false/);
  // INCOMPLETE fails the gate unless the caller says otherwise.
  expect(gate).toMatch(/allow-incomplete:\n(?:\s+[a-z-]+:.*\n)*\s+default: false/);
});

test('the package gate runs the harness from its npm package: no checkout of the harness, the version package.json names by default, keys masked, its secret required', () => {
  const gate = fs.readFileSync(path.join(ROOT, '.github/workflows/conformance-gate-package.yml'), 'utf8');
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  expect(gate).toMatch(/on:\n\s+workflow_call:/);
  for (const input of ['base-url:', 'profile:', 'waivers:', 'conformance-env:']) expect(gate).toContain(input);
  // The default version is the one this repository would publish.
  expect(/harness-version:\n(?:\s+[a-z-]+:.*\n)*\s+default: "([^"]+)"/.exec(gate)?.[1]).toBe(pkg.version);
  expect(gate).toContain(`npm install --no-audit --no-fund "${pkg.name}@$VERSION"`);
  // Only the caller is checked out; nothing of the harness repository.
  expect(gate).not.toMatch(/harness-repository|conformance-harness\/\.github|repository:/);
  expect(gate).toContain('node-version: "24"');
  expect(gate).toContain('::add-mask::');
  const secret = /secrets:\n\s+conformance-env:\n(?:\s+[a-z-]+:.*\n)*/.exec(gate)?.[0] ?? '';
  expect(secret).toMatch(/required: true/);
  expect(gate).toMatch(/allow-incomplete:\n(?:\s+[a-z-]+:.*\n)*\s+default: false/);
  expect(gate).toContain('conformance "${args[@]}"');
});

test('the gates leave the job summary to the command: no `tee` of its output into $GITHUB_STEP_SUMMARY (annotations and progress would land there)', () => {
  for (const file of ['.github/workflows/conformance-gate.yml', '.github/workflows/conformance-gate-package.yml']) {
    const gate = fs.readFileSync(path.join(ROOT, file), 'utf8');
    expect(gate, file).not.toMatch(/tee -a "\$GITHUB_STEP_SUMMARY"/);
    expect(gate, file).toMatch(/writes the job summary itself/);
  }
});

test('the gate shows how to attest in GitHub Actions: an optional key secret, written private to a temporary file, removed, the reports signed before upload', () => {
  const gate = fs.readFileSync(path.join(ROOT, '.github/workflows/conformance-gate.yml'), 'utf8');
  const secret = /( +)attestation-key:\n(?:\1 +[a-z-]+:.*\n)*/.exec(gate.slice(gate.indexOf('secrets:')))?.[0] ?? '';
  expect(secret).toMatch(/required: false/);
  const step = gate.slice(gate.indexOf('- name: Attest the reports'), gate.indexOf('- uses: actions/upload-artifact@v4', gate.indexOf('- name: Attest the reports')));
  expect(step).toContain('ATTESTATION_KEY: ${{ secrets.attestation-key }}');
  expect(step).toContain('umask 077');
  expect(step).toMatch(/conformance\.mjs attest "\$GITHUB_WORKSPACE\/conformance-merged" --key "\$key"/);
  expect(step).toContain('rm -f "$key"');
  expect(step).not.toMatch(/echo "\$ATTESTATION_KEY"/);
  // The signature is uploaded with the reports it covers.
  expect(gate.indexOf('- name: Attest the reports')).toBeLessThan(gate.lastIndexOf('name: conformance-report\n'));
});
