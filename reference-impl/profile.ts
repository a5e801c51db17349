// The target profile for the seeded sandbox (fixtures/profiles/profile.schema.json) and the --guide text (keys, token, curl lines).
import type { Seed } from './seed.ts';
import { ERRORS } from './errors.ts';
import type { ReasonCode } from './errors.ts';
import type { FaultName } from './faults.ts';
import { RETRYABLE_4XX } from '../fixtures/contract/webhook-retries.ts';

const FAULT_HEADER = 'x-switchboard-fault';
const TOKEN_HEADER = 'x-switchboard-token';

/** Extra sandbox keys: in the seed, but not credential roles of the profile schema. */
const EXTRA_KEY_ROLES = ['other_org_full', 'no_scopes', 'not_yet_expired'];

/** Every credential role of the sandbox profile with its key (the profile and the guide both read this). */
export function profileCredentials(seed: Seed): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of seed.api_keys) if (!EXTRA_KEY_ROLES.includes(k.role)) out[k.role] = k.key;
  out.malformed_token = seed.invalid_tokens.malformed_token;
  out.invalid_key = seed.invalid_tokens.invalid_key;
  return out;
}

export function buildProfile(seed: Seed, baseUrl: string, dbKind: string, switchboardToken: string | null, listMinTotal: number): Record<string, unknown> {
  const credentials: Record<string, { key: string }> = {};
  for (const [role, key] of Object.entries(profileCredentials(seed))) credentials[role] = { key };
  const resources: Record<string, unknown> = {};
  for (const [role, ids] of Object.entries(seed.roles)) resources[role] = { ...ids };
  resources.list_min_total = listMinTotal;
  // The sandbox serves its signed audio URLs itself, on the origin the harness reaches it at.
  resources.audio_url_reachable = true;
  const profile: Record<string, unknown> = {
    name: `reference-impl (${dbKind})`,
    baseUrl,
    timeouts: { requestMs: 10_000, maxBodyBytes: 1_048_576 },
    credentials,
    resources,
  };
  if (switchboardToken !== null) {
    const fault = (name: string) => ({ headers: { [TOKEN_HEADER]: switchboardToken, [FAULT_HEADER]: name } });
    profile.faults = {
      api_keys_disabled: fault('api_keys_disabled'),
      test_prefix_not_allowed: fault('test_prefix_not_allowed'),
      digest_key_unavailable: fault('digest_key_unavailable'),
      audio_storage_unavailable: fault('audio_storage_unavailable'),
      audio_url_expires_soon: fault('audio_url_expires_soon'),
    };
    // Webhook sandbox control routes (/__sandbox/…, same switchboard token): activate a subscription, finalize a transcript.
    profile.webhook = { sandboxControlUrl: baseUrl };
  }
  return profile;
}

interface GuideRow { code: ReasonCode; role: string | null; path: string; fault: FaultName | null; faultNote?: string }

/** How to produce each reason code against the seeded sandbox: credential role (null: no header), GET path, fault. */
export function guideRows(seed: Seed): GuideRow[] {
  const r = seed.roles;
  // Ids are percent-encoded in their segment (a no-op for the seed's own ids; --opaque-ids ones need it).
  const enc = (role: string) => `/external/v1/encounters/${encodeURIComponent(r[role].encounter_id)}`;
  const doc = (role: string) => `${enc(role)}/documents/${encodeURIComponent(r[role].document_id!)}`;
  const L = '/external/v1/encounters';
  const row = (code: ReasonCode, role: string | null, path: string, fault: FaultName | null = null, faultNote?: string): GuideRow => ({ code, role, path, fault, faultNote });
  return [
    row('missing_bearer', null, L),
    row('api_keys_disabled', 'full', L, 'api_keys_disabled'),
    row('test_prefix_not_allowed', 'test_key', L, 'test_prefix_not_allowed'),
    row('malformed_token', 'malformed_token', L),
    row('invalid_key', 'invalid_key', L),
    row('disabled_key', 'disabled_key', L),
    row('revoked_key', 'revoked_key', L),
    row('expired_key', 'expired_key', L),
    row('digest_key_unavailable', 'full', L, 'digest_key_unavailable', 'digest_key_unavailable (or database down)'),
    row('org_scope_only_required', 'not_org_scoped', L),
    row('organization_not_allowlisted', 'org_not_allowlisted', L),
    row('route_not_allowed', 'encounter_routes_disabled', L),
    row('missing_scope', 'missing_scope_recordings_read', `${doc('ambient_transcript_with_audio')}/audio`),
    row('unsupported_filter', 'full', `${L}?patient_id=x`),
    row('invalid_limit', 'full', `${L}?limit=01`),
    row('invalid_offset', 'full', `${L}?offset=10001`),
    row('invalid_sort', 'full', `${L}?sort_order=ASC`),
    row('invalid_query', 'full', `${L}?start_at=2025-01-01`),
    row('cross_organization_denied', 'full', enc('other_org_encounter')),
    row('demo_training_denied', 'full', enc('demo_encounter')),
    row('encounter_not_found', 'full', enc('unknown_encounter')),
    row('document_not_found', 'full', `${enc('own_encounter')}/documents/${encodeURIComponent(r.other_org_document.document_id!)}`),
    row('unsupported_document_type', 'full', doc('billing_summary')),
    row('transcript_not_found', 'full', `${doc('ambient_transcript_without_transcript')}/transcript`),
    row('audio_not_available_for_document', 'full', `${doc('ambient_transcript_without_audio')}/audio`),
    row('audio_not_found', 'full', `${doc('ambient_transcript_audio_missing')}/audio`),
    row('audio_storage_unavailable', 'full', `${doc('ambient_transcript_with_audio')}/audio`, 'audio_storage_unavailable'),
  ];
}

