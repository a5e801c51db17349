// Loads and validates a target profile (fixtures/profiles/profile.schema.json). A malformed profile
// ends in a ProfileError that names the offending field; every secret it resolves to (profileSecrets)
// is registered with the redaction layer when it is loaded.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { fixedSchemas, type FixedSchemas } from '../fixtures/schema-code.ts';
import { registerSecret } from '../record/redact.ts';

export type CredentialRole =
  | 'full' | 'malformed_token' | 'invalid_key' | 'disabled_key' | 'revoked_key' | 'expired_key' | 'test_key'
  | 'missing_scope_encounters_read' | 'missing_scope_patients_read' | 'missing_scope_documents_read' | 'missing_scope_recordings_read'
  | 'not_org_scoped' | 'org_not_allowlisted' | 'encounter_routes_disabled' | 'document_routes_disabled'
  | 'no_scopes_not_org_scoped' | 'no_scopes_org_not_allowlisted' | 'no_scopes_encounter_routes_disabled' | 'no_scopes_document_routes_disabled';

export type EncounterRole = 'own_encounter' | 'other_org_encounter' | 'demo_encounter' | 'unknown_encounter';
export type DocumentRole =
  | 'clinical_document' | 'ambient_transcript_with_audio' | 'ambient_transcript_without_audio' | 'ambient_transcript_audio_missing'
  | 'ambient_transcript_without_transcript' | 'billing_summary' | 'checklist_summary' | 'other_org_document' | 'demo_document'
  | 'encounter_routes_disabled_document' | 'ambient_transcript_unfinalized';
export type FaultName = 'api_keys_disabled' | 'test_prefix_not_allowed' | 'digest_key_unavailable' | 'audio_storage_unavailable' | 'audio_url_expires_soon';

/**
 * What each refusing credential role's key is answered with on its distinctive request (§5, §7.1, §7.2): the
 * one table of role → expected answer. `conformance profile check` (cli/profile.ts), the stage faults of the
 * order-of-evaluation checks (observe/stage-faults.ts) and the authentication suite derive theirs from it.
 */
export const KEY_ROLE_ANSWER = {
  malformed_token: { status: 401, reason: 'malformed_token' },
  invalid_key: { status: 401, reason: 'invalid_key' },
  disabled_key: { status: 401, reason: 'disabled_key' },
  revoked_key: { status: 401, reason: 'revoked_key' },
  expired_key: { status: 401, reason: 'expired_key' },
  missing_scope_encounters_read: { status: 403, reason: 'missing_scope' },
  missing_scope_patients_read: { status: 403, reason: 'missing_scope' },
  missing_scope_documents_read: { status: 403, reason: 'missing_scope' },
  missing_scope_recordings_read: { status: 403, reason: 'missing_scope' },
  not_org_scoped: { status: 403, reason: 'org_scope_only_required' },
  org_not_allowlisted: { status: 403, reason: 'organization_not_allowlisted' },
  encounter_routes_disabled: { status: 403, reason: 'route_not_allowed' },
  document_routes_disabled: { status: 403, reason: 'route_not_allowed' },
  no_scopes_not_org_scoped: { status: 403, reason: 'org_scope_only_required' },
  no_scopes_org_not_allowlisted: { status: 403, reason: 'organization_not_allowlisted' },
  no_scopes_encounter_routes_disabled: { status: 403, reason: 'missing_scope' },
  no_scopes_document_routes_disabled: { status: 403, reason: 'missing_scope' },
} as const satisfies Partial<Record<CredentialRole, { status: 401 | 403; reason: string }>>;

/** The roles whose key fails authentication itself (401), in the table's order. */
export const KEY_401_ROLES = (Object.keys(KEY_ROLE_ANSWER) as (keyof typeof KEY_ROLE_ANSWER)[]).filter((r) => KEY_ROLE_ANSWER[r].status === 401);

