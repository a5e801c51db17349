// Runs a command a profile names (a sender's trigger, a condition's on/off switch): an argument list without a
// shell, in the profile's folder, inheriting the environment plus what the harness hands it, killed at its time
// limit. Its output is kept only as a short redacted tail for the message of a command that failed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { settingName } from '../engine/config.ts';
import type { SwitchCommand } from '../profile/profile.ts';
import { redact } from '../record/redact.ts';

export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

export interface CommandResult {
  /** The exit status, or why there is none (`ENOENT`, `killed after 60000 ms`). */
  code: number | string;
  /** The last lines of its stdout and stderr, redacted, on one line. */
  said: string;
  durationMs: number;
}

/**
 * What every command the harness runs for a profile is told (docs/profile.md, "Commands"): the target's base URL
 * and the profile's folder, beside the environment it inherits.
 */
export function commandEnv(inherited: NodeJS.ProcessEnv, baseUrl: string, profileDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...inherited, [settingName('baseUrl')]: baseUrl, [settingName('profileDir')]: profileDir, ...extra };
}

export function runCommand(argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const started = Date.now();
  return new Promise((resolve) => {
    let out = '';
    const done = (code: number | string) => resolve({ code, said: redact(out.trim().split('\n').slice(-3).join(' | ')).slice(0, 400), durationMs: Date.now() - started });
    const child = spawn(argv[0], argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => {
      out = (out + b.toString('utf8')).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      done((e as NodeJS.ErrnoException).code ?? e.message);
    });
    child.on('close', (c, signal) => {
      clearTimeout(timer);
      done(signal === 'SIGKILL' ? `killed after ${timeoutMs} ms` : (c ?? String(signal)));
    });
  });
}

/** `with exit status 3 (said this)`, `ENOENT`: how a failed command is named in a message. */
export function describeEnd(r: CommandResult): string {
  return `${typeof r.code === 'number' ? `with exit status ${r.code}` : r.code}${r.said ? ` (${r.said})` : ''}`;
}

/**
 * Runs one side of a condition's on/off switch (profile `faults.<name>.command`), in the profile's folder (the current
 * one without a file), told the target's base URL: the switched phase and `profile check` alike.
 */
export function flip(side: 'on' | 'off', cmd: SwitchCommand, baseUrl: string, profileFile: string | undefined, inherited: NodeJS.ProcessEnv): Promise<CommandResult> {
  const cwd = profileFile ? path.dirname(path.resolve(profileFile)) : process.cwd();
  return runCommand(cmd[side], { cwd, env: commandEnv(inherited, baseUrl, cwd), timeoutMs: cmd.timeoutMs });
}
