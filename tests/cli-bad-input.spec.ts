// Bad input to the `conformance` CLI: every mistake a user can make with options, profiles and targets
// ends in exit 2 and ONE line `conformance: <reason naming the problem>` on stderr, never a stack trace
// and never a run of checks. Extends tests/cli.spec.ts (which covers the first example of each kind:
// --bogus, an unknown command, an absent profile file, a profile with an unknown field / an ftp baseUrl /
// broken JSON, a dead port, --shard 3/2, --seed abc, --db sqlite, a bad --grep, a bad waiver file).
//
// "Not this API" (engine/preflight.ts `probe`): a complete answer to GET /external/v1/encounters without
// a key that is not JSON at all (HTML, plain text, a redirect, an empty body without a content type)
// means the base URL reaches something else. A JSON answer, however wrong, is left to the checks (exit 1
// with a report; tests/cli.spec.ts shows it with a target answering 200 {} to everything), and so is a
// JSON object labelled text/plain (issue 12: a defect is a verdict, not a setup error). A target that
// accepts the connection and does not answer the probe within its 5 s is a setup error
// (tests/hostile-targets.spec.ts: hang, drip).
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expectOneLine, runCli, type CliResult } from './helpers/cli-process.ts';

/** Folders this file made: removed when its tests end (they hold profiles, some with keys). */
const made: string[] = [];
test.afterAll(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-bad-input-'));
  made.push(d);
  return d;
}

function write(dir: string, name: string, data: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof data === 'string' ? data : JSON.stringify(data));
  return f;
}

const cli = (args: string[]) => runCli(args, { timeoutMs: 30_000, sampleMs: 0 });


const OK_PROFILE = { name: 'x', baseUrl: 'http://127.0.0.1:9', credentials: { full: { key: 'k_live_bad_input_0123456789' } } };

/** A local server answering every request the same way. */
async function serveAll(handler: http.RequestListener): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test.describe('malformed profiles', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a credential with neither key nor keyEnv', { ...OK_PROFILE, credentials: { full: {} } }, /field \/credentials\/full must give exactly one of "key" or "keyEnv"$/],
    ['a credential with both key and keyEnv', { ...OK_PROFILE, credentials: { full: { key: 'k_live_both_0123456789', keyEnv: 'FULL_KEY' } } }, /field \/credentials\/full must give exactly one of "key" or "keyEnv"$/],
    ['an unknown credential role', { ...OK_PROFILE, credentials: { admin: { key: 'k_live_admin_0123456789' } } }, /field \/credentials must NOT have additional properties 'admin'$/],
    ['a keyEnv that is not a variable name', { ...OK_PROFILE, credentials: { full: { keyEnv: 'my key' } } }, /field \/credentials\/full\/keyEnv must match pattern/],
    ['a baseUrl without a scheme', { ...OK_PROFILE, baseUrl: 'localhost:8080' }, /field \/baseUrl must match pattern/],
    ['a baseUrl with a query', { ...OK_PROFILE, baseUrl: 'http://127.0.0.1:9/?x=1' }, /field \/baseUrl must match pattern/],
    ['a missing baseUrl', { name: 'x', credentials: {} }, /field \(root\) must have required property 'baseUrl'$/],
    ['a request timeout below the minimum', { ...OK_PROFILE, timeouts: { requestMs: 5 } }, /field \/timeouts\/requestMs must be >= 100$/],
    ['a resource without its id', { ...OK_PROFILE, resources: { own_encounter: {} } }, /field \/resources\/own_encounter must have required property 'encounter_id'$/],
    ['an array instead of an object', [], /field \(root\) must be object$/],
    ['JSON null', 'null', /field \(root\) must be object$/],
    ['an empty file', '', /is not valid JSON: Unexpected end of JSON input$/],
  ];
  for (const [what, data, re] of cases) {
    test(`${what} is named`, async () => {
      const file = write(tmp(), 'p.json', data);
      const r = await cli(['run', '--profile', file]);
      expectOneLine(r, re);
      expect(r.stderr).toContain(file);
      expect(r.stderr).not.toContain('k_live_'); // a profile error never echoes a key
    });
  }

  test('a profile path that is a folder is named', async () => {
    const dir = tmp();
    expectOneLine(await cli(['run', '--profile', dir]), new RegExp(`cannot read profile ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: EISDIR$`));
  });

  test('--profile without a value', async () => {
    expectOneLine(await cli(['run', '--profile']), /'--profile <value>' argument missing/);
  });
});

