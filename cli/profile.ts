// `conformance profile init` and `conformance profile check`: help a service team write a target profile.
// `init` writes a complete template (every credential role, resource role, fault switch and webhook
// setting of fixtures/profiles/profile.schema.json, generated from the schema so it cannot drift) and a
// guide beside it (what each role is, the variable it reads, the checks named for it). `check` resolves
// every variable, calls the target once per role the profile names and says whether each answers as its
// role should ("expired_key answers 401 revoked_key: is this the expired key?"), then lists the missing
// roles with the checks and requirements named for them. Exit codes like `run`: 0 every role answers as
// it should, 1 some role does not, 2 usage or setup error (one line). Keys and response bodies are never
// printed: a line names the role, the route, the status and the reason code only.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PROFILE_SCHEMA_PATH } from '../fixtures/paths.ts';
import type { Declaration } from '../harness/registry.ts';
import { allDeclaredChecks } from './declared-checks.ts';
import { DEFAULT_HEADER_WORD, KEY_ROLE_ANSWER, loadProfile, missingSenderSetting, unresolvedVariables, credentialKey, ProfileError, type Profile, type CredentialRole } from '../harness/profile.ts';
import { SENDER_CASES } from '../harness/webhook/sender-suite.ts';
import { sendRaw, TransportError, type RawResponse } from '../harness/http.ts';
import { redact } from '../harness/redact.ts';
import { reasonOf } from '../harness/assertions.ts';
import { TEMPLATE_PROFILE_NAME } from '../reports/context.ts';

export const PROFILE_HELP = `Usage: conformance profile init [--out FILE] [--base-url URL] [--force]
       conformance profile check --profile FILE [--target URL] [--report conformance.json]

init    writes a complete profile template (every role of fixtures/profiles/profile.schema.json; each
        credential reads the variable CONFORMANCE_KEY_<ROLE>; resource ids to fill are marked FILL-ME) and
        a guide beside it (FILE with .roles.md): what each role is, the variable it reads, the checks
        named for it. Remove the roles your target cannot offer: their checks end not verified.
check   resolves every variable the profile names, calls the target once per credential, resource and
        fault role, says for each whether it answers as that role should, and lists the missing roles
        with the checks and requirements named for them (exact counts with --report: the conformance.json
        of a run with this profile). Never prints a key or a response body.

Options:
  --out FILE          where init writes the template (default conformance.profile.json)
  --base-url URL      the target's base URL to put in the template
  --force             let init overwrite an existing file
  --profile FILE      the profile to check
  --target URL        base URL to check (overrides the profile's baseUrl)
  --report FILE       conformance.json of a run with this profile: the missing roles' exact counts
  -h, --help          this help

Exit codes: 0 every role the profile names answers as it should (missing roles are listed, not errors),
1 some role answers otherwise, 2 usage or setup error (bad profile, unset variable, a FILL-ME left,
unreachable target).`;

/** A usage or setup error of this command: exit 2 with one line. */
class Setup extends Error {}

export const PLACEHOLDER = 'FILL-ME';

// ------------------------------------------------------------------------------------------ roles

export type RoleKind = 'credential' | 'resource' | 'fault' | 'webhook';

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

/** The variable `init` names for a credential role. */
export const keyVariable = (role: string): string => `CONFORMANCE_KEY_${role.toUpperCase()}`;
export const SIGNING_SECRET_VARIABLE = 'CONFORMANCE_WEBHOOK_SIGNING_SECRET';

// ------------------------------------------------------------------------------------------ what each role should answer

type RouteName = 'list' | 'encounter' | 'document' | 'transcript' | 'audio';

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
  test_key: { route: 'list', status: 200 },
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

// ------------------------------------------------------------------------------------------ checks named for a role

/** A role of the profile as the checks' declarations name what they need (harness/needs.ts). */
export function settingOf(r: Pick<RoleSpec, 'kind' | 'role'>): string {
  return `${r.kind === 'credential' ? 'credentials' : r.kind === 'resource' ? 'resources' : r.kind === 'fault' ? 'faults' : 'webhook'}.${r.role}`;
}

/**
 * The service checks that declare they need a role (harness/registry.ts `needs`), and the requirements they verify:
 * without the role they end not_verified. The full key is every check's own ('most'). Read from the declarations,
 * not from a run; a run counts what it could not verify exactly (`profile check --report`).
 */
