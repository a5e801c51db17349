// A counting stand-in for the REST API (§4) that a webhook receiver calls for its follow-up fetches.
// It answers every encounter, document and transcript read with a small contract-shaped body and
// counts each request, so a receiver suite can tell whether a delivery led to follow-up work
// (WEBHOOK-SIG-FAIL-NO-FOLLOWUP). Local port only; it never judges the calls it gets.
// The count can also be read over HTTP (`countEndpoint()`, on a port of its own so the receiver's view of
// the API is untouched): the sandbox receiver is started once per run by the CLI's global setup, and the
// receiver suite reads the count from a worker process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingApiCall {
  method: string;
  path: string;
  /** True when the request carried `Authorization: Bearer <apiKey>`. */
  authorized: boolean;
}

export interface CountingApi {
  /** Base address (no /external/v1). */
  baseUrl: string;
  /** The key the fake accepts; register it with the redaction layer where it could be printed. */
  apiKey: string;
  calls: CountingApiCall[];
  /** Every request so far (monotonic): the receiver suite's follow-up probe. */
  count(): number;
  /**
   * Serves the count as `{"count": N}` on GET at a URL of its own (another local port, so nothing a
   * receiver fetches can reach it or be mistaken for it); started on the first call, closed by close().
   */
  countEndpoint(): Promise<string>;
  close(): Promise<void>;
}

const STAMP = '2026-05-01T00:00:00Z';

function body(path: string): { status: number; json: unknown } {
  const parts = path.split('/').map(decodeURIComponent);
  // ['', 'external', 'v1', 'encounters', enc, 'documents', doc, 'transcript']
  if (parts[1] !== 'external' || parts[2] !== 'v1' || parts[3] !== 'encounters' || parts.length < 5) {
    return { status: 404, json: { error: 'not_found' } };
  }
  const enc = parts[4];
  if (parts.length === 5) {
    return { status: 200, json: { encounter: { encounter_id: enc, organization_id: 'org_counting', created_at: STAMP, updated_at: STAMP, documents: [] } } };
  }
  const doc = parts[6];
  if (parts.length === 7 && parts[5] === 'documents') {
    return { status: 200, json: { document: { document_id: doc, encounter_id: enc, schema_type: 'ambient_transcript', created_at: STAMP, updated_at: STAMP } } };
  }
  if (parts.length === 8 && parts[7] === 'transcript') {
    return { status: 200, json: { document_id: doc, encounter_id: enc, transcript: { provider: 'counting', turns: [] } } };
  }
  return { status: 404, json: { error: 'not_found' } };
}

/** GET of a count endpoint: the number of follow-up fetches so far, for a worker in another process. */
export async function readCount(countUrl: string, timeoutMs = 5_000): Promise<number> {
  const res = await fetch(countUrl, { signal: AbortSignal.timeout(timeoutMs) });
  const body = (await res.json()) as { count?: unknown };
  if (res.status !== 200 || typeof body.count !== 'number') throw new Error(`the follow-up count at ${countUrl} answered ${res.status} without a count`);
  return body.count;
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function shut(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

export async function startCountingApi(apiKey = 'cek_live_counting_api_key_0001'): Promise<CountingApi> {
  const calls: CountingApiCall[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    calls.push({ method: req.method ?? 'GET', path, authorized: req.headers.authorization === `Bearer ${apiKey}` });
    req.resume();
    const { status, json } = body(path);
    const text = JSON.stringify(json);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
  const port = await listen(server);
  let counter: Promise<{ server: http.Server; url: string }> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    calls,
    count: () => calls.length,
    countEndpoint() {
      counter ??= (async () => {
        const s = http.createServer((req, res) => {
          req.resume();
          const text = JSON.stringify(req.method === 'GET' ? { count: calls.length } : { error: 'method_not_allowed' });
          res.writeHead(req.method === 'GET' ? 200 : 405, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
        });
        return { server: s, url: `http://127.0.0.1:${await listen(s)}/count` };
      })();
      return counter.then((c) => c.url);
    },
    async close() {
      await shut(server);
      if (counter) await counter.then((c) => shut(c.server), () => undefined);
    },
  };
}
