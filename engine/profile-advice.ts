// What `conformance profile check` says beyond each role's answer: the roles still missing and what each would unlock, the checks a condition's form leaves unjudged, the sender's trigger tried once.
// The deciding lives here (engine/profile-check.ts judges each role's answer); cli/profile.ts prints.
import path from 'node:path';
import type { Declaration } from './registry.ts';
import { faultFormKind, headerWordOf, type FaultName, type Profile } from '../profile/profile.ts';
import type { CheckScope } from '../record/record.ts';
import { SENDER_CASES } from '../checks/sender/cases.ts';
import type { RoleSpec } from './profile-check.ts';
import { keyVariable, SIGNING_SECRET_VARIABLE, unlocks, unlockText } from './profile-template.ts';

/** What a run counted of each missing role (its report's missingRoles), by role. */
export type MeasuredRoles = Map<string, { checks: number; requirements: number }>;

/**
 * The missing roles that matter, each with what it would unlock and the variable it reads. Not missing: test_key
 * where the condition test_prefix_not_allowed is given as a test key of its own, and audio_url_expires_soon where an
 * ordinary URL lives no longer than the wait bound (`waitS`). Counts from a run's report when `measured`, else from
 * the checks' declarations.
 */
export function missingRoleRows(profile: Profile, missing: readonly RoleSpec[], o: { audioLifetimeS?: number; waitS: number; declared: readonly Declaration[]; measured: MeasuredRoles | null }): { role: string; kind: string; unlocks: string; variable: string }[] {
  const notNeeded = (r: RoleSpec) => (r.kind === 'credential' && r.role === 'test_key' && faultFormKind(profile, 'test_prefix_not_allowed') === 'credential')
    // URLs that live no longer than the wait bound are waited for: no condition needed to see one expire.
    || (r.kind === 'fault' && r.role === 'audio_url_expires_soon' && o.audioLifetimeS !== undefined && o.audioLifetimeS <= o.waitS);
  const count = (r: RoleSpec) => {
    // The sender's settings unlock the sender's checks as a whole (webhook.delivery "not_activated" settles them instead).
    if (r.kind === 'webhook' && (r.role === 'delivery' || r.role === 'sender')) {
      const m = o.measured?.get(`webhook.${r.role}`);
      return m ? `${m.checks} checks, ${m.requirements} requirements` : `the ${SENDER_CASES.length} webhook sender checks`;
    }
    if (!o.measured) return unlockText(unlocks(r, o.declared));
    const m = o.measured.get(r.role);
    return m ? `${m.checks} checks, ${m.requirements} requirements` : '0 checks in that run';
  };
  return missing.filter((r) => !notNeeded(r)).map((r) => ({
    role: r.role, kind: r.kind, unlocks: count(r),
    variable: r.kind === 'credential' ? keyVariable(r.role) : r.kind === 'webhook' && r.role === 'signingSecretEnv' ? SIGNING_SECRET_VARIABLE : '-',
  }));
}

/** What the forms themselves leave unjudged: a condition given as a key joins no other caller, so the checks pairing it with another caller stay not verified. */
export function credentialFormGaps(profile: Profile, declared: readonly Declaration[]): { fault: FaultName; checks: number }[] {
  const out: { fault: FaultName; checks: number }[] = [];
  for (const f of Object.keys(profile.faults ?? {}) as FaultName[]) {
    if (faultFormKind(profile, f) !== 'credential') continue;
    const paired = declared.filter((d) => d.needs?.includes(`faults.${f}`) && d.needs.some((n) => n.startsWith('credentials.') && n !== 'credentials.test_key'));
    if (paired.length) out.push({ fault: f, checks: paired.length });
  }
  return out;
}

/**
 * `profile check --trigger`: the sender's trigger run once, as a run would (listening where webhook.sender.listen
 * says), and whether a delivery with the deployment's header word arrived. Nothing is judged beyond that.
 */
export async function tryTrigger(profile: Profile, file: string): Promise<{ ok: boolean; text: string }> {
  const sender = profile.webhook?.sender;
  if (!sender || sender.trigger === 'none') return { ok: false, text: '--trigger needs webhook.sender.trigger, a command' };
  const { Deployment } = await import('../observe/deployment.ts');
  const word = headerWordOf(profile);
  const d = new Deployment({ settings: sender, env: process.env, baseUrl: profile.baseUrl, cwd: path.dirname(path.resolve(file)), headerWord: word, document: profile.resources?.ambient_transcript_with_audio });
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