export function unlocks(r: Pick<RoleSpec, 'kind' | 'role'>, declared: readonly Declaration[]): { checks: number; requirements: number } | 'most' {
  if (r.kind === 'credential' && r.role === 'full') return 'most';
  const setting = settingOf(r);
  const mine = declared.filter((d) => d.subject === 'service' && d.needs?.includes(setting));
  return { checks: mine.length, requirements: new Set(mine.flatMap((d) => d.requirements)).size };
}

const unlockText = (u: ReturnType<typeof unlocks>): string => (u === 'most' ? 'most checks' : u.checks === 0 ? '—' : `${u.checks} checks, ${u.requirements} requirements`);

// ------------------------------------------------------------------------------------------ init

/** The table of every profile role in docs/profile.md (tests/profile-cli.spec.ts keeps docs/profile.md equal to it). */
export function rolesMarkdown(roles = profileRoles()): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const where = (r: RoleSpec) => (r.kind === 'credential' ? `\`credentials.${r.role}\` (\`${keyVariable(r.role)}\`)` : `\`${r.kind === 'resource' ? 'resources' : r.kind === 'fault' ? 'faults' : 'webhook'}.${r.role}\``);
  return ['| kind | role (variable `profile init` names) | what it is |', '|---|---|---|', ...roles.map((r) => `| ${r.kind} | ${where(r)} | ${cell(r.description)} |`)].join('\n');
}

/**
 * The `$schema` a profile written to `file` names: the harness's own fixtures/profiles/profile.schema.json,
 * relative to the profile's folder with forward slashes, so an editor beside the profile resolves it (a clone,
 * an npm install under node_modules, an image). Where no relative path exists (another drive), its file URL.
 */
export function profileSchemaReference(file: string, schemaPath = PROFILE_SCHEMA_PATH): string {
  const rel = path.relative(path.dirname(path.resolve(file)), schemaPath);
  if (path.isAbsolute(rel)) return pathToFileURL(schemaPath).href;
  const posix = rel.split(path.sep).join('/');
  return posix.startsWith('../') ? posix : `./${posix}`;
}

export function templateProfile(baseUrl: string, file: string, roles = profileRoles()): Record<string, unknown> {
  const credentials: Record<string, unknown> = {};
  const resources: Record<string, unknown> = {};
  const faults: Record<string, unknown> = {};
  const schema = readProfileSchema();
  const resourceNodes = schema.properties.resources?.properties ?? {};
  for (const r of roles) {
    if (r.kind === 'credential') credentials[r.role] = { keyEnv: keyVariable(r.role) };
    if (r.kind === 'resource') {
      const node = resourceNodes[r.role];
      if (node.$ref === '#/$defs/encounter') resources[r.role] = { encounter_id: `${PLACEHOLDER}: ${r.role}` };
      else if (node.$ref === '#/$defs/document') resources[r.role] = { encounter_id: `${PLACEHOLDER}: ${r.role}`, document_id: `${PLACEHOLDER}: ${r.role}` };
      else if (node.type === 'integer') resources[r.role] = 1;
      else if (node.type === 'boolean') resources[r.role] = false;
    }
    if (r.kind === 'fault') faults[r.role] = { headers: { [`${PLACEHOLDER}-header`]: `${PLACEHOLDER}: what switches ${r.role} on` } };
  }
  return {
    $schema: profileSchemaReference(file),
    name: TEMPLATE_PROFILE_NAME, // a placeholder: reports name the target by its base URL until the user names it
    baseUrl,
    timeouts: { requestMs: 10000 },
    credentials,
    resources,
    faults,
    outOfScope: [],
    // The sender's scope is a choice the team makes, written out: §6's own status is planned_not_generally_available.
    webhook: { delivery: 'not_activated', headerWord: DEFAULT_HEADER_WORD, signingSecretEnv: SIGNING_SECRET_VARIABLE, receiverUrl: `${PLACEHOLDER}: your receiver's URL (conformance webhook receiver)` },
  };
}

export function templateGuide(file: string, declared: readonly Declaration[], roles = profileRoles()): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const table = (kind: RoleKind, head: string, variable: (r: RoleSpec) => string) => {
    const rows = roles.filter((r) => r.kind === kind)
      .map((r) => `| \`${r.role}\` | ${variable(r)} | ${cell(r.description || '(no description in the schema)')} | ${unlockText(unlocks(r, declared))} |`);
    return `| ${head} | reads | what it is | checks that need it |\n|---|---|---|---|\n${rows.join('\n')}`;
  };
  return `# Roles of ${path.basename(file)}

Generated by \`conformance profile init\` from fixtures/profiles/profile.schema.json. A role you cannot
offer: delete it from the profile (its checks end \`not_verified\`, never pass), or declare a whole part out of
scope in \`outOfScope\` with a reason. Every \`${PLACEHOLDER}\` must be replaced before \`conformance profile check\`.
Secrets are never written in the profile: each credential names the environment variable that holds its key.

## Credentials (one API key each; the variable holds the key)

${table('credential', 'credential role', (r) => `\`${keyVariable(r.role)}\``)}

