// A client judgment from start to reports: the sandbox behind the recording proxy, the runs of the partner's command (or a recording by hand), its verdicts as a run's outcomes and reports.
// Starts the sandbox (the reference on embedded PostgreSQL, in its client mode: opaque ids a client must
// percent-encode, audio URLs that expire within seconds) behind a recording proxy (observe/client-proxy.ts), runs
// the partner's command with CONFORMANCE_BASE_URL, CONFORMANCE_API_KEY (the full key) and CONFORMANCE_PROFILE
// (every role's key, resource ids) in its environment: once with normal answers only, then once more per group of
// the scenario's injected reasons and once per declared `stop` reason (engine/client-runs.ts). It records every
// request and the command's output, judges the record (engine/client-judge.ts) within the client's scope
// (checks/client/scenario.ts) and writes the reports of `run` with the subject `client`. cli/client.ts parses the
// options and prints; the progress lines of the runs reach it through `say`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProfile } from '../profile/profile.ts';
import { redact, registerSecret } from '../record/redact.ts';
import { settingName } from './config.ts';
import { SetupError } from './errors.ts';
import { judgeClientTraffic, type ClientVerdicts } from './client-judge.ts';
import { MAX_RUNS, reasonNotes, routesText, stopTargets, type ReasonPlan } from './client-runs.ts';
import { startReference, type ReferenceHandle, type StartOptions } from './reference/process.ts';
import { RecordingProxy } from '../observe/client-proxy.ts';
import { INJECTABLE_REASONS, parseTarget, type ClientTraffic, type Route } from '../observe/client-traffic.ts';
import { PART_LABEL, scopeOf, type Scenario } from '../checks/client/scenario.ts';
import { subjectRunContext } from '../reports/context.ts';
import { collectedOf, type ConformanceReport, type OutcomesFile } from '../reports/model.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';

/** The profile the client gets: the sandbox's keys and resources, its base URL the proxy; no switchboard, faults or webhook secrets. */
function clientProfile(sandboxProfile: string, baseUrl: string, dir: string): { file: string; keys: Map<string, string>; ids: Set<string> } {
  const raw = JSON.parse(fs.readFileSync(sandboxProfile, 'utf8')) as Record<string, unknown> & { credentials?: Record<string, { key?: string }>; resources?: Record<string, unknown> };
  const keys = new Map<string, string>();
  for (const [role, c] of Object.entries(raw.credentials ?? {})) if (typeof c?.key === 'string') keys.set(c.key, role);
  const ids = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === 'string') ids.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(raw.resources ?? {});
  const profile = { name: 'conformance client sandbox', baseUrl, credentials: raw.credentials ?? {}, resources: raw.resources ?? {} };
  const file = path.join(dir, 'client.profile.json');
  fs.writeFileSync(file, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
  loadProfile(file, process.env); // the shape every profile reader expects; registers its keys for redaction
  return { file, keys, ids };
}

export interface JudgedRun extends Omit<ClientVerdicts, 'records'> {
  outcomes: OutcomesFile;
}

/** The client's verdicts (engine/client-judge.ts) as a run's outcomes, for the report writers. */
export function judgeClient(traffic: ClientTraffic, command: string, baseUrl: string, startedAt: string): JudgedRun {
  const { records, ...rest } = judgeClientTraffic(traffic);
  const checks = records.map((r) => collectedOf(r, { project: 'client', file: 'checks/client/checks.ts' }));
  return { outcomes: { startedAt, finishedAt: new Date().toISOString(), runStatus: 'passed', seed: null, target: { name: `client: ${command}`, baseUrl }, checks }, ...rest };
}

export interface Finished { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }

/** The normal run's time limit unless --timeout is given; later runs get 3 times what it took, at least MIN_RUN_BUDGET_S. */
const NORMAL_RUN_TIMEOUT_S = 300;
const MIN_RUN_BUDGET_S = 30;
/** The whole judgment's bound unless --max-duration is given. */
export const DEFAULT_MAX_DURATION_S = 900;
/** The client's output, redacted, beside the reports. */
export const CLIENT_LOG = 'client-output.log';

