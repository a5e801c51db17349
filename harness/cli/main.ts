// The `conformance` command: `run` (the main job: start the reference or reach a target, run the
// conformance project (suites and properties) through Playwright, decide the exit code from conformance.json),
// `serve` (the reference as a partner sandbox) and `merge` (one report from shard outputs).
// Exit codes: 0 conformant, 1 non-conformant (an un-waived failing check, an expired waiver, a test
// failing outside any check), 2 usage or setup error — always ONE line `conformance: <reason>` on
// stderr, never a stack trace. The implementation is reached only as a child process.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadProfile, validateProfile, unresolvedVariables, ProfileError, type Profile } from '../profile.ts';
import { COVERAGE_PATH } from '../../fixtures/paths.ts';
import { sendRaw, parseBaseUrl, TransportError, type RawResponse } from '../http.ts';
import { webhookCommand } from './webhook.ts';
import { profileCommand } from './profile.ts';
import { startReference, type ReferenceHandle } from '../reference-process.ts';
import { redact } from '../redact.ts';
import { loadWaivers, loadRunContext, loadCatalog, WaiverError } from '../../reports/context.ts';
import { exitCodeFor, mergeOutcomes, summaryLine, verdictLine, type ConformanceReport } from '../../reports/model.ts';
import { makeDir, readOutcomes, writeOutcomes, writeReports, REPORT_FILES } from '../../reports/write.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PLAYWRIGHT_CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

const DB_KINDS = ['embedded', 'container', 'url'] as const;
type DbKind = (typeof DB_KINDS)[number];

/** A usage or setup error: exit 2 with one line. */
class SetupError extends Error {}

const HELP: Record<string, string> = {
  main: `Usage: conformance <command> [options]

Commands:
  run     run the conformance suites (default target: the reference implementation on embedded PostgreSQL)
  serve   start the reference implementation as a sandbox for partner clients
  webhook conformance of a webhook receiver (receiver --url URL) or sender (sender --port N)
  merge   merge shard outputs into one report
  profile write a profile template (init) or try every role of a profile against its target (check)

Run \`conformance <command> --help\` for the options of a command.
Exit codes: 0 conformant, 1 not conformant, 2 usage or setup error.`,
  run: `Usage: conformance run [options]

Without --profile, starts the reference implementation and runs every suite against it.

Options:
  --target URL        base URL of the target (overrides the profile's baseUrl; needs --profile)
  --profile FILE      target profile (fixtures/profiles/profile.schema.json); runs against its baseUrl
  --out DIR           report folder (default reports/out)
  --seed N            seed for property-based runs (replays a recorded run)
  --grep PATTERN      run only checks whose id (= test title) matches PATTERN
  --requirement ID    run only the checks that verify requirement ID (from fixtures/requirements/coverage.json)
  --waivers FILE      reviewed waiver file (fixtures/report/waivers.schema.json)
  --db KIND           database of the reference: embedded (default), container, url (DATABASE_URL)
  --shard I/N         run shard I of N; reports go to <out>/shard-I-of-N/ (join them with \`conformance merge\`)
  --workers N         parallel Playwright workers
  --mutants           also measure the mutation score (every check against every mutant of the reference;
                      sandbox runs only, adds about a minute); reported in conformance.json and the HTML
  --allow-incomplete  exit 0 on INCOMPLETE (nothing failed, but some must requirement in scope was not
                      verified); the reports still say INCOMPLETE
  --strict            a warning (a "should" of the spec not met) fails the run
  --verbose           print every property seed as it is drawn (by default a seed is printed, with its
                      replay command, only when its property failed)
  -h, --help          this help

Verdicts: CONFORMANT (every must requirement in scope verified and passed), NOT CONFORMANT (an un-waived
failing check), INCOMPLETE (nothing failed, something in scope not verified: name the roles to provide),
PARTIAL (a run narrowed by --grep, --requirement or one --shard: no conformance claim; merge all shards).
Writes <out>/conformance.json, junit.xml, conformance.html and outcomes.json.
Exit codes: 0 conformant (or partial with nothing failed, or incomplete with --allow-incomplete),
1 not conformant or incomplete, 2 usage or setup error (bad option, bad profile, a variable the profile names
that is unset, unreachable target, a target that is not this API, reference did not start).`,
  serve: `Usage: conformance serve [options]

Starts the reference implementation with deterministic seeded data and prints its guide. Ctrl-C stops it.

Options:
  --db KIND           embedded (default), container, url (DATABASE_URL)
  --port N            port to listen on (default: any free port)
  --profile-out FILE  where to write the sandbox's target profile (default: a temporary file, printed)
  -h, --help          this help`,
  merge: `Usage: conformance merge --out DIR [options] SHARD_DIR...

Merges the outcomes.json of each shard folder into one conformance.json, junit.xml and conformance.html.

Options:
  --out DIR           folder for the merged reports (required)
  --waivers FILE      reviewed waiver file, as for \`run\`
  --profile FILE      target profile (to name the target, its out-of-scope parts, and register its secrets)
  --allow-incomplete  exit 0 on INCOMPLETE, as for \`run\`
  --strict            warnings fail the run, as for \`run\`
  -h, --help          this help

Exit codes as for \`run\`.`,
};