## Resources (ids of the target's data, written in the profile)

${table('resource', 'resource role', () => 'the profile')}

## Fault switches (headers that make the target produce an environment condition; sandbox or test deployments)

${table('fault', 'fault', () => 'the profile (headers)')}

## Webhook settings

${table('webhook', 'setting', (r) => (r.role === 'signingSecretEnv' ? `\`${SIGNING_SECRET_VARIABLE}\`` : 'the profile'))}

The template declares \`"delivery": "not_activated"\`: the deployment sends no webhooks yet (§6: outbound delivery
is planned_not_generally_available), so every requirement of the webhook sender is out of scope and the verdict
line says so. When delivery is activated, write \`"delivery": "activated"\`, set \`headerWord\` to the word of
your header names (Ceapi for Ceapi-Event-Id …) and describe how the harness judges the sender:

\`\`\`json
"sender": {
  "listen": { "host": "0.0.0.0", "port": 8787, "url": "https://conformance-hook.example.com" },
  "trigger": { "command": ["./scripts/finalize-transcript.sh"], "timeoutMs": 60000 },
  "waitMs": 30000
}
\`\`\`

(\`"trigger": "none"\` instead: the harness waits for deliveries you cause yourself.) See docs/webhook-sender.md.

Then: \`npx conformance profile check --profile ${path.basename(file)}\`, and \`npx conformance run --profile ${path.basename(file)}\`.
`;
}

