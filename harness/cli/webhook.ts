// `conformance webhook`: judge a partner's webhook receiver, or a service's webhook sender.
//   conformance webhook receiver --url URL [--secret-env NAME] [--timeout-ms N]
//       plays the service: posts the valid delivery, boundaries, replays, retries and the adversarial battery.
//   conformance webhook sender --port N --secret-env NAME [--script 503,429,200] [--host H] [--duration S]
//       [--events N] [--hold-ms N] [--observe-ms N]
//       listens as a receiver, judges each delivery as it comes, answers the n-th delivery of an event with
//       the n-th script step (`timeout` holds the response), then judges the retries.
// Exit codes: 0 every check passed (informational allowed), 1 a check failed, 2 usage or setup error (one
// line `conformance: <reason>` on stderr). Every line printed passes through redact().
import { parseArgs } from 'node:util';
import { redact, registerSecret } from '../redact.ts';
import { runReceiverSuite } from '../webhook/receiver-suite.ts';
import { Capture, DELIVERY_JUDGES, deliveryExchange, header, judgeRetryIds } from '../webhook/sender-suite.ts';
import type { CapturedDelivery, ScriptStep } from '../webhook/sender-suite.ts';
import { CheckFailure } from '../checks.ts';
import { WEBHOOK_HEADERS } from '../webhook/signature.ts';

export interface WebhookIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Resolves when the user interrupts (default: SIGINT or SIGTERM). */
  interrupted?: Promise<void>;
}

const HELP = `Usage:
  conformance webhook receiver --url URL [--secret-env NAME] [--timeout-ms N]
  conformance webhook sender --port N --secret-env NAME [--script 503,429,200] [--host H]
                             [--duration SECONDS] [--events N] [--hold-ms N] [--observe-ms N]

receiver: sends the receiver at URL the valid delivery and every adversarial one, signed with the secret
          in $NAME (default CONFORMANCE_WEBHOOK_SECRET); 2xx is expected only for valid ones.
sender:   listens on port N and judges the deliveries the service sends, signed with the secret in $NAME.
          --script answers the n-th delivery of each event with the n-th step (a status or "timeout";
          the last step repeats; default 200). Stops after --duration (default 300 s), after --events
          settled events, or on Ctrl-C, then prints a summary.
Exit codes: 0 all checks passed, 1 a check failed, 2 usage or setup error.`;

class UsageError extends Error {}

