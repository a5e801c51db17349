// `npm run bench` (node bench/run.ts): the performance figures of the harness and the reference, measured in
// ONE run on this machine, written to reports/out/bench.json with a short table on the terminal.
//   0. phases (bench/phases.ts): the breakdown of a run (process start, reference ready, workers ready, checks,
//      reports) and its peak memory, for the cold run, a target run and a failing target run, as medians of
//      BENCH_ROUNDS (default 3) runs alternating with the checkout BENCH_BEFORE names, with the ratio after/before.
//   0b. hostile (bench/hostile.ts): the whole run against each hostile target, its time, exit code and memory.
//   0c. distant (bench/distant.ts): a target run through a proxy holding every answer BENCH_DELAY_MS (150 ms).
//   0d. large (bench/large.ts, only when BENCH_PARTS names it): a target run on the seeded data and again with
//       BENCH_LARGE (100,000) more encounters in the caller's organization: wall, CPU, requests, peak memory, ratios.
//   1. cold time to verdict: `conformance run` from nothing (embedded PostgreSQL, migrations, seed, every
//      conformance suite and property, reports) as a child process; checks, property cases, checks/s.
//   2. reference throughput: autocannon on the list route and on document detail, beside a bare node:http
//      server (its own process) answering the very same bytes; the ratio reference/bare is the figure.
//   3. deep page: offset=10000&limit=100 with 100,000 encounters in one organization (the reference on
//      `--db url` against a cluster this script starts, bulk-loaded with generate_series), plus EXPLAIN ANALYZE.
//   4. scaling: time to verdict at 1x/4x/16x property cases (CONFORMANCE_RUNS_SCALE), and list/deep-page
//      latency at 1k/10k/100k encounters (the conformance run is not pointed at a bigger dataset).
// The reference is only ever a child process. Knobs: BENCH_SCALES (default 1,4,16), BENCH_BUDGET_S (default 570:
// a scale whose estimated time does not fit in what is left is halved until it does, and the JSON says so),
// BENCH_PARTS (default phases,hostile,distant,verdict,reference: `reference` alone skips the conformance runs while iterating on the reference).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { startCluster } from '../platform/embedded-cluster.ts';
import { bulkInsert } from './dataset.ts';
import { distant } from './distant.ts';
import { large } from './large.ts';
import { hostile } from './hostile.ts';
import { phaseRows, phases, SCENARIOS, type Scenario } from './phases.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT_FILE = path.join(ROOT, 'reports/out/bench.json');
const CLI = path.join(ROOT, 'cli/conformance.mjs');
const LIST_PATH = '/external/v1/encounters';
const DEEP_PAGE = `${LIST_PATH}?offset=10000&limit=100`;
const FIRST_PAGE = `${LIST_PATH}?limit=100`;
const CONNECTIONS = 10;
const DURATION_S = 5;
const WARMUP_S = 1;
const SEQUENTIAL_REQUESTS = 200;
const SEQUENTIAL_WARMUP = 20;
const DATASET_SIZES = [1_000, 10_000, 100_000];
const TARGETS = { coldVerdictS: 15, minChecks: 300, minPropertyCases: 2_000, throughputRatio: 0.5, deepPageP50Ms: 20 };
const BUDGET_S = Number(process.env.BENCH_BUDGET_S ?? 570);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'phases,hostile,distant,verdict,reference').split(','));
const BEFORE = process.env.BENCH_BEFORE ? path.resolve(process.env.BENCH_BEFORE) : undefined;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = (process.env.BENCH_SCENARIOS ?? SCENARIOS.join(',')).split(',').filter((s): s is Scenario => (SCENARIOS as string[]).includes(s));
const SCALES = (process.env.BENCH_SCALES ?? '1,4,16').split(',').map(Number).filter((n) => Number.isFinite(n) && n > 0);

// ---------------------------------------------------------------- small helpers