export type Credential = { key: string } | { keyEnv: string };

/** An on/off pair of commands for a process-wide switch (argument lists, no shell). */
export interface SwitchCommand { on: string[]; off: string[]; timeoutMs?: number }

/**
 * How a deployment produces a condition no ordinary request does (profile `faults.<name>`), in exactly one form:
 * the sandbox's per-request `headers`; a `credential` whose requests meet the condition; a `resource` (a document)
 * whose requests meet it; another environment (`baseUrl`, with its own `credentials` by role where they differ);
 * or a `command` pair that switches it on and off for the whole service.
 */
export interface FaultForm {
  headers?: Record<string, string>;
  credential?: Credential;
  resource?: { encounter_id: string; document_id: string };
  baseUrl?: string;
  credentials?: Partial<Record<CredentialRole, Credential>>;
  command?: SwitchCommand;
}

export type FaultFormKind = 'headers' | 'credential' | 'resource' | 'baseUrl' | 'command';
export const FAULT_FORM_KINDS: readonly FaultFormKind[] = ['headers', 'credential', 'resource', 'baseUrl', 'command'];

/** The form a profile gives a condition in, if it gives it. */
export function faultFormKind(profile: Pick<Profile, 'faults'>, name: FaultName): FaultFormKind | undefined {
  const f = profile.faults?.[name];
  return f ? FAULT_FORM_KINDS.find((k) => f[k] !== undefined) : undefined;
}

/**
 * Whether a check outside the switched phase can send the condition with any caller and any request: a header switch
 * or another environment. A credential fixes the caller, a resource the document, a command holds only in its phase.
 */
export function faultJoinsAnyRequest(profile: Pick<Profile, 'faults'>, name: FaultName): boolean {
  const k = faultFormKind(profile, name);
  return k === 'headers' || k === 'baseUrl';
}

/** The conditions the profile gives as on/off commands: the checks that need one run alone, with it on. */
export function switchedFaults(profile: Pick<Profile, 'faults'>): FaultName[] {
  return (Object.keys(profile.faults ?? {}) as FaultName[]).filter((n) => faultFormKind(profile, n) === 'command');
}

function resolveCredential(c: Credential | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (!c) return undefined;
  const key = 'key' in c ? c.key : env[c.keyEnv];
  registerSecret(key);
  return key || undefined;
}

/** The key of a condition given as a credential (`faults.<name>.credential`). */
export function faultKey(profile: Profile, name: FaultName, env: NodeJS.ProcessEnv): string | undefined {
  return resolveCredential(profile.faults?.[name]?.credential, env);
}

/** The key a role has in the other environment of a condition given as `baseUrl`: its own, else the target's. */
export function environmentKey(profile: Profile, name: FaultName, role: CredentialRole, env: NodeJS.ProcessEnv): string | undefined {
  const own = profile.faults?.[name]?.credentials?.[role];
  return own ? resolveCredential(own, env) : credentialKey(profile, role, env);
}

/** Every credential the profile names, with where: the roles, the conditions' keys and their environments' keys. */
function namedCredentials(profile: Profile): { where: string; c: Credential }[] {
  const out: { where: string; c: Credential }[] = [];
  for (const [role, c] of Object.entries(profile.credentials ?? {})) if (c) out.push({ where: `credentials.${role}`, c });
  for (const [name, f] of Object.entries(profile.faults ?? {})) {
    if (f?.credential) out.push({ where: `faults.${name}.credential`, c: f.credential });
    for (const [role, c] of Object.entries(f?.credentials ?? {})) if (c) out.push({ where: `faults.${name}.credentials.${role}`, c });
  }
  return out;
}

