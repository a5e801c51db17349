// Judging a service's webhook sender from the command line (`conformance webhook sender`): with a profile, the sender checks of a run against the deployment; with a port, the deliveries a sender makes on its own, judged as they come (engine/passive-sender.ts).
// Both build the verdicts here; cli/webhook.ts parses the options and prints (the progress lines reach it through `say`).
import fs from 'node:fs';
import path from 'node:path';
import { DEPLOYMENT_CASES, SENDER_CASES, SenderContext } from '../checks/sender/cases.ts';
import { senderRequirementIds } from '../checks/sender/scope.ts';
import { webhookHeaders } from '../judge/signature.ts';
import { Capture, deliveryExchange, header, type ScriptStep } from '../observe/capture.ts';
import { Deployment } from '../observe/deployment.ts';
import { sendRaw } from '../observe/http.ts';
import { credentialKey, loadProfile, ProfileError, signingSecret, unresolvedVariables, type CredentialRole, type Profile } from '../profile/profile.ts';
import type { Exchange } from '../record/record.ts';
import { redact } from '../record/redact.ts';
import { subjectRunContext } from '../reports/context.ts';
import { collectedOf, type ConformanceReport, type OutcomesFile, type RunContext } from '../reports/model.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';
import { SetupError, UsageError } from './errors.ts';
import { PassiveSenderJudge } from './passive-sender.ts';
import { runChecks, type StandaloneRecord } from './standalone.ts';

/** The sender's records as a run's outcomes, for the report writers (and `conformance merge`). */
export function senderOutcomes(results: StandaloneRecord[], target: { name: string; baseUrl: string }, startedAt: string, finishedAt: string): OutcomesFile {
  const checks = results.map((r) => collectedOf(r, { project: 'webhook-sender', file: 'checks/sender/cases.ts' }));
  return { startedAt, finishedAt, runStatus: 'passed', seed: null, target, checks };
}

/**
 * The report of a sender run: the report model of `run`, subject the service, its scope the sender's requirements
 * (checks/sender/scope.ts), said in the verdict ("webhook sender"); merged with a run's outcomes by
 * `conformance merge`, the whole service is judged.
 */
export function senderContext(profilePath: string, opts: { outDir: string; strict?: boolean }): RunContext {
  const ctx = subjectRunContext('service', undefined, { outDir: opts.outDir, profilePath, strict: opts.strict === true });
  if (ctx.catalog) {
    const mine = new Set(senderRequirementIds(ctx.catalog));
    ctx.catalog = { ...ctx.catalog, requirements: ctx.catalog.requirements.filter((r) => mine.has(r.id)) };
  }
  ctx.scopeLabel = 'webhook sender';
  return ctx;
}

/**
 * The profile of `webhook sender --profile FILE`, loaded and checked for a sender to judge: every variable it names
 * set, delivery activated, webhook.sender and the signing secret given. Anything else is a usage error.
 */
export function senderProfile(file: string, env: NodeJS.ProcessEnv): { profile: Profile; sender: NonNullable<NonNullable<Profile['webhook']>['sender']>; secret: string } {
  let profile;
  try {
    profile = loadProfile(file, process.env);
  } catch (e) {
    if (e instanceof ProfileError) throw new UsageError(e.message);
    throw e;
  }
  const unset = unresolvedVariables(profile, env);
  if (unset.length) throw new UsageError(`profile ${file} names environment variable(s) that are unset or empty: ${unset.map((u) => `${u.variable} (${u.where})`).join(', ')}`);
  const w = profile.webhook;
  if (w?.delivery === 'not_activated') throw new UsageError('the profile declares webhook delivery not activated (webhook.delivery): there is no sender to judge');
  if (!w?.sender) throw new UsageError('webhook sender --profile needs webhook.sender in the profile (where the harness listens and how deliveries are caused: a trigger command, or "none")');
  const secret = signingSecret(profile, env);
  if (!secret) throw new UsageError('webhook sender --profile needs webhook.signingSecretEnv (the secret the deployment signs its deliveries with)');
  return { profile, sender: w.sender, secret };
}

