// Checking a target profile against its target (`conformance profile check`): every role the profile schema defines,
// and for each credential, resource and fault role one request whose answer tells the role apart from its
// neighbours ("expired_key answers 401 revoked_key: is this the expired key?"). The judging lives here, beside the
// one role table (profile/profile.ts KEY_ROLE_ANSWER) and the routes (observe/routes.ts); cli/profile.ts only
// prints. Keys and response bodies are never in a line: a line names the role, the route, the status and the reason.
import fs from 'node:fs';
import { PROFILE_SCHEMA_PATH } from '../fixtures/paths.ts';
import { reasonOf } from '../judge/assertions.ts';
import { sendRaw, TransportError, type RawResponse } from '../observe/http.ts';
import { describeEnd, flip } from '../observe/command.ts';
import { credentialKey, environmentKey, faultFormKind, faultKey, KEY_ROLE_ANSWER, missingSenderSetting, ProfileError, ROLE_SECTION, type CredentialRole, type FaultName, type Profile, type RoleKind } from '../profile/profile.ts';
import { registerSecret } from '../record/redact.ts';
import { ROUTES, type RouteRef } from '../observe/routes.ts';

export type { RoleKind } from '../profile/profile.ts';

export interface RoleSpec {
  kind: RoleKind;
  role: string;
  /** From the schema's description (the role's own, else its type's). */
  description: string;
}

interface SchemaNode { description?: string; $ref?: string; type?: string; properties?: Record<string, SchemaNode> }

export function readProfileSchema(): { properties: Record<string, SchemaNode>; $defs: Record<string, SchemaNode> } {
  return JSON.parse(fs.readFileSync(PROFILE_SCHEMA_PATH, 'utf8'));
}

/** Every role the schema defines, in schema order, with its description. */
export function profileRoles(schema = readProfileSchema()): RoleSpec[] {
  const out: RoleSpec[] = [];
  const section = (name: string, kind: RoleKind) => {
    for (const [role, node] of Object.entries(schema.properties[name]?.properties ?? {})) {
      const def = node.$ref ? schema.$defs[node.$ref.replace('#/$defs/', '')] : undefined;
      out.push({ kind, role, description: node.description ?? def?.description ?? '' });
    }
  };
  section('credentials', 'credential');
  section('resources', 'resource');
  section('faults', 'fault');
  section('webhook', 'webhook');
  return out;
}

// ------------------------------------------------------------------------------------------ what each role should answer

type RouteName = RouteRef['name'];

interface Expectation {
  route: RouteName;
  status: number;
  reason?: string;
  /** The resource role whose ids the request addresses (placeholder ids where the answer comes before lookup). */
  resource?: string;
  /** The caller, for resource and fault roles (default full). */
  as?: CredentialRole;
  /** Other answers the spec leaves open for this role (the suites judge the body). */
  also?: { status: number; reason?: string }[];
}

/**
 * One request per credential role, chosen so the answer tells the role apart from its neighbours.
 * Stage order (§4, §7.2): authentication, then route and organization, then scopes, then the query, then
 * lookup; so a request with placeholder ids still shows a stage-1..3 answer.
 */
