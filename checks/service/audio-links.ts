// §2.6/§4.5/§8 audio links that work: the signed URL is short-lived (expires_at ahead of now and not absurdly
// far: the lifetime is noted, more than 7 days fails) and, when the profile says the URL is reachable from
// where the harness runs (resources.audio_url_reachable), fetching it once before expires_at gives the audio
// bytes; where the profile also offers the switch that makes the URL expire within seconds (the sandbox's
// audio_url_expires_soon), storage refuses the URL once expires_at has passed (the one deliberate use after
// expiry, on a URL handed out for that purpose). The URL is a secret: registered with the redaction layer the
// moment it is read, never printed, and the storage request is recorded as evidence without its target or body.
import { suite } from '../../engine/declare.ts';
import { expectSuccess, fail } from '../../judge/assertions.ts';
import { NotVerified, type Exchange } from '../../record/record.ts';
import { sendRaw, TransportError } from '../../observe/http.ts';
import { instantNs } from '../../observe/list-walk.ts';
import { registerSecret } from '../../record/redact.ts';
import type { CheckApi } from '../../observe/target.ts';
import type { FaultName } from '../../profile/profile.ts';

const check = suite(import.meta.filename, { waits: true });

const seg = encodeURIComponent;
/** The longest lifetime the major object stores allow a presigned URL (AWS SigV4: 7 days). */
const MAX_LIFETIME_S = 7 * 86_400;
const CLOCK_SKEW_MS = 5_000;

/** Reads an audio URL response; the URL and its parts are registered as secrets before anything can print them. */
async function audioUrl(api: CheckApi, faults: FaultName[] = []): Promise<{ url: string; expiresMs: number; expiresAt: string }> {
  const d = faults.includes('audio_url_expires_soon') ? api.faultDocument('audio_url_expires_soon', 'ambient_transcript_with_audio') : api.document('ambient_transcript_with_audio');
  const ex = await api.get(`/external/v1/encounters/${seg(d.encounter_id)}/documents/${seg(d.document_id)}/audio`, { faults });
  let url: unknown;
  try {
    url = (JSON.parse(ex.response?.body ?? 'null') as { audio_url?: unknown } | null)?.audio_url;
  } catch {
    /* not JSON: expectSuccess reports it */
  }
  if (typeof url === 'string') {
    registerSecret(url);
    if (URL.canParse(url)) {
      const u = new URL(url);
      registerSecret(`${u.pathname}${u.search}`);
      registerSecret(u.search.slice(1));
      for (const v of u.searchParams.values()) if (v.length >= 16) registerSecret(v);
    }
  }
  const body = expectSuccess<{ audio_url: string; expires_at: string }>(ex, 'getPublicEncounterDocumentAudio');
  const expires = instantNs(body.expires_at);
  if (expires === undefined) fail('expires_at is not an RFC 3339 date-time', JSON.stringify(body.expires_at));
  return { url: body.audio_url, expiresMs: Number(expires / 1_000_000n), expiresAt: body.expires_at };
}

/** Fetches the audio URL once; recorded as evidence without its target or body. */
async function fetchAudio(api: CheckApi, url: string): Promise<Exchange> {
  const u = new URL(url);
  // Profile request headers go only to the target's own origin, never to another host.
  const sameOrigin = new URL(api.target.profile.baseUrl).origin === u.origin;
  const headers = { accept: '*/*', ...(sameOrigin ? api.target.profile.requestHeaders : {}) };
  const ex: Exchange = { request: { method: 'GET', target: '[audio URL, redacted]', headers } };
  try {
    const res = await sendRaw({ baseUrl: `${u.protocol}//${u.host}`, timeoutMs: api.target.profile.timeouts?.requestMs ?? 10_000, maxBodyBytes: 64 * 1024 * 1024 }, { target: `${u.pathname}${u.search}`, headers });
    ex.response = { status: res.status, headers: res.headers, body: `[${res.body.length} bytes, not shown]`, bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
  } catch (e) {
    ex.error = e instanceof TransportError ? { kind: e.kind, message: e.message } : { kind: 'other', message: (e as Error).message };
  }
  api.scope.record(ex);
  return ex;
}

function reachable(api: CheckApi): void {
  api.scope.need(api.target.profile.resources?.audio_url_reachable || undefined, 'resources.audio_url_reachable (the audio URL is reachable from where the harness runs)', 'resources.audio_url_reachable');
}

check({ id: 'audio-url-short-lived', requirements: ['AUDIO-URL-SHORT-LIVED', 'AUDIO-URL-LIFETIME', 'LIMIT-AUDIO-LIFETIME', 'AUDIO-EXPIRES-AT'], title: `the audio URL is short-lived: expires_at lies ahead, at most ${MAX_LIFETIME_S / 86_400} days (the lifetime is noted)`, needs: ['resources.ambient_transcript_with_audio'], run: async (api, scope) => {
  const before = Date.now();
  const { expiresMs, expiresAt } = await audioUrl(api);
  const lifetimeS = Math.round((expiresMs - before) / 1000);
  if (expiresMs <= before - CLOCK_SKEW_MS) fail('the audio URL has already expired when it is handed out', `expires_at ${expiresAt}, local clock ${new Date(before).toISOString()}`);
  if (lifetimeS > MAX_LIFETIME_S) fail('the audio URL is not short-lived', `expires_at ${expiresAt} lies ${lifetimeS} s (${(lifetimeS / 86_400).toFixed(1)} days) ahead; more than ${MAX_LIFETIME_S / 86_400} days is not short-lived by any reading`);
  scope.note(`audio URL lifetime about ${lifetimeS} s (local clock)`);
} });

check({ id: 'audio-url-gives-audio-before-expiry', requirements: ['AUDIO-URL-GIVES-AUDIO', 'AUDIO-RESPONSE', 'FIELD-AUDIO-AUDIO-URL', 'LIMIT-AUDIO-VALIDITY', 'AUDIO-URL-NOT-AFTER-EXPIRY'], title: 'fetched once before expires_at, the audio URL answers 2xx with the audio bytes (only when the profile declares it reachable)', needs: ['resources.ambient_transcript_with_audio', 'resources.audio_url_reachable'], run: async (api, scope) => {
  reachable(api);
  const { url, expiresMs } = await audioUrl(api);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) fail('the audio URL is not an absolute http(s) URL', `length ${url.length}`);
  // Never used after expires_at (§2.6): too late to fetch means not verified, not failed.
  if (Date.now() >= expiresMs - 1_000) throw new NotVerified('the audio URL expired before it could be fetched');
  const ex = await fetchAudio(api, url);
  if (ex.error) fail('the audio URL could not be fetched', `${ex.error.kind}`);
  const r = ex.response!;
  if (r.status < 200 || r.status > 299) fail('the audio URL does not give the audio before expires_at', `storage answered ${r.status}`);
  if (r.bodyBytes === 0) fail('the audio URL gives an empty body', `status ${r.status}`);
  const type = r.headers['content-type'] ?? '';
  if (!/^(audio\/|application\/octet-stream)/i.test(type)) scope.observe(`the audio is served as ${JSON.stringify(type)} (the media type is not specified)`);
} });