interface Histogram { average: number; mean: number; stddev: number; min: number; max: number; p50: number; p99: number; total?: number }
interface AutocannonResult { requests: Histogram; latency: Histogram; throughput: Histogram; errors: number; timeouts: number; non2xx: number; duration: number }
type Autocannon = (opts: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const started = performance.now();
const elapsedS = () => (performance.now() - started) / 1000;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const load = () => os.loadavg().map((x) => round(x));
const log = (msg: string) => process.stderr.write(`bench [${elapsedS().toFixed(0).padStart(3)} s, load ${load().join(' ')}]: ${msg}\n`);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET on a keep-alive connection; resolves with status, body and wall time in ms. */
function get(baseUrl: string, target: string, headers: Record<string, string>): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(`${baseUrl}${target}`, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Sequential latency of one request: warm-up, then n requests one after the other (no concurrency). */
async function sequential(baseUrl: string, target: string, headers: Record<string, string>, n = SEQUENTIAL_REQUESTS) {
  for (let i = 0; i < SEQUENTIAL_WARMUP; i++) await get(baseUrl, target, headers);
  const times: number[] = [];
  let last = { status: 0, body: '' };
  for (let i = 0; i < n; i++) {
    const r = await get(baseUrl, target, headers);
    if (r.status !== 200) throw new Error(`GET ${target} answered ${r.status}: ${r.body.slice(0, 200)}`);
    times.push(r.ms);
    last = r;
  }
  times.sort((a, b) => a - b);
  const page = JSON.parse(last.body) as { items: unknown[]; total: number };
  return { requests: n, p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)), meanMs: round(times.reduce((a, b) => a + b, 0) / n), items: page.items.length, total: page.total };
}