export const CREDENTIAL_EXPECTATIONS: Record<CredentialRole, Expectation> = {
  full: { route: 'list', status: 200 },
  // A test-prefixed key: served where test keys are allowed, refused where they are not (then the condition
  // test_prefix_not_allowed is best given as this very key, faults.test_prefix_not_allowed.credential).
  test_key: { route: 'list', status: 200, also: [{ status: 401, reason: 'test_prefix_not_allowed' }] },
  malformed_token: { route: 'list', ...KEY_ROLE_ANSWER.malformed_token },
  invalid_key: { route: 'list', ...KEY_ROLE_ANSWER.invalid_key },
  disabled_key: { route: 'list', ...KEY_ROLE_ANSWER.disabled_key },
  revoked_key: { route: 'list', ...KEY_ROLE_ANSWER.revoked_key },
  expired_key: { route: 'list', ...KEY_ROLE_ANSWER.expired_key },
  missing_scope_encounters_read: { route: 'list', ...KEY_ROLE_ANSWER.missing_scope_encounters_read },
  missing_scope_patients_read: { route: 'list', ...KEY_ROLE_ANSWER.missing_scope_patients_read },
  missing_scope_documents_read: { route: 'list', ...KEY_ROLE_ANSWER.missing_scope_documents_read },
  // The list needs encounters, patients and documents: only the audio route asks for recordings:read.
  missing_scope_recordings_read: { route: 'audio', ...KEY_ROLE_ANSWER.missing_scope_recordings_read, resource: 'ambient_transcript_with_audio' },
  not_org_scoped: { route: 'list', ...KEY_ROLE_ANSWER.not_org_scoped },
  org_not_allowlisted: { route: 'list', ...KEY_ROLE_ANSWER.org_not_allowlisted },
  encounter_routes_disabled: { route: 'list', ...KEY_ROLE_ANSWER.encounter_routes_disabled },
  document_routes_disabled: { route: 'document', ...KEY_ROLE_ANSWER.document_routes_disabled, resource: 'clinical_document' },
  no_scopes_not_org_scoped: { route: 'list', ...KEY_ROLE_ANSWER.no_scopes_not_org_scoped },
  no_scopes_org_not_allowlisted: { route: 'list', ...KEY_ROLE_ANSWER.no_scopes_org_not_allowlisted },
  // Its organization is enabled for document routes, and it holds no scope: there it must lack a scope.
  no_scopes_encounter_routes_disabled: { route: 'document', ...KEY_ROLE_ANSWER.no_scopes_encounter_routes_disabled, resource: 'clinical_document' },
  no_scopes_document_routes_disabled: { route: 'list', ...KEY_ROLE_ANSWER.no_scopes_document_routes_disabled },
};

/** One request per resource role, with the full key (or the role's own organization's key). */
export const RESOURCE_EXPECTATIONS: Record<string, Expectation | null> = {
  own_encounter: { route: 'encounter', status: 200, resource: 'own_encounter' },
  other_org_encounter: { route: 'encounter', status: 403, reason: 'cross_organization_denied', resource: 'other_org_encounter' },
  demo_encounter: { route: 'encounter', status: 403, reason: 'demo_training_denied', resource: 'demo_encounter' },
  unknown_encounter: { route: 'encounter', status: 404, reason: 'encounter_not_found', resource: 'unknown_encounter' },
  clinical_document: { route: 'document', status: 200, resource: 'clinical_document' },
  ambient_transcript_with_audio: { route: 'audio', status: 200, resource: 'ambient_transcript_with_audio' },
  ambient_transcript_without_audio: { route: 'audio', status: 400, reason: 'audio_not_available_for_document', resource: 'ambient_transcript_without_audio' },
  ambient_transcript_audio_missing: { route: 'audio', status: 404, reason: 'audio_not_found', resource: 'ambient_transcript_audio_missing' },
  ambient_transcript_without_transcript: { route: 'transcript', status: 404, reason: 'transcript_not_found', resource: 'ambient_transcript_without_transcript' },
  // Which error answers a transcript without finalized turns is open; 404 transcript_not_found is the closest reading.
  ambient_transcript_unfinalized: { route: 'transcript', status: 404, reason: 'transcript_not_found', resource: 'ambient_transcript_unfinalized', also: [{ status: 200 }] },
  billing_summary: { route: 'document', status: 400, reason: 'unsupported_document_type', resource: 'billing_summary' },
  checklist_summary: { route: 'document', status: 400, reason: 'unsupported_document_type', resource: 'checklist_summary' },
  other_org_document: { route: 'document', status: 403, reason: 'cross_organization_denied', resource: 'other_org_document' },
  demo_document: { route: 'document', status: 403, reason: 'demo_training_denied', resource: 'demo_document' },
  encounter_routes_disabled_document: { route: 'transcript', status: 200, resource: 'encounter_routes_disabled_document', as: 'encounter_routes_disabled' },
  // Not an id: list_min_total is checked against the list's total; audio_url_reachable is a promise.
  list_min_total: null,
  audio_url_reachable: null,
};

