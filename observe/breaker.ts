// The run's circuit breaker: a target that stops answering must end the run within a minute, not hold
// a CI gate for an hour while every check waits out its own request timeout. Every exchange of
// `Target.send` reports here: a transport failure that means "no answer" (timeout, reset, refused)
// adds to a consecutive count, any answer resets it. At THRESHOLD consecutive failures the target is
// suspect: Target asks it one plain question (observe/target.ts confirmAlive; a front proxy may reset
// odd requests such as `%00` in a path while the API behind it answers every plain one). No answer to
// that either, and the breaker opens for the rest of the run: later requests are not sent and their
// checks fail with the reason "target stopped answering" and the last attempts as evidence.
//
// Playwright runs checks in several worker processes, so the state lives in a file named by
// CONFORMANCE_BREAKER_FILE (cli/global-setup.ts makes a fresh one for every run): the file holds
// the current run of consecutive failures, one JSON line each; `<file>.open` exists once the breaker
// opened (written whole, then renamed, so a reader sees all of it or nothing). Without the variable
// (unit tests, the CLI's own commands) the state is in memory, one breaker per Target.
// Concurrent updates may lose a line (two workers appending while a third resets): that only delays
// opening by one failure, it can never open the breaker on a target that answers.
import fs from 'node:fs';
import { redactValue } from '../record/redact.ts';

/** Consecutive "no answer" failures, across all workers, that open the breaker. */
export const BREAKER_THRESHOLD = 3;

/** Transport failures that mean the target did not answer (a bad answer is still an answer). */
export const NO_ANSWER_KINDS: ReadonlySet<string> = new Set(['timeout', 'connection_reset', 'connection_refused']);

/** One failed attempt, kept as evidence (headers redacted before they are stored anywhere). */
export interface Attempt {
  request: { method: string; target: string; headers: Record<string, string> };
  error: { kind: string; message: string };
  at: string;
}

export interface Breaker {
  /** The attempts that opened the breaker, or undefined while it is closed. */
  opened(): Attempt[] | undefined;
  /**
   * Records one exchange's result: an Attempt when the target did not answer, null when it answered.
   * Returns the consecutive failures once they reach the threshold (the target is suspect), else undefined.
   */
  report(result: Attempt | null): Attempt[] | undefined;
  /** Opens the breaker for the rest of the run, with the attempts that showed the target stopped answering. */
  open(attempts: Attempt[]): void;
}

export function isNoAnswer(kind: string): boolean {
  return NO_ANSWER_KINDS.has(kind);
}

export class MemoryBreaker implements Breaker {
  private run: Attempt[] = [];
  private openedWith: Attempt[] | undefined;
  private readonly threshold: number;
  constructor(threshold = BREAKER_THRESHOLD) {
    this.threshold = threshold;
  }

  opened(): Attempt[] | undefined {
    return this.openedWith;
  }

  report(result: Attempt | null): Attempt[] | undefined {
    if (this.openedWith) return undefined;
    if (!result) {
      this.run = [];
      return undefined;
    }
    this.run.push(redactValue(result));
    return this.run.length >= this.threshold ? this.run.slice(-this.threshold) : undefined;
  }

  open(attempts: Attempt[]): void {
    this.openedWith ??= redactValue(attempts);
  }
}

export class FileBreaker implements Breaker {
  private openedWith: Attempt[] | undefined;
  readonly file: string;
  private readonly threshold: number;
  constructor(file: string, threshold = BREAKER_THRESHOLD) {
    this.file = file;
    this.threshold = threshold;
  }

  private get openFile(): string {
    return `${this.file}.open`;
  }

  opened(): Attempt[] | undefined {
    if (this.openedWith) return this.openedWith;
    // Asked before every request: a missing file must not cost a thrown ENOENT (an error with a stack
    // capture, source-mapped by the runner: a quarter of a second per worker and run).
    if (!fs.existsSync(this.openFile)) return undefined;
    let text: string;
    try {
      text = fs.readFileSync(this.openFile, 'utf8');
    } catch {
      return undefined; // not open (or the run's folder is gone: nothing to say)
    }
    try {
      this.openedWith = JSON.parse(text) as Attempt[];
    } catch {
      this.openedWith = [];
    }
    return this.openedWith;
  }

  report(result: Attempt | null): Attempt[] | undefined {
    if (this.opened()) return undefined;
    try {
      if (!result) {
        // An answer: the consecutive run ends. Cheap when there is nothing to reset.
        if (fs.statSync(this.file).size > 0) fs.truncateSync(this.file, 0);
        return undefined;
      }
      fs.appendFileSync(this.file, `${JSON.stringify(redactValue(result))}\n`);
      const run = readLines(this.file);
      return run.length >= this.threshold ? run.slice(-this.threshold) : undefined;
    } catch {
      // The state file is gone (the run is ending) or unwritable: the breaker only shortens a run,
      // so failing to record never changes a verdict.
      return undefined;
    }
  }

  open(attempts: Attempt[]): void {
    if (this.opened()) return;
    try {
      const tmp = `${this.openFile}.${process.pid}`;
      fs.writeFileSync(tmp, JSON.stringify(redactValue(attempts)));
      fs.renameSync(tmp, this.openFile);
    } catch {
      // as above: never a reason to change a verdict
    }
  }
}

function readLines(file: string): Attempt[] {
  const out: Attempt[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as Attempt);
    } catch {
      // a line being written by another worker: skip it
    }
  }
  return out;
}

let shared: FileBreaker | undefined;

/** The run's breaker: the shared file the run plan names (its workers share it), else a fresh in-memory one. */
export function runBreaker(file: string | undefined): Breaker {
  if (!file) return new MemoryBreaker();
  if (!shared || shared.file !== file) shared = new FileBreaker(file);
  return shared;
}

/** One line for a check's detail: how many attempts failed, and how. */
export function describeAttempts(attempts: Attempt[]): string {
  const kinds = attempts.map((a) => `${a.request.method} ${a.request.target}: ${a.error.kind} (${a.error.message})`);
  return `${attempts.length} consecutive requests got no answer (the last a plain GET without a key); they were: ${kinds.join('; ')}`;
}
