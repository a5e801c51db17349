// The project is self-contained: the specification it checks against is its own byte-identical copy
// (fixtures/spec/, with its SHA-256 beside it), and no file of the project reads anything outside the project
// folder (a user's clone has nothing beside it).
import { test, expect } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, SPEC_PATH, SPEC_SHA256_PATH } from '../fixtures/paths.ts';
import { projectFiles } from './helpers/project-files.ts';

test('the specification copy matches the SHA-256 recorded beside it', () => {
  const recorded = fs.readFileSync(SPEC_SHA256_PATH, 'utf8').split(/\s+/)[0];
  const actual = crypto.createHash('sha256').update(fs.readFileSync(SPEC_PATH)).digest('hex');
  expect(actual).toBe(recorded);
});

// Spelled in two pieces so this file does not name it itself.
const SHARED = ['..', 'shared', ''].join('/');

test('no project file reads a path outside the project folder (the folder beside it, or anywhere above it)', () => {
  // A relative path that climbs out of the project root from the file's own folder.
  const offenders: string[] = [];
  for (const { file, source } of projectFiles([''], /(\.(ts|mjs|js|json|yml|yaml|sh)|^run)$/)) {
    if (file === 'package-lock.json' || file === '.ci/run') continue;
    if (source.includes(SHARED)) offenders.push(`${file}: names the folder beside the project`);
    for (const m of source.matchAll(/['"`]((?:\.\.\/)+)[^'"`\s]*['"`]/g)) {
      const resolved = path.resolve(PROJECT_ROOT, path.dirname(file), m[1]);
      if (!resolved.startsWith(PROJECT_ROOT)) offenders.push(`${file}: ${m[0]}`);
    }
  }
  expect(offenders).toEqual([]);
});