export const FAULT_EXPECTATIONS: Record<string, Expectation> = {
  api_keys_disabled: { route: 'list', status: 401, reason: 'api_keys_disabled' },
  test_prefix_not_allowed: { route: 'list', status: 401, reason: 'test_prefix_not_allowed', as: 'test_key' },
  digest_key_unavailable: { route: 'list', status: 503, reason: 'digest_key_unavailable' },
  audio_storage_unavailable: { route: 'audio', status: 503, reason: 'audio_storage_unavailable', resource: 'ambient_transcript_with_audio' },
  audio_url_expires_soon: { route: 'audio', status: 200, resource: 'ambient_transcript_with_audio' },
};

// ------------------------------------------------------------------------------------------ check

export interface Line { kind: RoleKind; role: string; ok: boolean | null; text: string }

/** The request of an expectation: its route (observe/routes.ts) on the role's ids, or placeholders before lookup. */
function targetFor(e: Expectation, profile: Profile, own?: { encounter_id: string; document_id: string }): string {
  const res = own ?? (e.resource ? (profile.resources as Record<string, { encounter_id?: string; document_id?: string }> | undefined)?.[e.resource] : undefined) ?? {};
  // Where the answer comes before lookup (stages 1–3), ids need not exist: placeholders keep the request well-formed.
  const enc = res.encounter_id ?? profile.resources?.own_encounter?.encounter_id ?? 'profile-check-encounter';
  const doc = res.document_id ?? 'profile-check-document';
  const route = ROUTES.find((r) => r.name === e.route)!;
  return e.route === 'list' ? `${route.pathFor(enc)}?limit=1` : route.pathFor(enc, doc);
}

const answer = (status: number, reason: string | null) => `${status}${reason ? ` ${reason}` : ''}`;
const expected = (e: Expectation) => `${e.status}${e.reason ? ` ${e.reason}` : ''}`;

/** The credential role whose expected answer on this route is what we saw, if any. */
function answersLike(route: RouteName, status: number, reason: string | null, self: string): string | null {
  const like = Object.entries(CREDENTIAL_EXPECTATIONS).find(([r, e]) => r !== self && e.route === route && e.status === status && (e.reason ?? null) === (status === 200 ? null : reason));
  return like?.[0] ?? null;
}