/** The client's output, redacted, a whole line at a time, into the log file (never the terminal: the verdict is the last line there). */
function runCommand(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number, out: { stdout: string; stderr: string }, log: (text: string) => void): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['inherit', 'pipe', 'pipe'] });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, timeoutMs);
    // The output is kept as the client wrote it (judged for keys and audio URLs) and shown redacted, a whole
    // line at a time: a key or a patient value cut between two chunks would pass the redaction in halves.
    const echo = (which: 'stdout' | 'stderr') => {
      let pending = '';
      const write = (s: string) => log(which === 'stderr' ? s.replace(/^(?=.)/gm, '[stderr] ') : s);
      return {
        data: (d: Buffer) => {
          const text = d.toString('utf8');
          out[which] += text;
          pending += text;
          const cut = pending.lastIndexOf('\n') + 1;
          if (cut > 0) {
            write(redact(pending.slice(0, cut)));
            pending = pending.slice(cut);
          }
        },
        flush: () => {
          if (pending) write(`${redact(pending)}\n`);
          pending = '';
        },
      };
    };
    const echoOut = echo('stdout');
    const echoErr = echo('stderr');
    child.stdout.on('data', echoOut.data);
    child.stderr.on('data', echoErr.data);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new SetupError(`the client command could not start: ${argv[0]}: ${e.code === 'ENOENT' ? 'not found' : e.code === 'EACCES' ? 'not executable' : e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      echoOut.flush();
      echoErr.flush();
      resolve({ code, signal, timedOut });
    });
  });
}

function waitForStop(durationMs: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    if (durationMs !== undefined) setTimeout(done, durationMs).unref();
  });
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export interface ClientRunOptions {
  /** The partner's command and its arguments (empty with `watch`). */
  command: string[];
  /** Record a client driven by hand, until a signal or `durationS`, instead of running a command. */
  watch: boolean;
  durationS?: number;
  /** --timeout: each run's limit; without it the normal run's default, then 3 times what it took. */
  timeoutS?: number;
  /** The whole judgment's bound (--max-duration). */
  maxDurationS: number;
  scenario: Scenario | null;
  plan: ReasonPlan;
  db: StartOptions['db'];
  /** How soon the sandbox's audio URLs expire, in seconds. */
  audioTtlS: number;
  /** The report folder, prepared by the caller. */
  outDir: string;
  strict: boolean;
  /** Progress for the terminal (stderr), whole lines. */
  say: (text: string) => void;
  /** A path as the terminal shows it. */
  shown: (file: string) => string;
}

export interface ClientRunResult {
  report: ConformanceReport;
  /** check id → what would let it judge. */
  unlock: Record<string, string>;
  /** API requests and other requests recorded. */
  requests: number;
  others: number;
  runs: number;
  kinds: { nonStop: number; stop: number };
  elapsedS: number;
  /** How the command's normal run ended (none with `watch`). */
  finished?: Finished;
  logFile: string;
}

/** The whole judgment: the sandbox, the runs (or the recording), the verdicts, the reports written. A command that cannot be judged is a SetupError. */
export async function runClientJudgment(o: ClientRunOptions): Promise<ClientRunResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-'));
  const placeholder = new URL('http://127.0.0.1:9');
  let proxy: RecordingProxy | undefined;
  let ref: ReferenceHandle | undefined;
  let log: fs.WriteStream | undefined;
  try {
    let upstream = placeholder;
    // The proxy learns its keys and upstream once the sandbox is up; it listens first so its URL is known.
    const keys = new Map<string, string>();
    proxy = new RecordingProxy({ get upstream() { return upstream; }, keys });
    const baseUrl = await proxy.listen();
    o.say(`conformance: starting the sandbox (--db ${o.db}, client mode)\n`);
    try {
      ref = await startReference({ db: o.db, profilePath: path.join(dir, 'sandbox.profile.json'), args: ['--opaque-ids', '--audio-ttl-seconds', String(o.audioTtlS)], timeoutMs: 180_000 });
    } catch (e) {
      throw new SetupError(`the sandbox did not start: ${(e as Error).message}`);
    }
    upstream = new URL(ref.baseUrl);
    const profile = clientProfile(ref.profilePath, baseUrl, dir);
    for (const [k, role] of profile.keys) {
      keys.set(k, role);
      registerSecret(k);
    }
    const fullKey = [...profile.keys].find(([, role]) => role === 'full')?.[0];
    const out = { stdout: '', stderr: '' };
    // The client's own output, redacted, in a file beside the reports; the runs that were cut, and why.
    const logFile = path.join(o.outDir, CLIENT_LOG);
    log = fs.createWriteStream(logFile);
    const logLine = (text: string) => void log!.write(text);
    const cut: string[] = [];
    const startedAt = new Date().toISOString();
    const actions = o.scenario?.reasons ?? {};
    /** Declared reasons no run injected, with why. */
    const missed: Record<string, string> = {};
    let finished: Finished | undefined;
    let runs = 0;
    const kinds = { nonStop: 0, stop: 0 };
    const began = Date.now();
    if (o.watch) {
      // One recording: every non-stop reason, then one stop (it ends the client's work).
      const reasons = [...o.plan.nonStop, ...o.plan.stops.slice(0, 1)];
      for (const r of o.plan.stops.slice(1)) missed[r] = `one stop reason per --watch recording (${o.plan.stops[0]} was injected; \`conformance client -- <command>\` runs one per stop)`;
      proxy.beginRun(1, reasons, actions);
      runs = 1;
      o.say(`conformance: sandbox for your client at ${baseUrl}\nconformance: profile (keys by role, resource ids) in ${profile.file}\nconformance: recording until ${o.durationS ? `${o.durationS} s have passed or ` : ''}Ctrl-C\n`);
      await waitForStop(o.durationS ? o.durationS * 1000 : undefined);
      for (const r of proxy.endRun().pending) missed[r] = `the client made no eligible request for it (${routesText(r)}, after a normal answer there)`;
    } else {
      const env = { ...process.env, [settingName('baseUrl')]: baseUrl, [settingName('profile')]: profile.file, ...(fullKey ? { [settingName('apiKey')]: fullKey } : {}) };
      const deadline = began + o.maxDurationS * 1000;
      let budgetS = o.timeoutS ?? NORMAL_RUN_TIMEOUT_S;
      /** Why no further run is made, once the whole judgment's bound leaves no room for one. */
      const beyondBound = (): string | undefined => (Date.now() + 5_000 >= deadline ? `not made: the judgment's bound of ${o.maxDurationS} s (--max-duration) was reached` : undefined);
      /** One run of the command with these reasons injected (on `routes` only, when given); what it injected and what is still waiting. */
      const run = async (reasons: string[], why: string, routes?: readonly Route[]): Promise<{ injected: string[]; pending: string[] }> => {
        runs++;
        proxy!.beginRun(runs, reasons, actions, routes);
        const before = proxy!.exchanges.length;
        const t0 = Date.now();
        // Each run within its budget and within what is left of the judgment's bound.
        const allowedS = Math.max(1, Math.min(budgetS, Math.floor((deadline - t0) / 1000)));
        o.say(redact(`conformance: run ${runs}: ${o.command.join(' ')} against ${baseUrl} (${why})\n`));
        logLine(`--- run ${runs} (${why}), at most ${allowedS} s ---\n`);
        const f = await runCommand(o.command, env, allowedS * 1000, out, logLine);
        finished ??= f;
        const r = proxy!.endRun();
        const requests = proxy!.exchanges.slice(before).filter((e) => e.kind === 'api').length;
        if (f.timedOut) cut.push(`run ${runs} (${why}) was stopped after ${allowedS} s, ${allowedS < budgetS ? `what was left of the judgment's bound (--max-duration ${o.maxDurationS})` : o.timeoutS !== undefined ? 'its --timeout' : runs === 1 ? `the normal run's default budget (--timeout sets it)` : `its budget: 3 times what the normal run took (--timeout sets it)`}; it is judged as it stands`);
        o.say(`conformance: run ${runs} ${f.timedOut ? `stopped after ${allowedS} s` : f.signal ? `ended on ${f.signal}` : `exited with code ${f.code}`} after ${plural(requests, 'API request')} in ${((Date.now() - t0) / 1000).toFixed(1)} s${reasons.length ? `; injected ${r.injected.length ? r.injected.join(', ') : 'nothing'}` : ''}\n`);
        return r;
      };
      const first = Date.now();
      await run([], 'normal answers only');
      // A command that ended without reaching the API in its normal run cannot be judged: a setup error naming why.
      const firstRequests = proxy.exchanges.filter((e) => e.kind === 'api').length;
      if (firstRequests === 0 && finished && (finished.code !== 0 || finished.signal)) {
        const said = redact(out.stderr.trim().split('\n').slice(-3).join(' | ')).slice(0, 500);
        throw new SetupError(`the client command ${finished.signal ? `ended on ${finished.signal}` : `exited with code ${finished.code}`} without a request to the API in its normal run${said ? `; its last lines: ${said}` : ''} (its output: ${o.shown(logFile)})`);
      }
      if (o.timeoutS === undefined) budgetS = Math.max(MIN_RUN_BUDGET_S, Math.ceil((3 * (Date.now() - first)) / 1000));
      let pending = o.plan.nonStop;
      while (pending.length) {
        if (runs >= MAX_RUNS || beyondBound()) {
          for (const r of pending) missed[r] = beyondBound() ?? `the limit of ${MAX_RUNS} runs was reached (--reasons narrows the run)`;
          break;
        }
        kinds.nonStop++;
        const r = await run(pending, `injects ${pending.join(', ')}: each once, on a request of its route after a normal answer there`);
        if (r.pending.length === pending.length) {
          for (const x of r.pending) missed[x] = `the client made no eligible request for it in run ${runs} (${routesText(x)}, after a normal answer there)`;
          break;
        }
        pending = r.pending;
      }
      // Each stop reason on each route group the normal run used: a stop inside the per-encounter loop is seen too.
      const used = new Set(proxy.exchanges.filter((e) => e.phase === 1 && e.kind === 'api').map((e) => parseTarget(e.target).route?.name).filter((r): r is Route => r !== undefined));
      for (const stop of o.plan.stops) {
        for (const target of stopTargets(used).filter((s) => s.routes.some((x) => INJECTABLE_REASONS[stop]?.includes(x)))) {
          if (runs >= MAX_RUNS || beyondBound()) {
            missed[stop] = beyondBound() ?? `the limit of ${MAX_RUNS} runs was reached (--reasons narrows the run)`;
            break;
          }
          kinds.stop++;
          const r = await run([stop], `injects ${stop}, declared stop, on the ${target.name}`, target.routes);
          if (r.pending.length) missed[stop] = `the client made no eligible request for it in run ${runs} (on the ${target.name}, after a normal answer there)`;
        }
      }
    }
    const elapsedS = (Date.now() - began) / 1000;
    const scope = scopeOf(o.scenario, proxy.exchanges);
    const traffic: ClientTraffic = {
      exchanges: proxy.exchanges, stdout: out.stdout, stderr: out.stderr, keys, profileIds: profile.ids, scenario: o.scenario,
      notInjected: reasonNotes(o.plan, missed, scope),
    };
    const judged = judgeClient(traffic, o.watch ? 'watched by hand' : o.command.join(' '), baseUrl, startedAt);
    const ctx = subjectRunContext('client', judged.outcomes.target ?? null, { outDir: o.outDir, strict: o.strict });
    ctx.outOfScope = judged.outOfScope;
    ctx.scopeNote = judged.scopeNote;
    ctx.unlock = judged.unlock;
    for (const c of cut) (ctx.warnings ??= []).push(c);
    if (scope.undeclaredUsed.length) (ctx.warnings ??= []).push(`the client used ${scope.undeclaredUsed.map((p) => PART_LABEL[p]).join(', ')}, which the scenario's \`uses\` leaves out: judged anyway`);
    writeOutcomes(o.outDir, judged.outcomes);
    const report = writeReports(o.outDir, judged.outcomes, ctx);
    const requests = proxy.exchanges.filter((e) => e.kind === 'api').length;
    return { report, unlock: judged.unlock, requests, others: proxy.exchanges.length - requests, runs, kinds, elapsedS, finished, logFile };
  } finally {
    // Streamed, not written a chunk at a time: the proxy shares this process's event loop with the client's output.
    if (log) await new Promise((r) => log!.end(r));
    await ref?.stop().catch(() => undefined);
    await proxy?.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
