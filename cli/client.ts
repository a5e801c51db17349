// `conformance client -- <command> [args…]`: a partner's API client judged from its own traffic. Starts the
// sandbox (the reference on embedded PostgreSQL, in its client mode: opaque ids a client must percent-encode,
// audio URLs that expire within seconds) behind a recording proxy (harness/client/proxy.ts), runs the
// partner's command with CONFORMANCE_BASE_URL and CONFORMANCE_PROFILE in its environment, records every
// request and the command's output, then judges the record (harness/client/checks.ts) and writes the
// reports of `run` with the subject `client`. `--watch` records a client the partner drives by hand instead,
// until Ctrl-C or --duration. The command's own exit status is reported beside the verdict.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProfile } from '../harness/profile.ts';
import { redact, registerSecret, setEvidenceMode } from '../harness/redact.ts';
import { settingName } from '../harness/config.ts';
import { CLIENT_CHECKS } from '../harness/client/checks.ts';
import { RecordingProxy } from '../harness/client/proxy.ts';
import { REASON_ACTIONS, type ClientExchange, type ClientTraffic, type ReasonAction } from '../harness/client/traffic.ts';
import type { Exchange } from '../harness/record.ts';
import { loadRunContext } from '../reports/context.ts';
import { exitCodeFor, summaryLine, verdictLine, type CollectedCheck, type OutcomesFile } from '../reports/model.ts';
import { REPORT_FILES, writeOutcomes, writeReports } from '../reports/write.ts';
import { CLIENT_AUDIO_TTL_SECONDS, dbKind, DEFAULT_OUT, evidenceOption, HELP, parse, prepareOutDir, publishToCi, SetupError } from './common.ts';
import { startReference, type ReferenceHandle } from './reference-process.ts';