/** POSIX single quotes: pasted into bash or zsh the value arrives byte for byte. */
function sq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function table(head: string[], rows: string[][]): string[] {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const lines = all.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return lines;
}

/** Markers around the webhook shell sequence (tests run the lines between them as printed). */
export const WEBHOOK_SEQUENCE_BEGIN = '----- webhook sequence: paste into bash or zsh -----';
export const WEBHOOK_SEQUENCE_END = '----- end of webhook sequence -----';

/**
 * The --guide text: the sandbox's real keys per credential role and its switchboard token (sandbox values, printed on
 * purpose), one curl line per reason code, and the /__sandbox/ routes with a shell sequence that makes the sandbox
 * send a real signed recording.transcript_ready delivery to a partner's receiver.
 */
export function guideText(seed: Seed, baseUrl: string, switchboardToken: string | null): string {
  const out: string[] = [];
  const creds = profileCredentials(seed);
  const fullKey = creds.full;
  out.push('', `Partner sandbox guide: ${baseUrl}`, '');
  out.push('These keys and the switchboard token are sandbox values, not secrets: deterministic test data (keys from fixtures/seed/seed.json, the token this sandbox was started with), valid only for this sandbox.');
  out.push('');
  out.push(switchboardToken !== null
    ? `Switchboard token: ${switchboardToken}   (header x-switchboard-token; x-switchboard-fault/-mutant/-variant without it: 400 switchboard_token_required, with a wrong one: 403 switchboard_token_invalid)`
    : 'Switchboard: off (start with --switchboard-token TOKEN): the fault rows and the /__sandbox/ webhook routes cannot be used, and switchboard headers are ignored.');
  out.push('');
  out.push('Keys per credential role (the credentials of the profile written by --profile-out):');
  out.push(...table(['credential role', 'key'], Object.entries(creds).map(([role, key]) => [role, key])));
  const extras = seed.api_keys.filter((k) => EXTRA_KEY_ROLES.includes(k.role));
  if (extras.length > 0) {
    out.push('Other sandbox keys (not profile roles):');
    for (const k of extras) out.push(`  ${k.role.padEnd(16)} ${k.key}  (${k.label})`);
  }
  out.push('');
  out.push('How to produce each of the reason codes (GET requests):');
  const rows = guideRows(seed);
  out.push(...table(['reason_code', 'status', 'credential role', 'GET path', 'x-switchboard-fault'], rows.map((g) => [g.code, String(ERRORS[g.code].status), g.role ?? '(no Authorization header)', g.path, g.faultNote ?? g.fault ?? '-'])));
  out.push('');
  out.push('The same as curl lines (copy one; the body carries reason_code):');
  for (const g of rows) {
    out.push(`# ${g.code} (${ERRORS[g.code].status})`);
    if (g.fault !== null && switchboardToken === null) {
      out.push('#   needs a sandbox started with --switchboard-token');
      continue;
    }
    const parts = ['curl -sS'];
    if (g.role !== null) parts.push(`-H ${sq(`Authorization: Bearer ${creds[g.role]}`)}`);
    if (g.fault !== null) parts.push(`-H ${sq(`${TOKEN_HEADER}: ${switchboardToken}`)}`, `-H ${sq(`${FAULT_HEADER}: ${g.fault}`)}`);
    parts.push(sq(`${baseUrl}${g.path}`));
    out.push(parts.join(' '));
  }
  out.push('');
  out.push(...webhookGuide(seed, baseUrl, switchboardToken, fullKey));
  return `${out.join('\n')}\n`;
}

