// `conformance client -- <command> [args…]`: a partner's API client judged from its own traffic. Starts the
// sandbox (the reference on embedded PostgreSQL, in its client mode: opaque ids a client must percent-encode,
// audio URLs that expire within seconds) behind a recording proxy (observe/client-proxy.ts), runs the
// partner's command with CONFORMANCE_BASE_URL, CONFORMANCE_API_KEY (the full key) and CONFORMANCE_PROFILE
// (every role's key, resource ids) in its environment: once with normal answers only, then once more per
// group of the scenario's injected reasons and once per declared `stop` reason (engine/client-runs.ts).
// It records every request and the command's output, judges the record (checks/client/checks.ts) within
// the client's scope (checks/client/scenario.ts) and writes the reports of `run` with the subject `client`.
// `--watch` records a client the partner drives by hand instead, until Ctrl-C or --duration. The command's
// own exit status (of its normal run) is reported beside the verdict.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProfile } from '../profile/profile.ts';
import { redact, registerSecret, setEvidenceMode } from '../record/redact.ts';
import { settingName } from '../engine/config.ts';
import { judgeClientTraffic, type ClientVerdicts } from '../engine/client-judge.ts';
import { RecordingProxy } from '../observe/client-proxy.ts';
import { MAX_RUNS, parseReasonsOption, planReasons, reasonNotes, routesText, stopTargets, type ReasonPlan } from '../engine/client-runs.ts';
import { INJECTABLE_REASONS } from '../observe/client-traffic.ts';
import { parseTarget, type Route } from '../observe/client-traffic.ts';
import { loadScenario as readScenario, PART_LABEL, scopeOf, ScenarioError, type Scenario } from '../checks/client/scenario.ts';
import type { ClientTraffic } from '../observe/client-traffic.ts';
import type { Exchange } from '../record/record.ts';
import { subjectRunContext } from '../reports/context.ts';
import { collectedOf, exitCodeFor, summaryLine, verdictLine, type OutcomesFile } from '../reports/model.ts';
import { REPORT_FILES, writeOutcomes, writeReports } from '../reports/write.ts';
import { CLIENT_AUDIO_TTL_SECONDS, dbKind, DEFAULT_OUT, displayPath, evidenceOption, HELP, parse, prepareOutDir, publishToCi, SetupError } from './common.ts';
import { startReference, type ReferenceHandle } from './reference-process.ts';

/** Reads and checks a scenario file (fixtures/client/scenario.schema.json): a bad one is a setup error. */
export function loadScenario(file: string): Scenario {
  try {
    return readScenario(file);
  } catch (e) {
    if (e instanceof ScenarioError) throw new SetupError(e.message);
    throw e;
  }
}

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
  loadProfile(file); // the shape every profile reader expects; registers its keys for redaction
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

interface Finished { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }

/** The normal run's time limit unless --timeout is given; later runs get 3 times what it took, at least MIN_RUN_BUDGET_S. */
const NORMAL_RUN_TIMEOUT_S = 300;
const MIN_RUN_BUDGET_S = 30;
/** The whole judgment's bound unless --max-duration is given. */
const DEFAULT_MAX_DURATION_S = 900;
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