function parse<T extends NonNullable<ParseArgsConfig['options']>>(command: string, argv: string[], options: T, positionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals });
  } catch (e) {
    const err = e as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(err.message);
    if (unknown) throw new SetupError(`unknown option ${unknown[1]} (see conformance ${command} --help)`);
    const positional = /Unexpected argument '([^']+)'/.exec(err.message);
    if (positional) throw new SetupError(`unexpected argument ${positional[1]} (see conformance ${command} --help)`);
    throw new SetupError(`${err.message.split('. ')[0].replace(/\.$/, '')} (see conformance ${command} --help)`);
  }
}

function oneLine(text: string): string {
  return redact(text).replace(/\s+/g, ' ').trim().slice(0, 600);
}

function dbKind(value: string | undefined): DbKind {
  const v = value ?? process.env.CONFORMANCE_DB ?? 'embedded';
  if (!(DB_KINDS as readonly string[]).includes(v)) throw new SetupError(`--db must be one of ${DB_KINDS.join(', ')} (got ${v})`);
  return v as DbKind;
}

function readReport(outDir: string): ConformanceReport | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, REPORT_FILES.json), 'utf8')) as ConformanceReport;
  } catch {
    return undefined;
  }
}

function displayPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

function tellProblems(report: ConformanceReport, outDir: string, opts: { allowIncomplete?: boolean } = {}): void {
  for (const p of report.problems) process.stderr.write(`conformance: problem: ${oneLine(p)}\n`);
  for (const w of report.warnings) process.stderr.write(`conformance: warning: ${oneLine(w)}\n`);
  if (report.verdict === 'incomplete' || (report.missingRoles ?? []).length > 0) tellMissingRoles(report, opts);
  process.stderr.write(`${verdictLine(report)}; reports in ${displayPath(outDir)}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})\n`);
}

/** What the profile would need to verify the rest: one row per missing role, most checks first. */
function tellMissingRoles(report: ConformanceReport, opts: { allowIncomplete?: boolean }): void {
  const roles = report.missingRoles ?? [];
  if (roles.length > 0) {
    process.stderr.write(`conformance: not verified for want of these profile roles (checks / requirements each would unlock):\n`);
    for (const r of roles.slice(0, 25)) process.stderr.write(`conformance:   ${r.kind.padEnd(10)} ${r.role.padEnd(40)} ${String(r.checks).padStart(4)} checks ${String(r.requirements).padStart(4)} requirements\n`);
    if (roles.length > 25) process.stderr.write(`conformance:   … and ${roles.length - 25} more (see ${REPORT_FILES.json} missingRoles)\n`);
  }
  if (report.verdict === 'incomplete') {
    const what = roles.length ? `provide ${roles.slice(0, 5).map((r) => r.role).join(', ')}${roles.length > 5 ? ', …' : ''}` : 'see the not-verified checks in the report';
    const out = report.coverage.mustNotVerified.length;
    process.stderr.write(`conformance: ${out} must requirement${out === 1 ? '' : 's'} in scope not verified: ${what}, or declare parts out of scope in the profile${opts.allowIncomplete ? '' : ' (--allow-incomplete exits 0 on INCOMPLETE)'}\n`);
  }
}

