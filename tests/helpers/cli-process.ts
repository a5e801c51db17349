// Runs the `conformance` CLI as an ASYNC child process (a synchronous spawn would starve the servers
// the calling test runs in-process) and measures it from outside: wall time, exit code, output, and
// the peak resident memory of the CLI and of every process it starts (Playwright runner, workers),
// sampled from /proc. Test helper only: it judges nothing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from '@playwright/test';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SHIM = path.join(ROOT, 'cli/conformance.mjs');

export interface Memory {
  /** VmHWM of the CLI process itself, bytes. */
  cliPeak: number;
  /** Largest VmHWM of any single process of the tree, bytes. */
  processPeak: number;
  /** Largest sum of VmRSS over the whole tree at one sample, bytes. */
  treePeak: number;
  samples: number;
  processes: number;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  memory: Memory;
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined; // gone between listing and reading
  }
}

/** Every live descendant of root (root included), from the parent links in /proc/<pid>/stat. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The command name is in parentheses and may hold spaces: the parent pid is the 2nd field after it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

export interface CliOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Sampling period of /proc; 0 turns the memory sampling off. */
  sampleMs?: number;
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const sampleMs = opts.sampleMs ?? 100;
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...opts.env };
    delete env.CONFORMANCE_PROFILE;
    delete env.CONFORMANCE_WAIVERS;
    delete env.CONFORMANCE_SETUP_ERROR;
    delete env.CONFORMANCE_MUTANTS_MATRIX;
    // The harness's own CI (GitHub Actions) must not get the job summaries and annotations of the runs its
    // tests start; a test that wants them passes them.
    for (const name of ['GITHUB_ACTIONS', 'GITHUB_STEP_SUMMARY']) if (!(opts.env && name in opts.env)) delete env[name];
    const child = spawn(process.execPath, [SHIM, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const memory: Memory = { cliPeak: 0, processPeak: 0, treePeak: 0, samples: 0, processes: 0 };
    const seen = new Set<number>();
    const sample = () => {
      if (child.pid === undefined) return;
      let sum = 0;
      for (const pid of processTree(child.pid)) {
        seen.add(pid);
        const hwm = statusKb(pid, 'VmHWM') ?? 0;
        sum += statusKb(pid, 'VmRSS') ?? 0;
        memory.processPeak = Math.max(memory.processPeak, hwm);
        if (pid === child.pid) memory.cliPeak = Math.max(memory.cliPeak, hwm);
      }
      memory.treePeak = Math.max(memory.treePeak, sum);
      memory.samples++;
      memory.processes = seen.size;
    };
    const sampler = sampleMs > 0 ? setInterval(sample, sampleMs) : undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`conformance ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stderr.slice(-3000)}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (sampler) clearInterval(sampler);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started), memory });
    });
  });
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

/** A usage or setup error: exit 2, one `conformance: ` line on stderr matching `pattern`, no stack, nothing on stdout. */
export function expectOneLine(r: CliResult, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^conformance: /);
  expect(lines[0]).toMatch(pattern);
  expect(lines[0]).not.toMatch(/internal error/); // an anticipated mistake is named, not reported as a harness bug
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
}
