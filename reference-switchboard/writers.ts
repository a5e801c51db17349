// The variants of the areas http and json: another writer of the same JSON value (framing, header casing, extra
// headers, key order, whitespace, escapes), the named point writeJson of the reference (reference-impl/send.ts
// sendJson is the plain one). Several may be on at once; one writer does what all of them switched on ask.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Writer } from '../reference-impl/context.ts';
import type { VariantName } from './variants.ts';

type Variants = ReadonlySet<VariantName>;

/** The variants this writer serves. */
export const WRITER_VARIANTS = [
  'http-chunked', 'http-connection-close', 'http-content-type-charset', 'http-error-json-suffix', 'http-header-casing', 'http-extra-headers',
  'json-pretty-printed', 'json-key-order-reversed', 'json-escaped-text',
] as const satisfies readonly VariantName[];

/** The writer of the variants switched on. */
export const writerFor = (v: Variants): Writer => (res, status, body, headers = {}) => sendWithVariants(res, status, body, headers, v);

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
