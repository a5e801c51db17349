// Judging a partner's webhook receiver (`conformance webhook receiver`, `webhook send`): the reachability preflight, the follow-up probe, the run of its checks, when judging is pointless, and its outcomes and report.
// The checks are checks/receiver/cases.ts, run one after another by engine/receiver-run.ts; cli/webhook.ts parses the
// options and prints (the progress lines reach it through `say`); engine/webhook-receiver-summary.ts groups what did not pass.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RECEIVER_CASES, ReceiverContext, type ReceiverCase } from '../checks/receiver/cases.ts';
import { deliveryByName, expectedOf } from '../checks/receiver/vectors.ts';
import { startCountingApi } from '../observe/counting-api.ts';
import { connectOnce } from '../observe/http.ts';
import type { Exchange } from '../record/record.ts';
import { redact } from '../record/redact.ts';
import { subjectRunContext } from '../reports/context.ts';
import { buildReport, collectedOf, type ConformanceReport, type OutcomesFile, type RunContext } from '../reports/model.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';
import { SetupError, UsageError } from './errors.ts';
import { ReceiverRunStopped, runReceiverSuite, type ReceiverCheckResult } from './receiver-run.ts';

/** The longest wait for the reachability preflight's one connection. */
export const PREFLIGHT_MS = 5_000;

interface FollowUpProbe {
  url: string;
  count(): number;
  close(): Promise<void>;
}

/**
 * The follow-up probe for a partner's receiver: the counting stand-in of the REST API
 * (observe/counting-api.ts) served on the port the partner configured, so every follow-up fetch the
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
export async function reachable(url: URL, timeoutMs: number): Promise<void> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const failed = await connectOnce(host, port, timeoutMs);
  if (!failed) return;
  if (failed.kind === 'timeout') throw new SetupError(`the webhook receiver at ${url.origin} is unreachable: ${failed.message}`);
  const kind = failed.kind === 'connection_refused' ? 'connection refused' : failed.kind === 'dns' ? 'host name not found' : (failed.code ?? failed.message);
  throw new SetupError(`the webhook receiver at ${url.origin} is unreachable: ${kind} (is it running, and is --url right?)`);
}

/**
 * When judging is pointless, like `run`'s preflight and breaker: the receiver gave no answer at all to
 * the first, correct delivery, or refused connections for three checks in a row (it went away).
 */