/** Spawns a child that announces {"event":"ready","baseUrl":...} on stdout. */
function spawnReady(args: string[]): Promise<{ child: ChildProcess; baseUrl: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"event":"ready","baseUrl":"([^"]+)"\}/.exec(out);
      if (m) resolve({ child, baseUrl: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with code ${code} before it was ready`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------- 1 + 4a. conformance run (time to verdict)

interface VerdictRun {
  scale: number; wallS: number; referenceReadyS: number | null; playwrightS: number | null; exitCode: number | null; verdict: string;
  workers: number | null; tests: number | null; checks: number; summary: Record<string, number>; propertyCases: number;
  propertyCasesFromReport: number; properties: number; checksPerS: number; casesPerS: number; propertyShare: number; loadBefore: number[]; loadAfter: number[];
}

async function conformanceRun(scale: number): Promise<VerdictRun> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `cec-bench-${scale}x-`));
  const loadBefore = load();
  const env: NodeJS.ProcessEnv = { ...process.env, CONFORMANCE_RUNS_SCALE: String(scale) };
  for (const k of ['CONFORMANCE_PROFILE', 'CONFORMANCE_SEED', 'CONFORMANCE_OUT', 'CONFORMANCE_SETUP_ERROR']) delete env[k];
  const t0 = performance.now();
  const marks: { ready?: number; running?: number } = {};
  let text = '';
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', '--out', outDir, '--verbose'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d: Buffer) => {
      text += d.toString('utf8');
      if (marks.ready === undefined && text.includes('conformance: reference ready at')) marks.ready = performance.now();
      if (marks.running === undefined && /Running [0-9]+ tests? using/.test(text)) marks.running = performance.now();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  const tEnd = performance.now();
  const wallS = (tEnd - t0) / 1000;
  const report = JSON.parse(fs.readFileSync(path.join(outDir, 'conformance.json'), 'utf8')) as {
    verdict: string; summary: Record<string, number>; checks: { file: string; test: string; project: string; seed: string | null }[];
  };
  // Property cases: every property prints `[seed] <title>: seed=S runs=N` (engine/seed.ts recordSeed); the
  // report's seed annotations are the cross-check.
  const cases = new Map<string, number>();
  for (const m of text.matchAll(/^\[seed\] (.*): seed=-?[0-9]+ runs=([0-9]+)$/gm)) cases.set(m[1], Number(m[2]));
  const fromReport = new Map<string, number>();
  for (const c of report.checks) {
    const m = c.seed ? /\(([0-9]+) runs\)/.exec(c.seed) : null;
    if (m) fromReport.set(`${c.file} ${c.test}`, Number(m[1]));
  }
  // Share of test time spent in properties (from the list reporter's per-test durations): used to extrapolate scales.
  let propertyS = 0;
  let allS = 0;
  for (const m of text.matchAll(/^\s+✓\s+[0-9]+ \[[a-z]+\] › (\S+?)[:/].* \(([0-9.]+)(ms|s|m)\)$/gm)) {
    const s = Number(m[2]) * (m[3] === 'ms' ? 0.001 : m[3] === 'm' ? 60 : 1);
    allS += s;
    if (m[1] === 'properties') propertyS += s;
  }
  const running = /(?:Running|running) ([0-9]+) tests? using ([0-9]+) workers?/.exec(text);
  fs.rmSync(outDir, { recursive: true, force: true });
  if (exitCode !== 0) process.stderr.write(`${text.split('\n').slice(-15).join('\n')}\n`);
  const propertyCases = [...cases.values()].reduce((a, b) => a + b, 0);
  return {
    scale, wallS: round(wallS), exitCode, verdict: report.verdict,
    referenceReadyS: marks.ready !== undefined ? round((marks.ready - t0) / 1000) : null,
    playwrightS: marks.running !== undefined ? round((tEnd - marks.running) / 1000) : null,
    workers: running ? Number(running[2]) : null, tests: running ? Number(running[1]) : null,
    checks: report.checks.length, summary: report.summary, propertyCases, properties: cases.size,
    propertyCasesFromReport: [...fromReport.values()].reduce((a, b) => a + b, 0),
    checksPerS: round(report.checks.length / wallS, 1), casesPerS: round(propertyCases / wallS, 1),
    propertyShare: allS > 0 ? round(propertyS / allS) : 0, loadBefore, loadAfter: load(),
  };
}

// ---------------------------------------------------------------- the cluster for throughput and deep page

// ---------------------------------------------------------------- 2. throughput

async function throughput(ref: ReferenceHandle, key: string, docPath: string) {
  const auth = { authorization: `Bearer ${key}` };
  const routes = { list: LIST_PATH, document: docPath };
  const bodies: Record<string, string> = {};
  const sizes: Record<string, number> = {};
  for (const [name, target] of Object.entries(routes)) {
    const r = await get(ref.baseUrl, target, auth);
    if (r.status !== 200) throw new Error(`reference answered ${r.status} on ${target}`);
    bodies[`/${name}`] = r.body;
    sizes[name] = Buffer.byteLength(r.body);
  }
  const bodiesFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cec-bench-bare-')), 'bodies.json');
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
  const bare = await spawnReady([path.join(ROOT, 'bench/bare-server.ts'), bodiesFile]);
  const cannon = async (url: string, headers: Record<string, string>) => {
    await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_S, headers });
    const loadBefore = load();
    const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    return { reqPerS: round(r.requests.average, 0), p50Ms: r.latency.p50, p99Ms: r.latency.p99, meanMs: round(r.latency.mean), requests: r.requests.total ?? null, loadBefore };
  };
  const out: Record<string, unknown> = {};
  try {
    for (const name of Object.keys(routes) as (keyof typeof routes)[]) {
      log(`throughput: ${name} (${sizes[name]} bytes), reference then bare, ${CONNECTIONS} connections x ${DURATION_S} s`);
      const reference = await cannon(`${ref.baseUrl}${routes[name]}`, auth);
      const bareServer = await cannon(`${bare.baseUrl}/${name}`, {});
      out[name] = { path: routes[name], bodyBytes: sizes[name], reference, bare: bareServer, ratio: round(reference.reqPerS / bareServer.reqPerS, 3) };
    }
  } finally {
    await stopChild(bare.child);
    fs.rmSync(path.dirname(bodiesFile), { recursive: true, force: true });
  }
  return out as Record<'list' | 'document', { path: string; bodyBytes: number; reference: Awaited<ReturnType<typeof cannon>>; bare: Awaited<ReturnType<typeof cannon>>; ratio: number }>;
}

// ---------------------------------------------------------------- 3 + 4b. deep page and dataset size

// Mirrors the list query of reference-impl/repo.ts (listEncounters, no mutant, sort_order desc) for EXPLAIN.
const LIST_SQL_WHERE = `organization_id = $1 AND NOT is_demo AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)`;
const LIST_SQL = `SELECT t.total, e.encounter_id, e.organization_id, e.created_at, e.updated_at, e.date_of_service, e.encounter_type, e.status, e.is_demo,
  e.patient_id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth
  FROM (SELECT count(*)::int AS total FROM encounters WHERE ${LIST_SQL_WHERE}) t
  LEFT JOIN LATERAL (SELECT * FROM encounters WHERE ${LIST_SQL_WHERE} ORDER BY created_at DESC, encounter_id DESC LIMIT $4 OFFSET $5) e ON TRUE
  LEFT JOIN patients p ON p.patient_id = e.patient_id
  ORDER BY e.created_at DESC, e.encounter_id DESC`;

async function explainDeepPage(db: pg.Client, organizationId: string) {
  const params = [organizationId, null, null, 100, 10_000];
  const r = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${LIST_SQL}`, params);
  const plan = r.rows.map((row) => row['QUERY PLAN']);
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    await db.query(LIST_SQL, params);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const exec = plan.map((l) => /Execution Time: ([0-9.]+) ms/.exec(l)).find(Boolean);
  const indexes = (await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'encounters' ORDER BY indexname`)).rows.map((r) => r.indexdef);
  const relations = (await db.query(`SELECT relname, relpages, reltuples::bigint AS reltuples, relallvisible FROM pg_class WHERE relname LIKE 'encounters%' ORDER BY relname`)).rows;
  return { indexes, relations, sql: 'reference-impl/repo.ts listEncounters (sort_order desc, no mutant), limit 100 offset 10000', executionMs: exec ? Number(exec[1]) : null, queryP50Ms: round(percentile(times, 50)), plan };
}

// ---------------------------------------------------------------- the run

function scaleEstimate(runs: VerdictRun[], scale: number): number {
  if (runs.length >= 2) {
    // Least-squares line through the measured (scale, wall) points.
    const n = runs.length;
    const mx = runs.reduce((a, r) => a + r.scale, 0) / n;
    const my = runs.reduce((a, r) => a + r.wallS, 0) / n;
    const b = runs.reduce((a, r) => a + (r.scale - mx) * (r.wallS - my), 0) / runs.reduce((a, r) => a + (r.scale - mx) ** 2, 0);
    return my + b * (scale - mx);
  }
  const one = runs[0];
  const share = Math.max(one.propertyShare, 0.3); // property share of the test time; at least 30 % to stay on the safe side
  return one.wallS * (1 - share) + one.wallS * share * scale;
}

function fmt(n: number | null | undefined, unit = ''): string {
  return n === null || n === undefined || Number.isNaN(n) ? '-' : `${n}${unit}`;
}

async function main(): Promise<void> {
  const result: Record<string, unknown> = {
    benchVersion: 1,
    command: 'npm run bench',
    startedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? null, totalMemGiB: round(os.totalmem() / 2 ** 30, 1), node: process.version, platform: `${os.platform()} ${os.release()}` },
    loadavg: { start: load() } as Record<string, number[]>,
    settings: { parts: [...PARTS], autocannon: { connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S }, sequentialRequests: SEQUENTIAL_REQUESTS, sequentialWarmup: SEQUENTIAL_WARMUP, scales: SCALES, budgetS: BUDGET_S },
    targets: TARGETS,
  };
  const loadavg = result.loadavg as Record<string, number[]>;
  const rows: [string, string, string][] = [];
  const verdicts: Record<string, boolean> = {};
  const runs: VerdictRun[] = [];
  const scaleNotes: string[] = [];

  // 0. where a run's time goes: cold, target and failing target, before (BENCH_BEFORE) and after (bench/phases.ts).
  if (PARTS.has('phases')) {
    if (BEFORE && !fs.existsSync(path.join(BEFORE, 'cli/conformance.mjs'))) throw new Error(`BENCH_BEFORE=${BEFORE} is not a checkout of this project`);
    const p = await phases(ROOT, BEFORE, ROUNDS, log, ONLY);
    result.phases = { before: BEFORE ?? null, rounds: ROUNDS, ...p };
    rows.push(...phaseRows(p.summary));
    loadavg.afterPhases = load();
  }

  // 0b. the whole run against each hostile target (bench/hostile.ts).
  if (PARTS.has('hostile')) {
    const h = await hostile(ROOT, log);
    result.hostile = h;
    for (const r of h) rows.push([`hostile target ${r.name}`, `${r.wallS} s, exit ${r.exitCode} (${r.counts ?? r.last.replace(/^conformance: /, '')}), peak ${r.peakRssMiB} MiB (largest process ${r.peakProcessRssMiB} MiB)`, '<= 30 s']);
  }

  // 0d. the same target with 100,000 more encounters in the caller's organization (bench/large.ts); not in the default parts.
  if (PARTS.has('large')) {
    const l = await large(ROOT, log);
    result.large = l;
    rows.push(['large target', `seeded: ${l.seeded.wallS} s, ${l.seeded.cpuS} s CPU, ${l.seeded.requests} requests, ${l.seeded.peakProcessRssMiB} MiB; +${l.large.encounters}: ${l.large.wallS} s, ${l.large.cpuS} s CPU, ${l.large.requests} requests, ${l.large.peakProcessRssMiB} MiB (ratios wall ${l.ratios.wall}, requests ${l.ratios.requests}, memory ${l.ratios.peakProcessRss}); ${l.large.verdict}`, '<= 1.3x each, same verdict']);
  }

  // 0c. a target 150 ms away (bench/distant.ts).
  if (PARTS.has('distant')) {
    const d = await distant(ROOT, ROUNDS, log);
    result.distant = d;
    rows.push([`target ${d.delayMs} ms away (median of ${d.wallS.length})`, `${d.medianS} s (${d.wallS.join(' / ')} s; exit ${d.exitCodes.join('/')}; ${d.requests} requests through the proxy; ${d.counts ?? '-'})`, '<= 20 s at 150 ms']);
    loadavg.afterDistant = load();
  }

  // 1. cold time to verdict (the 1x point of the scaling table).
  if (PARTS.has('verdict')) {
    log(`cold conformance run (${SCALES[0] ?? 1}x) from nothing`);
    runs.push(await conformanceRun(SCALES[0] ?? 1));
    const cold = runs[0];
    result.cold = cold;
    loadavg.afterCold = load();
    verdicts.coldVerdict = cold.wallS <= TARGETS.coldVerdictS && cold.checks >= TARGETS.minChecks && cold.propertyCases >= TARGETS.minPropertyCases;
    rows.push(['cold time to verdict', `${cold.wallS} s (reference ready after ${fmt(cold.referenceReadyS, ' s')}, ${cold.workers} workers; ${cold.checks} checks, ${cold.propertyCases} property cases, ${cold.checksPerS} checks/s; exit ${cold.exitCode})`, `< ${TARGETS.coldVerdictS} s`]);
  }

  // 2 + 3. throughput, deep page and dataset scaling, on one cluster the script controls.
  if (PARTS.has('reference')) {
    log('starting a PostgreSQL cluster and the reference on --db url');
    // Settings as the reference's own embedded cluster (commits do not wait for the WAL flush).
    const cluster = await startCluster({ name: 'cec-bench-pg', settings: { synchronous_commit: 'off' } });
    let ref: ReferenceHandle | undefined;
    const db = new pg.Client({ connectionString: cluster.url });
    try {
      const refStart = performance.now();
      process.env.DATABASE_URL = cluster.url; // startReference passes our environment to the child
      ref = await startReference({ db: 'url', timeoutMs: 120_000 });
      const referenceReadyS = round((performance.now() - refStart) / 1000);
      const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { credentials: Record<string, { key: string }>; resources: Record<string, { encounter_id: string; document_id?: string }> };
      const key = profile.credentials.full.key;
      const doc = profile.resources.clinical_document;
      const docPath = `${LIST_PATH}/${encodeURIComponent(doc.encounter_id)}/documents/${encodeURIComponent(doc.document_id!)}`;
      result.reference = { readyS: referenceReadyS, db: 'url (a cluster started by the bench, synchronous_commit=off as --db embedded)' };
      const tp = await throughput(ref, key, docPath);
      result.throughput = tp;
      loadavg.afterThroughput = load();
      for (const name of ['list', 'document'] as const) {
        const t = tp[name];
        verdicts[`throughput_${name}`] = t.ratio >= TARGETS.throughputRatio;
        rows.push([`${name} throughput`, `${t.reference.reqPerS} req/s vs bare ${t.bare.reqPerS} = ${t.ratio} (reference p50 ${t.reference.p50Ms} ms, p99 ${t.reference.p99Ms} ms; ${t.bodyBytes} B)`, `>= ${TARGETS.throughputRatio}`]);
      }

      await db.connect();
      const org = (await db.query<{ organization_id: string }>('SELECT organization_id FROM encounters WHERE encounter_id = $1', [doc.encounter_id])).rows[0].organization_id;
      const auth = { authorization: `Bearer ${key}` };
      const dataset: { bulkEncounters: number; totalListable: number; insertS: number; firstPage: Awaited<ReturnType<typeof sequential>>; deepPage: Awaited<ReturnType<typeof sequential>>; load: number[] }[] = [];
      let inserted = 0;
      for (const size of DATASET_SIZES) {
        const insertS = await bulkInsert(db, org, inserted + 1, size);
        inserted = size;
        log(`dataset: +${size} encounters in ${org} (insert + VACUUM ANALYZE ${insertS} s); sequential latency, ${SEQUENTIAL_REQUESTS} requests each`);
        const firstPage = await sequential(ref.baseUrl, FIRST_PAGE, auth);
        const deepPage = await sequential(ref.baseUrl, DEEP_PAGE, auth);
        dataset.push({ bulkEncounters: size, totalListable: deepPage.total, insertS, firstPage, deepPage, load: load() });
      }
      result.dataset = dataset;
      const deep = dataset[dataset.length - 1].deepPage;
      result.deepPage = { path: DEEP_PAGE, organization: org, encounters: deep.total, ...deep, explain: await explainDeepPage(db, org) };
      loadavg.afterDeepPage = load();
      verdicts.deepPage = deep.p50Ms <= TARGETS.deepPageP50Ms;
      rows.push([`deep page (${Math.round(deep.total / 1000)}k)`, `p50 ${deep.p50Ms} ms, p99 ${deep.p99Ms} ms (${deep.items} items at offset 10000 of ${deep.total})`, `< ${TARGETS.deepPageP50Ms} ms`]);
      for (const d of dataset) {
        rows.push([`list at +${d.bulkEncounters / 1000}k`, `first page p50 ${d.firstPage.p50Ms} ms, offset=10000 p50 ${d.deepPage.p50Ms} ms (total ${d.totalListable})`, '']);
      }
    } finally {
      await db.end().catch(() => {});
      await ref?.stop();
      await cluster.remove();
    }
  }

  // 4. scaling of time to verdict with property cases.
  if (PARTS.has('verdict')) {
    for (const wanted of SCALES.slice(1)) {
      let scale = wanted;
      const left = BUDGET_S - elapsedS();
      while (scale > 1 && scaleEstimate(runs, scale) > left) scale = Math.floor(scale / 2);
      if (scale !== wanted) scaleNotes.push(`${wanted}x was estimated at ${Math.round(scaleEstimate(runs, wanted))} s with ${Math.round(left)} s of budget left${scale > 1 ? `: ran ${scale}x instead` : ': skipped'}`);
      if (scale <= 1 || runs.some((r) => r.scale === scale)) continue;
      log(`conformance run at ${scale}x property cases (CONFORMANCE_RUNS_SCALE=${scale})`);
      runs.push(await conformanceRun(scale));
    }
    result.scaling = {
      propertyCases: runs.map((r) => ({ scale: r.scale, propertyCases: r.propertyCases, checks: r.checks, wallS: r.wallS, ratioTo1x: round(r.wallS / runs[0].wallS), exitCode: r.exitCode, loadBefore: r.loadBefore })),
      runs: runs.slice(1),
      notes: scaleNotes,
      dataset: 'the conformance run cannot be pointed at a bigger dataset, so dataset scaling is the list/deep-page latency at +1k/+10k/+100k encounters (see "dataset")',
    };
    for (const r of runs) rows.push([`verdict at ${r.scale}x`, `${r.wallS} s (${r.propertyCases} property cases, ${round(r.wallS / runs[0].wallS)}x the ${runs[0].scale}x time)`, '']);
  }
  loadavg.end = load();
  result.verdicts = verdicts;
  result.finishedAt = new Date().toISOString();
  result.totalS = round(elapsedS(), 1);
  fs.mkdirSync(path.dirname(OUT_FILE), { recursive: true });
  fs.writeFileSync(OUT_FILE, `${JSON.stringify(result, null, 2)}\n`);

  const w = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`\nbench (${os.cpus().length} CPUs, load average ${loadavg.start.join(' ')} at start, ${loadavg.end.join(' ')} at end; ${result.totalS} s)\n`);
  for (const [name, value, target] of rows) process.stdout.write(`  ${name.padEnd(w)}  ${value}${target ? `  [target ${target}]` : ''}\n`);
  for (const note of scaleNotes) process.stdout.write(`  note: ${note}\n`);
  process.stdout.write(`written ${path.relative(process.cwd(), OUT_FILE)}\n`);
}

try {
  await main();
} catch (e) {
  process.stderr.write(`bench: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exitCode = 1;
}
process.exit(process.exitCode ?? 0);