const RETRYABLE = (s: ScriptStep) => s === 'timeout' || s >= 500 || s === 408 || s === 409 || s === 425 || s === 429;
const SUCCESS = (s: ScriptStep) => s !== 'timeout' && s >= 200 && s < 300;

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
  const { values } = parseArgs({ args: argv, options: { url: { type: 'string' }, 'secret-env': { type: 'string' }, 'timeout-ms': { type: 'string' } }, strict: true, allowPositionals: false });
  if (!values.url) throw new UsageError('webhook receiver needs --url URL');
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new UsageError(`--url is not a URL: ${values.url}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be an http(s) URL');
  const secret = secretFrom(io.env, values['secret-env'] ?? 'CONFORMANCE_WEBHOOK_SECRET');
  const timeoutMs = intOption(values['timeout-ms'], 'timeout-ms', 100, 120_000) ?? 10_000;
  io.stdout(redact(`conformance webhook receiver: judging ${url.href}`));
  const counts = { pass: 0, fail: 0, warning: 0, informational: 0, not_verified: 0 };
  await runReceiverSuite({ url: url.href, secret, timeoutMs }, (r) => {
    counts[r.outcome] += 1;
    io.stdout(redact(`${r.outcome.toUpperCase().padEnd(13)} ${r.id}${r.detail ? `: ${r.detail}` : ''}`));
  });
  io.stdout(`${counts.pass} passed, ${counts.fail} failed, ${counts.warning} warnings, ${counts.informational} informational, ${counts.not_verified} not verified`);
  return counts.fail > 0 ? 1 : 0;
}

interface EventTrack {
  deliveries: CapturedDelivery[];
}

async function senderCommand(argv: string[], io: WebhookIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' }, host: { type: 'string' }, 'secret-env': { type: 'string' }, script: { type: 'string' },
      duration: { type: 'string' }, events: { type: 'string' }, 'hold-ms': { type: 'string' }, 'observe-ms': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = intOption(values.port, 'port', 0, 65_535);
  if (port === undefined) throw new UsageError('webhook sender needs --port N (0 picks a free port)');
  if (!values['secret-env']) throw new UsageError('webhook sender needs --secret-env NAME');
  const secret = secretFrom(io.env, values['secret-env']);
  const script = parseScript(values.script ?? '200');
  const durationS = intOption(values.duration, 'duration', 1, 86_400) ?? 300;
  const eventsWanted = intOption(values.events, 'events', 1, 10_000);
  const holdMs = intOption(values['hold-ms'], 'hold-ms', 10, 600_000) ?? 30_000;
  const observeMs = intOption(values['observe-ms'], 'observe-ms', 0, 600_000) ?? 5_000;

  const events = new Map<string, EventTrack>();
  const perCheck = new Map<string, { pass: number; fail: number }>(DELIVERY_JUDGES.map((j) => [j.def.id, { pass: 0, fail: 0 }]));
  let wake: () => void = () => {};
  const capture = new Capture({
    host: values.host ?? '127.0.0.1',
    port,
    holdMs,
    defaultScript: script,
    onDelivery: (d) => {
      const eventId = header(d, WEBHOOK_HEADERS.eventId).join(',') || '(no event id)';
      const track = events.get(eventId) ?? { deliveries: [] };
      track.deliveries.push(d);
      events.set(eventId, track);
      const failures: string[] = [];
      for (const j of DELIVERY_JUDGES) {
        const tally = perCheck.get(j.def.id)!;
        try {
          j.judge(d, secret);
          tally.pass += 1;
        } catch (e) {
          tally.fail += 1;
          failures.push(`${j.def.id}: ${e instanceof CheckFailure ? e.message : String(e)}`);
        }
      }
      const ex = deliveryExchange(d);
      io.stdout(redact(`delivery #${d.seq} ${ex.request.method} ${ex.request.target} event ${eventId} delivery ${header(d, WEBHOOK_HEADERS.deliveryId).join(',') || '-'}: answered ${d.answered}; ${failures.length === 0 ? 'all delivery checks pass' : `${failures.length} failing`}`));
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

  const settled = (t: EventTrack) => {
    const last = t.deliveries[t.deliveries.length - 1];
    return !RETRYABLE(last.answered) && Date.now() - last.receivedAtMs >= observeMs;
  };
  const deadline = Date.now() + durationS * 1000;
  const interrupted = io.interrupted ?? interruptPromise();
  let stop = false;
  void interrupted.then(() => {
    stop = true;
    wake();
  });
  while (!stop && Date.now() < deadline) {
    if (eventsWanted !== undefined && events.size >= eventsWanted && [...events.values()].every(settled)) break;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 200);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
  await capture.close();

  // Retries, per event: a retryable answer must be followed by a retry with the same ids; a terminal
  // or successful answer must not be followed by another delivery.
  const retry = { pass: 0, fail: 0, unobserved: 0 };
  for (const [eventId, t] of events) {
    t.deliveries.forEach((d, i) => {
      const next = t.deliveries[i + 1];
      if (RETRYABLE(d.answered)) {
        if (!next) {
          retry.unobserved += 1;
          io.stdout(redact(`  FAIL webhook-sender-retries-${d.answered}-with-same-ids: event ${eventId}: delivery #${d.seq} answered ${d.answered} was not retried before the end`));
          return;
        }
        try {
          judgeRetryIds(d, next);
          retry.pass += 1;
        } catch (e) {
          retry.fail += 1;
          io.stdout(redact(`  FAIL webhook-sender-retries-${d.answered}-with-same-ids: event ${eventId}: ${(e as Error).message}`));
        }
      } else if (next) {
        retry.fail += 1;
        io.stdout(redact(`  FAIL ${SUCCESS(d.answered) ? 'webhook-sender-no-redelivery-after-2xx' : `webhook-sender-no-retry-after-${d.answered}`}: event ${eventId}: delivery #${d.seq} answered ${d.answered} was delivered again (#${next.seq})`));
      } else {
        retry.pass += 1;
      }
    });
  }
  const failed = [...perCheck.values()].reduce((n, c) => n + c.fail, 0) + retry.fail + retry.unobserved;
  io.stdout(`summary: ${capture.deliveries.length} deliveries of ${events.size} events`);
  for (const [id, c] of perCheck) io.stdout(`  ${c.fail > 0 ? 'FAIL' : capture.deliveries.length === 0 ? 'NOT VERIFIED' : 'PASS'} ${id} (${c.pass} passed, ${c.fail} failed)`);
  io.stdout(`  retries: ${retry.pass} as expected, ${retry.fail} wrong, ${retry.unobserved} retryable answers never retried`);
  if (capture.deliveries.length === 0) io.stdout('no delivery arrived: nothing was verified');
  return failed > 0 ? 1 : 0;
}

/** Entry point wired by harness/cli/main.ts: argv after `webhook`. */
export async function webhookCommand(argv: string[], io: WebhookIo = defaultIo()): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === undefined) throw new UsageError('webhook needs a command: receiver or sender (see conformance webhook --help)');
    if (sub === '-h' || sub === '--help' || sub === 'help') {
      io.stdout(HELP);
      return 0;
    }
    if (rest.includes('-h') || rest.includes('--help')) {
      io.stdout(HELP);
      return 0;
    }
    if (sub === 'receiver') return await receiverCommand(rest, io);
    if (sub === 'sender') return await senderCommand(rest, io);
    throw new UsageError(`unknown webhook command ${JSON.stringify(sub)} (receiver or sender)`);
  } catch (e) {
    if (e instanceof UsageError || (e as NodeJS.ErrnoException)?.code?.startsWith?.('ERR_PARSE_ARGS')) {
      io.stderr(redact(`conformance: ${(e as Error).message.split('\n')[0]}`));
      return 2;
    }
    io.stderr(redact(`conformance: webhook ${sub} failed: ${(e as Error)?.message ?? String(e)}`.replace(/\s+/g, ' ')));
    return 2;
  }
}