function question(kind: RoleKind, role: string, description: string): string {
  if (kind === 'credential') return `is this the ${role.replace(/_key$/, '').replace(/_/g, ' ')} key?`;
  if (kind === 'fault') return `does this form produce ${role}?`;
  const what = description.split(/:| \(|;/)[0].trim();
  return what ? `is this ${/^(a|an|the)\b/.test(what) ? '' : 'the '}${what}?` : `is this the right ${role}?`;
}

/** Where a role's request goes when its form says: another environment, the condition's own document. */
interface Where { baseUrl?: string; resource?: { encounter_id: string; document_id: string }; form?: string }

/** Runs one side of a condition's on/off commands in the profile's folder (observe/command.ts). */

type Send = (e: Expectation, key: string | undefined) => Promise<{ target: string; res: RawResponse | null; error?: string }>;

/**
 * The audio URLs the target hands out, tried once: how long they live (an ordinary URL living at most the wait bound
 * is waited for, so audio_url_expires_soon is not needed) and, when the profile says they are reachable, whether one
 * gives the audio before expires_at. The URL is never in a line.
 */
async function audioLinks(profile: Profile, full: string | undefined, send: Send): Promise<{ lifetimeS: number; line: Line } | undefined> {
  if (!full || !profile.resources?.ambient_transcript_with_audio) return undefined;
  const { res } = await send(RESOURCE_EXPECTATIONS.ambient_transcript_with_audio!, full);
  let body: { audio_url?: unknown; expires_at?: unknown } | null = null;
  try {
    body = res?.status === 200 ? JSON.parse(res.body.toString('utf8')) : null;
  } catch { /* judged by the resource line */ }
  if (typeof body?.audio_url !== 'string' || typeof body.expires_at !== 'string' || !URL.canParse(body.audio_url)) return undefined;
  registerSecret(body.audio_url);
  const lifetimeS = Math.round((Date.parse(body.expires_at) - Date.now()) / 1000);
  const lives = `audio URLs live about ${lifetimeS} s`;
  if (!profile.resources.audio_url_reachable) return { lifetimeS, line: { kind: 'resource', role: 'audio_url_reachable', ok: null, text: `audio_url_reachable: not set (${lives}; the harness will not fetch them)` } };
  const u = new URL(body.audio_url);
  try {
    const got = await sendRaw({ baseUrl: `${u.protocol}//${u.host}`, timeoutMs: 10_000, maxBodyBytes: 64 * 1024 * 1024 }, { target: `${u.pathname}${u.search}`, headers: { accept: '*/*' } });
    const ok = got.status >= 200 && got.status < 300 && got.body.length > 0;
    return { lifetimeS, line: { kind: 'resource', role: 'audio_url_reachable', ok, text: ok ? `audio_url_reachable: an audio URL gives ${got.body.length} bytes before expires_at (${lives})` : `audio_url_reachable: an audio URL answered ${got.status} with ${got.body.length} bytes before expires_at (${lives}): is it reachable from here?` } };
  } catch (e) {
    return { lifetimeS, line: { kind: 'resource', role: 'audio_url_reachable', ok: false, text: `audio_url_reachable: an audio URL could not be fetched from here (${e instanceof TransportError ? e.kind : 'error'})` } };
  }
}

export async function checkProfile(profile: Profile, env: NodeJS.ProcessEnv = process.env, opts: { profileFile?: string } = {}): Promise<{ lines: Line[]; missing: RoleSpec[]; missingSender?: string; audioLifetimeS?: number }> {
  const roles = profileRoles();
  const lines: Line[] = [];
  const client = { baseUrl: profile.baseUrl, timeoutMs: profile.timeouts?.requestMs ?? 10_000, maxBodyBytes: profile.timeouts?.maxBodyBytes };
  let reached = false;
  const send = async (e: Expectation, key: string | undefined, extra: Record<string, string> = {}, where: Where = {}) => {
    const target = targetFor(e, profile, where.resource);
    const headers: Record<string, string> = { ...profile.requestHeaders, ...extra };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    try {
      const res = await sendRaw(where.baseUrl ? { ...client, baseUrl: where.baseUrl } : client, { target, headers });
      reached = true;
      return { target, res };
    } catch (err) {
      if (err instanceof TransportError && !reached) throw new ProfileError(`cannot reach ${profile.baseUrl}: ${err.kind} (${err.message})`);
      return { target, res: null as RawResponse | null, error: err instanceof TransportError ? `${err.kind}: ${err.message}` : String(err) };
    }
  };
  const judge = async (kind: RoleKind, role: string, description: string, e: Expectation, key: string | undefined, extra?: Record<string, string>, where: Where = {}) => {
    const { target, res, error } = await send(e, key, extra, where) as { target: string; res: RawResponse | null; error?: string };
    const route = `GET ${where.baseUrl ? `${where.baseUrl} ` : ''}${target.replace(/\?.*$/, '')}${where.form ? ` (${where.form})` : ''}`;
    if (!res) return lines.push({ kind, role, ok: false, text: `${role}: ${route} failed (${error}); expected ${expected(e)}` });
    const reason = reasonOf(res.body) ?? null;
    const ok = [e, ...(e.also ?? [])].some((x) => res.status === x.status && (x.reason === undefined || reason === x.reason));
    if (ok) return lines.push({ kind, role, ok, text: `${role} answers ${answer(res.status, reason)} on ${route}, as it should` });
    const like = kind === 'credential' ? answersLike(e.route, res.status, reason, role) : null;
    lines.push({ kind, role, ok, text: `${role} answers ${answer(res.status, reason)} on ${route}, expected ${expected(e)}: ${question(kind, role, description)}${like ? ` (that is how ${like} answers)` : ''}` });
  };

  const has = (kind: RoleKind, role: string) => (profile[ROLE_SECTION[kind]] as Record<string, unknown> | undefined)?.[role] !== undefined;
  // Webhook settings of a service profile: whether delivery is activated (and then how the sender is judged), and the
  // secret it signs with when the harness judges it. The header word has a default; sandboxControlUrl is the
  // sandbox's; receiverUrl is a partner's setting (`conformance webhook receiver`), never missing here.
  const missingSender = missingSenderSetting(profile);
  const webhookMissing = (r: RoleSpec) =>
    r.role === 'delivery' ? missingSender?.setting === 'webhook.delivery'
      : r.role === 'sender' ? missingSender?.setting === 'webhook.sender'
        : r.role === 'signingSecretEnv' ? has('webhook', 'sender') && !has('webhook', 'signingSecretEnv') && !has('webhook', 'signingSecret')
          : false;
  const missing = roles.filter((r) => (r.kind === 'webhook' ? webhookMissing(r) : !has(r.kind, r.role)));
  const full = credentialKey(profile, 'full', env);

  for (const r of roles.filter((x) => x.kind === 'credential' && has(x.kind, x.role))) {
    const e = CREDENTIAL_EXPECTATIONS[r.role as CredentialRole];
    if (!e) {
      lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: no expectation known to profile check (not called)` });
      continue;
    }
    await judge(r.kind, r.role, r.description, e, credentialKey(profile, r.role as CredentialRole, env));
  }
  for (const r of roles.filter((x) => x.kind === 'resource' && has(x.kind, x.role))) {
    if (r.role === 'list_min_total') {
      if (!full) {
        lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: not checked (needs credentials.full)` });
        continue;
      }
      const { res } = await send({ route: 'list', status: 200 }, full);
      let total: unknown;
      try {
        total = res ? (JSON.parse(res.body.toString('utf8')) as { total?: unknown }).total : undefined;
      } catch {
        total = undefined;
      }
      const min = profile.resources!.list_min_total!;
      const ok = typeof total === 'number' && total >= min;
      lines.push({ kind: r.kind, role: r.role, ok, text: ok ? `${r.role}: the list's total is ${String(total)}, at least ${min}, as it should` : `${r.role}: the list's total is ${String(total)}, expected at least ${min}: is list_min_total right?` });
      continue;
    }
    const e = RESOURCE_EXPECTATIONS[r.role];
    if (!e) {
      lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: a setting, not called` });
      continue;
    }
    const caller = e.as ?? 'full';
    const key = credentialKey(profile, caller, env);
    if (!key) {
      lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: not checked (needs credentials.${caller})` });
      continue;
    }
    await judge(r.kind, r.role, r.description, e, key);
  }
  const audio = await audioLinks(profile, full, send);
  if (audio) lines.push(audio.line);
  for (const r of roles.filter((x) => x.kind === 'fault' && has(x.kind, x.role))) {
    const e = FAULT_EXPECTATIONS[r.role];
    const f = r.role as FaultName;
    const form = profile.faults![f]!;
    const kind = faultFormKind(profile, f)!;
    const caller = e?.as ?? 'full';
    // Each condition in its own form: a key of its own stands for the caller; another environment has its keys.
    const key = kind === 'credential' ? faultKey(profile, f, env) : kind === 'baseUrl' ? environmentKey(profile, f, caller, env) : credentialKey(profile, caller, env);
    if (!e || !key) {
      lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: not checked (needs credentials.${caller})` });
      continue;
    }
    const where: Where = { form: kind, ...(form.baseUrl ? { baseUrl: form.baseUrl } : {}), ...(form.resource ? { resource: form.resource } : {}) };
    if (kind !== 'command') {
      await judge(r.kind, r.role, r.description, e, key, form.headers, where);
      continue;
    }
    // A process-wide switch: on, one request, off (always), each command's end said.
    const on = await flip('on', form.command!, profile.baseUrl, opts.profileFile, env);
    if (on.code !== 0) {
      lines.push({ kind: r.kind, role: r.role, ok: false, text: `${r.role}: the 'on' command ended ${describeEnd(on)}` });
    } else {
      try {
        await judge(r.kind, r.role, r.description, e, key, undefined, where);
      } finally {
        const off = await flip('off', form.command!, profile.baseUrl, opts.profileFile, env);
        if (off.code !== 0) lines.push({ kind: r.kind, role: r.role, ok: false, text: `${r.role}: the 'off' command ended ${describeEnd(off)}: the deployment may still hold the condition` });
      }
    }
  }
  for (const r of roles.filter((x) => x.kind === 'webhook' && has(x.kind, x.role))) {
    lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: set (${r.role === 'signingSecretEnv' ? 'its variable is set' : 'not called by profile check'})` });
  }
  return { lines, missing, missingSender: missingSender?.text, ...(audio ? { audioLifetimeS: audio.lifetimeS } : {}) };
}