function webhookGuide(seed: Seed, baseUrl: string, switchboardToken: string | null, fullKey: string): string[] {
  const out: string[] = [];
  const doc = seed.roles.ambient_transcript_with_audio;
  out.push('Webhooks: a real signed recording.transcript_ready delivery to your receiver (sandbox control routes, outside the contract;');
  out.push('every one needs x-switchboard-token, 403 sandbox_forbidden without it):');
  out.push('  POST   /__sandbox/webhooks/subscriptions                 {"receiver_url","signing_secret"[,"max_attempts","backoff_ms","timeout_ms"]}');
  out.push('         → 201 {"subscription_id",...}: active at once for the sandbox organization; the secret is never echoed');
  out.push('  POST   /__sandbox/transcripts/finalize                   {"encounter_id","document_id"[,"subscription_id"]}');
  out.push('         → 202 {"event_id","deliveries"}: one delivery per active subscription (or only the named one)');
  out.push('  POST   /__sandbox/encounters                             → 201 {"encounter_id"}: a new encounter created now (live traffic)');
  out.push('  GET    /__sandbox/webhooks/events/{event_id}/deliveries  → 200 each delivery: status (pending, delivering, delivered, failed,');
  out.push('         cancelled), attempts, last_result, next_attempt_at');
  out.push('  DELETE /__sandbox/webhooks/subscriptions/{subscription_id} → 204; its pending deliveries are cancelled');
  out.push('Each delivery is a POST of the JSON event to receiver_url with Service-Event-Id, Service-Delivery-Id, Service-Timestamp,');
  out.push('Service-Signature (v1=<hex HMAC-SHA256 of "{timestamp}.{raw body}" with signing_secret>) and Service-Webhook-Version;');
  out.push(`a connection error, timeout, ${[...RETRYABLE_4XX].join(', ')} or 5xx is retried with the same ids (max_attempts 5, backoff from 1000 ms, doubling).`);
  if (switchboardToken === null) {
    out.push('These routes answer 404 here: this sandbox was started without --switchboard-token.');
    return out;
  }
  out.push('Set RECEIVER_URL and WEBHOOK_SECRET to your receiver\'s URL and secret (≥ 8 letters, digits, - or _), then paste:');
  const control = `-H "x-switchboard-token: $T"`;
  out.push(WEBHOOK_SEQUENCE_BEGIN);
  out.push(`B=${sq(baseUrl)}`);
  out.push(`T=${sq(switchboardToken)}`);
  out.push('RECEIVER_URL="${RECEIVER_URL:-http://127.0.0.1:9000/webhooks}"');
  out.push('WEBHOOK_SECRET="${WEBHOOK_SECRET:-sandbox-receiver-secret}"');
  out.push(`R=$(curl -sS -X POST "$B/__sandbox/webhooks/subscriptions" ${control} -H 'content-type: application/json' -d "{\\"receiver_url\\":\\"$RECEIVER_URL\\",\\"signing_secret\\":\\"$WEBHOOK_SECRET\\"}"); echo "activate: $R"`);
  out.push(`SUB=$(printf '%s' "$R" | sed -n 's/.*"subscription_id":"\\([^"]*\\)".*/\\1/p')`);
  out.push(`R=$(curl -sS -X POST "$B/__sandbox/transcripts/finalize" ${control} -H 'content-type: application/json' -d ${sq(JSON.stringify({ encounter_id: doc.encounter_id, document_id: doc.document_id }))}); echo "finalize: $R"`);
  out.push(`EVT=$(printf '%s' "$R" | sed -n 's/.*"event_id":"\\([^"]*\\)".*/\\1/p')`);
  out.push(`sleep 2; echo "deliveries: $(curl -sS "$B/__sandbox/webhooks/events/$EVT/deliveries" ${control})"`);
  out.push(`curl -sS -o /dev/null -w 'deactivate: %{http_code}\\n' -X DELETE "$B/__sandbox/webhooks/subscriptions/$SUB" ${control}`);
  out.push(WEBHOOK_SEQUENCE_END);
  out.push('Your receiver\'s follow-up fetch of the finalized transcript (the full key):');
  out.push(`curl -sS -H ${sq(`Authorization: Bearer ${fullKey}`)} ${sq(`${baseUrl}/external/v1/encounters/${encodeURIComponent(doc.encounter_id)}/documents/${encodeURIComponent(doc.document_id!)}/transcript`)}`);
  out.push('A deactivated subscription gets nothing more; activate another to try again (each finalize emits a new event).');
  return out;
}
