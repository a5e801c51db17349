// Writing a JSON answer on the wire: sendJson, the plain writer. Where an answer of the API or the served
// contract is written, the writer is the named point writeJson (context.ts), so another writer of the same value
// may take its place. Used by every route of server.ts.
import type http from 'node:http';

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
