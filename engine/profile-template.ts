// The profile template `conformance profile init` writes and its guide, generated from the profile schema and the checks' declarations.
// Every credential, resource and fault role and webhook setting of fixtures/profiles/profile.schema.json (so the
// template cannot drift), the variable each reads, the checks that need each; and where a profile still has a
// placeholder. The CLI writes the files and prints.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROFILE_SCHEMA_PATH } from '../fixtures/paths.ts';
import type { Declaration } from './registry.ts';
import { DEFAULT_HEADER_WORD, settingPath } from '../profile/profile.ts';
import { profileRoles, readProfileSchema, type RoleKind, type RoleSpec } from './profile-check.ts';
import { TEMPLATE_PROFILE_NAME } from '../reports/context.ts';

export const PLACEHOLDER = 'FILL-ME';

/** The variable `init` names for a credential role. */
export const keyVariable = (role: string): string => `CONFORMANCE_KEY_${role.toUpperCase()}`;
export const SIGNING_SECRET_VARIABLE = 'CONFORMANCE_WEBHOOK_SIGNING_SECRET';

/**
 * The service checks that declare they need a role (engine/registry.ts `needs`), and the requirements they verify:
 * without the role they end not_verified. The full key is every check's own ('most'). Read from the declarations,
 * not from a run; a run counts what it could not verify exactly (`profile check --report`).
 */
export function unlocks(r: Pick<RoleSpec, 'kind' | 'role'>, declared: readonly Declaration[]): { checks: number; requirements: number } | 'most' {
  if (r.kind === 'credential' && r.role === 'full') return 'most';
  const setting = settingPath(r.kind, r.role);
  const mine = declared.filter((d) => d.subject === 'service' && d.needs?.includes(setting));
  return { checks: mine.length, requirements: new Set(mine.flatMap((d) => d.requirements)).size };
}

/** What a role unlocks, as the guide and `profile check` say it. */
export const unlockText = (u: ReturnType<typeof unlocks>): string => (u === 'most' ? 'most checks' : u.checks === 0 ? '—' : `${u.checks} checks, ${u.requirements} requirements`);

/** The table of every profile role in docs/profile.md (tests/profile-cli.spec.ts keeps docs/profile.md equal to it). */
export function rolesMarkdown(roles = profileRoles()): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const where = (r: RoleSpec) => `\`${settingPath(r.kind, r.role)}\`${r.kind === 'credential' ? ` (\`${keyVariable(r.role)}\`)` : ''}`;
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

/** Said beside each condition of the template: the forms a deployment may give it in (docs/profile.md, "Conditions"). */
export const FAULT_FORMS_COMMENT = 'one form, as your deployment has the condition: headers {name: value} | credential {keyEnv} (a key whose requests meet it) | resource {encounter_id, document_id} | baseUrl "https://other-env" (+ credentials by role) | command {on: [...], off: [...]} (a process-wide switch); delete it when you have none';

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
    if (r.kind === 'fault') faults[r.role] = { $comment: FAULT_FORMS_COMMENT, headers: { [`${PLACEHOLDER}-header`]: `${PLACEHOLDER}: what switches ${r.role} on` } };
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
    // A service profile: the partner's receiver URL (conformance webhook receiver) is not the service's setting.
    webhook: { delivery: 'not_activated', headerWord: DEFAULT_HEADER_WORD, signingSecretEnv: SIGNING_SECRET_VARIABLE },
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

/** Where a profile still holds the template's placeholder, as dotted paths. */
export function placeholders(value: unknown, where: string, out: string[]): string[] {
  if (typeof value === 'string' && value.includes(PLACEHOLDER)) out.push(where);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) placeholders(v, where ? `${where}.${k}` : k, out);
  return out;
}
