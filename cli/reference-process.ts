// Starts the reference implementation as a child process (never by import: the oracle and the
// implementation stay apart) and waits for its one-line `ready` announcement on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import crypto from 'node:crypto';

export const REFERENCE_MAIN = path.resolve(import.meta.dirname, '../reference-impl/main.ts');

export interface ReferenceHandle {
  baseUrl: string;
  profilePath: string;
  switchboardToken: string;
  child: ChildProcess;
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

export async function startReference(opts: StartOptions = {}): Promise<ReferenceHandle> {
  const switchboardToken = opts.switchboardToken ?? crypto.randomBytes(16).toString('hex');
  const profilePath = opts.profilePath ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cec-profile-')), 'reference.profile.json');
  // --exit-with-parent: the reference shuts itself down when our end of its stdin closes, so it never
  // outlives this process, whatever ends it.
  const args = [REFERENCE_MAIN, '--db', opts.db ?? 'embedded', '--port', String(opts.port ?? 0), '--profile-out', profilePath, '--switchboard-token', switchboardToken, '--exit-with-parent', ...(opts.args ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', opts.inheritStderr ? 'inherit' : 'pipe'], env: { ...process.env } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`reference did not become ready within ${opts.timeoutMs ?? 60_000} ms${stderr ? `: ${lastLine(stderr)}` : ''}`));
    }, opts.timeoutMs ?? 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const msg = JSON.parse(line) as { event?: string; baseUrl?: string };
          if (msg.event === 'ready' && msg.baseUrl) {
            clearTimeout(timer);
            resolve(msg.baseUrl);
          }
        } catch {
          /* partial line */
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`reference exited with code ${code} before it was ready${stderr ? `: ${lastLine(stderr)}` : ''}`));
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return { baseUrl, profilePath, switchboardToken, child, stop };
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
}
