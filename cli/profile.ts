// `conformance profile init` and `conformance profile check`: help a service team write a target profile.
// `init` writes a complete template (every credential role, resource role, fault switch and webhook
// setting of fixtures/profiles/profile.schema.json, generated from the schema so it cannot drift) and a
// guide beside it (what each role is, the variable it reads, the checks that need it, from their declarations).
// `check` resolves every variable and hands the profile to engine/profile-check.ts, which calls the target once
// per role and judges whether each answers as its role should ("expired_key answers 401 revoked_key: is this the
// expired key?"); this command prints that, then the missing roles with the checks and requirements that need
// them. Exit codes like `run`: 0 every role answers as it should, 1 some role does not, 2 usage or setup error
// (one line, from the CLI's error table). Keys and response bodies are never printed.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PROFILE_SCHEMA_PATH } from '../fixtures/paths.ts';
import type { Declaration } from '../engine/registry.ts';
import { allDeclaredChecks } from './declared-checks.ts';
import { DEFAULT_HEADER_WORD, faultFormKind, headerWordOf, loadProfile, settingPath, unresolvedVariables, type FaultName, type Profile } from '../profile/profile.ts';
import type { CheckScope } from '../record/record.ts';
import { checkProfile, profileRoles, readProfileSchema, type RoleKind, type RoleSpec } from '../engine/profile-check.ts';
import { SetupError } from './errors.ts';
import { SENDER_CASES } from '../checks/sender/cases.ts';
import { redact } from '../record/redact.ts';
import { TEMPLATE_PROFILE_NAME } from '../reports/context.ts';

export const PROFILE_HELP = `Usage: conformance profile init [--out FILE] [--base-url URL] [--force]
       conformance profile check --profile FILE [--target URL] [--report conformance.json] [--trigger]

init    writes a complete profile template (every role of fixtures/profiles/profile.schema.json; each
        credential reads the variable CONFORMANCE_KEY_<ROLE>; resource ids to fill are marked FILL-ME) and
        a guide beside it (FILE with .roles.md): what each role is, the variable it reads, the checks
        that need it. Remove the roles your target cannot offer: their checks end not verified.
check   resolves every variable the profile names, calls the target once per credential, resource and
        condition (each in its form: a condition given as a command is switched on, asked, switched off),
        says for each whether it answers as that role should and how many checks it enables, fetches one
        audio URL (its lifetime, whether it is reachable), and lists the missing roles with the checks and
        requirements that need them (exact counts with --report: the conformance.json of a run with this
        profile) and what a form leaves unjudged. Never prints a key, a URL it was handed or a body.

Options:
  --out FILE          where init writes the template (default conformance.profile.json)
  --base-url URL      the target's base URL to put in the template
  --force             let init overwrite an existing file
  --profile FILE      the profile to check
  --target URL        base URL to check (overrides the profile's baseUrl)
  --report FILE       conformance.json of a run with this profile: the missing roles' exact counts
  --trigger           also run webhook.sender.trigger once and say whether a delivery arrived
  --audio-expiry-wait S  the run's wait bound (default 120): shorter-lived audio URLs need no condition
  -h, --help          this help

Exit codes: 0 every role the profile names answers as it should (missing roles are listed, not errors),
1 some role answers otherwise, 2 usage or setup error (bad profile, unset variable, a FILL-ME left,
unreachable target).`;

export const PLACEHOLDER = 'FILL-ME';

/** The variable `init` names for a credential role. */
export const keyVariable = (role: string): string => `CONFORMANCE_KEY_${role.toUpperCase()}`;
export const SIGNING_SECRET_VARIABLE = 'CONFORMANCE_WEBHOOK_SIGNING_SECRET';

// ------------------------------------------------------------------------------------------ the checks that need a role

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

const unlockText = (u: ReturnType<typeof unlocks>): string => (u === 'most' ? 'most checks' : u.checks === 0 ? '—' : `${u.checks} checks, ${u.requirements} requirements`);

// ------------------------------------------------------------------------------------------ init

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

