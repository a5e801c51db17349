// `conformance profile init` and `conformance profile check`: help a service team write a target profile.
// `init` writes a complete template (every credential role, resource role, fault switch and webhook
// setting of fixtures/profiles/profile.schema.json, generated from the schema so it cannot drift) and a
// guide beside it (what each role is, the variable it reads, the checks that need it, from their declarations;
// engine/profile-template.ts generates both). `check` resolves every variable and hands the profile to
// engine/profile-check.ts, which calls the target once per role and judges whether each answers as its role should
// ("expired_key answers 401 revoked_key: is this the expired key?"); this command prints that, then the missing
// roles with the checks and requirements that need them (engine/profile-advice.ts). Exit codes like `run`: 0 every
// role answers as it should, 1 some role does not, 2 usage or setup error (one line, from the CLI's error table).
// Keys and response bodies are never printed.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { allDeclaredChecks } from '../engine/declared-checks.ts';
import { loadProfile, unresolvedVariables } from '../profile/profile.ts';
import { checkProfile, profileRoles, type RoleKind } from '../engine/profile-check.ts';
import { credentialFormGaps, missingRoleRows, tryTrigger, type MeasuredRoles } from '../engine/profile-advice.ts';
import { PLACEHOLDER, placeholders, templateGuide, templateProfile, unlocks } from '../engine/profile-template.ts';
import { SetupError } from './errors.ts';
import { redact } from '../record/redact.ts';

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

async function check(argv: string[]): Promise<number> {
  const { values: o } = parseArgs({ args: argv, options: { profile: { type: 'string' }, target: { type: 'string' }, report: { type: 'string' }, 'audio-expiry-wait': { type: 'string' }, trigger: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (o.help) {
    process.stdout.write(`${PROFILE_HELP}\n`);
    return 0;
  }
  if (!o.profile) throw new SetupError('profile check needs --profile FILE (write one with `conformance profile init`)');
  const profile = loadProfile(o.profile, process.env);
  if (o.target) profile.baseUrl = o.target;
  const left = [...new Set(placeholders(profile, '', []).map((w) => w.split('.').slice(0, 2).join('.')))];
  if (left.length) throw new SetupError(`${o.profile} still has ${PLACEHOLDER} in ${left.join(', ')}: fill them or delete those roles`);
  // A run's report counts exactly what each missing role left not verified (its missingRoles).
  let measured: MeasuredRoles | null = null;
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
  const unset = unresolvedVariables(profile, process.env);
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
  for (const g of credentialFormGaps(profile, declared)) out.push(`${g.fault} is given as a credential, which joins no other caller: ${g.checks} checks that pair it with another caller will stay not verified (give it as headers, baseUrl or command to judge them)`);
  const stillMissing = missingRoleRows(profile, missing, { audioLifetimeS, waitS, declared, measured });
  if (stillMissing.length) {
    out.push(measured
      ? `missing roles (their checks end not verified; counts from ${o.report}):`
      : `missing roles (their checks end not verified; "checks that need it" from the checks' declarations; a run counts what it could not verify, then --report):`);
    const rows = stillMissing.map((r) => [r.role, r.kind, r.unlocks, r.variable]);
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