/**
 * The longest wait for a URL to pass its expires_at: --audio-expiry-wait S (default 120 s). A deployment whose URLs
 * live a few minutes is judged on an ordinary URL, no switch needed; a longer-lived one through the condition
 * audio_url_expires_soon in the form it has (a document or an environment with short-lived URLs, a sandbox switch).
 */
export function audioExpiryWaitMs(api: CheckApi): number {
  const v = api.target.plan.audioExpiryWaitS;
  return v !== undefined && Number.isInteger(v) && v > 0 ? v * 1000 : 120_000;
}
/**
 * How far past expires_at the URL is tried again: early first (a target whose clock agrees with ours has refused it
 * by then, and the check ends there), then once more a full second past (expires_at has second precision;
 * NTP-synced clocks differ by far less). Only an answer served at the last try fails: the early try decides
 * nothing against the target, it only spares a conformant one the wait.
 */
const EXPIRY_TRIES_MS = [250, 1_000] as const;

check({ id: 'audio-url-refused-after-expiry', requirements: ['LIMIT-AUDIO-VALIDITY', 'AUDIO-EXPIRES-AT'], title: 'an audio URL gives the audio before expires_at and is refused by storage after it (a URL expiring within the wait bound, or one handed out under the condition audio_url_expires_soon)', needs: ['faults.audio_url_expires_soon', 'resources.ambient_transcript_with_audio', 'resources.audio_url_reachable'], run: async (api, _scope, ctx) => {
  reachable(api);
  const soon = api.target.fault('audio_url_expires_soon') !== undefined;
  const { url, expiresMs, expiresAt } = await audioUrl(api, soon ? ['audio_url_expires_soon'] : []);
  if (!URL.canParse(url)) fail('the audio URL is not an absolute URL', `length ${url.length}`);
  const wait = expiresMs - Date.now();
  const bound = audioExpiryWaitMs(api);
  if (wait > bound) {
    throw new NotVerified(`the audio URL is valid for another ${Math.round(wait / 1000)} s (expires_at ${expiresAt})${soon ? ' under audio_url_expires_soon' : ''}; at most ${bound / 1000} s is waited for (--audio-expiry-wait S), or give faults.audio_url_expires_soon: a document or environment whose URLs live less`, 'faults.audio_url_expires_soon');
  }
  // The check waits as long as the URL lives: its test's time limit grows by that much.
  ctx.testInfo.setTimeout(ctx.testInfo.timeout + Math.max(0, wait) + 5_000);
  // Before expiry it must work, or a refusal afterwards would prove nothing.
  if (Date.now() < expiresMs - 500) {
    const before = await fetchAudio(api, url);
    if (before.error || before.response!.status < 200 || before.response!.status > 299) fail('the short-lived audio URL does not give the audio before expires_at', before.error ? before.error.kind : `storage answered ${before.response!.status}`);
  }
  // Past expires_at: refused at a try (an error status, or at the transport level) passes; served at the last fails.
  let served = '';
  for (const margin of EXPIRY_TRIES_MS) {
    await new Promise((r) => setTimeout(r, Math.max(0, expiresMs + margin - Date.now())));
    const after = await fetchAudio(api, url);
    const status = after.response?.status;
    if (after.error || status === undefined || status < 200 || status > 299) return;
    served += `${served ? '; ' : ''}fetched ${new Date().toISOString()}: ${status} with ${after.response!.bodyBytes} bytes`;
  }
  fail('storage serves the audio URL after expires_at', `expires_at ${expiresAt}, ${served}`);
} });
