// The harness against deliberately hostile targets (tests/hostile/servers.ts), through the real CLI
// as an async child process: `conformance run` must end within a time budget, with the exit code the
// probe rules give (below), never crash, never hang, and keep its memory bounded (peak RSS of the CLI
// and of every process it starts, sampled from /proc, recorded as annotations).
//
// Probe rules (engine/preflight.ts `probe`): the probe has its own 5 s deadline; a target that accepts
// the connection and does not answer it completely in time (hang, drip) is a setup error: exit 2 with
// one line. A complete answer that is neither labelled JSON nor a JSON object (here: the redirect
// loop's 302 with no body) means the base URL is not this API: exit 2 with one line. A target that
// answers badly (resets, huge or invalid bodies) is judged by the checks: exit 1, every affected check
// `fail` with its evidence. Only a small subset of checks runs (--grep): the point is robustness, not
// coverage.
//
// Targets that pass the probe and then stop answering (tests/hostile/servers.ts STALLING_NAMES) run the
// WHOLE conformance project at the default request timeout (10 s): the run's breaker
// (observe/breaker.ts) must end it within a minute or so, every check that reached the target failing
// with "target stopped answering" and the attempts as evidence, instead of ~45 minutes of timeouts.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHostile, startStalling, HOSTILE_NAMES, STALLING_NAMES, type HostileName, type HostileServer, type StallingServer } from './hostile/servers.ts';
import { runCli, mb, type CliResult } from './helpers/cli-process.ts';

const TIME_BUDGET_MS = 240_000;
const MEMORY_CAP = 1.5 * 1024 ** 3;
const REQUEST_MS = 1_000;
const KEYS = { full: 'k_live_hostile_full_7f3a91c2', invalid_key: 'k_live_hostile_invalid_0b84e5d6' };

// Five checks over four routes, each needing a role the profile below gives (none ends not_verified).
const CHECKS = [
  'auth-invalid-key-list', 'auth-invalid-key-document',
  'resources-encounter-detail-equals-list-item', 'resources-clinical-document-markdown-content', 'resources-audio-url-present',
];
const GREP = `(?:^|\\s)(?:${CHECKS.join('|')})$`;

interface Expected {
  code: 1 | 2;
  /** For exit 1: what every exchange of every failing check must show. */
  evidence?: (ex: Evidence) => boolean;
  /** For exit 2: the one line. */
  line?: RegExp;
}

interface Evidence {
  request: { method: string; target: string };
  response?: { status: number; body: string; bodyBytes: number };
  error?: { kind: string; message: string };
}

const EXPECTED: Record<HostileName, Expected> = {
  hang: { code: 2, line: /^conformance: target http:\/\/127\.0\.0\.1:\d+ did not answer GET \/external\/v1\/encounters at all within 5000 ms$/ },
  drip: { code: 2, line: /^conformance: target http:\/\/127\.0\.0\.1:\d+ did not answer GET \/external\/v1\/encounters completely \(\d+ bytes arrived\) within 5000 ms$/ },
  'huge-content-length': { code: 1, evidence: (e) => e.error?.kind === 'body_too_large' },
  'huge-streamed': { code: 1, evidence: (e) => e.error?.kind === 'body_too_large' },
  reset: { code: 1, evidence: (e) => e.error?.kind === 'connection_reset' },
  'invalid-json': { code: 1, evidence: (e) => e.response?.status === 200 && e.response.body.startsWith('{"items": [') },
  'empty-200': { code: 1, evidence: (e) => e.response?.status === 200 && e.response.bodyBytes === 0 },
  // A proxy's HTML error page to every request, the full key and the served document included: not this API.
  'html-500': { code: 2, line: /^conformance: target http:\/\/127\.0\.0\.1:\d+ does not look like the Clinical Encounter Public API \(GET \/external\/v1\/encounters without a key answered 500 text\/html\)$/ },
  'redirect-loop': { code: 2, line: /^conformance: target http:\/\/127\.0\.0\.1:\d+ does not look like the Clinical Encounter Public API \(GET \/external\/v1\/encounters without a key answered 302 .*redirecting to \/external\/v1\/encounters\)$/ },
};

