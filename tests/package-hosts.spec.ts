// The project names no package host in its scripts: the Debian mirror debootstrap uses is the one this machine's
// apt names (scripts/apt-mirror.sh, read by scripts/container-images.sh), so a local mirror or a proxy is honoured
// and a machine that reaches packages only through one keeps working. The rule is a pure function over
// (file, source) pairs, proven on planted hosts first; the mirror reader runs on fake apt folders.
import { test, expect } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../fixtures/paths.ts';
import { projectFiles } from './helpers/project-files.ts';

/** Package hosts: any debian.org host (deb., ftp.XX., security., snapshot.), the npm and Yarn registries, Ubuntu's and Alpine's archives. */
const PACKAGE_HOST = /(?<![\w.-])(?:[\w-]+\.)*(?:debian\.org|registry\.npmjs\.org|registry\.yarnpkg\.com|archive\.ubuntu\.com|security\.ubuntu\.com|dl-cdn\.alpinelinux\.org)(?![\w-])/gi;

/** Every package host a file names, as `file: host`. */
export function packageHosts(files: { file: string; source: string }[]): string[] {
  const out: string[] = [];
  for (const { file, source } of files) for (const m of source.matchAll(PACKAGE_HOST)) out.push(`${file}: ${m[0]}`);
  return out.sort();
}

test('the rule catches planted package hosts and lets the rest through', () => {
  const planted = [
    { file: 'scripts/a.sh', source: 'debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian' },
    { file: 'scripts/b.sh', source: 'deb http://ftp.us.debian.org/debian bookworm main\nURIs: https://snapshot.debian.org/archive/debian/20250520T000000Z' },
    { file: 'scripts/images/node/Dockerfile', source: 'RUN npm config set registry https://registry.npmjs.org/' },
    { file: 'scripts/c.sh', source: 'FROM alpine\nRUN echo https://dl-cdn.alpinelinux.org/alpine > /etc/apk/repositories' },
    {
      file: 'scripts/fine.sh',
      source: 'mirror=$(bash scripts/apt-mirror.sh)\nsigned-by=/usr/share/keyrings/debian-archive-keyring.gpg\nnpm pack -q npm@10\n# Debian bookworm, the npm registry\nhttp://proxy.example:3142/debian',
    },
  ];
  expect(packageHosts(planted)).toEqual([
    'scripts/a.sh: deb.debian.org',
    'scripts/b.sh: ftp.us.debian.org',
    'scripts/b.sh: snapshot.debian.org',
    'scripts/c.sh: dl-cdn.alpinelinux.org',
    'scripts/images/node/Dockerfile: registry.npmjs.org',
  ]);
});

test('no file under scripts/ names a package host', () => {
  const files = projectFiles(['scripts'], /./);
  expect(files.map((f) => f.file)).toContain('scripts/container-images.sh');
  expect(files.map((f) => f.file)).toContain('scripts/apt-mirror.sh');
  expect(packageHosts(files)).toEqual([]);
});

test.describe('scripts/apt-mirror.sh reads the mirror from the machine\'s apt sources', () => {
  let etc: string;
  test.beforeEach(() => {
    etc = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-apt-'));
    fs.mkdirSync(path.join(etc, 'sources.list.d'));
  });
  test.afterEach(() => fs.rmSync(etc, { recursive: true, force: true }));

  const write = (rel: string, text: string) => fs.writeFileSync(path.join(etc, rel), text);
  const mirror = () => {
    const r = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts/apt-mirror.sh')], { env: { ...process.env, CEC_APT_ETC: etc }, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  // A deb822 file as Debian's images ship it: the main archive and the security archive, and another vendor's before them.
  const DEB822 = [
    'Types: deb', 'URIs: https://vendor.example/node_20.x', 'Suites: nodistro', 'Components: main', '',
    'Types: deb', '# a comment inside the paragraph', 'URIs: http://mirror.example:3142/debian/', 'Suites: bookworm bookworm-updates',
    'Components: main', 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg', '',
    'Types: deb', 'URIs: http://mirror.example:3142/debian-security', 'Suites: bookworm-security', 'Components: main', '',
  ].join('\n');

  test('a classic sources.list: the first deb line of a release suite with main, its options and comments skipped', () => {
    write('sources.list', [
      '# deb http://commented.example/debian bookworm main',
      'deb-src http://src.example/debian bookworm main',
      'deb http://security.example/debian-security bookworm-security main',
      'deb http://updates.example/debian bookworm-updates main',
      'deb http://contrib.example/debian bookworm contrib',
      'deb [arch=amd64 trusted=yes] http://local-mirror.example/debian bookworm main contrib # the local one',
      'deb http://later.example/debian bookworm main',
    ].join('\n'));
    write('sources.list.d/debian.sources', DEB822);
    expect(mirror()).toEqual({ code: 0, stdout: 'http://local-mirror.example/debian\n', stderr: '' });
  });

  test('a deb822 .sources file: the first URI of the paragraph for the main archive, without its trailing slash', () => {
    write('sources.list.d/debian.sources', DEB822);
    expect(mirror()).toEqual({ code: 0, stdout: 'http://mirror.example:3142/debian\n', stderr: '' });
  });

  test('both: sources.list first, then the folder by name; a disabled paragraph and other file names are skipped', () => {
    write('sources.list', 'deb http://vendor.example/apt stable main\n');
    write('sources.list.d/01-off.sources', 'Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n');
    write('sources.list.d/02-ignored.list.disabled', 'deb http://disabled.example/debian bookworm main\n');
    write('sources.list.d/03-keyring.list', 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://root.example/ trixie main\n');
    write('sources.list.d/04-debian.sources', DEB822);
    expect(mirror()).toEqual({ code: 0, stdout: 'http://root.example\n', stderr: '' });
  });

  test('no Debian main archive named: one clear line, exit 1', () => {
    write('sources.list', 'deb http://security.example/debian-security bookworm-security main\n');
    write('sources.list.d/vendor.sources', 'Types: deb\nURIs: https://vendor.example/node_20.x\nSuites: nodistro\nComponents: main\n');
    const r = mirror();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('apt-mirror: no Debian main archive named in');
    expect(r.stderr).toContain(etc);
  });

  test('a missing apt folder is the same one line', () => {
    fs.rmSync(etc, { recursive: true });
    const r = mirror();
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^apt-mirror: no Debian main archive named in /)]);
  });
});