export function receiverStopped(sofar: ReceiverCheckResult[], timeoutMs: number): string | undefined {
  const unanswered = (r: ReceiverCheckResult) => {
    const ex = r.evidence;
    return ex.length > 0 && ex.every((e) => e.response === undefined);
  };
  const first = sofar[0];
  if (sofar.length === 1 && first && unanswered(first)) {
    const kind = first.evidence[0]?.error?.kind ?? 'error';
    return kind === 'timeout'
      ? `the webhook receiver accepted the connection but did not answer a correct delivery within ${timeoutMs} ms (a slow receiver: raise --timeout-ms)`
      : `the webhook receiver did not answer a correct delivery (${kind})`;
  }
  const last = sofar.slice(-3);
  if (last.length === 3 && last.every((r) => r.evidence.length > 0 && r.evidence.every((e) => e.error?.kind === 'connection_refused'))) {
    return 'the webhook receiver stopped accepting connections during the run (connection refused three checks in a row)';
  }
  return undefined;
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

export interface ReceiverRunOptions {
  url: URL;
  secret: string;
  headerWord: string;
  timeoutMs: number;
  /** --follow-up-port: the stand-in of the REST API to serve, where the receiver's follow-up fetches are counted. */
  probe?: { host: string; port: number; settleMs: number };
  /** --out: the report folder (the reports are only built, not written, without it). */
  outDir?: string;
  strict?: boolean;
  /** Say every check's outcome as it ends. */
  verbose?: boolean;
  /** A line for the terminal (stdout). */
  say: (line: string) => void;
}

/**
 * A receiver judged: reachable first (unreachable is a setup error), the follow-up probe served when asked, every
 * check in order (a receiver that stops answering ends the run as a setup error), the outcomes and the report.
 */
export async function judgeReceiver(o: ReceiverRunOptions): Promise<{ results: ReceiverCheckResult[]; report: ConformanceReport; probed: boolean }> {
  const { url, secret, timeoutMs, headerWord } = o;
  await reachable(url, Math.min(timeoutMs, PREFLIGHT_MS));

  const probe = o.probe === undefined ? undefined : await startFollowUpProbe(o.probe.host, o.probe.port);
  o.say(redact(`conformance webhook receiver: judging ${url.href} (${RECEIVER_CASES.length} checks)`));
  if (probe) o.say(`follow-up probe: counting the receiver's REST fetches at ${probe.url} (its REST base URL for this run)`);
  const startedAt = new Date().toISOString();
  let results: ReceiverCheckResult[];
  try {
    results = await runReceiverSuite({ url: url.href, secret, timeoutMs, headerWord, ...(probe ? { followUpProbe: () => probe.count(), followUpSettleMs: o.probe!.settleMs } : {}) }, (r) => {
      if (o.verbose) o.say(redact(`${r.outcome.toUpperCase().padEnd(13)} ${r.id}${r.detail ? `: ${r.detail}` : ''}`));
    }, (sofar) => receiverStopped(sofar, timeoutMs));
  } catch (e) {
    if (e instanceof ReceiverRunStopped) throw new SetupError(e.message);
    throw e;
  } finally {
    await probe?.close();
  }
  if (probe && probe.count() === 0) o.say('follow-up probe: the receiver made no request to it; is its REST base URL set to the probe for this run?');
  const outcomes = receiverOutcomes(results, url.href, startedAt, new Date().toISOString());
  const { outDir } = o;
  let report: ConformanceReport;
  if (outDir) {
    try {
      writeOutcomes(outDir, outcomes);
      report = writeReports(outDir, outcomes, receiverContext(outcomes, { outDir, strict: o.strict }));
    } catch (e) {
      throw new SetupError(`cannot write the reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    report = buildReport(outcomes, receiverContext(outcomes, { strict: o.strict }));
  }
  return { results, report, probed: probe !== undefined };
}

/**
 * `webhook send`: the one delivery named `name` (a vector name), freshly signed, sent to the receiver (reachable
 * first), and whether its answer is what the delivery should get (2xx for a valid one, non-2xx for a defect).
 */
export async function sendNamedDelivery(o: { url: URL; secret: string; timeoutMs: number; name: string }): Promise<{ exchange?: Exchange; case: ReceiverCase; expected: 'accept' | 'reject'; open: boolean; said: string; ok: boolean }> {
  const { url, timeoutMs } = o;
  const ctx = new ReceiverContext({ url: url.href, secret: o.secret, timeoutMs });
  const found = deliveryByName(o.name, ctx);
  if (!found) throw new UsageError(`no delivery named ${JSON.stringify(o.name)} (conformance webhook send --list prints the names)`);
  await reachable(url, Math.min(timeoutMs, PREFLIGHT_MS));
  const recorded: Exchange[] = [];
  const answer = await ctx.send({ record: (ex) => recorded.push(ex) }, found.wire);
  const expected = expectedOf(found.case);
  const ok = expected === 'accept' ? answer.status !== undefined && answer.status >= 200 && answer.status < 300 : !(answer.status !== undefined && answer.status >= 200 && answer.status < 300);
  const said = answer.status !== undefined ? `answered ${answer.status}` : `gave no answer (${answer.error ?? 'error'}${answer.message ? `: ${answer.message}` : ''})`;
  const open = found.case.expectation === 'decision' || found.case.expectation === 'payload-policy' || found.case.expectation === 'unsupported-type' || found.case.expectation === 'boundary';
  return { exchange: recorded[0], case: found.case, expected, open, said, ok };
}