function writeProfile(dir: string, name: string, requestMs: number | undefined = REQUEST_MS): string {
  const enc = 'enc-hostile-own';
  const profile = {
    name: `hostile-${name}`,
    baseUrl: 'http://127.0.0.1:9', // replaced by --target
    ...(requestMs === undefined ? {} : { timeouts: { requestMs } }), // maxBodyBytes: the default cap (4 MiB)
    credentials: { full: { key: KEYS.full }, invalid_key: { key: KEYS.invalid_key } },
    resources: {
      own_encounter: { encounter_id: enc },
      clinical_document: { encounter_id: enc, document_id: 'doc-hostile-clinical' },
      ambient_transcript_with_audio: { encounter_id: enc, document_id: 'doc-hostile-ambient' },
    },
  };
  const file = path.join(dir, 'hostile.profile.json');
  fs.writeFileSync(file, JSON.stringify(profile), { mode: 0o600 });
  return file;
}

/**
 * A crash shows as an error other than a failing check's: Playwright prints a failing check as
 * `Error: <check id>: <violation>`; anything else (TypeError, RangeError, an uncaught or unhandled
 * error, a worker that died, a heap limit) is the harness breaking on the target.
 */
function crashLines(stderr: string): string[] {
  const bad: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^\s*(?:Uncaught |Unhandled )?([A-Z][A-Za-z]*Error)\b(?: \[[A-Z_]+\])?: ?(.*)$/.exec(line);
    if (m && !(m[1] === 'Error' && CHECKS.some((id) => m[2].startsWith(`${id}: `)))) bad.push(line.trim());
    if (/heap out of memory|worker process exited unexpectedly|internal error|unhandled(?:Rejection| rejection)/i.test(line)) bad.push(line.trim());
  }
  return bad;
}

test.describe.configure({ mode: 'parallel', timeout: TIME_BUDGET_MS + 60_000 });

