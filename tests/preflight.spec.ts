// The preflight of `conformance run` against the reference sandbox reached through the wrong base URL (issue 30):
// a path prefix where the API is not (`http://host:port/api`) or the API's own prefix (`…/external/v1`, which the
// harness adds itself). The sandbox answers such paths 404 with a JSON body that is not the §7 error body, and
// serves no OpenAPI document there: the run ends before any check in ONE line naming the base URL and the likely
// cause, exit 2, never as hundreds of failed checks. The same API mounted under a prefix by a proxy (the base URL
// then names the prefix) passes the preflight and is judged.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { expectOneLine, runCli, type CliResult } from './helpers/cli-process.ts';

test.describe.configure({ mode: 'serial', timeout: 300_000 });

let ref: ReferenceHandle;
let dir: string;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  ref = await startReference({ timeoutMs: 200_000 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-preflight-'));
});

test.afterAll(async () => {
  await ref?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');


const run = (target: string, out: string, extra: string[] = []) =>
  runCli(['run', '--target', target, '--profile', ref.profilePath, '--out', path.join(dir, out), ...extra], { timeoutMs: 240_000, sampleMs: 0 });

test('a path prefix where the API is not: one line naming the base URL, the prefix and where the API answers; exit 2, no report', async () => {
  const target = `${ref.baseUrl}/api`;
  const r = await run(target, 'prefix');
  expectOneLine(r, new RegExp(`^conformance: target ${esc(target)} does not look like the Clinical Encounter Public API \\(GET /external/v1/encounters without a key answered 404 application/json that is not the §7 error body\\); the base URL's path prefix /api is the likely cause: the API answers at ${esc(ref.baseUrl)} `));
  expect(r.ms).toBeLessThan(30_000);
  expect(fs.existsSync(path.join(dir, 'prefix', 'conformance.json'))).toBe(false);
  // The full key is never echoed, and no check ran.
  expect(r.stderr).not.toMatch(/passed|failed/);
});

test('a base URL ending in /external/v1 (the harness adds it): the base URL without it is named', async () => {
  const target = `${ref.baseUrl}/external/v1`;
  const r = await run(target, 'doubled');
  expectOneLine(r, new RegExp(`the base URL's path prefix /external/v1 is the likely cause: the API answers at ${esc(ref.baseUrl)} `));
});

test('a prefix under which nothing answers as the API, and no API at the origin either: the prefix is still named', async () => {
  // A web server that answers every path with its own JSON 404 (no reason_code), the API nowhere.
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 404, message: 'Not Found', path: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const withPrefix = await run(`${base}/v2`, 'nowhere');
    expectOneLine(withPrefix, /the base URL's path prefix \/v2 is the likely cause: no route of this API answers under it/);
    // Without a path there is no prefix to blame: the line says what was seen.
    const bare = await run(base, 'nowhere-bare');
    expectOneLine(bare, new RegExp(`^conformance: target ${esc(base)} does not look like the Clinical Encounter Public API \\(GET /external/v1/encounters without a key answered 404 application/json that is not the §7 error body\\)$`));
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('the same API mounted under /api by a proxy passes the preflight and is judged (a prefix is not refused as such)', async () => {
  const up = new URL(ref.baseUrl);
  const proxy = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/api/')) {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such path');
      return;
    }
    const p = http.request({ host: up.hostname, port: up.port, method: req.method, path: url.slice(4), headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    p.on('error', () => res.destroy());
    req.pipe(p);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  try {
    const r = await run(`${base}/api`, 'mounted', ['--grep', '(?:^|\\s)query-grammar-sort-order-trailing-space-rejected$']);
    expect(r.stderr).not.toMatch(/does not look like/);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'mounted', 'conformance.json'), 'utf8')) as { checks: { id: string; outcome: string }[] };
    expect(report.checks.map((c) => [c.id, c.outcome])).toEqual([['query-grammar-sort-order-trailing-space-rejected', 'pass']]);
  } finally {
    proxy.closeAllConnections();
    proxy.close();
  }
});