test.describe('bad options', () => {
  const cases: [string[], RegExp][] = [
    [['run', 'extra'], /unexpected argument extra \(see conformance run --help\)$/],
    [['serve', '--bogus'], /unknown option --bogus \(see conformance serve --help\)$/],
    [['merge', '--out', '/tmp/x', '--bogus'], /unknown option --bogus \(see conformance merge --help\)$/],
    [['run', '--shard', '1'], /--shard must be I\/N with 1 <= I <= N \(got 1\)$/],
    [['run', '--shard', '0/2'], /--shard must be I\/N with 1 <= I <= N \(got 0\/2\)$/],
    [['run', '--shard', '1/0'], /--shard must be I\/N with 1 <= I <= N \(got 1\/0\)$/],
    [['run', '--shard', 'a/b'], /--shard must be I\/N .*\(got a\/b\)$/],
    [['run', '--shard', '1/2/3'], /--shard must be I\/N .*\(got 1\/2\/3\)$/],
    [['run', '--seed', '1.5'], /--seed must be an integer \(got 1\.5\)$/],
    [['run', '--seed', '1e3'], /--seed must be an integer \(got 1e3\)$/],
    [['run', '--seed='], /--seed must be an integer \(got \)$/],
    [['run', '--seed', '99999999999'], /--seed must be an integer \(got 99999999999\)$/],
    [['run', '--workers', '0'], /--workers must be a positive integer \(got 0\)$/],
    [['run', '--in-flight', '0'], /--in-flight must be a positive integer \(got 0\)$/],
    [['run', '--property-runs', 'many'], /--property-runs must be a positive integer \(got many\)$/],
    [['serve', '--db', 'mongo'], /--db must be one of embedded, container, url \(got mongo\)$/],
    [['serve', '--port', '99999'], /--port must be 0\.\.65535 \(got 99999\)$/],
    [['run', '--grep', 'x', '--requirement', 'AUTH-401-INVALID-KEY'], /use either --grep or --requirement, not both$/],
    [['run', '--requirement', 'NO-SUCH-REQUIREMENT'], /--requirement NO-SUCH-REQUIREMENT is not in the requirement catalog$/],
  ];
  for (const [args, re] of cases) {
    test(`conformance ${args.join(' ')}`, async () => {
      expectOneLine(await cli(args), re);
    });
  }

  test('--db with --profile is refused (the database belongs to the reference)', async () => {
    const file = write(tmp(), 'p.json', OK_PROFILE);
    expectOneLine(await cli(['run', '--db', 'url', '--profile', file]), /--db applies only when the reference is started \(without --profile\)$/);
  });

  test('a missing waiver file is named', async () => {
    const dir = tmp();
    const file = path.join(dir, 'absent-waivers.json');
    expectOneLine(await cli(['run', '--waivers', file, '--profile', write(dir, 'p.json', OK_PROFILE)]), /cannot read waivers .*absent-waivers\.json: ENOENT$/);
  });
});

