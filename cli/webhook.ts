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
// on stderr). Every line printed passes through redact(). This command parses the options and prints: the runs,
// their verdicts and reports are engine/webhook-receiver-run.ts's and engine/webhook-sender-run.ts's.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { exitCodeFor, summaryLine, verdictLine } from '../reports/model.ts';
import { refusalHint, renderGroups } from '../engine/webhook-receiver-summary.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { errorExit, SetupError, UsageError } from './errors.ts';
import { redact, redactHeader, registerSecret, setEvidenceMode } from '../record/redact.ts';
import { evidenceOption } from './common.ts';
import { buildReceiverVectors, expectedOf, singleDeliveryCases, vectorName, VECTORS_FILE } from '../checks/receiver/vectors.ts';
import type { ScriptStep } from '../observe/capture.ts';
import { SPEC_HEADER_WORD, webhookHeaders } from '../judge/signature.ts';
import { headerWordOf } from '../profile/profile.ts';
import { judgeReceiver, sendNamedDelivery } from '../engine/webhook-receiver-run.ts';
import { judgePassiveSender, judgeSenderDeployment, senderProfile } from '../engine/webhook-sender-run.ts';

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
  const outDir = values.out !== undefined ? path.resolve(values.out) : undefined;
  const { results, report, probed } = await judgeReceiver({
    url, secret, headerWord, timeoutMs, outDir, strict: values.strict, verbose: values.verbose, say: io.stdout,
    ...(probePort === undefined ? {} : { probe: { host: values['follow-up-host'] ?? '127.0.0.1', port: probePort, settleMs } }),
  });
  for (const line of renderGroups(results)) io.stdout(redact(line));
  const hint = refusalHint(results, secretEnv, probed);
  if (hint) io.stdout(redact(hint));
  io.stdout(summaryLine(report.summary));
  io.stdout(redact(verdictLine(report)));
  // Requirements no delivery can observe (a constant-time comparison): listed apart, never counted as verified.
  for (const n of report.coverage.notObservable) io.stdout(redact(`not observable by any run (listed apart, never counted as verified): ${n.id}: ${n.reason}`));
  if (report.verdict === 'incomplete' && !probed) {
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
  const sent = await sendNamedDelivery({ url, secret, timeoutMs, name: values.name });
  const ex = sent.exchange;
  io.stdout(redact(`${ex?.request?.method ?? 'POST'} ${ex?.request?.target ?? url.href}`));
  for (const [name, value] of Object.entries(ex?.request?.headers ?? {})) io.stdout(redact(`${name}: ${redactHeader(name, value)}`));
  if (ex?.request?.body !== undefined) io.stdout(redact(`body: ${ex.request.body.replace(/\r?\n/g, '\\n')}`));
  if (ex?.request?.signingInput !== undefined) io.stdout(redact(`signing input: ${ex.request.signingInput}`));
  io.stdout(redact(`→ ${sent.said}; ${sent.case.title}: expected ${sent.expected === 'accept' ? 'a 2xx' : 'a non-2xx answer'}${sent.open ? ' (the spec leaves this one open)' : ''}: ${sent.ok ? 'as expected' : 'NOT as expected'}`));
  return sent.ok ? 0 : 1;
}

/** `webhook sender --profile FILE`: the sender checks of a run, against the deployment the profile describes. */
async function senderProfileCommand(values: Record<string, string | boolean | undefined>, io: WebhookIo): Promise<number> {
  const file = path.resolve(String(values.profile));
  const { profile, sender, secret } = senderProfile(file, io.env);
  const headerWord = values['header-word'] !== undefined ? headerWordOption(String(values['header-word'])) : headerWordOf(profile);
  const outDir = path.resolve(String(values.out ?? 'reports/out-webhook-sender'));
  const report = await judgeSenderDeployment({ file, profile, sender, secret, headerWord, outDir, strict: values.strict === true, env: io.env, say: io.stdout });
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
  const script = parseScript(values.script ?? '200');
  const durationS = intOption(values.duration, 'duration', 1, 86_400) ?? 300;
  const eventsWanted = intOption(values.events, 'events', 1, 10_000);
  const holdMs = intOption(values['hold-ms'], 'hold-ms', 10, 600_000) ?? 30_000;
  const observeMs = intOption(values['observe-ms'], 'observe-ms', 0, 600_000) ?? 5_000;

  const r = await judgePassiveSender({
    host: values.host ?? '127.0.0.1', port, secret, headerWord, script, holdMs, durationS, eventsWanted, observeMs,
    interrupted: () => io.interrupted ?? interruptPromise(), say: io.stdout,
  });
  for (const line of r.retryFailures) io.stdout(redact(`  ${line}`));
  io.stdout(`summary: ${r.deliveries} deliveries of ${r.events} events`);
  for (const c of r.checks) io.stdout(`  ${c.verdict} ${c.id} (${c.pass} passed, ${c.fail} failed)`);
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
