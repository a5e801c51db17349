// One list of CONFORMANCE_* variables (engine/config.ts): every name the project spells must be an entry of
// SETTINGS (or start with an entry that is a prefix, one ending in `_`), and every entry must be used, so a
// new variable cannot drift in beside the list and a dropped one cannot linger in it. The rule is a pure
// function over (file, source) pairs, proven on planted drift first.
import { test, expect } from '@playwright/test';
import { projectFiles } from './helpers/project-files.ts';
import { SETTINGS } from '../engine/config.ts';

/** Where the project reads or sets its variables (files or folders, project-relative). */
const SCANNED = ['checks', 'engine', 'observe', 'judge', 'profile', 'record', 'platform', 'reports', 'cli', 'tests/mutants', 'tests/variants', 'bench', 'playwright.config.ts', 'tests/containers.spec.ts'];
const CONFIG_FILE = 'engine/config.ts';

type Entries = Record<string, { name: string }>;

const NAME = /CONFORMANCE_[A-Z0-9_]+/g;

// A name ending in `_` in the source is a family (prose writes `CONFORMANCE_SANDBOX_RECEIVER_*`): listed when some entry is in it.
const listed = (entries: Entries, name: string) => Object.values(entries).some((e) =>
  e.name === name || (e.name.endsWith('_') && name.startsWith(e.name)) || (name.endsWith('_') && e.name.startsWith(name)));

/** Names spelled outside the list that it lacks (as `file: NAME`), and entries nothing uses. */
export function drift(files: { file: string; source: string }[], entries: Entries): { unlisted: string[]; unused: string[] } {
  const unlisted = new Set<string>();
  const others = files.filter((f) => f.file !== CONFIG_FILE);
  for (const { file, source } of others) {
    for (const [name] of source.matchAll(NAME)) if (!listed(entries, name)) unlisted.add(`${file}: ${name}`);
  }
  const unused = Object.entries(entries).filter(([key, e]) => !others.some(({ source }) =>
    source.includes(e.name) || new RegExp(`\\bsetting(Name)?\\(\\s*'${key}'|\\bSETTINGS\\.${key}\\b`).test(source))).map(([key]) => key);
  return { unlisted: [...unlisted].sort(), unused: unused.sort() };
}

test('the rule reports a planted unlisted name and a planted unused entry, and accepts prefixes, families and setting() use', () => {
  const entries = {
    profile: { name: 'CONFORMANCE_PROFILE' },
    keyPrefix: { name: 'CONFORMANCE_KEY_' },
    seed: { name: 'CONFORMANCE_SEED' },
    stale: { name: 'CONFORMANCE_STALE' },
    receiverUrl: { name: 'CONFORMANCE_RECEIVER_URL' },
  };
  const files = [
    { file: 'engine/config.ts', source: "stale: { name: 'CONFORMANCE_STALE' }" },
    { file: 'harness/a.ts', source: "const p = process.env.CONFORMANCE_PROFILE;\nconst n = process.env.CONFORMANCE_NEW_THING;" },
    { file: 'cli/profile.ts', source: 'credential reads CONFORMANCE_KEY_FULL; see CONFORMANCE_RECEIVER_* and CONFORMANCE_SEE_*' },
    { file: 'engine/seed.ts', source: "const s = setting('seed');\nconst u = settingName('receiverUrl');" },
  ];
  expect(drift(files, entries)).toEqual({ unlisted: ['cli/profile.ts: CONFORMANCE_SEE_', 'harness/a.ts: CONFORMANCE_NEW_THING'], unused: ['stale'] });
});

test('every CONFORMANCE_* name the project spells is listed in engine/config.ts, and every entry is used', () => {
  const files = projectFiles(SCANNED);
  expect(files.some((f) => f.file === CONFIG_FILE)).toBe(true);
  expect(files.length).toBeGreaterThan(50);
  expect(drift(files, SETTINGS)).toEqual({ unlisted: [], unused: [] });
});