test.describe('bad targets', () => {
  test('--target that is not an http(s) URL is named', async () => {
    const file = write(tmp(), 'p.json', OK_PROFILE);
    for (const target of ['localhost:8080', 'ftp://127.0.0.1/', 'http://127.0.0.1:9/?x=1']) {
      expectOneLine(await cli(['run', '--target', target, '--profile', file]), new RegExp(`--target ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: field /baseUrl must match pattern`));
    }
  });

  test('a port outside 1..65535 is a bad base URL, not an internal error', async () => {
    const file = write(tmp(), 'p.json', OK_PROFILE);
    for (const port of ['99999', '0']) {
      expectOneLine(await cli(['run', '--target', `http://127.0.0.1:${port}`, '--profile', file]), new RegExp(`baseUrl has a port outside 1\\.\\.65535: http://127\\.0\\.0\\.1:${port}$`));
    }
  });

  test('a host name that does not resolve is unreachable', async () => {
    const file = write(tmp(), 'p.json', { ...OK_PROFILE, baseUrl: 'http://no-such-host.invalid' });
    expectOneLine(await cli(['run', '--profile', file]), /^conformance: target http:\/\/no-such-host\.invalid is unreachable: dns \(one TCP connection to no-such-host\.invalid:80 was tried\): is the host name right, and resolvable from here\? The profile's baseUrl, or --target, names it$/);
  });

  const notApi: [string, http.RequestListener, RegExp][] = [
    ['an HTML page on every path', (_q, s) => { s.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); s.end('<!doctype html><title>Welcome</title>'); }, /answered 200 text\/html\)$/],
    ['a login redirect', (_q, s) => { s.writeHead(302, { location: '/login?next=%2Fexternal', 'content-length': '0' }); s.end(); }, /answered 302 with an empty body and no content type, redirecting to \/login\?next=%2Fexternal\)$/],
    ['a plain-text 404 (a server without this route)', (_q, s) => { s.writeHead(404, { 'content-type': 'text/plain' }); s.end('Cannot GET /external/v1/encounters'); }, /answered 404 text\/plain\)$/],
    ['a proxy error page', (_q, s) => { s.writeHead(502, { 'content-type': 'text/html' }); s.end('<h1>502 Bad Gateway</h1>'); }, /answered 502 text\/html\)$/],
    ['an empty 200 without a content type', (_q, s) => { s.writeHead(200, { 'content-length': '0' }); s.end(); }, /answered 200 with an empty body and no content type\)$/],
  ];
  for (const [what, handler, re] of notApi) {
    test(`${what} does not look like the API`, async () => {
      const server = await serveAll(handler);
      try {
        const file = write(tmp(), 'p.json', OK_PROFILE);
        const r = await cli(['run', '--target', server.baseUrl, '--profile', file, '--out', path.join(tmp(), 'out')]);
        const base = server.baseUrl.replace(/[.]/g, '\\.');
        expectOneLine(r, new RegExp(`^conformance: target ${base} does not look like the Clinical Encounter Public API \\(GET /external/v1/encounters without a key answered `));
        expectOneLine(r, re);
        expect(r.ms).toBeLessThan(10_000);
      } finally {
        await server.close();
      }
    });
  }

  test('JSON error bodies labelled text/plain are judged: exit 1, the content-type check fails with evidence', async () => {
    const body = JSON.stringify({ error: 'api_key_unauthorized', reason_code: 'missing_bearer', message: 'Missing bearer token', field: null });
    const server = await serveAll((_q, s) => {
      s.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' });
      s.end(body);
    });
    try {
      const dir = tmp();
      const out = path.join(dir, 'out');
      const r = await runCli(['run', '--target', server.baseUrl, '--profile', write(dir, 'p.json', OK_PROFILE), '--out', out, '--grep', '(?:^|\\s)auth-missing-bearer-list$'], { timeoutMs: 120_000, sampleMs: 0 });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/does not look like the Clinical Encounter Public API/);
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { checks: { id: string; outcome: string; detail?: string; evidence?: { response?: { headers: Record<string, string>; body: string } }[] }[] };
      const c = report.checks.find((x) => x.id === 'auth-missing-bearer-list');
      expect(c?.outcome).toBe('fail');
      expect(c?.detail).toMatch(/not labelled application\/json.*text\/plain/);
      expect(c?.evidence?.[0].response?.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(c?.evidence?.[0].response?.body).toBe(body);
    } finally {
      await server.close();
    }
  });

  test('a text/plain body that is not JSON is still not this API', async () => {
    const server = await serveAll((_q, s) => {
      s.writeHead(401, { 'content-type': 'text/plain' });
      s.end('Unauthorized');
    });
    try {
      const r = await cli(['run', '--target', server.baseUrl, '--profile', write(tmp(), 'p.json', OK_PROFILE), '--out', path.join(tmp(), 'out')]);
      expectOneLine(r, /does not look like the Clinical Encounter Public API \(GET \/external\/v1\/encounters without a key answered 401 text\/plain\)$/);
    } finally {
      await server.close();
    }
  });

  test('the identity probe sends no key, and a 401 JSON error passes it', async () => {
    const seen: (string | undefined)[] = [];
    // Answers like the API to the probe, then the report folder cannot be created: the run stops there,
    // which proves the probe let it through without running any check.
    const server = await serveAll((q, s) => {
      seen.push(q.headers.authorization);
      s.writeHead(401, { 'content-type': 'application/json' });
      s.end(JSON.stringify({ error: 'api_key_unauthorized', reason_code: 'missing_bearer', message: 'no key', field: null }));
    });
    try {
      const dir = tmp();
      const notADir = write(dir, 'a-file', 'x');
      const r = await cli(['run', '--target', server.baseUrl, '--profile', write(dir, 'p.json', OK_PROFILE), '--out', notADir]);
      expectOneLine(r, new RegExp(`cannot write reports to ${notADir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOTDIR$`));
      expect(seen).toEqual([undefined]);
    } finally {
      await server.close();
    }
  });

  // Node's recursive mkdirSync never returns under /proc; the CLI creates the folder one level at a time.
  test('a report folder under /proc is a setup error, not a hang, for run and merge', async () => {
    const dir = tmp();
    const r = await cli(['run', '--out', '/proc/conformance-x/y', '--db', 'sqlite']);
    expectOneLine(r, /--db must be one of/); // option errors still come first
    const run = await cli(['run', '--out', '/proc/conformance-x/y']);
    expectOneLine(run, /cannot write reports to \/proc\/conformance-x\/y: ENOENT$/);
    const shard = path.join(dir, 'shard');
    fs.mkdirSync(shard);
    write(shard, 'outcomes.json', { version: 1, checks: [] });
    expectOneLine(await cli(['merge', '--out', '/proc/conformance-x', shard]), /cannot write reports to \/proc\/conformance-x: ENOENT$/);
  });

  // The reference starts while Playwright loads (cli/main.ts); when it fails, Playwright's output about
  // the aborted run is dropped: after the progress line naming the start, one line gives the reason.
  test('a reference that cannot start: exit 2, the reason in one line, nothing of the aborted run', async () => {
    const r = await runCli(['run', '--db', 'url', '--out', path.join(tmp(), 'out')], { timeoutMs: 60_000, sampleMs: 0, env: { DATABASE_URL: '' } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'conformance: starting the reference implementation (--db url)',
      expect.stringMatching(/^conformance: reference implementation did not start: .*--db url needs DATABASE_URL=/),
    ]);
  });
});

test('an error line longer than the limit ends at a word and says how much was left out (never cut mid-word)', async () => {
  const { errorExit, SetupError } = await import('../cli/errors.ts');
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
  const { line } = errorExit(new SetupError(words));
  expect(line.length).toBeLessThanOrEqual(1220);
  expect(line).toMatch(/ word\d+ … \(\d+ more characters\)$/);
  const short = errorExit(new SetupError('short and whole'));
  expect(short.line).toBe('conformance: short and whole');
});
