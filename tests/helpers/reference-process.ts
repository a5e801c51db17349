// Starts `node reference-impl/main.ts` as a child process and waits for its one-line ready event.
// Tests talk to it over HTTP only; this helper never imports the implementation.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.join(import.meta.dirname, '..', '..');
const MAIN = path.join(ROOT, 'reference-impl', 'main.ts');

/** Node ≥ 22.6 strips types; the system node may be older, so fall back to the pinned devDependency. */
export function nodeBinary(): string {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 6)) return process.execPath;
  return path.join(ROOT, 'node_modules', '.bin', 'node');
}

export interface RunningReference {
  baseUrl: string;
  db: string;
  readyLine: string;
  proc: ChildProcess;
  stderr(): string;
  /** Sends SIGTERM (or the given signal) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `as`: run the reference as another user (only root may); its uid and gid. */
export async function startReference(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, as?: { uid: number; gid: number }): Promise<RunningReference> {
  const proc = spawn(nodeBinary(), [MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...as });
  let stdout = '';
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ baseUrl: string; db: string; line: string }>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`reference did not get ready in ${timeoutMs} ms: ${stderr}`)); }, timeoutMs);
    proc.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const nl = stdout.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      const line = stdout.slice(0, nl);
      try {
        const event = JSON.parse(line) as { event: string; baseUrl: string; db: string };
        resolve({ baseUrl: event.baseUrl, db: event.db, line });
      } catch (e) {
        reject(new Error(`unexpected first stdout line: ${line}`));
      }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`reference exited with ${code} before ready: ${stderr}`)); });
  });
  return {
    baseUrl: ready.baseUrl,
    db: ready.db,
    readyLine: ready.line,
    proc,
    stderr: () => stderr,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/** Runs main.ts to completion (for startup failures) and returns exit code and output. */
export function runToExit(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(nodeBinary(), [MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`did not exit in ${timeoutMs} ms`)); }, timeoutMs);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** The data dir named in the startup line, if any. */
export function dataDirOf(ref: RunningReference): string | undefined {
  return /data dir (\S+) \(/.exec(ref.stderr())?.[1];
}

export function readJson<T = any>(...segments: string[]): T {
  return JSON.parse(fs.readFileSync(path.join(ROOT, ...segments), 'utf8')) as T;
}
