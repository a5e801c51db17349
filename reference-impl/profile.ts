// The target profile for the seeded sandbox (fixtures/profiles/profile.schema.json) and the --guide table.
import type { Seed } from './seed.ts';
import { ERRORS } from './errors.ts';
import type { ReasonCode } from './errors.ts';

const FAULT_HEADER = 'x-switchboard-fault';
const TOKEN_HEADER = 'x-switchboard-token';

export function buildProfile(seed: Seed, baseUrl: string, dbKind: string, switchboardToken: string | null, listMinTotal: number): Record<string, unknown> {
  const credentials: Record<string, { key: string }> = {};
  for (const k of seed.api_keys) {
    if (['other_org_full', 'no_scopes', 'not_yet_expired'].includes(k.role)) continue; // extra sandbox keys, not profile roles
    credentials[k.role] = { key: k.key };
  }
  credentials.malformed_token = { key: seed.invalid_tokens.malformed_token };
  credentials.invalid_key = { key: seed.invalid_tokens.invalid_key };
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

/** How to produce each reason code against the seeded sandbox: [credential role, request, fault]. */
export function guideRows(seed: Seed): [ReasonCode, string, string, string][] {
  const r = seed.roles;
  const enc = (role: string) => `/external/v1/encounters/${r[role].encounter_id}`;
  const doc = (role: string) => `${enc(role)}/documents/${r[role].document_id}`;
  return [
    ['missing_bearer', '(no Authorization header)', '/external/v1/encounters', '-'],
    ['api_keys_disabled', 'full', '/external/v1/encounters', 'api_keys_disabled'],
    ['test_prefix_not_allowed', 'test_key', '/external/v1/encounters', 'test_prefix_not_allowed'],
    ['malformed_token', 'malformed_token', '/external/v1/encounters', '-'],
    ['invalid_key', 'invalid_key', '/external/v1/encounters', '-'],
    ['disabled_key', 'disabled_key', '/external/v1/encounters', '-'],
    ['revoked_key', 'revoked_key', '/external/v1/encounters', '-'],
    ['expired_key', 'expired_key', '/external/v1/encounters', '-'],
    ['digest_key_unavailable', 'full', '/external/v1/encounters', 'digest_key_unavailable (or database down)'],
    ['org_scope_only_required', 'not_org_scoped', '/external/v1/encounters', '-'],
    ['organization_not_allowlisted', 'org_not_allowlisted', '/external/v1/encounters', '-'],
    ['route_not_allowed', 'encounter_routes_disabled', '/external/v1/encounters', '-'],
    ['missing_scope', 'missing_scope_recordings_read', `${doc('ambient_transcript_with_audio')}/audio`, '-'],
    ['unsupported_filter', 'full', '/external/v1/encounters?patient_id=x', '-'],
    ['invalid_limit', 'full', '/external/v1/encounters?limit=01', '-'],
    ['invalid_offset', 'full', '/external/v1/encounters?offset=10001', '-'],
    ['invalid_sort', 'full', '/external/v1/encounters?sort_order=ASC', '-'],
    ['invalid_query', 'full', '/external/v1/encounters?start_at=2025-01-01', '-'],
    ['cross_organization_denied', 'full', enc('other_org_encounter'), '-'],
    ['demo_training_denied', 'full', enc('demo_encounter'), '-'],
    ['encounter_not_found', 'full', enc('unknown_encounter'), '-'],
    ['document_not_found', 'full', `${enc('own_encounter')}/documents/${r.other_org_document.document_id}`, '-'],
    ['unsupported_document_type', 'full', doc('billing_summary'), '-'],
    ['transcript_not_found', 'full', `${doc('ambient_transcript_without_transcript')}/transcript`, '-'],
    ['audio_not_available_for_document', 'full', `${doc('ambient_transcript_without_audio')}/audio`, '-'],
    ['audio_not_found', 'full', `${doc('ambient_transcript_audio_missing')}/audio`, '-'],
    ['audio_storage_unavailable', 'full', `${doc('ambient_transcript_with_audio')}/audio`, 'audio_storage_unavailable'],
  ];
}

export function guideText(seed: Seed, switchboard: boolean): string {
  const rows = guideRows(seed);
  const head = ['reason_code', 'status', 'credential role', 'GET path', 'x-switchboard-fault'];
  const table = [head, ...rows.map(([code, cred, path, fault]) => [code, String(ERRORS[code].status), cred, path, fault])];
  const widths = head.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  const lines = table.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const note = switchboard
    ? 'Faults: send x-switchboard-token: <token> and x-switchboard-fault: <name> on the request.'
    : 'Faults need --switchboard-token TOKEN; without it the fault rows cannot be produced (digest_key_unavailable: stop the database).';
  return `${lines.join('\n')}\nKeys per role: see the profile (--profile-out) or fixtures/seed/seed.json.\n${note}\n`;
}