const dirs: string[] = [];
test.afterAll(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

for (const name of HOSTILE_NAMES) {
  const want = EXPECTED[name];
  test(`hostile target ${name}: run ends within the budget with exit ${want.code}, no crash, bounded memory`, async ({}, testInfo) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cec-hostile-${name}-`));
    dirs.push(dir);
    const out = path.join(dir, 'out');
    const profile = writeProfile(dir, name);
    let server: HostileServer | undefined;
    let r: CliResult;
    try {
      server = await startHostile(name);
      r = await runCli(['run', '--target', server.baseUrl, '--profile', profile, '--out', out, '--grep', GREP, '--workers', '2'], { timeoutMs: TIME_BUDGET_MS });
      expect(server.connections(), 'the target was reached').toBeGreaterThan(0);
    } finally {
      await server?.close();
    }
    testInfo.annotations.push(
      { type: 'duration', description: `${name}: ${r.ms} ms (budget ${TIME_BUDGET_MS} ms)` },
      { type: 'peak-rss', description: `${name}: cli ${mb(r.memory.cliPeak)}, largest process ${mb(r.memory.processPeak)}, whole tree ${mb(r.memory.treePeak)} (${r.memory.processes} processes, ${r.memory.samples} samples)` },
    );
    const tail = r.stderr.slice(-3000);

    expect(r.signal, tail).toBeNull();
    expect(r.code, tail).toBe(want.code);
    expect(r.ms).toBeLessThan(TIME_BUDGET_MS);
    expect(crashLines(r.stderr), 'no crash on stderr').toEqual([]);
    expect(r.memory.samples, 'memory was sampled').toBeGreaterThan(0);
    expect(r.memory.processPeak).toBeLessThan(MEMORY_CAP);
    expect(r.memory.treePeak).toBeLessThan(MEMORY_CAP);
    for (const text of [r.stdout, r.stderr]) for (const key of Object.values(KEYS)) expect(text).not.toContain(key);

    if (want.code === 2) {
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(want.line!);
      expect(fs.existsSync(path.join(out, 'conformance.json')), 'no report for a target that is not this API').toBe(false);
      return;
    }

    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as {
      verdict: string; problems: string[]; summary: Record<string, number>;
      checks: { id: string; outcome: string; detail?: string; evidence?: Evidence[] }[];
    };
    expect(report.verdict).toBe('not_conformant');
    expect(report.problems, 'no test failed outside a check').toEqual([]);
    expect(report.checks.map((c) => c.id).sort()).toEqual([...CHECKS].sort());
    for (const c of report.checks) {
      expect(c.outcome, `${c.id}: ${c.detail}`).toBe('fail');
      expect(c.detail ?? '', c.id).not.toMatch(/^harness error/);
      expect(c.evidence?.length ?? 0, `${c.id} carries evidence`).toBeGreaterThan(0);
      for (const ex of c.evidence!) expect(want.evidence!(ex), `${c.id}: ${JSON.stringify(ex).slice(0, 400)}`).toBe(true);
    }
    for (const f of fs.readdirSync(out).filter((x) => x !== 'test-results')) {
      const text = fs.readFileSync(path.join(out, f), 'utf8');
      for (const key of Object.values(KEYS)) expect(text, f).not.toContain(key);
    }
  });
}

// A run ends within this, whatever the number of checks; the test's own timeout is the bound.
const STALL_BUDGET_MS = 150_000;

for (const name of STALLING_NAMES) {
  test(`target that stops answering after the probe (${name}), default request timeout: the breaker ends the whole run`, async ({}, testInfo) => {
    test.setTimeout(STALL_BUDGET_MS + 30_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cec-${name}-`));
    dirs.push(dir);
    const out = path.join(dir, 'out');
    const profile = writeProfile(dir, name, undefined); // the default requestMs (10 s)
    let server: StallingServer | undefined;
    let r: CliResult;
    let requests: number;
    try {
      server = await startStalling(name);
      r = await runCli(['run', '--target', server.baseUrl, '--profile', profile, '--out', out, '--workers', '2'], { timeoutMs: STALL_BUDGET_MS, sampleMs: 500 });
      requests = server.requests();
    } finally {
      await server?.close();
    }
    testInfo.annotations.push({ type: 'duration', description: `${name}: whole run ${r.ms} ms, ${requests} requests reached the target` });
    const tail = r.stderr.slice(-3000);
    expect(r.signal, tail).toBeNull();
    expect(r.code, tail).toBe(1);
    expect(crashLines(r.stderr), 'no crash on stderr').toEqual([]);
    for (const text of [r.stdout, r.stderr]) for (const key of Object.values(KEYS)) expect(text).not.toContain(key);

    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as {
      verdict: string; checks: { id: string; outcome: string; detail?: string; evidence?: Evidence[] }[];
    };
    expect(report.verdict).toBe('not_conformant');
    const ran = report.checks.filter((c) => c.outcome !== 'not_verified');
    expect(ran.length, 'checks whose roles the profile gives').toBeGreaterThan(100);
    // Far fewer requests than checks: once open, the breaker sends nothing more. What reached the target is what
    // was in flight before the first timeouts could open it (2 workers × 8 cases at once, and the reads they
    // keep in flight themselves).
    expect(requests).toBeLessThan(ran.length / 2);
    const stopped = ran.filter((c) => /target stopped answering: \d+ consecutive requests got no answer/.test(c.detail ?? ''));
    expect(stopped.length, 'checks ended by the breaker').toBeGreaterThan(100);
    // The terminal says it once, with the count, instead of a FAIL line per check.
    const failLines = r.stderr.split('\n').filter((l) => l.startsWith('  FAIL '));
    expect(failLines.length, failLines.slice(0, 5).join('\n')).toBeLessThan(15);
    const more = /FAIL (\d+) more checks, each for the same reason: the target stopped answering/.exec(r.stderr);
    expect(more, tail).not.toBeNull();
    expect(Number(more![1])).toBeGreaterThan(stopped.length - failLines.length - 10);
    for (const c of ran) {
      expect(c.outcome, `${c.id}: ${c.detail}`).toBe('fail');
      expect(c.detail ?? '', c.id).not.toMatch(/^harness error/);
    }
    for (const c of stopped) {
      expect(c.evidence?.length ?? 0, `${c.id} carries the attempts`).toBeGreaterThanOrEqual(3);
      for (const ex of c.evidence!.slice(-3)) expect(ex.error?.kind, `${c.id}: ${JSON.stringify(ex).slice(0, 300)}`).toBe('timeout');
    }
    for (const f of fs.readdirSync(out).filter((x) => x !== 'test-results')) {
      const text = fs.readFileSync(path.join(out, f), 'utf8');
      for (const key of Object.values(KEYS)) expect(text, f).not.toContain(key);
    }
  });
}