/** The unauthenticated list request of the identity probe; every route of the API answers JSON (spec §4). */
const PROBE_TARGET = '/external/v1/encounters';
const PROBE_TIMEOUT_MS = 5_000;

/** Opens (and closes) one TCP connection: the reachability half of the probe. */
function connectProbe(baseUrl: string): Promise<void> {
  const { host, port } = parseBaseUrl(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(PROBE_TIMEOUT_MS, () => {
      socket.destroy();
      reject(new SetupError(`target ${baseUrl} is unreachable: timeout (no TCP connection within ${PROBE_TIMEOUT_MS} ms)`));
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const kind = e.code === 'ECONNREFUSED' ? 'connection_refused' : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' ? 'dns' : (e.code ?? 'other');
      reject(new SetupError(`target ${baseUrl} is unreachable: ${kind}`));
    });
  });
}

/** Whether a body is a JSON object (what every answer of the API is, §4), whatever its label says. */
function isJsonObject(body: Buffer): boolean {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Probes the target once before any check runs, with its own short deadline (PROBE_TIMEOUT_MS, however
 * long the profile's requestMs): one GET /external/v1/encounters without a key.
 * - No TCP connection, or no complete answer within the deadline (a target that accepts and never
 *   answers, or drips bytes): a setup error, exit 2. Nothing could be judged in a useful time.
 * - "Not this API": a complete answer that is not JSON at all, neither labelled JSON nor a body that
 *   parses as a JSON object (an HTML page, a login or http→https redirect, a plain-text 404, an empty
 *   answer): the base URL points at something else, exit 2.
 * - Anything else is the API, however broken, and the checks judge it (exit 1 with evidence): a JSON
 *   body labelled text/plain (the content-type checks fail), a body labelled JSON that does not parse,
 *   a reset or an oversized answer after the connection was accepted.
 */
async function probe(baseUrl: string, headers: Record<string, string> | undefined): Promise<void> {
  await connectProbe(baseUrl);
  const sent = Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => k.toLowerCase() !== 'authorization'));
  let res: RawResponse;
  try {
    res = await sendRaw({ baseUrl, timeoutMs: PROBE_TIMEOUT_MS, maxBodyBytes: 64 * 1024 }, { target: PROBE_TARGET, headers: sent });
  } catch (e) {
    if (e instanceof TransportError && e.kind === 'timeout') {
      const how = e.partial && e.partial.length > 0 ? `completely (${e.partial.length} bytes arrived)` : 'at all';
      throw new SetupError(`target ${baseUrl} did not answer GET ${PROBE_TARGET} ${how} within ${PROBE_TIMEOUT_MS} ms`);
    }
    if (e instanceof TransportError && e.kind !== 'connection_refused' && e.kind !== 'dns' && e.kind !== 'other') return; // answered badly: the checks judge it
    const kind = e instanceof TransportError ? e.kind : oneLine((e as Error).message);
    throw new SetupError(`target ${baseUrl} is unreachable: ${kind}`);
  }
  const type = res.headers['content-type'];
  if (type !== undefined && /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type)) return;
  if (isJsonObject(res.body)) return;
  const said = type ? type.split(';')[0].trim() : res.body.length > 0 ? 'without a content type' : 'with an empty body and no content type';
  const where = res.status >= 300 && res.status < 400 && res.headers.location ? `, redirecting to ${res.headers.location}` : '';
  throw new SetupError(`target ${baseUrl} does not look like the Clinical Encounter Public API (GET ${PROBE_TARGET} without a key answered ${res.status} ${said}${where})`);
}