async function init(argv: string[]): Promise<number> {
  const { values: o } = parseArgs({ args: argv, options: { out: { type: 'string' }, 'base-url': { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (o.help) {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return 0;
  }
  const file = path.resolve(o.out ?? 'conformance.profile.json');
  const guide = file.replace(/(\.json)?$/, '.roles.md');
  if (!o.force && fs.existsSync(file)) throw new SetupError(`${file} exists (use --force to overwrite)`);
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

function placeholders(value: unknown, where: string, out: string[]): string[] {
  if (typeof value === 'string' && value.includes(PLACEHOLDER)) out.push(where);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) placeholders(v, where ? `${where}.${k}` : k, out);
  return out;
}

async function check(argv: string[]): Promise<number> {
  const { values: o } = parseArgs({ args: argv, options: { profile: { type: 'string' }, target: { type: 'string' }, report: { type: 'string' }, 'audio-expiry-wait': { type: 'string' }, trigger: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (o.help) {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return 0;
  }
  if (!o.profile) throw new SetupError('profile check needs --profile FILE (write one with `conformance profile init`)');
  const profile = loadProfile(o.profile);
  if (o.target) profile.baseUrl = o.target;
  const left = [...new Set(placeholders(profile, '', []).map((w) => w.split('.').slice(0, 2).join('.')))];
  if (left.length) throw new SetupError(`${o.profile} still has ${PLACEHOLDER} in ${left.join(', ')}: fill them or delete those roles`);
  // A run's report counts exactly what each missing role left not verified (its missingRoles).
  let measured: Map<string, { checks: number; requirements: number }> | null = null;
  if (o.report) {
    let report: { missingRoles?: { role: string; checks: number; requirements: number }[] };
    try {
      report = JSON.parse(fs.readFileSync(o.report, 'utf8'));
    } catch (e) {
      throw new SetupError(`cannot read report ${o.report}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (!Array.isArray(report.missingRoles)) throw new SetupError(`${o.report} has no missingRoles (a conformance.json of a run is needed)`);
    measured = new Map(report.missingRoles.map((m) => [m.role, { checks: m.checks, requirements: m.requirements }]));
  }
  const unset = unresolvedVariables(profile);
  if (unset.length) throw new SetupError(`${unset.length} variable(s) the profile names are unset: ${unset.map((u) => `${u.variable} (${u.where})`).join(', ')}`);

  const { lines, missing, missingSender, audioLifetimeS } = await checkProfile(profile, process.env, { profileFile: o.profile });
  const waitS = Number(o['audio-expiry-wait'] ?? 120);
  const out: string[] = [`profile check: ${profile.name} at ${profile.baseUrl}`];
  const declared = await allDeclaredChecks('service');
  const titles: Record<RoleKind, string> = { credential: 'credentials', resource: 'resources', fault: 'fault switches', webhook: 'webhook settings' };
  for (const kind of ['credential', 'resource', 'fault', 'webhook'] as RoleKind[]) {
    const mine = lines.filter((l) => l.kind === kind);
    if (!mine.length) continue;
    out.push(`${titles[kind]}:`);
    for (const l of mine) {
      const u = l.kind === 'webhook' ? undefined : unlocks(l, declared);
      const enables = u === undefined ? '' : u === 'most' ? ' [enables most checks]' : u.checks > 0 ? ` [enables ${u.checks} checks]` : '';
      out.push(`  ${l.ok === true ? 'ok      ' : l.ok === false ? 'WRONG   ' : 'skipped '}${l.text}${enables}`);
    }
  }
  // Not missing: test_key where the condition test_prefix_not_allowed is given as a test key of its own, and
  // audio_url_expires_soon where an ordinary URL lives no longer than the wait bound.
  const notNeeded = (r: RoleSpec) => (r.kind === 'credential' && r.role === 'test_key' && faultFormKind(profile, 'test_prefix_not_allowed') === 'credential')
    // URLs that live no longer than the wait bound are waited for: no condition needed to see one expire.
    || (r.kind === 'fault' && r.role === 'audio_url_expires_soon' && audioLifetimeS !== undefined && audioLifetimeS <= waitS);
  const stillMissing = missing.filter((r) => !notNeeded(r));
  // What the forms themselves leave unjudged: a condition given as a key joins no other caller.
  for (const f of Object.keys(profile.faults ?? {}) as FaultName[]) {
    if (faultFormKind(profile, f) !== 'credential') continue;
    const paired = declared.filter((d) => d.needs?.includes(`faults.${f}`) && d.needs.some((n) => n.startsWith('credentials.') && n !== 'credentials.test_key'));
    if (paired.length) out.push(`${f} is given as a credential, which joins no other caller: ${paired.length} checks that pair it with another caller will stay not verified (give it as headers, baseUrl or command to judge them)`);
  }
  if (stillMissing.length) {
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
    const rows = stillMissing.map((r) => [r.role, r.kind, count(r), r.kind === 'credential' ? keyVariable(r.role) : r.kind === 'webhook' && r.role === 'signingSecretEnv' ? SIGNING_SECRET_VARIABLE : '-']);
    const head = ['role', 'kind', measured ? 'checks it would unlock' : 'checks that need it', 'variable'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    for (const row of [head, ...rows]) out.push(`  ${row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()}`);
  }
  if (missingSender) out.push(`webhook sender: the profile lacks ${missingSender}`);
  if (o.trigger) {
    const said = await tryTrigger(profile, o.profile);
    out.push(`webhook sender: ${said.text}`);
    if (!said.ok) lines.push({ kind: 'webhook', role: 'sender', ok: false, text: said.text });
  }
  const wrong = lines.filter((l) => l.ok === false).length;
  const good = lines.filter((l) => l.ok === true).length;
  out.push(`conformance: profile check: ${good} role(s) answer as they should, ${wrong} do not, ${stillMissing.length} missing`);
  process.stdout.write(`${redact(out.join('\n'))}\n`);
  return wrong > 0 ? 1 : 0;
}

/**
 * `profile check --trigger`: the sender's trigger run once, as a run would (listening where webhook.sender.listen
 * says), and whether a delivery with the deployment's header word arrived. Nothing is judged beyond that.
 */
async function tryTrigger(profile: Profile, file: string): Promise<{ ok: boolean; text: string }> {
  const sender = profile.webhook?.sender;
  if (!sender || sender.trigger === 'none') return { ok: false, text: '--trigger needs webhook.sender.trigger, a command' };
  const { Deployment } = await import('../observe/deployment.ts');
  const word = headerWordOf(profile);
  const d = new Deployment({ settings: sender, baseUrl: profile.baseUrl, cwd: path.dirname(path.resolve(file)), headerWord: word, document: profile.resources?.ambient_transcript_with_audio });
  const scope = { need: <T>(v: T | undefined | null) => v as T, observe() {}, warn() {}, note() {}, record() {} } as unknown as CheckScope;
  const started = Date.now();
  try {
    await d.listen();
    const r = await d.scenario(scope, 'profile-check', [200], (ds) => ds.length >= 1);
    if (r.deliveries.length === 0) return { ok: false, text: `the trigger ran, but no delivery arrived at ${d.capture.url} within ${Math.round(d.waitMs / 1000)} s` };
    const names = Object.keys(r.deliveries[0].headers);
    const mine = names.filter((n) => n.startsWith(`${word.toLowerCase()}-`));
    return { ok: mine.length > 0, text: `the trigger ran and a delivery arrived in ${((Date.now() - started) / 1000).toFixed(1)} s, with ${mine.length ? mine.join(', ') : `no header named ${word}-…`}` };
  } catch (e) {
    return { ok: false, text: (e as Error).message };
  } finally {
    await d.close();
  }
}

/** `conformance profile <init|check>`: returns the exit code; errors are thrown to the dispatcher (cli/errors.ts). */
export async function profileCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'init') return init(rest);
  if (sub === 'check') return check(rest);
  throw new SetupError(`unknown profile command ${sub} (init, check; see conformance profile --help)`);
}
