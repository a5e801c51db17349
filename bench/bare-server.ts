// The baseline of the throughput benchmark: a bare node:http server in its own process that answers every
// GET with a fixed, pre-serialised JSON body. BODIES is a JSON file mapping a path to the exact body bytes
// the reference sent for it, so both servers put the same number of bytes on the wire.
//   node bench/bare-server.ts BODIES.json
// stdout carries one line, {"event":"ready","baseUrl":"http://127.0.0.1:PORT"}.
import fs from 'node:fs';
import http from 'node:http';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/bare-server.ts BODIES.json\n');
  process.exit(2);
}
const bodies = new Map<string, Buffer>(Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>).map(([p, body]) => [p, Buffer.from(body, 'utf8')]));
const notFound = Buffer.from('{"error":"not_found"}');

const server = http.createServer((req, res) => {
  const body = bodies.get(req.url ?? '/');
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': (body ?? notFound).length });
  res.end(body ?? notFound);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ event: 'ready', baseUrl: `http://127.0.0.1:${port}` })}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