export interface Profile {
  name: string;
  baseUrl: string;
  requestHeaders?: Record<string, string>;
  timeouts?: { requestMs?: number; maxBodyBytes?: number };
  credentials: Partial<Record<CredentialRole, Credential>>;
  resources?: Partial<Record<EncounterRole, { encounter_id: string }> & Record<DocumentRole, { encounter_id: string; document_id: string }>> & { list_min_total?: number; audio_url_reachable?: boolean };
  faults?: Partial<Record<FaultName, FaultForm>>;
  webhook?: WebhookSettings;
  /** Parts of the contract this target does not offer, each with its reason (a requirement id, `area:<area>` or `section:<n>`). */
  outOfScope?: { part: string; reason: string }[];
}

/** How the harness judges a deployment's webhook sender (profile `webhook.sender`). */
export interface SenderSettings {
  listen?: { host?: string; port?: number; url?: string };
  /** The team's command run once per scenario, or "none": the team causes the deliveries itself. */
  trigger: 'none' | { command: string[]; timeoutMs?: number };
  waitMs?: number;
  observeMs?: number;
  holdMs?: number;
}

export interface WebhookSettings {
  /** §6: whether the deployment's outbound delivery is activated; `not_activated` puts the sender out of scope. */
  delivery?: 'activated' | 'not_activated';
  /** The word of the §6.2 header names (default Service). */
  headerWord?: string;
  signingSecretEnv?: string;
  signingSecret?: string;
  receiverUrl?: string;
  sandboxControlUrl?: string;
  sender?: SenderSettings;
}

/** §6.2: the neutral word the specification writes where the service's own name would stand. */
export const DEFAULT_HEADER_WORD = 'Service';

/** The word of the deployment's §6.2 header names (profile `webhook.headerWord`, default Service). */
export function headerWordOf(profile: Pick<Profile, 'webhook'>): string {
  return profile.webhook?.headerWord ?? DEFAULT_HEADER_WORD;
}

/** The profile declares the deployment's webhook delivery not activated (§6 planned_not_generally_available). */
export function deliveryNotActivated(profile: Pick<Profile, 'webhook'> | undefined): boolean {
  return profile?.webhook?.delivery === 'not_activated';
}

/** Said wherever the declaration puts the sender out of scope: the reports' reason and the verdict line. */
export const DELIVERY_NOT_ACTIVATED = 'webhook delivery declared not activated';
export const DELIVERY_NOT_ACTIVATED_REASON = 'the profile declares webhook delivery not activated (webhook.delivery "not_activated"; §6: outbound delivery is planned_not_generally_available and unavailable until the service activates a receiver)';

/**
 * What a service profile lacks to judge the sender: the one wording `run` (the sender checks' not_verified detail,
 * read back as a missing role) and `profile check` give. Undefined when the sender can be judged or is out of scope.
 */
export function missingSenderSetting(profile: Pick<Profile, 'webhook'>): { setting: string; text: string } | undefined {
  const w = profile.webhook;
  if (w?.delivery === 'not_activated' || w?.sender || w?.sandboxControlUrl) return undefined;
  if (w?.delivery === 'activated') return { setting: 'webhook.sender', text: 'webhook.sender (where the harness listens and how deliveries are caused: a trigger command, or "none" to wait for deliveries the team causes)' };
  return { setting: 'webhook.delivery', text: 'webhook.delivery (declare "not_activated" when the deployment sends no webhooks yet, §6 planned_not_generally_available; or "activated" with webhook.sender so the harness judges its deliveries)' };
}

/** The kinds of profile role, each living in its own section of the profile. */
export type RoleKind = 'credential' | 'resource' | 'fault' | 'webhook';

/** The section of the profile a kind of role lives in: a role is named `<section>.<role>` (`credentials.no_scopes`). */
export const ROLE_SECTION: Record<RoleKind, 'credentials' | 'resources' | 'faults' | 'webhook'> = { credential: 'credentials', resource: 'resources', fault: 'faults', webhook: 'webhook' };

/** The setting a role is named by wherever a check says what it needs or lacks: `credentials.no_scopes`. */
export function settingPath(kind: RoleKind, role: string): string {
  return `${ROLE_SECTION[kind]}.${role}`;
}

