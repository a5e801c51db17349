// The front door and the pages behind it: the README keeps the two commands exactly and CI runs its test command;
// it stays short (the reference lives in docs/); every relative link of README.md, CHANGELOG.md and docs/*.md
// names a file of the project, and every #anchor a heading of the page it points to (GitHub's slugs).
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { PROJECT_ROOT } from '../fixtures/paths.ts';

const read = (rel: string) => fs.readFileSync(path.join(PROJECT_ROOT, rel), 'utf8');
const PAGES = ['README.md', 'CHANGELOG.md', ...fs.readdirSync(path.join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a Markdown page (a repeated heading gets `-1`, `-2`…, as on GitHub). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The broken relative links of a page (`page: link`): a file that does not exist, or an anchor it does not have. */
export function brokenLinks(page: string, markdown: string, exists: (rel: string) => string | undefined): string[] {
  const out: string[] = [];
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1];
    if (/^[a-z]+:/i.test(link)) continue; // http(s), mailto: not ours to check here
    const [file, anchor] = link.split('#');
    const target = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
    const text = exists(target);
    if (text === undefined) out.push(`${page}: ${link}`);
    else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(text).has(anchor)) out.push(`${page}: ${link}`);
  }
  return out;
}

const onDisk = (rel: string): string | undefined => {
  const abs = path.join(PROJECT_ROOT, rel);
  if (!fs.existsSync(abs)) return undefined;
  return fs.statSync(abs).isDirectory() ? '' : fs.readFileSync(abs, 'utf8');
};

test('the README opens with the two commands, exactly, and CI runs its test command', () => {
  const readme = read('README.md');
  expect(readme).toContain('\nnpm ci && npx conformance run     # the main job');
  expect(readme).toContain('\nnpm ci && npm test                # the project');
  expect(readme.indexOf('## The two commands')).toBeLessThan(readme.indexOf('## By user'));
  // .ci/run: `npm ci` first, then the README's test command.
  const ci = read('.ci/run').split('\n').filter((l) => !l.trimStart().startsWith('#'));
  expect(ci.some((l) => /\bnpm ci\b/.test(l))).toBe(true);
  expect(ci.some((l) => /^npm test\b/.test(l.trim()))).toBe(true);
});

test('the README is a front door a newcomer reads in minutes: a path per user, the reference in docs/', () => {
  const readme = read('README.md');
  expect(readme.split('\n').length).toBeLessThanOrEqual(150);
  for (const who of ['**A service team', '**A partner', '**An auditor']) expect(readme).toContain(who);
  for (const page of ['profile', 'reports', 'ci', 'containers', 'performance', 'architecture', 'checks-and-requirements']) {
    expect(readme, `README links docs/${page}.md`).toContain(`](docs/${page}.md)`);
  }
  // The history of the performance work is not on the front page, nor in the current figures.
  for (const rel of ['README.md', 'docs/performance.md']) expect(read(rel)).not.toMatch(/What changed this round|Earlier rounds/);
});

test('the link rule finds a missing page and a missing anchor, and passes good links and code', () => {
  const pages: Record<string, string> = {
    'README.md': '[a](docs/a.md) [b](docs/a.md#one-two) [c](docs/none.md) [d](docs/a.md#three) `[e](docs/none.md)` [w](https://x.test/y)',
    'docs/a.md': '# Title\n\n## One `two`\n\n```\n## three\n```\n[back](../README.md#title-1) [self](#title)',
  };
  const exists = (rel: string) => pages[rel];
  expect(brokenLinks('README.md', pages['README.md'], exists)).toEqual(['README.md: docs/none.md', 'README.md: docs/a.md#three']);
  expect(brokenLinks('docs/a.md', pages['docs/a.md'], exists)).toEqual(['docs/a.md: ../README.md#title-1']);
});

test('every relative link of the README, the changelog and docs/ names a file, and every anchor a heading', () => {
  expect(PAGES.length).toBeGreaterThan(8);
  expect(PAGES.flatMap((p) => brokenLinks(p, read(p), onDisk))).toEqual([]);
});