/** Reads and checks a scenario file: reason code → declared action. */
export function loadScenario(file: string): Record<string, ReasonAction> {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new SetupError(`scenario ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not JSON (${(e as Error).message})`}`);
  }
  const reasons = (data as { reasons?: unknown } | null)?.reasons;
  if (!reasons || typeof reasons !== 'object' || Array.isArray(reasons)) throw new SetupError(`scenario ${file}: expected {"reasons": {"<reason_code>": "<action>"}}`);
  const out: Record<string, ReasonAction> = {};
  for (const [reason, action] of Object.entries(reasons)) {
    if (!(REASON_ACTIONS as readonly unknown[]).includes(action)) throw new SetupError(`scenario ${file}: ${reason}: action must be one of ${REASON_ACTIONS.join(', ')} (got ${JSON.stringify(action)})`);
    out[reason] = action as ReasonAction;
  }
  return out;
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

/** An exchange of the record as report evidence (headers and bodies are redacted by the writers). */
function evidenceOf(e: ClientExchange): Exchange {
  return {
    request: { method: e.method, target: e.target, headers: e.headers, ...(e.role ? { credentialRole: e.role } : {}) },
    response: { status: e.status, headers: e.injected ? { 'x-conformance-injected': e.injected } : {}, body: e.kind === 'api' ? e.body.slice(0, 4000) : '', bodyBytes: Buffer.byteLength(e.body), durationMs: e.durationMs },
  };
}

export function judgeClient(traffic: ClientTraffic, command: string, baseUrl: string, startedAt: string): OutcomesFile {
  const checks: CollectedCheck[] = CLIENT_CHECKS.map((c) => {
    const j = c.judge(traffic);
    return {
      id: c.id, title: c.title, requirements: [...c.requirements], outcome: j.outcome, detail: j.detail,
      project: 'client', file: 'harness/client/checks.ts', test: c.id, evidence: j.evidence.map(evidenceOf),
    };
  });
  return { startedAt, finishedAt: new Date().toISOString(), runStatus: 'passed', seed: null, target: { name: `client: ${command}`, baseUrl }, checks };
}

interface Finished { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }

function runCommand(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number, out: { stdout: string; stderr: string }): Promise<Finished> {
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
    const echo = (stream: NodeJS.WriteStream, which: 'stdout' | 'stderr') => {
      let pending = '';
      return {
        data: (d: Buffer) => {
          const text = d.toString('utf8');
          out[which] += text;
          pending += text;
          const cut = pending.lastIndexOf('\n') + 1;
          if (cut > 0) {
            stream.write(redact(pending.slice(0, cut)));
            pending = pending.slice(cut);
          }
        },
        flush: () => {
          if (pending) stream.write(redact(pending));
          pending = '';
        },
      };
    };
    const echoOut = echo(process.stdout, 'stdout');
    const echoErr = echo(process.stderr, 'stderr');
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

export async function client(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values: o } = parse('client', own, {
    scenario: { type: 'string' }, watch: { type: 'boolean' }, duration: { type: 'string' }, timeout: { type: 'string' },
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
  const timeoutS = seconds(o.timeout, 'timeout', 86_400) ?? 600;
  const scenario = o.scenario !== undefined ? loadScenario(path.resolve(o.scenario)) : null;
  const db = dbKind(o.db);
  const outDir = path.resolve(o.out ?? DEFAULT_OUT);
  prepareOutDir(outDir);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-'));
  const placeholder = new URL('http://127.0.0.1:9');
  let proxy: RecordingProxy | undefined;
  let ref: ReferenceHandle | undefined;
  try {
    let upstream = placeholder;
    // The proxy learns its keys and upstream once the sandbox is up; it listens first so its URL is known.
    const keys = new Map<string, string>();
    proxy = new RecordingProxy({ get upstream() { return upstream; }, keys, scenario });
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
    const out = { stdout: '', stderr: '' };
    const startedAt = new Date().toISOString();
    let finished: Finished | undefined;
    if (o.watch) {
      process.stderr.write(`conformance: sandbox for your client at ${baseUrl}\nconformance: profile (keys by role, resource ids) in ${profile.file}\nconformance: recording until ${durationS ? `${durationS} s have passed or ` : ''}Ctrl-C\n`);
      await waitForStop(durationS ? durationS * 1000 : undefined);
    } else {
      // A declared stop ends the client's work: it is injected in a second run of the command, so the first
      // run shows everything else the client does.
      const runs = Math.max(1, proxy.phases.length);
      for (let n = 1; n <= runs; n++) {
        proxy.beginPhase(n);
        const why = n === 1 ? '' : ` (run ${n} of ${runs}: the sandbox answers with ${proxy.phases[n - 1].join(', ')}, declared stop)`;
        process.stderr.write(redact(`conformance: running ${command.join(' ')} against ${baseUrl}${why}\n`));
        const f = await runCommand(command, { ...process.env, [settingName('baseUrl')]: baseUrl, [settingName('profile')]: profile.file }, timeoutS * 1000, out);
        finished ??= f;
        if (n > 1 && (f.code !== finished.code || f.signal !== finished.signal)) process.stderr.write(`conformance: run ${n} of the client command exited with code ${f.code}\n`);
      }
    }
    const notInjected = proxy.finish();
    const traffic: ClientTraffic = { exchanges: proxy.exchanges, stdout: out.stdout, stderr: out.stderr, keys, profileIds: profile.ids, scenario, notInjected };
    const outcomes = judgeClient(traffic, o.watch ? 'watched by hand' : command.join(' '), baseUrl, startedAt);
    const ctx = loadRunContext({ outDir, strict: o.strict === true });
    ctx.subject = 'client';
    ctx.mutation = null;
    ctx.variants = null;
    ctx.target = outcomes.target ?? null;
    writeOutcomes(outDir, outcomes);
    const report = writeReports(outDir, outcomes, ctx);
    for (const c of report.checks) if (c.outcome === 'fail' || c.outcome === 'warning') process.stdout.write(redact(`${c.outcome.toUpperCase()} ${c.id}: ${c.detail ?? ''}\n`));
    const requests = proxy.exchanges.filter((e) => e.kind === 'api').length;
    process.stderr.write(`conformance: recorded ${requests} API request${requests === 1 ? '' : 's'} and ${proxy.exchanges.length - requests} other${proxy.exchanges.length - requests === 1 ? '' : 's'}\n`);
    if (finished) process.stderr.write(`conformance: the client command ${finished.timedOut ? `was stopped after ${timeoutS} s` : finished.signal ? `ended on ${finished.signal}` : `exited with code ${finished.code}`}\n`);
    process.stderr.write(`${summaryLine(report.summary)}\n`);
    publishToCi(report);
    process.stdout.write(`${redact(verdictLine(report))}; reports in ${path.relative(process.cwd(), outDir) || '.'}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})\n`);
    return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] === true });
  } finally {
    await ref?.stop().catch(() => undefined);
    await proxy?.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