/** The kind and role a setting path names (`credentials.no_scopes` → credential `no_scopes`), if its section is a role's. */
export function roleOfSetting(path: string): { kind: RoleKind; role: string } | undefined {
  const dot = path.indexOf('.');
  const kind = (Object.keys(ROLE_SECTION) as RoleKind[]).find((k) => ROLE_SECTION[k] === path.slice(0, dot));
  return kind && dot > 0 ? { kind, role: path.slice(dot + 1) } : undefined;
}

export class ProfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProfileError';
  }
}

/** Header names whose values are secrets (a switchboard token, an API key); a fault name such as `api_keys_disabled` stays readable. */
export const SECRET_HEADER = /token|auth|key|secret|signature|cookie/i;

const SCHEMA_PATH = path.resolve(import.meta.dirname, '../fixtures/profiles/profile.schema.json');
let validateFn: ValidateFunction | undefined;

/** The profile's schema as its validator is made from it (fixtures/schema-code.ts). */
export function profileSchemaSet(): FixedSchemas {
  const schema = JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8')) as { $id: string };
  // validateSchema: false: the profile's schema is a fixed file, checked against the meta-schema by the project's
  // tests (tests/reference.spec.ts compiles it with the meta-schema on); here that check compiled the meta-schema
  // first, a third of the schema's cost on every run. Strict mode still holds.
  return { name: 'profile', options: { strict: true, allErrors: true, validateSchema: false }, schemas: [schema], exports: { profile: schema.$id } };
}

function validator() {
  // A fixed file: its compiled code is kept for the next process (fixtures/schema-code.ts).
  validateFn ??= fixedSchemas(profileSchemaSet())('profile');
  return validateFn;
}

/** Compiles the profile's schema now (while something else is waited for), so a later validation is quick. */
export function prepareProfileValidation(): void {
  validator();
}

/** Validates a parsed profile; throws ProfileError naming the first offending field. */
/**
 * Said after the error when a file holds none of a profile's own fields: a block written alone (a team's `webhook`
 * block, say) is part of the target's profile, not a profile.
 */
function fragmentHint(data: unknown): string {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return '';
  if (['name', 'baseUrl', 'credentials'].some((k) => k in data)) return '';
  return '; a profile describes the whole target: "name", "baseUrl" and "credentials" beside blocks such as "webhook" (`conformance profile init` writes one to fill in; docs/profile.md)';
}

