// `conformance webhook`: judge a partner's webhook receiver, or a service's webhook sender.
//   conformance webhook receiver --url URL [--secret-env NAME] [--timeout-ms N] [--out DIR] [--strict]
//                                [--allow-incomplete] [--verbose] [--follow-up-port N [--follow-up-host H]]
//       plays the service: posts the valid delivery, boundaries, replays, retries and the adversarial battery;
//       prints the results grouped by cause (with the §6.3 step and one example delivery each) and the
//       verdict of the same report model as `run`; --out writes conformance.json, junit.xml, conformance.html.
//   conformance webhook sender --port N --secret-env NAME [--script 503,429,200] [--host H] [--header-word W] [--duration S]
//       [--events N] [--hold-ms N] [--observe-ms N]
//       listens as a receiver, judges each delivery as it comes, answers the n-th delivery of an event with
//       the n-th script step (`timeout` holds the response), then judges the retries.
// Exit codes like `run`: 0 CONFORMANT, 1 NOT CONFORMANT or INCOMPLETE (0 on INCOMPLETE with
// --allow-incomplete), 2 usage or setup error, e.g. an unreachable receiver (one line `conformance: <reason>`
// on stderr). Every line printed passes through redact().
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { subjectRunContext } from '../reports/context.ts';
import { buildReport, collectedOf, exitCodeFor, summaryLine, verdictLine } from '../reports/model.ts';
import type { CollectedCheck, ConformanceReport, OutcomesFile, RunContext } from '../reports/model.ts';
import { writeOutcomes, writeReports, REPORT_FILES } from '../reports/write.ts';
import { errorExit, SetupError, UsageError } from './errors.ts';
import { BODY_HANDLING, isRetryableStatus, RECEIVER_CASES, ReceiverRunStopped, SIGNING_INPUT, specStepOf } from '../checks/receiver/cases.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import type { ReceiverCase, ReceiverCheckResult } from '../checks/receiver/cases.ts';
import { LACKS } from '../checks/receiver/cases.ts';
import { redact, redactHeader, registerSecret, setEvidenceMode } from '../record/redact.ts';
import { evidenceOption } from './common.ts';
import { ReceiverContext, runReceiverSuite } from '../checks/receiver/cases.ts';
import { buildReceiverVectors, deliveryByName, expectedOf, singleDeliveryCases, vectorName, VECTORS_FILE } from '../checks/receiver/vectors.ts';
import { deliveryExchange } from '../checks/sender/cases.ts';
import { Capture, header } from '../observe/capture.ts';
import { PassiveSenderJudge } from '../engine/passive-sender.ts';
import type { ScriptStep } from '../observe/capture.ts';
import { SPEC_HEADER_WORD, webhookHeaders } from '../judge/signature.ts';
import { credentialKey, headerWordOf, loadProfile, ProfileError, signingSecret, unresolvedVariables, type CredentialRole } from '../profile/profile.ts';
import { DEPLOYMENT_CASES, SENDER_CASES, SenderContext } from '../checks/sender/cases.ts';
import { Deployment } from '../observe/deployment.ts';
import { senderRequirementIds } from '../checks/sender/scope.ts';
import { runStandalone } from '../engine/standalone.ts';
import type { StandaloneRecord } from '../engine/standalone.ts';
import { connectOnce, sendRaw } from '../observe/http.ts';
import type { Exchange } from '../record/record.ts';

export interface WebhookIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Resolves when the user interrupts (default: SIGINT or SIGTERM). */
  interrupted?: Promise<void>;
}