const seconds = (v: string | undefined, name: string, max: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,6}$/.test(v) || Number(v) < 1 || Number(v) > max) throw new SetupError(`--${name} must be 1..${max} seconds (got ${v})`);
  return Number(v);
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export async function client(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values: o } = parse('client', own, {
    scenario: { type: 'string' }, reasons: { type: 'string' }, watch: { type: 'boolean' }, duration: { type: 'string' }, timeout: { type: 'string' }, 'max-duration': { type: 'string' },
    out: { type: 'string' }, db: { type: 'string' }, 'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' }, evidence: { type: 'string' },
  });
  if (o.help) {
    process.stdout.write(`${HELP.client}\n`);
    return 0;
  }
  setEvidenceMode(evidenceOption(o.evidence));
  if (o.watch && command.length) throw new SetupError('use either --watch or -- <command>, not both');
  if (!o.watch && command.length === 0) throw new SetupError('missing the client command: conformance client -- <command> [args…] (or --watch)');
  if (o.duration !== undefined && !o.watch) throw new SetupError('--duration applies to --watch only');
  const durationS = seconds(o.duration, 'duration', 86_400);
  const timeoutGiven = seconds(o.timeout, 'timeout', 86_400);
  const maxDurationS = seconds(o['max-duration'], 'max-duration', 86_400) ?? DEFAULT_MAX_DURATION_S;
  const scenario = o.scenario !== undefined ? loadScenario(path.resolve(o.scenario)) : null;
  if (o.reasons !== undefined && !scenario) throw new SetupError('--reasons narrows the reasons of a scenario: give --scenario FILE');
  let only: string[] | null = null;
  try {
    only = o.reasons !== undefined ? parseReasonsOption(o.reasons, scenario!.reasons) : null;
  } catch (e) {
    throw new SetupError((e as Error).message);
  }
  const plan: ReasonPlan = planReasons(scenario?.reasons ?? {}, only);
  const db = dbKind(o.db);
  const outDir = path.resolve(o.out ?? DEFAULT_OUT);
  prepareOutDir(outDir);

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
    process.stderr.write(`conformance: starting the sandbox (--db ${db}, client mode)\n`);
    try {
      ref = await startReference({ db, profilePath: path.join(dir, 'sandbox.profile.json'), args: ['--opaque-ids', '--audio-ttl-seconds', String(CLIENT_AUDIO_TTL_SECONDS)], timeoutMs: 180_000 });
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
    const logFile = path.join(outDir, CLIENT_LOG);
    log = fs.createWriteStream(logFile);
    const logLine = (text: string) => void log!.write(text);
    const cut: string[] = [];
    const startedAt = new Date().toISOString();
    const actions = scenario?.reasons ?? {};
    /** Declared reasons no run injected, with why. */
    const missed: Record<string, string> = {};
    let finished: Finished | undefined;
    let runs = 0;
    const kinds = { nonStop: 0, stop: 0 };
    const began = Date.now();
    if (o.watch) {
      // One recording: every non-stop reason, then one stop (it ends the client's work).
      const reasons = [...plan.nonStop, ...plan.stops.slice(0, 1)];
      for (const r of plan.stops.slice(1)) missed[r] = `one stop reason per --watch recording (${plan.stops[0]} was injected; \`conformance client -- <command>\` runs one per stop)`;
      proxy.beginRun(1, reasons, actions);
      runs = 1;
      process.stderr.write(`conformance: sandbox for your client at ${baseUrl}\nconformance: profile (keys by role, resource ids) in ${profile.file}\nconformance: recording until ${durationS ? `${durationS} s have passed or ` : ''}Ctrl-C\n`);
      await waitForStop(durationS ? durationS * 1000 : undefined);
      for (const r of proxy.endRun().pending) missed[r] = `the client made no eligible request for it (${routesText(r)}, after a normal answer there)`;
    } else {
      const env = { ...process.env, [settingName('baseUrl')]: baseUrl, [settingName('profile')]: profile.file, ...(fullKey ? { [settingName('apiKey')]: fullKey } : {}) };
      const deadline = began + maxDurationS * 1000;
      let budgetS = timeoutGiven ?? NORMAL_RUN_TIMEOUT_S;
      /** Why no further run is made, once the whole judgment's bound leaves no room for one. */
      const beyondBound = (): string | undefined => (Date.now() + 5_000 >= deadline ? `not made: the judgment's bound of ${maxDurationS} s (--max-duration) was reached` : undefined);
      /** One run of the command with these reasons injected (on `routes` only, when given); what it injected and what is still waiting. */
      const run = async (reasons: string[], why: string, routes?: readonly Route[]): Promise<{ injected: string[]; pending: string[] }> => {
        runs++;
        proxy!.beginRun(runs, reasons, actions, routes);
        const before = proxy!.exchanges.length;
        const t0 = Date.now();
        // Each run within its budget and within what is left of the judgment's bound.
        const allowedS = Math.max(1, Math.min(budgetS, Math.floor((deadline - t0) / 1000)));
        process.stderr.write(redact(`conformance: run ${runs}: ${command.join(' ')} against ${baseUrl} (${why})\n`));
        logLine(`--- run ${runs} (${why}), at most ${allowedS} s ---\n`);
        const f = await runCommand(command, env, allowedS * 1000, out, logLine);
        finished ??= f;
        const r = proxy!.endRun();
        const requests = proxy!.exchanges.slice(before).filter((e) => e.kind === 'api').length;
        if (f.timedOut) cut.push(`run ${runs} (${why}) was stopped after ${allowedS} s, ${allowedS < budgetS ? `what was left of the judgment's bound (--max-duration ${maxDurationS})` : timeoutGiven !== undefined ? 'its --timeout' : runs === 1 ? `the normal run's default budget (--timeout sets it)` : `its budget: 3 times what the normal run took (--timeout sets it)`}; it is judged as it stands`);
        process.stderr.write(`conformance: run ${runs} ${f.timedOut ? `stopped after ${allowedS} s` : f.signal ? `ended on ${f.signal}` : `exited with code ${f.code}`} after ${plural(requests, 'API request')} in ${((Date.now() - t0) / 1000).toFixed(1)} s${reasons.length ? `; injected ${r.injected.length ? r.injected.join(', ') : 'nothing'}` : ''}\n`);
        return r;
      };
      const first = Date.now();
      await run([], 'normal answers only');
      // A command that ended without reaching the API in its normal run cannot be judged: a setup error naming why.
      const firstRequests = proxy.exchanges.filter((e) => e.kind === 'api').length;
      if (firstRequests === 0 && finished && (finished.code !== 0 || finished.signal)) {
        const said = redact(out.stderr.trim().split('\n').slice(-3).join(' | ')).slice(0, 500);
        throw new SetupError(`the client command ${finished.signal ? `ended on ${finished.signal}` : `exited with code ${finished.code}`} without a request to the API in its normal run${said ? `; its last lines: ${said}` : ''} (its output: ${displayPath(logFile)})`);
      }
      if (timeoutGiven === undefined) budgetS = Math.max(MIN_RUN_BUDGET_S, Math.ceil((3 * (Date.now() - first)) / 1000));
      let pending = plan.nonStop;
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
      for (const stop of plan.stops) {
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
    const elapsed = (Date.now() - began) / 1000;
    const scope = scopeOf(scenario, proxy.exchanges);
    const traffic: ClientTraffic = {
      exchanges: proxy.exchanges, stdout: out.stdout, stderr: out.stderr, keys, profileIds: profile.ids, scenario,
      notInjected: reasonNotes(plan, missed, scope),
    };
    const judged = judgeClient(traffic, o.watch ? 'watched by hand' : command.join(' '), baseUrl, startedAt);
    const ctx = subjectRunContext('client', judged.outcomes.target ?? null, { outDir, strict: o.strict === true });
    ctx.outOfScope = judged.outOfScope;
    ctx.scopeNote = judged.scopeNote;
    ctx.unlock = judged.unlock;
    for (const c of cut) (ctx.warnings ??= []).push(c);
    if (scope.undeclaredUsed.length) (ctx.warnings ??= []).push(`the client used ${scope.undeclaredUsed.map((p) => PART_LABEL[p]).join(', ')}, which the scenario's \`uses\` leaves out: judged anyway`);
    writeOutcomes(outDir, judged.outcomes);
    const report = writeReports(outDir, judged.outcomes, ctx);
    for (const c of report.checks) if (c.outcome === 'fail' || c.outcome === 'warning') process.stdout.write(redact(`${c.outcome.toUpperCase()} ${c.id}: ${c.detail ?? ''}\n`));
    // Every check not verified, with its reason and what would let it judge.
    for (const c of report.checks) {
      if (c.outcome !== 'not_verified') continue;
      process.stdout.write(redact(`NOT VERIFIED ${c.id}: ${c.detail ?? ''}${judged.unlock[c.id] ? ` — would judge with: ${judged.unlock[c.id]}` : ''}\n`));
    }
    for (const w of report.warnings) process.stderr.write(`conformance: warning: ${redact(w)}\n`);
    const requests = proxy.exchanges.filter((e) => e.kind === 'api').length;
    process.stderr.write(`conformance: recorded ${plural(requests, 'API request')} and ${plural(proxy.exchanges.length - requests, 'other')}\n`);
    if (!o.watch) {
      const parts = ['1 with normal answers only', kinds.nonStop ? `${kinds.nonStop} injecting the non-stop reasons` : '', kinds.stop ? `${kinds.stop} with one stop reason each, on each route group used` : ''].filter(Boolean);
      process.stderr.write(`conformance: ${plural(runs, 'run')} of the client command in ${elapsed.toFixed(1)} s (${parts.join(', ')})\n`);
    }
    if (finished) process.stderr.write(`conformance: the client command ${finished.timedOut ? 'was stopped at its time limit' : finished.signal ? `ended on ${finished.signal}` : `exited with code ${finished.code}`} (run 1, normal answers); its output (redacted): ${displayPath(logFile)}\n`);
    process.stderr.write(`${summaryLine(report.summary)}\n`);
    publishToCi(report);
    process.stdout.write(`${redact(verdictLine(report))}; reports in ${displayPath(outDir)}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})\n`);
    return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] === true });
  } finally {
    // Streamed, not written a chunk at a time: the proxy shares this process's event loop with the client's output.
    if (log) await new Promise((r) => log!.end(r));
    await ref?.stop().catch(() => undefined);
    await proxy?.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
