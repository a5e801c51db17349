// `npm run bench` part `distant`: a target far away. The reference (sandbox) runs behind a proxy that holds every
// answer BENCH_DELAY_MS (default 150 ms) before passing it on, and `conformance run --profile P --target <proxy>
// --allow-incomplete` is timed whole, BENCH_ROUNDS times (median). What it shows: a distant target costs latency ×
// requests ÷ what is in flight, not ÷ workers; the issue asked for ≤ 20 s at 150 ms.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startReference } from '../engine/reference/process.ts';

export interface DistantRun {
  delayMs: number;
  wallS: number[];
  medianS: number;
  exitCodes: (number | null)[];
  counts: string | null;
  /** Requests that went through the proxy in the last run. */
  requests: number;
}

/** A proxy on 127.0.0.1 that forwards every request to `upstream` and holds each answer `delayMs` first. */
export function delayProxy(upstream: string, delayMs: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  const u = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let count = 0;
  const server = http.createServer((req, res) => {
    count++;
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      setTimeout(() => {
        const up = http.request({ host: u.hostname, port: u.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            res.end(Buffer.concat(chunks));
          });
        });
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(body));
      }, delayMs);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as import('node:net').AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests: () => count,
        close: () => new Promise<void>((r) => {
          agent.destroy();
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    });
  });
}

function runOnce(root: string, profile: string, target: string): Promise<{ wallS: number; code: number | null; text: string }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-bench-distant-'));
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'cli/conformance.mjs'), 'run', '--profile', profile, '--target', target, '--allow-incomplete', '--out', out], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => {
      fs.rmSync(out, { recursive: true, force: true });
      resolve({ wallS: Math.round((performance.now() - started) / 10) / 100, code, text });
    });
  });
}

export async function distant(root: string, rounds: number, log: (m: string) => void, delayMs = Number(process.env.BENCH_DELAY_MS ?? 150)): Promise<DistantRun> {
  const ref = await startReference();
  const proxy = await delayProxy(ref.baseUrl, delayMs);
  const walls: number[] = [];
  const codes: (number | null)[] = [];
  let counts: string | null = null;
  let requests = 0;
  try {
    for (let i = 0; i < rounds; i++) {
      const before = proxy.requests();
      const r = await runOnce(root, ref.profilePath, proxy.url);
      requests = proxy.requests() - before;
      walls.push(r.wallS);
      codes.push(r.code);
      counts = /conformance: ([0-9]+ passed, [0-9]+ failed[^\n]*)/.exec(r.text)?.[1] ?? null;
      log(`distant (${delayMs} ms): run ${i + 1}: ${r.wallS} s, exit ${r.code}, ${requests} requests through the proxy (${counts ?? r.text.trim().split('\n').pop()})`);
    }
  } finally {
    await proxy.close();
    await ref.stop();
  }
  const sorted = [...walls].sort((a, b) => a - b);
  const m = Math.floor(sorted.length / 2);
  const medianS = sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  return { delayMs, wallS: walls, medianS, exitCodes: codes, counts, requests };
}