const HELP = `Usage:
  conformance webhook receiver --url URL [--secret-env NAME] [--timeout-ms N] [--out DIR]
                               [--strict] [--allow-incomplete] [--verbose] [--evidence redacted|full]
                               [--follow-up-port N [--follow-up-host H] [--follow-up-settle-ms N]] [--header-word W]
  conformance webhook sender --profile FILE [--out DIR] [--header-word W] [--strict] [--allow-incomplete]
  conformance webhook sender --port N --secret-env NAME [--script 503,429,200] [--host H] [--header-word W]
                             [--duration SECONDS] [--events N] [--hold-ms N] [--observe-ms N]
  conformance webhook vectors --out DIR
  conformance webhook send --url URL --name NAME [--secret-env NAME] [--timeout-ms N]
  conformance webhook send --list

receiver: sends the receiver at URL the valid delivery and every adversarial one, signed with the secret
          in $NAME (default CONFORMANCE_WEBHOOK_SECRET), and prints the results grouped by cause.
          A follow-up fetch after an invalid delivery fails (§6.3 must); a 2xx, 5xx or no answer to an
          invalid delivery is a warning (§6.3 should answer non-2xx; a 2xx is not verified without
          the probe below, since nothing then shows whether the receiver acted on it). A valid delivery
          answered 5xx (or 408, 409, 425, 429) is a retryable failure (§6.4), never a fail: not verified
          without the probe (its follow-up fetch failing is the usual cause), a warning when the probe's
          stand-in answered the receiver's fetches; a 4xx to it fails, and the detail shows the exact
          signing input (timestamp, dot, raw body) and names the receiver's body handling when it accepts
          the same event signed over a re-serialised body. To see the receiver's follow-up
          fetches, give --follow-up-port N: the harness then serves a stand-in of the REST API on
          H:N (default host 127.0.0.1) that answers any encounter, document or transcript id and counts
          each request; point the receiver's REST base URL at it for the run. After each delivery the
          harness waits --follow-up-settle-ms (default 250) for the fetches it caused: raise it for a
          receiver that works from a queue. Without it that must stays
          not verified and the verdict is INCOMPLETE at best (exit 1; --allow-incomplete exits 0).
          --out DIR writes conformance.json, junit.xml and conformance.html; --strict fails on
          warnings; --verbose prints every check. --header-word W sends the five §6.2 headers as
          W-Event-Id, W-Signature … (the service's own word; default Service); --evidence full keeps patient and
          clinical content a receiver's answers might carry in the evidence (default: replaced by placeholders).
sender:   with --profile: judges the deployment's webhook sender as \`conformance run\` does, from the profile's
          webhook block (webhook.sender: where to listen, the trigger command or "none"; webhook.signingSecretEnv;
          webhook.headerWord), and writes the same reports (subject service, scope the webhook sender) to
          --out DIR (default reports/out-webhook-sender), which \`conformance merge\` joins with a run's.
          With --port: listens on port N and judges the deliveries the service sends, signed with the secret in $NAME.
          --script answers the n-th delivery of each event with the n-th step (a status or "timeout";
          the last step repeats; default 200). Stops after --duration (default 300 s), after --events
          settled events, or on Ctrl-C, then prints a summary.
vectors:  writes DIR/webhook-receiver-vectors.json: every delivery of the receiver battery that is judged
          on its own (the valid ones, the boundaries, every defect) as a test vector: the raw body bytes
          (base64, and a UTF-8 view), the header lines, a TEST-ONLY secret, the receiver clock, the expected
          outcome (accept or reject; "open" where the spec leaves it to the receiver) and the clause. Feed them
          to your verifier's unit tests, in any language, offline.
send:     sends the one delivery named NAME (a vector name; --list prints them) to URL, freshly signed with
          the secret in $NAME (default CONFORMANCE_WEBHOOK_SECRET) and the current clock, and prints the
          request (signature redacted), its signing input and the answer; exit 0 when the answer is what
          the delivery should get (2xx for a valid one, non-2xx for a defect), 1 otherwise.
Exit codes: 0 CONFORMANT (receiver) or all checks passed (sender); 1 a check failed, or INCOMPLETE;
            2 usage or setup error (e.g. an unreachable receiver, or one that never answers).`;



function defaultIo(): WebhookIo {
  return {
    stdout: (l) => process.stdout.write(`${l}\n`),
    stderr: (l) => process.stderr.write(`${l}\n`),
    env: process.env,
  };
}

function interruptPromise(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function intOption(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name} must be an integer ${min}..${max}`);
  return Number(value);
}

/** --header-word: the word of the service's §6.2 header names (default Service). */
function headerWordOption(value: string | undefined): string {
  const word = value ?? SPEC_HEADER_WORD;
  try {
    webhookHeaders(word);
  } catch {
    throw new UsageError(`--header-word must be letters and digits (hyphens between), the word of Service-Event-Id …; got ${JSON.stringify(word)}`);
  }
  return word;
}

function secretFrom(env: NodeJS.ProcessEnv, name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--secret-env must name an environment variable, got ${JSON.stringify(name)}`);
  const secret = env[name];
  if (!secret) throw new UsageError(`environment variable ${name} (the signing secret) is not set`);
  registerSecret(secret);
  return secret;
}

export function parseScript(text: string): ScriptStep[] {
  const steps = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (steps.length === 0) throw new UsageError('--script must list statuses, e.g. 503,429,200');
  return steps.map((s) => {
    if (s === 'timeout') return 'timeout';
    if (!/^[1-5][0-9][0-9]$/.test(s) || Number(s) < 200) throw new UsageError(`--script step ${JSON.stringify(s)} is not a status 200..599 or "timeout"`);
    return Number(s);
  });
}

const PREFLIGHT_MS = 5_000;

interface FollowUpProbe {
  url: string;
  count(): number;
  close(): Promise<void>;
}

/**
 * The follow-up probe for a partner's receiver: the counting stand-in of the REST API
 * (webhook/counting-api.ts) served on the port the partner configured, so every follow-up fetch the
 * receiver makes is counted. It answers every request; it judges nothing itself.
 */
