// Writing a JSON answer on the wire. sendJson is the plain writer; the variants of the areas http and json
// (framing, header casing, extra headers, key order, whitespace, escapes) choose another writer of the same
// value, sendWithVariants, which exists for them alone. Used by every route of server.ts.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { VariantName } from './variants.ts';

export type Variants = ReadonlySet<VariantName>;
export const NO_VARIANTS: Variants = new Set();

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, v: Variants = NO_VARIANTS): void {
  if (v.size === 0) {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
    return;
  }
  sendWithVariants(res, status, body, headers, v);
}

/** Reverses the member order of every object (variant json-key-order-reversed). */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, x]) => [k, reverseKeys(x)]));
}

/** The same answer as sendJson, written the way the variants of the areas http and json choose. */
function sendWithVariants(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string>, v: Variants): void {
  const value = v.has('json-key-order-reversed') ? reverseKeys(body) : body;
  let text = v.has('json-pretty-printed') ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value);
  if (v.has('json-escaped-text')) text = text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replaceAll('/', '\\/');
  const isError = status >= 400 && status !== 405;
  let contentType = extra['content-type'] ?? (isError && v.has('http-error-json-suffix') ? 'application/vnd.clinical-encounter.error+json' : 'application/json');
  if (extra['content-type'] === undefined && v.has('http-content-type-charset')) contentType += '; charset=utf-8';
  const headers: Record<string, string | number> = { ...extra, 'content-type': contentType, 'cache-control': 'no-store' };
  if (v.has('http-extra-headers')) {
    Object.assign(headers, { 'x-request-id': crypto.randomUUID(), vary: 'Accept-Encoding', 'strict-transport-security': 'max-age=63072000', etag: `"${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}"`, 'x-content-type-options': 'nosniff' });
    if (status === 401) headers['www-authenticate'] = 'Bearer realm="external-v1", error="invalid_token"';
  }
  if (v.has('http-connection-close')) headers.connection = 'close';
  const chunked = v.has('http-chunked');
  if (!chunked) headers['content-length'] = Buffer.byteLength(text);
  // Variant http-header-casing: names written in other cases on the wire (RFC 9110 §5.1: case-insensitive).
  const named = v.has('http-header-casing')
    ? Object.fromEntries(Object.entries(headers).map(([k, x], i) => [i % 2 === 0 ? k.toUpperCase() : k.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()), x]))
    : headers;
  res.writeHead(status, named);
  if (!chunked) return void res.end(text);
  // Two chunks at least, so the framing is really chunked (node:http chooses it when no content-length is set).
  const half = Math.floor(text.length / 2);
  res.write(text.slice(0, half));
  res.end(text.slice(half));
}