async function init(argv: string[]): Promise<number> {
  const { values: o } = parseArgs({ args: argv, options: { out: { type: 'string' }, 'base-url': { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (o.help) {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return 0;
  }
  const file = path.resolve(o.out ?? 'conformance.profile.json');
  const guide = file.replace(/(\.json)?$/, '.roles.md');
  if (!o.force && fs.existsSync(file)) throw new Setup(`${file} exists (use --force to overwrite)`);
  const baseUrl = o['base-url'] ?? `https://${PLACEHOLDER}.example.com`;
  const roles = profileRoles();
  fs.writeFileSync(file, `${JSON.stringify(templateProfile(baseUrl, file, roles), null, 2)}\n`);
  fs.writeFileSync(guide, templateGuide(file, await allDeclaredChecks('service'), roles));
  const count = (k: RoleKind) => roles.filter((r) => r.kind === k).length;
  process.stdout.write(`wrote ${rel(file)}: ${count('credential')} credential roles, ${count('resource')} resource roles, ${count('fault')} fault switches, ${count('webhook')} webhook settings\n`);
  process.stdout.write(`wrote ${rel(guide)}: what each role is and the variable it reads\n`);
  process.stdout.write(`next: set the CONFORMANCE_KEY_* variables, replace every ${PLACEHOLDER}, delete what your target cannot offer, then\n  npx conformance profile check --profile ${rel(file)}\n`);
  return 0;
}

function rel(p: string): string {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

// ------------------------------------------------------------------------------------------ check

interface Line { kind: RoleKind; role: string; ok: boolean | null; text: string }

const SEG = encodeURIComponent;

function targetFor(e: Expectation, profile: Profile): string {
  const res = (e.resource ? (profile.resources as Record<string, { encounter_id?: string; document_id?: string }> | undefined)?.[e.resource] : undefined) ?? {};
  // Where the answer comes before lookup (stages 1–3), ids need not exist: placeholders keep the request well-formed.
  const enc = res.encounter_id ?? profile.resources?.own_encounter?.encounter_id ?? 'profile-check-encounter';
  const doc = res.document_id ?? 'profile-check-document';
  const base = '/external/v1/encounters';
  switch (e.route) {
    case 'list': return `${base}?limit=1`;
    case 'encounter': return `${base}/${SEG(enc)}`;
    case 'document': return `${base}/${SEG(enc)}/documents/${SEG(doc)}`;
    case 'transcript': return `${base}/${SEG(enc)}/documents/${SEG(doc)}/transcript`;
    case 'audio': return `${base}/${SEG(enc)}/documents/${SEG(doc)}/audio`;
  }
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
  if (kind === 'fault') return `do these headers switch ${role} on?`;
  const what = description.split(/:| \(|;/)[0].trim();
  return what ? `is this ${/^(a|an|the)\b/.test(what) ? '' : 'the '}${what}?` : `is this the right ${role}?`;
}

export async function checkProfile(profile: Profile, env: NodeJS.ProcessEnv = process.env): Promise<{ lines: Line[]; missing: RoleSpec[]; missingSender?: string }> {
  const roles = profileRoles();
  const lines: Line[] = [];
  const client = { baseUrl: profile.baseUrl, timeoutMs: profile.timeouts?.requestMs ?? 10_000, maxBodyBytes: profile.timeouts?.maxBodyBytes };
  let reached = false;
  const send = async (e: Expectation, key: string | undefined, extra: Record<string, string> = {}) => {
    const target = targetFor(e, profile);
    const headers: Record<string, string> = { ...profile.requestHeaders, ...extra };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    try {
      const res = await sendRaw(client, { target, headers });
      reached = true;
      return { target, res };
    } catch (err) {
      if (err instanceof TransportError && !reached) throw new Setup(`cannot reach ${profile.baseUrl}: ${err.kind} (${err.message})`);
      return { target, res: null as RawResponse | null, error: err instanceof TransportError ? `${err.kind}: ${err.message}` : String(err) };
    }
  };
  const judge = async (kind: RoleKind, role: string, description: string, e: Expectation, key: string | undefined, extra?: Record<string, string>) => {
    const { target, res, error } = await send(e, key, extra) as { target: string; res: RawResponse | null; error?: string };
    const route = `GET ${target.replace(/\?.*$/, '')}`;
    if (!res) return lines.push({ kind, role, ok: false, text: `${role}: ${route} failed (${error}); expected ${expected(e)}` });
    const reason = reasonOf(res.body) ?? null;
    const ok = [e, ...(e.also ?? [])].some((x) => res.status === x.status && (x.reason === undefined || reason === x.reason));
    if (ok) return lines.push({ kind, role, ok, text: `${role} answers ${answer(res.status, reason)} on ${route}, as it should` });
    const like = kind === 'credential' ? answersLike(e.route, res.status, reason, role) : null;
    lines.push({ kind, role, ok, text: `${role} answers ${answer(res.status, reason)} on ${route}, expected ${expected(e)}: ${question(kind, role, description)}${like ? ` (that is how ${like} answers)` : ''}` });
  };

  const has = (kind: RoleKind, role: string) => {
    if (kind === 'credential') return (profile.credentials as Record<string, unknown>)[role] !== undefined;
    if (kind === 'resource') return (profile.resources as Record<string, unknown> | undefined)?.[role] !== undefined;
    if (kind === 'fault') return (profile.faults as Record<string, unknown> | undefined)?.[role] !== undefined;
    return (profile.webhook as Record<string, unknown> | undefined)?.[role] !== undefined;
  };
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
  for (const r of roles.filter((x) => x.kind === 'fault' && has(x.kind, x.role))) {
    const e = FAULT_EXPECTATIONS[r.role];
    const caller = e?.as ?? 'full';
    const key = credentialKey(profile, caller, env);
    if (!e || !key) {
      lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: not checked (needs credentials.${caller})` });
      continue;
    }
    await judge(r.kind, r.role, r.description, e, key, (profile.faults as Record<string, { headers: Record<string, string> }>)[r.role].headers);
  }
  for (const r of roles.filter((x) => x.kind === 'webhook' && has(x.kind, x.role))) {
    lines.push({ kind: r.kind, role: r.role, ok: null, text: `${r.role}: set (${r.role === 'signingSecretEnv' ? 'its variable is set' : 'not called by profile check'})` });
  }
  return { lines, missing, missingSender: missingSender?.text };
}

function placeholders(value: unknown, where: string, out: string[]): string[] {
  if (typeof value === 'string' && value.includes(PLACEHOLDER)) out.push(where);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) placeholders(v, where ? `${where}.${k}` : k, out);
  return out;
}

async function check(argv: string[]): Promise<number> {
  const { values: o } = parseArgs({ args: argv, options: { profile: { type: 'string' }, target: { type: 'string' }, report: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (o.help) {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return 0;
  }
  if (!o.profile) throw new Setup('profile check needs --profile FILE (write one with `conformance profile init`)');
  const profile = loadProfile(o.profile);
  if (o.target) profile.baseUrl = o.target;
  const left = [...new Set(placeholders(profile, '', []).map((w) => w.split('.').slice(0, 2).join('.')))];
  if (left.length) throw new Setup(`${o.profile} still has ${PLACEHOLDER} in ${left.join(', ')}: fill them or delete those roles`);
  // A run's report counts exactly what each missing role left not verified (its missingRoles).
  let measured: Map<string, { checks: number; requirements: number }> | null = null;
  if (o.report) {
    let report: { missingRoles?: { role: string; checks: number; requirements: number }[] };
    try {
      report = JSON.parse(fs.readFileSync(o.report, 'utf8'));
    } catch (e) {
      throw new Setup(`cannot read report ${o.report}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (!Array.isArray(report.missingRoles)) throw new Setup(`${o.report} has no missingRoles (a conformance.json of a run is needed)`);
    measured = new Map(report.missingRoles.map((m) => [m.role, { checks: m.checks, requirements: m.requirements }]));
  }
  const unset = unresolvedVariables(profile);
  if (unset.length) throw new Setup(`${unset.length} variable(s) the profile names are unset: ${unset.map((u) => `${u.variable} (${u.where})`).join(', ')}`);

  const { lines, missing, missingSender } = await checkProfile(profile);
  const out: string[] = [`profile check: ${profile.name} at ${profile.baseUrl}`];
  const titles: Record<RoleKind, string> = { credential: 'credentials', resource: 'resources', fault: 'fault switches', webhook: 'webhook settings' };
  for (const kind of ['credential', 'resource', 'fault', 'webhook'] as RoleKind[]) {
    const mine = lines.filter((l) => l.kind === kind);
    if (!mine.length) continue;
    out.push(`${titles[kind]}:`);
    for (const l of mine) out.push(`  ${l.ok === true ? 'ok      ' : l.ok === false ? 'WRONG   ' : 'skipped '}${l.text}`);
  }
  if (missing.length) {
    const declared = await allDeclaredChecks('service');
    out.push(measured
      ? `missing roles (their checks end not verified; counts from ${o.report}):`
      : `missing roles (their checks end not verified; "checks that need it" from the checks' declarations; a run counts what it could not verify, then --report):`);
    const count = (r: RoleSpec) => {
      // The sender's settings unlock the sender's checks as a whole (webhook.delivery "not_activated" settles them instead).
      if (r.kind === 'webhook' && (r.role === 'delivery' || r.role === 'sender')) {
        const m = measured?.get(`webhook.${r.role}`);
        return m ? `${m.checks} checks, ${m.requirements} requirements` : `the ${SENDER_CASES.length} webhook sender checks`;
      }
      if (!measured) return unlockText(unlocks(r, declared));
      const m = measured.get(r.role);
      return m ? `${m.checks} checks, ${m.requirements} requirements` : '0 checks in that run';
    };
    const rows = missing.map((r) => [r.role, r.kind, count(r), r.kind === 'credential' ? keyVariable(r.role) : r.kind === 'webhook' && r.role === 'signingSecretEnv' ? SIGNING_SECRET_VARIABLE : '-']);
    const head = ['role', 'kind', measured ? 'checks it would unlock' : 'checks that need it', 'variable'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    for (const row of [head, ...rows]) out.push(`  ${row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()}`);
  }
  if (missingSender) out.push(`webhook sender: the profile lacks ${missingSender}`);
  const wrong = lines.filter((l) => l.ok === false).length;
  const good = lines.filter((l) => l.ok === true).length;
  out.push(`conformance: profile check: ${good} role(s) answer as they should, ${wrong} do not, ${missing.length} missing`);
  process.stdout.write(`${redact(out.join('\n'))}\n`);
  return wrong > 0 ? 1 : 0;
}

/** `conformance profile <init|check>`: returns the exit code; setup errors end in one line and 2. */
export async function profileCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
      process.stdout.write(`${PROFILE_HELP}\n`);
      return sub === undefined ? 2 : 0;
    }
    if (sub === 'init') return init(rest);
    if (sub === 'check') return await check(rest);
    throw new Setup(`unknown profile command ${sub} (init, check; see conformance profile --help)`);
  } catch (e) {
    const known = e instanceof Setup || e instanceof ProfileError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (!known) throw e;
    process.stderr.write(`conformance: ${redact((e as Error).message).replace(/\s+/g, ' ').trim()}\n`);
    return 2;
  }
}
