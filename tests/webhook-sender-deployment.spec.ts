// The webhook sender judged as a deployment's (profile webhook.sender): the sandbox's own sender, its deliveries caused
// by a team's trigger command (tests/fixtures/sandbox-webhook-trigger.mjs) instead of the harness's sandbox control,
// gives the same outcomes as the sandbox-driven checks (but for the one check only the sandbox's schedule can decide);
// a sender with another header word is CONFORMANT with the setting, through `conformance webhook sender --profile`,
// whose reports merge with a run's.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { runCli } from './helpers/cli-process.ts';
import { supersedeUnverified } from '../reports/merge.ts';
import { check, outcomes } from './helpers/report-data.ts';

const TRIGGER = path.join(import.meta.dirname, 'fixtures/sandbox-webhook-trigger.mjs');
const SECRET_ENV = 'CEC_DEPLOYMENT_HOOK_SECRET';
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-deployment-'));
const readReport = (out: string) => JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8'));
const GREP = ['--grep', '(?:^|\\s)webhook-sender-'];

test.describe('the sandbox judged as a deployment', () => {
  test.describe.configure({ mode: 'serial', timeout: 900_000 });
  let ref: ReferenceHandle;
  let control: string;
  test.beforeAll(async () => {
    test.setTimeout(200_000);
    ref = await startReference();
    control = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')).webhook.sandboxControlUrl;
  });
  test.afterAll(async () => {
    await ref?.stop();
  });

  /** The reference's profile, its sandbox control removed, judged through webhook.sender with the trigger. */
  function deploymentProfile(dir: string, headerWord?: string): { file: string; env: NodeJS.ProcessEnv } {
    const p = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8'));
    p.webhook = {
      delivery: 'activated', ...(headerWord ? { headerWord } : {}), signingSecretEnv: SECRET_ENV,
      sender: { listen: { host: '127.0.0.1', port: 0 }, trigger: { command: [process.execPath, TRIGGER], timeoutMs: 30_000 }, waitMs: 8_000, observeMs: 1_500, holdMs: 3_000 },
    };
    const file = path.join(dir, 'deployment.profile.json');
    fs.writeFileSync(file, JSON.stringify(p));
    const env = { [SECRET_ENV]: `whsec_deployment_${Date.now()}_secret`, SANDBOX_CONTROL_URL: control, SANDBOX_TOKEN: ref.switchboardToken, SANDBOX_SECRET_ENV: SECRET_ENV, SANDBOX_VARIANTS: headerWord === 'Ceapi' ? 'webhook-header-word-ceapi' : '' };
    return { file, env };
  }

  test('through webhook.sender and a trigger command, the sender checks end as the sandbox-driven ones do', async () => {
    const dir = tmp();
    const sandboxOut = path.join(dir, 'sandbox');
    const viaControl = await runCli(['run', '--profile', ref.profilePath, '--out', sandboxOut, ...GREP], { timeoutMs: 400_000, sampleMs: 0 });
    expect(viaControl.code, viaControl.stderr.slice(-2000)).toBe(0);
    const { file, env } = deploymentProfile(dir);
    const deploymentOut = path.join(dir, 'deployment');
    const viaTrigger = await runCli(['run', '--profile', file, '--out', deploymentOut, ...GREP], { env, timeoutMs: 800_000, sampleMs: 0 });
    expect(viaTrigger.code, viaTrigger.stderr.slice(-2000)).toBe(0);
    const outcomesOf = (out: string) => Object.fromEntries(readReport(out).checks.map((c: { id: string; outcome: string }) => [c.id, c.outcome]));
    const before = outcomesOf(sandboxOut);
    const after = outcomesOf(deploymentOut);
    expect(Object.keys(before).length).toBe(29);
    for (const id of Object.keys(before)) expect(before[id], `${id} via the sandbox control`).toBe('pass');
    // The one difference: a refused connection is read from the sender's own schedule, which a deployment does not
    // offer; that case is not part of a deployment's run (its requirements are verified by the other retry checks).
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).filter((x) => x !== 'webhook-sender-retries-refused-connection').sort());
    for (const id of Object.keys(after)) expect(after[id], `${id} via the trigger`).toBe(before[id]);
    const requirements = (out: string) => Object.fromEntries(readReport(out).requirements.filter((x: { id: string }) => /^(WEBHOOK|FIELD-EVENT|VERSION-WEBHOOK|LIMIT-WEBHOOK)/.test(x.id)).map((x: { id: string; status: string }) => [x.id, x.status]));
    expect(requirements(deploymentOut)).toEqual(requirements(sandboxOut));
    // The deployment's signing secret never reaches a report.
    for (const f of ['conformance.json', 'junit.xml', 'conformance.html']) expect(fs.readFileSync(path.join(deploymentOut, f), 'utf8'), f).not.toContain(env[SECRET_ENV]!);
  });

  test('a sender whose header word is Ceapi is CONFORMANT with the setting (webhook sender --profile), its reports merge with a run\'s', async () => {
    const dir = tmp();
    const { file, env } = deploymentProfile(dir, 'Ceapi');
    const out = path.join(dir, 'sender');
    const r = await runCli(['webhook', 'sender', '--profile', file, '--out', out], { env, timeoutMs: 800_000, sampleMs: 0 });
    expect(r.code, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-1000)}`).toBe(0);
    expect(r.stdout).toMatch(/^conformance: CONFORMANT — service: webhook sender; verified (\d+) of \1 must requirements in scope/m);
    const report = readReport(out);
    expect(report.run.subject).toBe('service');
    expect(report.scope.declared).toBe('webhook sender');
    expect(report.checks).toHaveLength(28);
    expect(r.stdout).toContain('webhook-sender-retries-refused-connection only through a sandbox\'s schedule');
    expect(report.checks.filter((c: { outcome: string }) => c.outcome === 'fail')).toEqual([]);
    // Its scope is the sender's requirements alone.
    expect(report.requirements.map((x: { id: string }) => x.id)).toContain('WEBHOOK-HEADER-NAMES');
    expect(report.requirements.map((x: { id: string }) => x.id)).not.toContain('AUTH-401-REVOKED-KEY');
    for (const f of ['conformance.html', 'junit.xml', 'outcomes.json']) expect(fs.existsSync(path.join(out, f)), f).toBe(true);
    // The merged report of a run that could not make the service send and this sender part: the sender verified.
    const runOut = path.join(dir, 'run');
    fs.mkdirSync(runOut);
    fs.writeFileSync(path.join(runOut, 'outcomes.json'), JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(out, 'outcomes.json'), 'utf8')), checks: report.checks.map((c: { id: string; requirements: string[]; title: string }) => ({ id: c.id, requirements: c.requirements, title: c.title, outcome: 'not_verified', detail: 'profile lacks webhook.delivery (…)', project: 'conformance', file: 'engine/playwright/sender.ts', test: c.id })) }));
    const merged = path.join(dir, 'merged');
    const m = await runCli(['merge', '--out', merged, runOut, out], { timeoutMs: 120_000, sampleMs: 0 });
    const mergedReport = readReport(merged);
    expect(mergedReport.checks.filter((c: { outcome: string }) => c.outcome === 'not_verified'), m.stderr).toEqual([]);
    expect(mergedReport.requirements.find((x: { id: string }) => x.id === 'WEBHOOK-HEADER-NAMES').status).toBe('pass');
  });
});

test('merge: a check one part could not verify and another part verified counts as verified; shards are untouched', () => {
  const service = outcomes([check('rest-a', 'pass', ['A']), check('webhook-sender-post-json', 'not_verified', ['W'], { detail: 'profile lacks webhook.delivery (…)' }), check('webhook-sender-retries-refused-connection', 'not_verified', ['W'])]);
  const sender = outcomes([check('webhook-sender-post-json', 'pass', ['W']), check('webhook-sender-retries-refused-connection', 'not_verified', ['W'])]);
  const [s, w] = supersedeUnverified([service, sender]);
  expect(s.checks.map((c) => `${c.id} ${c.outcome}`)).toEqual(['rest-a pass', 'webhook-sender-retries-refused-connection not_verified']);
  expect(w.checks.map((c) => `${c.id} ${c.outcome}`)).toEqual(['webhook-sender-post-json pass', 'webhook-sender-retries-refused-connection not_verified']);
  const failing = outcomes([check('x', 'fail', ['A'])]);
  const unverified = outcomes([check('x', 'not_verified', ['A'])]);
  expect(supersedeUnverified([failing, unverified])[1].checks).toEqual([]);
});