async function startFollowUpProbe(host: string, port: number): Promise<FollowUpProbe> {
  const api = await startCountingApi();
  const server = http.createServer((req, res) => {
    req.resume();
    const headers: Record<string, string> = req.headers.authorization ? { authorization: req.headers.authorization } : {};
    fetch(`${api.baseUrl}${req.url ?? '/'}`, { method: req.method === 'HEAD' ? 'HEAD' : req.method ?? 'GET', headers })
      .then(async (upstream) => {
        const body = Buffer.from(await upstream.arrayBuffer());
        res.writeHead(upstream.status, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502).end();
      });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (e) {
    await api.close();
    throw new UsageError(`cannot listen for follow-up fetches on ${host}:${port}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    count: () => api.count(),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await api.close();
    },
  };
}

/** One TCP connection to the receiver's host before anything is judged: unreachable is a setup error. */
async function reachable(url: URL, timeoutMs: number): Promise<void> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const failed = await connectOnce(host, port, timeoutMs);
  if (!failed) return;
  if (failed.kind === 'timeout') throw new SetupError(`the webhook receiver at ${url.origin} is unreachable: ${failed.message}`);
  const kind = failed.kind === 'connection_refused' ? 'connection refused' : failed.kind === 'dns' ? 'host name not found' : (failed.code ?? failed.message);
  throw new SetupError(`the webhook receiver at ${url.origin} is unreachable: ${kind} (is it running, and is --url right?)`);
}

const exchangesOf = (r: ReceiverCheckResult): Exchange[] => r.evidence;

function answerOf(ex: Exchange | undefined): string {
  if (!ex) return 'nothing sent';
  if (ex.response?.status !== undefined) return `answered ${ex.response.status}`;
  return ex.error?.kind === 'timeout' ? 'gave no answer (timeout)' : `failed at the transport level (${ex.error?.kind ?? 'error'})`;
}

/**
 * When judging is pointless, like `run`'s preflight and breaker: the receiver gave no answer at all to
 * the first, correct delivery, or refused connections for three checks in a row (it went away).
 */
export function receiverStopped(sofar: ReceiverCheckResult[], timeoutMs: number): string | undefined {
  const unanswered = (r: ReceiverCheckResult) => {
    const ex = exchangesOf(r);
    return ex.length > 0 && ex.every((e) => e.response === undefined);
  };
  const first = sofar[0];
  if (sofar.length === 1 && first && unanswered(first)) {
    const kind = exchangesOf(first)[0]?.error?.kind ?? 'error';
    return kind === 'timeout'
      ? `the webhook receiver accepted the connection but did not answer a correct delivery within ${timeoutMs} ms (a slow receiver: raise --timeout-ms)`
      : `the webhook receiver did not answer a correct delivery (${kind})`;
  }
  const last = sofar.slice(-3);
  if (last.length === 3 && last.every((r) => exchangesOf(r).length > 0 && exchangesOf(r).every((e) => e.error?.kind === 'connection_refused'))) {
    return 'the webhook receiver stopped accepting connections during the run (connection refused three checks in a row)';
  }
  return undefined;
}

const INVALID = new Set<ReceiverCase['expectation']>(['reject', 'decision', 'payload-policy', 'unsupported-type']);

/** Why a check did not pass, in words shared by every check that did the same; the CLI groups on it. */
export function causeOf(r: ReceiverCheckResult, c: ReceiverCase | undefined): string {
  const exchanges = exchangesOf(r);
  const said = answerOf(exchanges[exchanges.length - 1]);
  const title = (r.detail ?? '').split(':')[0];
  if (c && INVALID.has(c.expectation)) {
    if (r.outcome === 'fail') return /follow-up/i.test(r.detail ?? '') ? 'invalid deliveries led to follow-up REST fetches (§6.3: must not fetch follow-up resources or do clinical work)' : title;
    if (r.outcome === 'not_verified') return `invalid deliveries ${said}: §6.3 says should answer non-2xx, and nothing shows whether the receiver acted on them`;
    if (r.outcome === 'warning') {
      return /^answered 2/.test(said)
        ? `invalid deliveries ${said} without a follow-up fetch (§6.3: should answer non-2xx)`
        : `invalid deliveries ${said}: non-2xx or no answer, but retryable under §6.4, so the service would re-send them`;
    }
    if (r.outcome === 'informational') return `open choices: deliveries the harness's verifier rejects ${said} (the spec leaves these open)`;
  }
  // A valid delivery answered retryably (5xx, 408, 409, 425, 429, no answer): one cause, whichever check sent it.
  const refused = exchanges.find((e) => e.response?.status === undefined || e.response.status < 200 || e.response.status >= 300);
  if ((r.outcome === 'not_verified' || r.outcome === 'warning') && refused && c?.expectation !== 'boundary' && isRetryableStatus(refused.response?.status)) {
    const what = `valid deliveries ${answerOf(refused)}: a retryable failure under §6.4 (the service re-sends them), not a §6.3 failure`;
    if (r.outcome === 'warning') return `${what}; the follow-up stand-in answered the receiver's fetches, yet it did not acknowledge them`;
    return r.lacks === LACKS.standInUnused ? `${what}; the follow-up stand-in saw no fetch from the receiver (is its REST base URL the stand-in?)` : `${what}; nothing shows why: a follow-up fetch that cannot connect is the usual cause (--follow-up-port N)`;
  }
  if (r.outcome === 'not_verified') return r.detail ?? 'not verified';
  if (c?.expectation === 'boundary') return `a delivery exactly 300 s off (the open sub-second boundary) ${said}${r.outcome === 'warning' ? ': rejecting it is allowed, but this answer is retryable under §6.4' : ''}`;
  return `${title}${said ? ` (last delivery ${said})` : ''}`;
}

interface Group { outcome: ReceiverCheckResult['outcome']; cause: string; results: ReceiverCheckResult[] }

const OUTCOME_ORDER = ['fail', 'warning', 'not_verified', 'informational'] as const;
const LABEL: Record<string, string> = { fail: 'FAIL', warning: 'WARNING', not_verified: 'NOT VERIFIED', informational: 'INFORMATIONAL' };

/** Non-passing results grouped by outcome and cause, the most severe first, the largest group first. */
export function groupResults(results: ReceiverCheckResult[]): Group[] {
  const byId = new Map(RECEIVER_CASES.map((c) => [c.id, c]));
  const groups = new Map<string, Group>();
  for (const r of results) {
    if (r.outcome === 'pass') continue;
    const cause = causeOf(r, byId.get(r.id));
    const key = `${r.outcome}\u0000${cause}`;
    const g = groups.get(key) ?? { outcome: r.outcome, cause, results: [] };
    g.results.push(r);
    groups.set(key, g);
  }
  const rank = (o: string) => OUTCOME_ORDER.indexOf(o as (typeof OUTCOME_ORDER)[number]);
  return [...groups.values()].sort((a, b) => rank(a.outcome) - rank(b.outcome) || b.results.length - a.results.length);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The grouped summary: per cause, the §6.3 steps involved with their checks, and one example delivery. */
export function renderGroups(results: ReceiverCheckResult[]): string[] {
  const byId = new Map(RECEIVER_CASES.map((c) => [c.id, c]));
  const lines: string[] = [];
  for (const g of groupResults(results)) {
    lines.push(`${LABEL[g.outcome]} ×${g.results.length}: ${g.cause}`);
    const bySteps = new Map<string, string[]>();
    for (const r of g.results) {
      const reason = byId.get(r.id)?.reason;
      const step = reason ? specStepOf(reason) : 'scenario';
      bySteps.set(step, [...(bySteps.get(step) ?? []), r.id.replace(/^webhook-receiver-/, '')]);
    }
    for (const [step, ids] of bySteps) lines.push(`    ${step}: ${ids.join(', ')}`);
    const example = g.results[0];
    const ex = exchangesOf(example).at(-1);
    if (ex?.request) {
      lines.push(`    example (${example.id}):`);
      lines.push(`      ${ex.request.method ?? 'POST'} ${ex.request.target ?? ''}`);
      for (const [name, value] of Object.entries(ex.request.headers ?? {})) lines.push(`      ${name}: ${value}`);
      if (ex.request.body !== undefined) lines.push(`      body: ${clip(ex.request.body.replace(/\r?\n/g, '\\n'), 400)}`);
      if (ex.request.signingInput !== undefined) lines.push(`      signing input: ${clip(ex.request.signingInput, 600)}`);
      lines.push(`      → ${answerOf(ex)}`);
    }
    if (g.outcome !== 'fail' && g.outcome !== 'warning') continue;
    const detail = example.detail;
    if (detail) lines.push(`    detail: ${clip(detail, 400)}`);
  }
  return lines;
}

/**
 * One hint about the valid deliveries, from what the checks recorded: the receiver's body handling when a check
 * found it (it accepted the same event signed over a re-serialisation); a follow-up that failed when every
 * correctly signed delivery got a retryable answer; another secret or clock when every one was refused terminally
 * and no re-serialisation was accepted either.
 */
export function refusalHint(results: ReceiverCheckResult[], secretEnv: string, probe = false): string | undefined {
  const byId = new Map(RECEIVER_CASES.map((c) => [c.id, c]));
  const valid = results.filter((r) => byId.get(r.id)?.expectation === 'accept');
  const body = valid.find((r) => r.outcome === 'fail' && r.detail?.includes(BODY_HANDLING))?.detail;
  if (body) {
    const from = body.indexOf(BODY_HANDLING) + BODY_HANDLING.length;
    const to = body.indexOf(SIGNING_INPUT, from);
    return `hint: ${body.slice(from, to < 0 ? undefined : to).trim()} Each failing delivery's detail shows the exact signing input to compare with the receiver's own.`;
  }
  if (valid.length === 0 || valid.some((r) => r.outcome === 'pass')) return undefined;
  const statuses = [...new Set(valid.map((r) => answerOf(exchangesOf(r)[0])))];
  if (statuses.every((s) => /^answered (5|408|409|425|429)/.test(s))) {
    return probe
      ? `hint: every correctly signed delivery got a retryable answer (${statuses.join(', ')}), not a refusal: the receiver's own processing fails after it verifies (§6.4: the service would retry each one)`
      : `hint: every correctly signed delivery got a retryable answer (${statuses.join(', ')}), not a refusal: a receiver answers so when its own processing fails, most often its follow-up REST fetches (can it reach its REST base URL from here?); rerun with --follow-up-port N and the receiver's REST base URL set to http://127.0.0.1:N`;
  }
  if (!statuses.every((s) => /^answered [134]/.test(s))) return undefined;
  return `hint: every correctly signed delivery was refused (${statuses.join(', ')}), and none of the same event signed over a re-serialised body was accepted either: the receiver most likely holds another signing secret than $${secretEnv}, or its clock is more than 300 s off. Each failing delivery's detail shows the exact signing input`;
}

/** The receiver results as a run's outcomes, for the report writers. */
export function receiverOutcomes(results: ReceiverCheckResult[], url: string, startedAt: string, finishedAt: string): OutcomesFile {
  const checks = results.map((r) => collectedOf(r, { project: 'webhook-receiver', file: 'checks/receiver/cases.ts' }));
  return { startedAt, finishedAt, runStatus: 'passed', seed: null, target: { name: 'webhook receiver', baseUrl: url }, checks };
}

/**
 * The report of a receiver run: the report model of `run`, its subject the receiver (the catalog rows that
 * bind the receiver; the service's own requirements are not judged here). No mutation or variant score of a
 * service run is carried over.
 */
export function receiverContext(outcomes: OutcomesFile, opts: { outDir?: string; strict?: boolean }): RunContext {
  return subjectRunContext('receiver', outcomes.target ?? null, { outDir: opts.outDir ?? path.join(os.tmpdir(), 'conformance-webhook-receiver-no-out'), strict: opts.strict === true });
}

async function receiverCommand(argv: string[], io: WebhookIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' }, 'secret-env': { type: 'string' }, 'timeout-ms': { type: 'string' }, out: { type: 'string' },
      strict: { type: 'boolean' }, 'allow-incomplete': { type: 'boolean' }, verbose: { type: 'boolean' },
      'follow-up-port': { type: 'string' }, 'follow-up-host': { type: 'string' }, 'follow-up-settle-ms': { type: 'string' },
      'header-word': { type: 'string' },
      evidence: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  setEvidenceMode(evidenceOption(values.evidence));
  if (!values.url) throw new UsageError('webhook receiver needs --url URL');
  const url = httpUrl(values.url);
  if (values.out !== undefined && values.out.trim() === '') throw new UsageError('--out needs a folder');
  const secretEnv = values['secret-env'] ?? 'CONFORMANCE_WEBHOOK_SECRET';
  const secret = secretFrom(io.env, secretEnv);
  const headerWord = headerWordOption(values['header-word']);
  const timeoutMs = intOption(values['timeout-ms'], 'timeout-ms', 100, 120_000) ?? 10_000;
  const probePort = intOption(values['follow-up-port'], 'follow-up-port', 1, 65_535);
  if (values['follow-up-host'] !== undefined && probePort === undefined) throw new UsageError('--follow-up-host needs --follow-up-port');
  const settleMs = intOption(values['follow-up-settle-ms'], 'follow-up-settle-ms', 10, 60_000) ?? 250;
  if (values['follow-up-settle-ms'] !== undefined && probePort === undefined) throw new UsageError('--follow-up-settle-ms needs --follow-up-port');
  await reachable(url, Math.min(timeoutMs, PREFLIGHT_MS));

  const probe = probePort === undefined ? undefined : await startFollowUpProbe(values['follow-up-host'] ?? '127.0.0.1', probePort);
  io.stdout(redact(`conformance webhook receiver: judging ${url.href} (${RECEIVER_CASES.length} checks)`));
  if (probe) io.stdout(`follow-up probe: counting the receiver's REST fetches at ${probe.url} (its REST base URL for this run)`);
  const startedAt = new Date().toISOString();
  let results: ReceiverCheckResult[];
  try {
    results = await runReceiverSuite({ url: url.href, secret, timeoutMs, headerWord, ...(probe ? { followUpProbe: () => probe.count(), followUpSettleMs: settleMs } : {}) }, (r) => {
      if (values.verbose) io.stdout(redact(`${r.outcome.toUpperCase().padEnd(13)} ${r.id}${r.detail ? `: ${r.detail}` : ''}`));
    }, (sofar) => receiverStopped(sofar, timeoutMs));
  } catch (e) {
    if (e instanceof ReceiverRunStopped) throw new SetupError(e.message);
    throw e;
  } finally {
    await probe?.close();
  }
  if (probe && probe.count() === 0) io.stdout('follow-up probe: the receiver made no request to it; is its REST base URL set to the probe for this run?');
  const outcomes = receiverOutcomes(results, url.href, startedAt, new Date().toISOString());
  const outDir = values.out !== undefined ? path.resolve(values.out) : undefined;
  let report: ConformanceReport;
  if (outDir) {
    try {
      writeOutcomes(outDir, outcomes);
      report = writeReports(outDir, outcomes, receiverContext(outcomes, { outDir, strict: values.strict }));
    } catch (e) {
      throw new SetupError(`cannot write the reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    report = buildReport(outcomes, receiverContext(outcomes, { strict: values.strict }));
  }
  for (const line of renderGroups(results)) io.stdout(redact(line));
  const hint = refusalHint(results, secretEnv, probe !== undefined);
  if (hint) io.stdout(redact(hint));
  io.stdout(summaryLine(report.summary));
  io.stdout(redact(verdictLine(report)));
  // Requirements no delivery can observe (a constant-time comparison): listed apart, never counted as verified.
  for (const n of report.coverage.notObservable) io.stdout(redact(`not observable by any run (listed apart, never counted as verified): ${n.id}: ${n.reason}`));
  if (report.verdict === 'incomplete' && !probe) {
    io.stdout('to verify "no follow-up after an invalid delivery" (WEBHOOK-SIG-FAIL-NO-FOLLOWUP, a must): rerun with --follow-up-port N and the receiver\'s REST base URL set to http://127.0.0.1:N');
  }
  if (outDir) io.stdout(redact(`reports in ${outDir}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})`));
  return exitCodeFor(report, { allowIncomplete: values['allow-incomplete'] === true });
}

function vectorsCommand(argv: string[], io: WebhookIo): number {
  const { values } = parseArgs({ args: argv, options: { out: { type: 'string' } }, strict: true, allowPositionals: false });
  if (!values.out || values.out.trim() === '') throw new UsageError('webhook vectors needs --out DIR');
  const dir = path.resolve(values.out);
  const vectors = buildReceiverVectors();
  const file = path.join(dir, VECTORS_FILE);
  try {
    fs.mkdirSync(dir, { recursive: true });
    // Written as is, not through the redaction layer: the secret in it is the vectors' own test-only value.
    fs.writeFileSync(file, `${JSON.stringify(vectors, null, 2)}\n`);
  } catch (e) {
    throw new SetupError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const accept = vectors.vectors.filter((v) => v.expected === 'accept').length;
  io.stdout(`conformance webhook vectors: ${vectors.vectors.length} vectors (${accept} accept, ${vectors.vectors.length - accept} reject; ${vectors.vectors.filter((v) => v.open).length} where the spec leaves the outcome open) in ${file}`);
  io.stdout('the secret in it is a test-only value published with the vectors; never configure it on a real endpoint');
  return 0;
}

/** The receiver's --url, parsed: an http(s) URL, else a usage error. */
function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--url is not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be an http(s) URL');
  return url;
}

async function sendCommand(argv: string[], io: WebhookIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { url: { type: 'string' }, name: { type: 'string' }, 'secret-env': { type: 'string' }, 'timeout-ms': { type: 'string' }, list: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.list) {
    for (const c of singleDeliveryCases()) io.stdout(`${vectorName(c).padEnd(52)} ${expectedOf(c)}  ${c.title}`);
    return 0;
  }
  if (!values.url) throw new UsageError('webhook send needs --url URL');
  if (!values.name) throw new UsageError('webhook send needs --name NAME (conformance webhook send --list prints the names)');
  const url = httpUrl(values.url);
  const secret = secretFrom(io.env, values['secret-env'] ?? 'CONFORMANCE_WEBHOOK_SECRET');
  const timeoutMs = intOption(values['timeout-ms'], 'timeout-ms', 100, 120_000) ?? 10_000;
  const ctx = new ReceiverContext({ url: url.href, secret, timeoutMs });
  const found = deliveryByName(values.name, ctx);
  if (!found) throw new UsageError(`no delivery named ${JSON.stringify(values.name)} (conformance webhook send --list prints the names)`);
  await reachable(url, Math.min(timeoutMs, PREFLIGHT_MS));
  const recorded: Exchange[] = [];
  const answer = await ctx.send({ record: (ex) => recorded.push(ex) }, found.wire);
  const ex = recorded[0];
  const expected = expectedOf(found.case);
  io.stdout(redact(`${ex?.request?.method ?? 'POST'} ${ex?.request?.target ?? url.href}`));
  for (const [name, value] of Object.entries(ex?.request?.headers ?? {})) io.stdout(redact(`${name}: ${redactHeader(name, value)}`));
  if (ex?.request?.body !== undefined) io.stdout(redact(`body: ${ex.request.body.replace(/\r?\n/g, '\\n')}`));
  if (ex?.request?.signingInput !== undefined) io.stdout(redact(`signing input: ${ex.request.signingInput}`));
  const ok = expected === 'accept' ? answer.status !== undefined && answer.status >= 200 && answer.status < 300 : !(answer.status !== undefined && answer.status >= 200 && answer.status < 300);
  const said = answer.status !== undefined ? `answered ${answer.status}` : `gave no answer (${answer.error ?? 'error'}${answer.message ? `: ${answer.message}` : ''})`;
  io.stdout(redact(`→ ${said}; ${found.case.title}: expected ${expected === 'accept' ? 'a 2xx' : 'a non-2xx answer'}${found.case.expectation === 'decision' || found.case.expectation === 'payload-policy' || found.case.expectation === 'unsupported-type' || found.case.expectation === 'boundary' ? ' (the spec leaves this one open)' : ''}: ${ok ? 'as expected' : 'NOT as expected'}`));
  return ok ? 0 : 1;
}

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

/** `webhook sender --profile FILE`: the sender checks of a run, against the deployment the profile describes. */
async function senderProfileCommand(values: Record<string, string | boolean | undefined>, io: WebhookIo): Promise<number> {
  const file = path.resolve(String(values.profile));
  let profile;
  try {
    profile = loadProfile(file);
  } catch (e) {
    if (e instanceof ProfileError) throw new UsageError(e.message);
    throw e;
  }
  const unset = unresolvedVariables(profile, io.env);
  if (unset.length) throw new UsageError(`profile ${file} names environment variable(s) that are unset or empty: ${unset.map((u) => `${u.variable} (${u.where})`).join(', ')}`);
  const w = profile.webhook;
  if (w?.delivery === 'not_activated') throw new UsageError('the profile declares webhook delivery not activated (webhook.delivery): there is no sender to judge');
  if (!w?.sender) throw new UsageError('webhook sender --profile needs webhook.sender in the profile (where the harness listens and how deliveries are caused: a trigger command, or "none")');
  const secret = signingSecret(profile, io.env);
  if (!secret) throw new UsageError('webhook sender --profile needs webhook.signingSecretEnv (the secret the deployment signs its deliveries with)');
  const headerWord = values['header-word'] !== undefined ? headerWordOption(String(values['header-word'])) : headerWordOf(profile);
  const outDir = path.resolve(String(values.out ?? 'reports/out-webhook-sender'));
  const document = profile.resources?.ambient_transcript_with_audio;
  const deployment = new Deployment({ settings: w.sender, baseUrl: profile.baseUrl, cwd: path.dirname(file), headerWord, document, log: (l) => io.stdout(redact(`webhook sender: ${l}`)) });
  try {
    await deployment.listen();
  } catch (e) {
    throw new UsageError(`cannot listen on ${w.sender.listen?.host ?? '127.0.0.1'}:${w.sender.listen?.port ?? 0}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const full = credentialKey(profile, 'full', io.env);
  const apiKeys = (Object.keys(profile.credentials ?? {}) as CredentialRole[]).map((r) => credentialKey(profile, r, io.env)).filter((k): k is string => Boolean(k));
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
  io.stdout(redact(`conformance webhook sender: judging the sender of ${profile.name} (${cases.length} checks${skipped.length ? `; ${skipped.join(', ')} only through a sandbox's schedule` : ''}); listening at ${deployment.capture.url}/ (any path); trigger ${w.sender.trigger === 'none' ? 'none: cause one delivery per scenario when asked' : w.sender.trigger.command.join(' ')}`));
  const startedAt = new Date().toISOString();
  const results: StandaloneRecord[] = [];
  try {
    const ctx = () => new SenderContext({
      capture: deployment.capture, deployment, secret, document: document ?? { encounter_id: '', document_id: '' },
        // A deployment's trigger may finalize any transcript of the organization (docs/webhook-sender.md, "The trigger's
        // contract"): the event is bound by its arrival, and the document it names is judged, not matched to ours.
        documentKnown: false,
      waitMs: deployment.waitMs, observeMs: deployment.observeMs, apiKeys, rest, headerWord,
    });
    for (const c of cases) {
      const r = await runStandalone(c, (scope) => c.run(ctx(), scope));
      results.push(r);
      io.stdout(redact(`${r.outcome.toUpperCase().padEnd(13)} ${r.id}${r.outcome !== 'pass' && r.detail ? `: ${r.detail.slice(0, 300)}` : ''}`));
    }
  } finally {
    await deployment.close();
  }
  const outcomes = senderOutcomes(results, { name: profile.name, baseUrl: profile.baseUrl }, startedAt, new Date().toISOString());
  let report: ConformanceReport;
  try {
    fs.mkdirSync(outDir, { recursive: true });
    writeOutcomes(outDir, outcomes);
    report = writeReports(outDir, outcomes, senderContext(file, { outDir, strict: values.strict === true }));
  } catch (e) {
    throw new SetupError(`cannot write the reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  io.stdout(summaryLine(report.summary));
  io.stdout(redact(verdictLine(report)));
  io.stdout(redact(`reports in ${outDir}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit}); \`conformance merge --out DIR <run folder> ${outDir}\` joins them with a run's`));
  return exitCodeFor(report, { allowIncomplete: values['allow-incomplete'] === true });
}

async function senderCommand(argv: string[], io: WebhookIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string' }, out: { type: 'string' }, strict: { type: 'boolean' }, 'allow-incomplete': { type: 'boolean' },
      port: { type: 'string' }, host: { type: 'string' }, 'secret-env': { type: 'string' }, script: { type: 'string' },
      duration: { type: 'string' }, events: { type: 'string' }, 'hold-ms': { type: 'string' }, 'observe-ms': { type: 'string' },
      'header-word': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.profile !== undefined) {
    if (values.port !== undefined || values['secret-env'] !== undefined || values.script !== undefined) throw new UsageError('--profile takes where to listen, the secret and the trigger from the profile: give --profile or --port, not both');
    return senderProfileCommand(values, io);
  }
  if (values.out !== undefined) throw new UsageError('--out needs --profile (the passive --port mode prints its judgement only)');
  const port = intOption(values.port, 'port', 0, 65_535);
  if (port === undefined) throw new UsageError('webhook sender needs --port N (0 picks a free port)');
  if (!values['secret-env']) throw new UsageError('webhook sender needs --secret-env NAME');
  const secret = secretFrom(io.env, values['secret-env']);
  const headerWord = headerWordOption(values['header-word']);
  const H = webhookHeaders(headerWord);
  const script = parseScript(values.script ?? '200');
  const durationS = intOption(values.duration, 'duration', 1, 86_400) ?? 300;
  const eventsWanted = intOption(values.events, 'events', 1, 10_000);
  const holdMs = intOption(values['hold-ms'], 'hold-ms', 10, 600_000) ?? 30_000;
  const observeMs = intOption(values['observe-ms'], 'observe-ms', 0, 600_000) ?? 5_000;

  const judge = new PassiveSenderJudge({ secret, headerWord });
  let wake: () => void = () => {};
  const capture = new Capture({
    host: values.host ?? '127.0.0.1',
    port,
    holdMs,
    defaultScript: script,
    headerWord,
    onDelivery: (d) => {
      const { eventId, failures } = judge.onDelivery(d);
      const ex = deliveryExchange(d);
      io.stdout(redact(`delivery #${d.seq} ${ex.request.method} ${ex.request.target} event ${eventId} delivery ${header(d, H.deliveryId).join(',') || '-'}: answered ${d.answered}; ${failures.length === 0 ? 'all delivery checks pass' : `${failures.length} failing`}`));
      for (const f of failures) io.stdout(redact(`  FAIL ${f}`));
      wake();
    },
  });
  try {
    await capture.listen();
  } catch (e) {
    throw new UsageError(`cannot listen on ${values.host ?? '127.0.0.1'}:${port}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  io.stdout(`conformance webhook sender: listening on ${capture.url}/ (any path); script ${script.join(',')}; stops after ${durationS} s${eventsWanted ? ` or ${eventsWanted} settled events` : ''} or Ctrl-C`);

  const deadline = Date.now() + durationS * 1000;
  const interrupted = io.interrupted ?? interruptPromise();
  let stop = false;
  void interrupted.then(() => {
    stop = true;
    wake();
  });
  while (!stop && Date.now() < deadline) {
    if (eventsWanted !== undefined && judge.eventCount() >= eventsWanted && judge.allSettled(observeMs)) break;
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
  for (const line of r.retryFailures) io.stdout(redact(`  ${line}`));
  io.stdout(`summary: ${r.deliveries} deliveries of ${r.events} events`);
  for (const [id, c] of r.perCheck) io.stdout(`  ${c.fail > 0 ? 'FAIL' : r.deliveries === 0 ? 'NOT VERIFIED' : 'PASS'} ${id} (${c.pass} passed, ${c.fail} failed)`);
  io.stdout(`  retries: ${r.retry.pass} as expected, ${r.retry.fail} wrong, ${r.retry.unobserved} retryable answers never retried`);
  if (r.deliveries === 0) io.stdout('no delivery arrived: nothing was verified');
  return r.failed > 0 ? 1 : 0;
}

/** Entry point wired by cli/main.ts: argv after `webhook`. */
export async function webhookCommand(argv: string[], io: WebhookIo = defaultIo()): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === undefined) throw new UsageError('webhook needs a command: receiver, sender, vectors or send (see conformance webhook --help)');
    if (sub === '-h' || sub === '--help' || sub === 'help') {
      io.stdout(HELP);
      return 0;
    }
    if (rest.includes('-h') || rest.includes('--help')) {
      io.stdout(HELP);
      return 0;
    }
    if (sub === 'receiver') return await receiverCommand(rest, io);
    if (sub === 'vectors') return vectorsCommand(rest, io);
    if (sub === 'send') return await sendCommand(rest, io);
    if (sub === 'sender') return await senderCommand(rest, io);
    throw new UsageError(`unknown webhook command ${JSON.stringify(sub)} (receiver, sender, vectors or send)`);
  } catch (e) {
    // The CLI's one table of errors (cli/errors.ts), read for this command's own output channel.
    const { code, line, exit } = errorExit(e);
    io.stderr(code === 'internal' ? line.replace(/^conformance: internal error: /, `conformance: webhook ${sub} failed: `) : line);
    return exit;
  }
}
