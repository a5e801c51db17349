// `conformance client --watch`: a client driven by hand against the sandbox, recorded until --duration (or
// Ctrl-C), then judged like a command's traffic. The test plays the partner: it reads the printed base URL
// and profile, sends a few requests (one with the key in the query), and expects the run to name the check.
import { test, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHIM } from './helpers/cli-process.ts';

test('--watch records a hand-driven client until --duration and judges it (NOT CONFORMANT on a key in the query, exit 1)', async () => {
  test.setTimeout(180_000);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-watch-'));
  const child = spawn(process.execPath, [SHIM, 'client', '--watch', '--duration', '12', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  const ready = new Promise<{ baseUrl: string; profile: string }>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const base = /sandbox for your client at (\S+)/.exec(stderr);
      const prof = /profile \(keys by role, resource ids\) in (\S+)/.exec(stderr);
      if (base && prof) resolve({ baseUrl: base[1], profile: prof[1] });
    });
    child.on('close', () => reject(new Error(`client --watch ended before it was ready: ${stderr}`)));
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const { baseUrl, profile } = await ready;
  const p = JSON.parse(fs.readFileSync(profile, 'utf8')) as { credentials: { full: { key: string } } };
  const key = p.credentials.full.key;
  const auth = { authorization: `Bearer ${key}` };
  expect((await fetch(`${baseUrl}/external/v1/encounters?limit=5`, { headers: auth })).status).toBe(200);
  expect((await fetch(`${baseUrl}/external/v1/encounters?limit=5&api_key=${encodeURIComponent(key)}`, { headers: auth })).status).toBe(400);
  const code = await closed;
  expect(code, stderr).toBe(1);
  expect(stderr).toMatch(/recorded 2 API requests/);
  expect(stdout).toMatch(/NOT CONFORMANT — client: /);
  expect(stdout).toMatch(/FAIL client-key-only-in-authorization-header: a key was sent in the request target/);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { run: { subject: string }; checks: { id: string; outcome: string }[] };
  expect(report.run.subject).toBe('client');
  expect(report.checks.find((c) => c.id === 'client-key-only-in-authorization-header')?.outcome).toBe('fail');
  // The key never leaves the run in clear: not in the CLI's output, not in the reports.
  expect(stdout + stderr).not.toContain(key);
  for (const f of ['conformance.json', 'junit.xml', 'conformance.html']) expect(fs.readFileSync(path.join(out, f), 'utf8')).not.toContain(key);
  fs.rmSync(out, { recursive: true, force: true });
});
