// Counts the requests of one target run by route and query shape (a diagnostic for the bench, not part of it):
// node bench/count-requests.ts — starts the reference, runs `conformance run --profile P --target <proxy>` and
// prints the requests grouped by path pattern, most first.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { startReference } from '../engine/reference/process.ts';

const root = path.resolve(import.meta.dirname, '..');
const ref = await startReference();
const u = new URL(ref.baseUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const seen = new Map<string, number>();
const shapes = new Map<string, number>();
// A key is printed as the order it was first met in (`key#3`), never any part of it; a signed URL without its query.
const keys = new Map<string, string>();
const keyLabel = (auth: string | undefined) => (auth ? (keys.get(auth) ?? (keys.set(auth, `key#${keys.size + 1}`), keys.get(auth)!)) : 'no key');
const shown = (url: string) => (url.startsWith('/external/') || url.startsWith('/openapi/') ? url : url.replace(/\?.*$/, '?[query not shown]'));
const server = http.createServer((req, res) => {
  const url = req.url ?? '';
  const id = `${shown(url)} ${keyLabel(req.headers.authorization)}`;
  seen.set(id, (seen.get(id) ?? 0) + 1);
  const shape = url.replace(/\?.*/, '').replace(/\/external\/v1\/encounters\/[^/]+/, '/enc/:id').replace(/documents\/[^/]+/, 'documents/:doc');
  shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
  const up = http.request({ host: u.hostname, port: u.port, method: req.method, path: url, headers: req.headers, agent }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const port = (server.address() as import('node:net').AddressInfo).port;
const code = await new Promise((resolve) => {
  const child = spawn(process.execPath, [path.join(root, 'cli/conformance.mjs'), 'run', '--profile', ref.profilePath, '--target', `http://127.0.0.1:${port}`, '--allow-incomplete', '--out', '/tmp/rq/out', ...process.argv.slice(2)], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('close', resolve);
});
const total = [...shapes.values()].reduce((a, b) => a + b, 0);
const repeated = [...seen.values()].filter((n) => n > 1).reduce((a, n) => a + n - 1, 0);
console.log(`exit ${code}; ${total} requests, ${seen.size} distinct (request target + key), ${repeated} repeats`);
for (const [k, v] of [...shapes.entries()].sort((a, b) => b[1] - a[1])) console.log(`${String(v).padStart(6)} ${k}`);
for (const [k, v] of [...seen.entries()].filter(([, n]) => n > 1).sort((a, b) => b[1] - a[1]).slice(0, 80)) console.log(`  x${v} ${k}`);
server.close();
agent.destroy();
await ref.stop();
process.exit(0);