export function validateProfile(data: unknown, source: string, env: NodeJS.ProcessEnv): Profile {
  const validate = validator();
  if (!validate(data)) {
    const errors = validate.errors!;
    // A credential that gives neither or both of key/keyEnv fails the oneOf: say that plainly.
    const cred = errors.find((x) => x.keyword === 'oneOf' && /^\/credentials\/[^/]+$/.test(x.instancePath));
    if (cred) throw new ProfileError(`${source}: field ${cred.instancePath} must give exactly one of "key" or "keyEnv"`);
    const e = errors.find((x) => x.keyword !== 'required' || !/^\/credentials\//.test(x.instancePath)) ?? errors[0];
    const where = e.instancePath || '(root)';
    const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : '';
    throw new ProfileError(`${source}: field ${where} ${e.message}${extra}${fragmentHint(data)}`);
  }
  const profile = data as Profile;
  // The one place a process learns the profile's secrets: every process that reads a profile (worker
  // fixture, reporter, CLI) goes through here.
  registerProfileSecrets(profile, env);
  return profile;
}

/**
 * Every secret the profile resolves to, read from what it declares: the key of every credential role it
 * names (inline, or the value of its keyEnv; the profile's own entries are walked, so no role list can
 * miss one, the `no_scopes_*` roles included), the webhook signing secret (inline or from its
 * variable), and the values of request and fault headers whose name says they are secret (a
 * switchboard token, an API key; a fault name such as `api_keys_disabled` must stay readable).
 */
export function profileSecrets(profile: Profile, env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  for (const { c } of namedCredentials(profile)) {
    const v = 'key' in c ? c.key : env[c.keyEnv];
    if (v) out.add(v);
  }
  const w = profile.webhook;
  const secret = w?.signingSecret ?? (w?.signingSecretEnv ? env[w.signingSecretEnv] : undefined);
  if (secret) out.add(secret);
  const headerSets = [profile.requestHeaders ?? {}, ...Object.values(profile.faults ?? {}).map((f) => f?.headers ?? {})];
  for (const h of headerSets) for (const [k, v] of Object.entries(h)) if (SECRET_HEADER.test(k) && v) out.add(v);
  return [...out];
}

/** Registers every secret of the profile with the redaction layer (see profileSecrets). */
export function registerProfileSecrets(profile: Profile, env: NodeJS.ProcessEnv): void {
  for (const s of profileSecrets(profile, env)) registerSecret(s);
}

/** The SHA-256 of a profile file's bytes: CONFORMANCE_PROFILE_SHA256 names the bytes a parent process validated. */
export function profileDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Loads and validates a profile. Validation compiles the profile's JSON Schema (about 0.4 s of CPU), so a
 * process that validated a file exports its digest (engine/plan.ts `markProfileChecked`), and the processes it starts
 * (the runner's workers, its reporter) pass it as `trusted`: the schema is skipped for those very bytes; any other
 * bytes are validated.
 */
export function loadProfile(file: string, env: NodeJS.ProcessEnv, trusted?: string): Profile {
  return parseProfile(file, readProfileText(file), env, trusted);
}

function readProfileText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ProfileError(`cannot read profile ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function parseProfile(file: string, text: string, env: NodeJS.ProcessEnv, trusted?: string): Profile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ProfileError(`profile ${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (trusted !== undefined && trusted === profileDigest(text)) {
    registerProfileSecrets(data as Profile, env);
    return data as Profile;
  }
  return validateProfile(data, `profile ${file}`, env);
}

/** Validates the profile file now: the profile and the digest of the bytes validated, which children may trust (loadProfile). */
export function checkProfile(file: string, env: NodeJS.ProcessEnv): { profile: Profile; digest: string } {
  const text = readProfileText(file);
  return { profile: parseProfile(file, text, env), digest: profileDigest(text) };
}

/**
 * Every environment variable the profile names that is unset or empty, with what names it. A profile that
 * names a variable means the role is meant to be there: an unresolved one is a setup error, never a
 * silently not-verified role (a forgotten CI secret must not pass a gate).
 */
export function unresolvedVariables(profile: Profile, env: NodeJS.ProcessEnv): { variable: string; where: string }[] {
  const out: { variable: string; where: string }[] = [];
  for (const { where, c } of namedCredentials(profile)) {
    if ('keyEnv' in c && !env[c.keyEnv]) out.push({ variable: c.keyEnv, where });
  }
  const w = profile.webhook;
  if (w?.signingSecretEnv && !env[w.signingSecretEnv]) out.push({ variable: w.signingSecretEnv, where: 'webhook.signingSecretEnv' });
  return out;
}

/** Resolves a credential to its key, reading keyEnv from the environment. Undefined when absent. */
export function credentialKey(profile: Profile, role: CredentialRole, env: NodeJS.ProcessEnv): string | undefined {
  // A profile built in code, or a key read from another env, is registered too: never missed by redaction.
  return resolveCredential(profile.credentials[role], env);
}

export function signingSecret(profile: Profile, env: NodeJS.ProcessEnv): string | undefined {
  const w = profile.webhook;
  const s = w?.signingSecret ?? (w?.signingSecretEnv ? env[w.signingSecretEnv] : undefined);
  registerSecret(s);
  return s || undefined;
}