/** A variable the profile names but the environment does not set is a setup error naming it. */
function requireResolved(profile: Profile, file: string): void {
  const missing = unresolvedVariables(profile);
  if (missing.length === 0) return;
  const list = missing.map((m) => `${m.variable} (${m.where})`).join(', ');
  throw new SetupError(`profile ${displayPath(file)} names environment variable${missing.length === 1 ? '' : 's'} that ${missing.length === 1 ? 'is' : 'are'} unset or empty: ${list}`);
}

function requirementGrep(id: string): string {
  const catalog = loadCatalog();
  if (catalog && !catalog.requirements.some((r) => r.id === id)) throw new SetupError(`--requirement ${id} is not in the requirement catalog`);
  let coverage: { requirements?: Record<string, string[]> } = {};
  try {
    coverage = JSON.parse(fs.readFileSync(COVERAGE_PATH, 'utf8'));
  } catch {
    throw new SetupError(`--requirement needs ${path.relative(ROOT, COVERAGE_PATH)} (npm run coverage:update writes it)`);
  }
  const checks = coverage.requirements?.[id] ?? [];
  if (checks.length === 0) throw new SetupError(`no check is known to verify ${id} (${path.relative(ROOT, COVERAGE_PATH)})`);
  const escaped = checks.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Playwright matches --grep against the whole title path ("<file> <describe> <title>"); check ids are the titles.
  return `(?:^|\\s)(?:${escaped.join('|')})$`;
}

