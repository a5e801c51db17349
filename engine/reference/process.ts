// Starting the reference as a child process, by the path of its entry point (never an import: the oracle and the implementation stay apart).
// It waits for the reference's one-line `ready` announcement on stdout. One launcher for every caller:
// `startReference` is the sandbox the CLI, global setup, meta-suites and benchmarks start; `launchReference` runs
// main.ts with the arguments given, for the tests of the reference itself.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import crypto from 'node:crypto';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** `.ts` in a clone, `.js` in the npm package (compiled into dist/, where this module is JavaScript too). */
const EXT = path.extname(import.meta.filename);
/** The reference alone: the service, as partners' image runs it. */
export const REFERENCE_MAIN = path.join(ROOT, `reference-impl/main${EXT}`);
/** The reference with its switchboard (mutants and variants per request, with the token). */
export const SWITCHBOARD_MAIN = path.join(ROOT, `reference-switchboard/main${EXT}`);

/**
 * The entry point for these arguments: the switchboard's when a switchboard token (or a mutant for every request)
 * is given, which every sandbox the harness starts has; the reference alone otherwise.
 */
export function referenceMain(args: readonly string[]): string {
  return args.some((a) => /^--(switchboard-token|mutant)(=|$)/.test(a)) ? SWITCHBOARD_MAIN : REFERENCE_MAIN;
}

/**
 * The Node that runs the reference (and the other scripts the CLI starts). The package's JavaScript runs on
 * this process's Node. A clone's TypeScript needs Node ≥ 22.6, which strips types; an older node falls back to
 * the pinned devDependency when it is installed.
 */
export function nodeBinary(): string {
  if (EXT === '.js') return process.execPath;
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 6)) return process.execPath;
  const pinned = path.join(ROOT, 'node_modules', '.bin', 'node');
  return fs.existsSync(pinned) ? pinned : process.execPath;
}

export interface LaunchOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Run as another user (only root may): its uid and gid. */
  as?: { uid: number; gid: number };
  /** Forward the reference's stderr (guide, logs) to ours instead of capturing it. */
  inheritStderr?: boolean;
  /** Capture all of stderr (tests read the startup lines and the guide); default: its last 4,000 characters. */
  keepStderr?: 'all' | 'tail';
  timeoutMs?: number;
  /** stop() follows its signal with SIGKILL when the process is still running this long after; default: never. */
  killAfterMs?: number;
}

export interface ReferenceProcess {
  baseUrl: string;
  /** The database the ready event names (embedded, container or url). */
  db: string;
  child: ChildProcess;
  /** What was captured of stderr ('' when it is inherited). */
  stderr(): string;
  /** Sends SIGTERM (or the given signal) and resolves with the exit code (null after a signal kill). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `node reference-impl/main.ts <args>` (reference-switchboard/main.ts with a token) and resolves once it announced `ready`. */
export async function launchReference(args: string[], opts: LaunchOptions = {}): Promise<ReferenceProcess> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const child = spawn(nodeBinary(), [referenceMain(args), ...args], {
    stdio: ['pipe', 'pipe', opts.inheritStderr ? 'inherit' : 'pipe'], env: { ...process.env, ...opts.env }, ...opts.as,
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (opts.keepStderr !== 'all') stderr = stderr.slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ baseUrl: string; db: string }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      // SIGTERM first: the reference then removes its embedded database; SIGKILL only if that hangs.
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      reject(new Error(`reference did not become ready within ${timeoutMs} ms${stderr ? `: ${lastLine(stderr)}` : ''}`));
    }, timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const msg = JSON.parse(line) as { event?: string; baseUrl?: string; db?: string };
          if (msg.event === 'ready' && msg.baseUrl) {
            clearTimeout(timer);
            resolve({ baseUrl: msg.baseUrl, db: msg.db ?? '' });
          }
        } catch {
          /* partial line */
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`reference exited with code ${code} before it was ready${stderr ? `: ${lastLine(stderr)}` : ''}`));
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const kill = opts.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    child.kill(signal);
    const code = await exited;
    clearTimeout(kill);
    return code;
  };
  return { ...ready, child, stderr: () => stderr, stop };
}

export interface ReferenceHandle extends Omit<ReferenceProcess, 'stop'> {
  profilePath: string;
  switchboardToken: string;
  /** SIGTERM, then SIGKILL if it has not exited 10 s later. */
  stop(): Promise<void>;
}

export interface StartOptions {
  db?: 'embedded' | 'container' | 'url';
  port?: number;
  profilePath?: string;
  /** Extra CLI arguments for the reference. */
  args?: string[];
  /** Forward the reference's stderr (guide, logs) to ours. */
  inheritStderr?: boolean;
  timeoutMs?: number;
  /** The switchboard token to start it with (default: a fresh random one). */
  switchboardToken?: string;
}

/** The reference sandbox: a profile written for it, a switchboard token, gone when this process goes. */
export async function startReference(opts: StartOptions = {}): Promise<ReferenceHandle> {
  const switchboardToken = opts.switchboardToken ?? crypto.randomBytes(16).toString('hex');
  const profilePath = opts.profilePath ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cec-profile-')), 'reference.profile.json');
  // --exit-with-parent: the reference shuts itself down when our end of its stdin closes, so it never
  // outlives this process, whatever ends it.
  const args = ['--db', opts.db ?? 'embedded', '--port', String(opts.port ?? 0), '--profile-out', profilePath, '--switchboard-token', switchboardToken, '--exit-with-parent', ...(opts.args ?? [])];
  const ref = await launchReference(args, { inheritStderr: opts.inheritStderr, timeoutMs: opts.timeoutMs, killAfterMs: 10_000 });
  return { ...ref, profilePath, switchboardToken, stop: async () => void (await ref.stop()) };
}

/**
 * The line of the reference's stderr that says why it stopped: its own one-line failure when it wrote one,
 * else the error line of a crash (never Node's closing `Node.js vX` line or a stack frame), else the last line.
 */
export function lastLine(text: string): string {
  const lines = text.trim().split('\n').map((l) => l.trim()).filter(Boolean);
  const own = lines.filter((l) => l.startsWith('reference-impl:')).slice(-1)[0];
  if (own) return own;
  const error = lines.filter((l) => /^[A-Za-z]*Error\b|^\w+Error:|^Error:/.test(l)).slice(-1)[0];
  return error ?? lines.filter((l) => !/^Node\.js v\d/.test(l) && !l.startsWith('at ')).slice(-1)[0] ?? lines.slice(-1)[0] ?? '';
}
