// Test-only helpers around the reference process. Starting it is engine/reference/process.ts's job
// (`launchReference` for the tests of the reference itself); these run main.ts to its exit and read what it
// printed. Tests talk to the reference over HTTP only; nothing here imports the implementation.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nodeBinary, referenceMain, type ReferenceProcess } from '../../engine/reference/process.ts';

export const ROOT = path.join(import.meta.dirname, '..', '..');

/** Runs main.ts to completion (for startup failures) and returns exit code and output. */
export function runToExit(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(nodeBinary(), [referenceMain(args), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`did not exit in ${timeoutMs} ms`)); }, timeoutMs);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** The data dir named in the startup line, if any (launch with `keepStderr: 'all'`: the line comes early). */
export function dataDirOf(ref: ReferenceProcess): string | undefined {
  return /data dir (\S+) \(/.exec(ref.stderr())?.[1];
}

export function readJson<T = any>(...segments: string[]): T {
  return JSON.parse(fs.readFileSync(path.join(ROOT, ...segments), 'utf8')) as T;
}