/** Creates the report folder and removes the previous run's reports; a folder that cannot be written is a SetupError. */
function prepareOutDir(outDir: string): void {
  try {
    makeDir(outDir);
    clearReports(outDir);
    const probeFile = path.join(outDir, `.write-probe-${process.pid}`);
    fs.writeFileSync(probeFile, '');
    fs.rmSync(probeFile);
  } catch (e) {
    throw new SetupError(`cannot write reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function clearReports(outDir: string): void {
  for (const f of Object.values(REPORT_FILES)) fs.rmSync(path.join(outDir, f), { force: true });
}

async function run(argv: string[]): Promise<number> {
  const { values: o } = parse('run', argv, {
    target: { type: 'string' }, profile: { type: 'string' }, out: { type: 'string' }, seed: { type: 'string' },
    grep: { type: 'string' }, requirement: { type: 'string' }, waivers: { type: 'string' }, db: { type: 'string' },
    shard: { type: 'string' }, workers: { type: 'string' }, mutants: { type: 'boolean' },
    'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' }, verbose: { type: 'boolean' },
  });
  if (o.help) {
    process.stdout.write(`${HELP.run}\n`);
    return 0;
  }
  if (o.seed !== undefined && !/^-?[0-9]{1,10}$/.test(o.seed)) throw new SetupError(`--seed must be an integer (got ${o.seed})`);
  if (o.workers !== undefined && !/^[1-9][0-9]{0,2}$/.test(o.workers)) throw new SetupError(`--workers must be a positive integer (got ${o.workers})`);
  let shard: { i: number; n: number } | undefined;
  if (o.shard !== undefined) {
    const m = /^([0-9]+)\/([0-9]+)$/.exec(o.shard);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new SetupError(`--shard must be I/N with 1 <= I <= N (got ${o.shard})`);
    shard = { i: Number(m[1]), n: Number(m[2]) };
  }
  if (o.grep !== undefined && o.requirement !== undefined) throw new SetupError('use either --grep or --requirement, not both');
  if (o.grep !== undefined) {
    try {
      new RegExp(o.grep);
    } catch {
      throw new SetupError(`--grep is not a valid regular expression: ${o.grep}`);
    }
  }
  const grep = o.requirement !== undefined ? requirementGrep(o.requirement) : o.grep;
  if (o.target !== undefined && o.profile === undefined) throw new SetupError('--target needs --profile FILE (the profile names the credentials and resources to use)');
  if (o.mutants && (o.target !== undefined || o.profile !== undefined)) throw new SetupError('--mutants needs the reference sandbox (run without --target and --profile)');
  if (o.profile !== undefined && o.db !== undefined) throw new SetupError('--db applies only when the reference is started (without --profile)');
  const db = o.profile === undefined ? dbKind(o.db) : undefined;
  const waiversPath = o.waivers !== undefined ? path.resolve(o.waivers) : process.env.CONFORMANCE_WAIVERS ? path.resolve(process.env.CONFORMANCE_WAIVERS) : undefined;
  if (waiversPath) {
    try {
      loadWaivers(waiversPath);
    } catch (e) {
      throw new SetupError((e as WaiverError).message);
    }
  }
  const outRoot = path.resolve(o.out ?? path.join(ROOT, 'reports/out'));
  const outDir = shard ? path.join(outRoot, `shard-${shard.i}-of-${shard.n}`) : outRoot;

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    let profilePath: string;
    let switchboardToken: string | undefined;
    let referenceReady: Promise<void> = Promise.resolve();
    let readyFile: string | undefined;
    if (o.profile !== undefined) {
      const file = path.resolve(o.profile);
      let profile = loadProfile(file);
      profilePath = file;
      requireResolved(profile, file);
      if (o.target !== undefined) {
        // The override lives in a private temporary copy: a profile may hold keys inline, so it never goes near the report folder.
        const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
        profile = validateProfile({ ...raw, baseUrl: o.target.replace(/\/+$/, '') }, `--target ${o.target}`);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-profile-'));
        profilePath = path.join(dir, 'target.profile.json');
        fs.writeFileSync(profilePath, JSON.stringify({ ...raw, baseUrl: profile.baseUrl }), { mode: 0o600 });
        cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      }
      try {
        parseBaseUrl(profile.baseUrl);
      } catch (e) {
        throw new SetupError((e as Error).message);
      }
      await probe(profile.baseUrl, profile.requestHeaders);
      prepareOutDir(outDir);
    } else {
      // A report folder that cannot be written is a setup error before the reference is started.
      prepareOutDir(outDir);
      process.stderr.write(`conformance: starting the reference implementation (--db ${db})\n`);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-reference-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      profilePath = path.join(dir, 'reference.profile.json');
      switchboardToken = crypto.randomBytes(16).toString('hex');
      const started = startReference({ db, timeoutMs: 180_000, profilePath, switchboardToken }).then((ref) => {
        cleanups.push(() => ref.stop());
        process.stderr.write(`conformance: reference ready at ${ref.baseUrl}\n`);
        return ref;
      });
      referenceReady = started.then(
        () => undefined,
        (e: Error) => {
          throw new SetupError(`reference implementation did not start: ${e.message}`);
        },
      );
      // Playwright loads its configuration and every test file while the reference starts; its global setup
      // waits for this file (harness/global-setup.ts) before any worker runs a check.
      readyFile = path.join(dir, 'ready');
      void referenceReady.then(
        () => fs.writeFileSync(readyFile!, 'ready'),
        (e: Error) => fs.writeFileSync(readyFile!, e.message),
      );
      if (o.mutants) await referenceReady;
    }

    fs.rmSync(path.join(outDir, 'mutation.json'), { force: true }); // a score from another run is never this run's
    if (o.mutants) {
      if (!switchboardToken) throw new SetupError('--mutants needs the reference sandbox (run without --target and --profile)');
      process.stderr.write('conformance: measuring the mutation score (tests/mutants.spec.ts against this sandbox)\n');
      const mutEnv: NodeJS.ProcessEnv = { ...process.env, CONFORMANCE_PROFILE: profilePath, CONFORMANCE_SWITCHBOARD_TOKEN: switchboardToken, CONFORMANCE_OUT: outDir, CONFORMANCE_PROGRESS: 'terse', CONFORMANCE_SANDBOX: '1' };
      const mutArgs = [PLAYWRIGHT_CLI, 'test', '--project=unit', 'tests/mutants.spec.ts'];
      await runPlaywright(mutArgs, mutEnv, cleanups);
      if (!fs.existsSync(path.join(outDir, 'mutation.json'))) process.stderr.write('conformance: the mutant meta-suite wrote no mutation.json; the report will say the score is unknown\n');
      // Its own reporters wrote outcomes for the meta-suite's tests; the main run below writes the reports.
      clearReports(outDir);
    }
    const args = [PLAYWRIGHT_CLI, 'test', '--project=conformance'];
    if (grep !== undefined) args.push(`--grep=${grep}`);
    if (shard) args.push(`--shard=${shard.i}/${shard.n}`);
    if (o.workers !== undefined) args.push(`--workers=${o.workers}`);
    const env: NodeJS.ProcessEnv = { ...process.env, CONFORMANCE_PROFILE: profilePath, CONFORMANCE_OUT: outDir };
    delete env.CONFORMANCE_SETUP_ERROR;
    // Only the sandbox the CLI started itself may stand in the harness's example webhook receiver.
    // Nothing of an enclosing run's sandbox (its token, its sandbox flag) may leak into this one.
    delete env.CONFORMANCE_SWITCHBOARD_TOKEN;
    delete env.CONFORMANCE_REFERENCE_PID;
    // Sandbox mode only when this command started the reference itself: `--profile` alone is a target run.
    if (switchboardToken !== undefined) env.CONFORMANCE_SANDBOX = '1';
    else delete env.CONFORMANCE_SANDBOX;
    const filter = { ...(o.grep !== undefined ? { grep: o.grep } : {}), ...(o.requirement !== undefined ? { requirement: o.requirement } : {}) };
    if (Object.keys(filter).length > 0) env.CONFORMANCE_FILTER = JSON.stringify(filter);
    else delete env.CONFORMANCE_FILTER;
    if (o.strict) env.CONFORMANCE_STRICT = '1';
    else delete env.CONFORMANCE_STRICT;
    if (o.verbose) env.CONFORMANCE_VERBOSE = '1';
    else delete env.CONFORMANCE_VERBOSE;
    if (switchboardToken) env.CONFORMANCE_SWITCHBOARD_TOKEN = switchboardToken;
    env.CONFORMANCE_PROGRESS = 'terse';
    if (o.seed !== undefined) env.CONFORMANCE_SEED = o.seed;
    if (waiversPath) env.CONFORMANCE_WAIVERS = waiversPath;
    else delete env.CONFORMANCE_WAIVERS;
    if (o.requirement !== undefined) env.CONFORMANCE_REQUIREMENT = o.requirement;
    if (readyFile) env.CONFORMANCE_WAIT_READY = readyFile;
    else delete env.CONFORMANCE_WAIT_READY;
    const code = await runPlaywright(args, env, cleanups, referenceReady);
    await referenceReady; // a reference that never started is the reason, whatever Playwright said
    const report = readReport(outDir);
    if (!report) throw new SetupError(`playwright exited with code ${code} without writing ${REPORT_FILES.json} (${grep !== undefined ? 'did the --grep/--requirement filter match any check? ' : ''}see the output above)`);
    tellProblems(report, outDir, { allowIncomplete: o['allow-incomplete'] });
    return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] });
  } finally {
    await cleanup();
  }
}

/**
 * Runs Playwright as a child. Its progress (stdout) goes to our stderr, except the reporter's plain
 * `conformance: ...` summary line, which stays on stdout for scripts.
 */
function runPlaywright(args: string[], env: NodeJS.ProcessEnv, cleanups: (() => Promise<void> | void)[], gate: Promise<void> = Promise.resolve()): Promise<number> {
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
        state = 'dropped';
        held.length = 0;
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
      if (signal) reject(new SetupError(`interrupted (${signal})`));
      else resolve(code ?? 1);
    });
  });
}

async function serve(argv: string[]): Promise<number> {
  const { values: o } = parse('serve', argv, { db: { type: 'string' }, port: { type: 'string' }, 'profile-out': { type: 'string' } });
  if (o.help) {
    process.stdout.write(`${HELP.serve}\n`);
    return 0;
  }
  const db = dbKind(o.db);
  if (o.port !== undefined && (!/^[0-9]{1,5}$/.test(o.port) || Number(o.port) > 65535)) throw new SetupError(`--port must be 0..65535 (got ${o.port})`);
  const profilePath = o['profile-out'] !== undefined ? path.resolve(o['profile-out']) : undefined;
  let ref: ReferenceHandle;
  try {
    ref = await startReference({ db, port: o.port !== undefined ? Number(o.port) : 0, profilePath, args: ['--guide'], inheritStderr: true, timeoutMs: 180_000 });
  } catch (e) {
    throw new SetupError(`reference implementation did not start: ${(e as Error).message}`);
  }
  ref.child.stdout?.on('data', (d: Buffer) => {
    for (const line of d.toString('utf8').split('\n')) if (line && !line.startsWith('{"event":"ready"')) process.stdout.write(`${line}\n`);
  });
  process.stderr.write(`conformance: sandbox at ${ref.baseUrl}; profile in ${ref.profilePath}; Ctrl-C stops it\n`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      process.stderr.write('conformance: stopping the sandbox\n');
      void ref.stop().then(() => resolve(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    ref.child.on('exit', (code) => {
      if (stopping) return;
      process.stderr.write(`conformance: the sandbox exited unexpectedly (code ${code})\n`);
      resolve(1);
    });
  });
}

async function merge(argv: string[]): Promise<number> {
  const { values: o, positionals } = parse('merge', argv, { out: { type: 'string' }, waivers: { type: 'string' }, profile: { type: 'string' }, 'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' } }, true);
  if (o.help) {
    process.stdout.write(`${HELP.merge}\n`);
    return 0;
  }
  if (o.out === undefined) throw new SetupError('merge needs --out DIR (see conformance merge --help)');
  if (positionals.length === 0) throw new SetupError('merge needs at least one shard folder (see conformance merge --help)');
  const waiversPath = o.waivers ?? process.env.CONFORMANCE_WAIVERS;
  if (waiversPath) {
    try {
      loadWaivers(path.resolve(waiversPath));
    } catch (e) {
      throw new SetupError((e as WaiverError).message);
    }
  }
  if (o.profile !== undefined) loadProfile(path.resolve(o.profile));
  const parts = positionals.map((dir) => {
    try {
      return readOutcomes(path.resolve(dir));
    } catch (e) {
      throw new SetupError((e as Error).message);
    }
  });
  const outDir = path.resolve(o.out);
  const merged = mergeOutcomes(parts);
  const ctx = loadRunContext({ outDir, profilePath: o.profile !== undefined ? path.resolve(o.profile) : undefined, waiversPath: waiversPath ? path.resolve(waiversPath) : undefined, strict: o.strict === true });
  if (!ctx.target && merged.target) ctx.target = merged.target;
  prepareOutDir(outDir);
  writeOutcomes(outDir, merged);
  const report = writeReports(outDir, merged, ctx);
  process.stdout.write(`${summaryLine(report.summary)}\n`);
  tellProblems(report, outDir, { allowIncomplete: o['allow-incomplete'] });
  return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] });
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = { run, serve, merge, webhook: (argv) => webhookCommand(argv), profile: (argv) => profileCommand(argv) };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) throw new SetupError(`missing command (${Object.keys(COMMANDS).join(', ')}; see conformance --help)`);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP.main}\n`);
    return 0;
  }
  const fn = COMMANDS[command];
  if (!fn) throw new SetupError(`unknown command ${command} (commands: ${Object.keys(COMMANDS).join(', ')})`);
  return fn(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  const known = e instanceof SetupError || e instanceof ProfileError || e instanceof WaiverError;
  process.stderr.write(`conformance: ${oneLine(known ? (e as Error).message : `internal error: ${(e as Error)?.message ?? String(e)}`)}\n`);
  process.exitCode = 2;
}
// Nothing we started may keep the process alive past the decision (sockets, timers of a stopped child).
process.exit(process.exitCode);