/** `webhook sender --profile FILE`: the sender checks of a run against the deployment the profile describes, the outcomes and the reports written to `outDir`. */
export async function judgeSenderDeployment(o: { file: string; profile: Profile; sender: NonNullable<NonNullable<Profile['webhook']>['sender']>; secret: string; headerWord: string; outDir: string; strict: boolean; env: NodeJS.ProcessEnv; say: (line: string) => void }): Promise<ConformanceReport> {
  const { file, profile, secret, headerWord, outDir, env } = o;
  const w = { sender: o.sender };
  const document = profile.resources?.ambient_transcript_with_audio;
  const deployment = new Deployment({ env: process.env, settings: w.sender, baseUrl: profile.baseUrl, cwd: path.dirname(file), headerWord, document, log: (l) => o.say(redact(`webhook sender: ${l}`)) });
  try {
    await deployment.listen();
  } catch (e) {
    throw new UsageError(`cannot listen on ${w.sender.listen?.host ?? '127.0.0.1'}:${w.sender.listen?.port ?? 0}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const full = credentialKey(profile, 'full', env);
  const apiKeys = (Object.keys(profile.credentials ?? {}) as CredentialRole[]).map((r) => credentialKey(profile, r, env)).filter((k): k is string => Boolean(k));
  const rest = full ? async (target: string): Promise<Exchange> => {
    const headers = { ...profile.requestHeaders, authorization: `Bearer ${full}` };
    const ex: Exchange = { request: { method: 'GET', target, headers } };
    try {
      const res = await sendRaw({ baseUrl: profile.baseUrl, timeoutMs: profile.timeouts?.requestMs ?? 10_000 }, { target, headers });
      ex.response = { status: res.status, headers: res.headers, body: res.body.toString('utf8'), bodyBytes: res.body.length, durationMs: Math.round(res.durationMs) };
    } catch (e) {
      ex.error = { kind: 'other', message: (e as Error).message };
    }
    return ex;
  } : undefined;
  const cases = DEPLOYMENT_CASES();
  const skipped = SENDER_CASES.filter((c) => !cases.includes(c)).map((c) => c.id);
  o.say(redact(`conformance webhook sender: judging the sender of ${profile.name} (${cases.length} checks${skipped.length ? `; ${skipped.join(', ')} only through a sandbox's schedule` : ''}); listening at ${deployment.capture.url}/ (any path); trigger ${w.sender.trigger === 'none' ? 'none: cause one delivery per scenario when asked' : w.sender.trigger.command.join(' ')}`));
  const startedAt = new Date().toISOString();
  let results: StandaloneRecord[] = [];
  try {
    const ctx = () => new SenderContext({
      capture: deployment.capture, deployment, secret, document: document ?? { encounter_id: '', document_id: '' },
        // A deployment's trigger may finalize any transcript of the organization (docs/webhook-sender.md, "The trigger's
        // contract"): the event is bound by its arrival, and the document it names is judged, not matched to ours.
        documentKnown: false,
      waitMs: deployment.waitMs, observeMs: deployment.observeMs, apiKeys, rest, headerWord,
    });
    // A fresh context per check, over the one listener.
    results = await runChecks(cases, ctx, (r) => o.say(redact(`${r.outcome.toUpperCase().padEnd(13)} ${r.id}${r.outcome !== 'pass' && r.detail ? `: ${r.detail.slice(0, 300)}` : ''}`)));
  } finally {
    await deployment.close();
  }
  const outcomes = senderOutcomes(results, { name: profile.name, baseUrl: profile.baseUrl }, startedAt, new Date().toISOString());
  let report: ConformanceReport;
  try {
    fs.mkdirSync(outDir, { recursive: true });
    writeOutcomes(outDir, outcomes);
    report = writeReports(outDir, outcomes, senderContext(file, { outDir, strict: o.strict }));
  } catch (e) {
    throw new SetupError(`cannot write the reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return report;
}

/** One delivery check's tally at the end of a passive run, with its verdict: FAIL on any failure, NOT VERIFIED when no delivery arrived. */
export interface PassiveCheckTally { id: string; verdict: 'FAIL' | 'NOT VERIFIED' | 'PASS'; pass: number; fail: number }

export interface PassiveSenderOptions {
  host: string;
  port: number;
  secret: string;
  headerWord: string;
  /** Answers the n-th delivery of an event with the n-th step (the last repeats). */
  script: ScriptStep[];
  holdMs: number;
  durationS: number;
  eventsWanted?: number;
  observeMs: number;
  /** Called once listening: resolves when the user interrupts. */
  interrupted: () => Promise<void>;
  /** A line for the terminal (stdout). */
  say: (line: string) => void;
}

/**
 * `webhook sender --port N`: listens as a receiver, judges each delivery as it comes (said at once), answers by the
 * script, and stops after the duration, the settled events wanted, or an interruption; then judges the retries.
 * `failed` non-zero fails the run.
 */
export async function judgePassiveSender(o: PassiveSenderOptions): Promise<{ retryFailures: string[]; deliveries: number; events: number; checks: PassiveCheckTally[]; retry: { pass: number; fail: number; unobserved: number }; failed: number }> {
  const { secret, headerWord } = o;
  const H = webhookHeaders(headerWord);
  const judge = new PassiveSenderJudge({ secret, headerWord });
  let wake: () => void = () => {};
  const capture = new Capture({
    host: o.host,
    port: o.port,
    holdMs: o.holdMs,
    defaultScript: o.script,
    headerWord,
    onDelivery: (d) => {
      const { eventId, failures } = judge.onDelivery(d);
      const ex = deliveryExchange(d);
      o.say(redact(`delivery #${d.seq} ${ex.request.method} ${ex.request.target} event ${eventId} delivery ${header(d, H.deliveryId).join(',') || '-'}: answered ${d.answered}; ${failures.length === 0 ? 'all delivery checks pass' : `${failures.length} failing`}`));
      for (const f of failures) o.say(redact(`  FAIL ${f}`));
      wake();
    },
  });
  try {
    await capture.listen();
  } catch (e) {
    throw new UsageError(`cannot listen on ${o.host}:${o.port}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  o.say(`conformance webhook sender: listening on ${capture.url}/ (any path); script ${o.script.join(',')}; stops after ${o.durationS} s${o.eventsWanted ? ` or ${o.eventsWanted} settled events` : ''} or Ctrl-C`);

  const deadline = Date.now() + o.durationS * 1000;
  const interrupted = o.interrupted();
  let stop = false;
  void interrupted.then(() => {
    stop = true;
    wake();
  });
  while (!stop && Date.now() < deadline) {
    if (o.eventsWanted !== undefined && judge.eventCount() >= o.eventsWanted && judge.allSettled(o.observeMs)) break;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 200);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
  await capture.close();

  const r = judge.finish();
  const checks = [...r.perCheck].map(([id, c]): PassiveCheckTally => ({ id, verdict: c.fail > 0 ? 'FAIL' : r.deliveries === 0 ? 'NOT VERIFIED' : 'PASS', pass: c.pass, fail: c.fail }));
  return { retryFailures: r.retryFailures, deliveries: r.deliveries, events: r.events, checks, retry: r.retry, failed: r.failed };
}
