// Runs Playwright Test as a child process of the CLI, its output passed through (held back until the target may be used).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SetupError } from '../errors.ts';

/** The harness's own tree: the project root in a clone, dist/ in the npm package (compiled JavaScript). */
const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where Node finds Playwright Test from here: the project's node_modules in a clone, wherever npm put it for the package. */
export const PLAYWRIGHT_CLI = createRequire(import.meta.url).resolve('@playwright/test/cli');

/**
 * Runs Playwright as a child. Its progress (stdout) goes to our stderr, except the reporter's plain
 * `conformance: ...` summary line, which stays on stdout for scripts.
 */
export function runPlaywright(args: string[], env: NodeJS.ProcessEnv, cleanups: (() => Promise<void> | void)[], gate: Promise<void> = Promise.resolve()): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    // Until `gate` settles (the reference starting beside Playwright), output is held back; when it fails,
    // Playwright's output about the aborted run is dropped and the caller reports the one reason.
    let state: 'held' | 'open' | 'dropped' = 'held';
    const held: [NodeJS.WriteStream, string][] = [];
    const emit = (stream: NodeJS.WriteStream, text: string) => {
      if (state === 'open') stream.write(text);
      else if (state === 'held') held.push([stream, text]);
    };
    void gate.then(
      () => {
        state = 'open';
        for (const [stream, text] of held.splice(0)) stream.write(text);
      },
      () => {
        // The run cannot go on (the reference did not start, the target was refused): the runner is stopped,
        // and its reporter writes nothing for it (reports/conformance-reporter.ts reads the same ready file).
        state = 'dropped';
        held.length = 0;
        child.kill('SIGTERM');
      },
    );
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) emit(line.startsWith('conformance: ') ? process.stdout : process.stderr, `${line}\n`);
    });
    child.stderr.on('data', (d: Buffer) => emit(process.stderr, d.toString('utf8')));
    const onSignal = (sig: NodeJS.Signals) => {
      child.kill(sig);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    cleanups.push(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    child.on('error', (e) => reject(new SetupError(`cannot start playwright: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (pending) emit(process.stderr, `${pending}\n`);
      if (signal && state !== 'dropped') reject(new SetupError(`interrupted (${signal})`));
      else resolve(code ?? 1);
    });
  });
}
