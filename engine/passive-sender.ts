// Judging a sender that delivers on its own (`conformance webhook sender --port N`): every delivery by the delivery
// judges (checks/sender/cases.ts DELIVERY_JUDGES), and once the listening ends, each event's deliveries by
// §6.4: a retryable answer must be followed by a retry with the same ids, a terminal or successful one by nothing.
// The judging lives here; the command listens and prints.
import { CheckFailure } from '../record/record.ts';
import { isRetryableStatus } from '../checks/receiver/cases.ts';
import { DELIVERY_JUDGES, judgeRetryIds } from '../checks/sender/cases.ts';
import { header, type CapturedDelivery, type ScriptStep } from '../observe/capture.ts';
import { webhookHeaders } from '../judge/signature.ts';

const retryable = (s: ScriptStep) => isRetryableStatus(typeof s === 'number' ? s : undefined);
const success = (s: ScriptStep) => typeof s === 'number' && s >= 200 && s < 300;

/** One delivery judged: the event it belongs to and each failing judge (`<check id>: <why>`). */
export interface DeliveryVerdict {
  eventId: string;
  failures: string[];
}

/** The end of a passive run: each delivery judge's tally, the retry verdicts, and a line per retry failure. */
export interface PassiveSenderResult {
  perCheck: Map<string, { pass: number; fail: number }>;
  retry: { pass: number; fail: number; unobserved: number };
  /** `FAIL <check id>: event <id>: <why>`, one per wrong or missing retry. */
  retryFailures: string[];
  deliveries: number;
  events: number;
  /** Every failure, delivery and retry alike: non-zero fails the run. */
  failed: number;
}

export class PassiveSenderJudge {
  private readonly events = new Map<string, CapturedDelivery[]>();
  private readonly perCheck = new Map<string, { pass: number; fail: number }>(DELIVERY_JUDGES.map((j) => [j.id, { pass: 0, fail: 0 }]));
  private deliveries = 0;
  private readonly H: ReturnType<typeof webhookHeaders>;
  private readonly opts: { secret: string; headerWord: string };

  constructor(opts: { secret: string; headerWord: string }) {
    this.opts = opts;
    this.H = webhookHeaders(opts.headerWord);
  }

  /** Judges one delivery as it arrives. */
  onDelivery(d: CapturedDelivery): DeliveryVerdict {
    this.deliveries += 1;
    const eventId = header(d, this.H.eventId).join(',') || '(no event id)';
    this.events.set(eventId, [...(this.events.get(eventId) ?? []), d]);
    const failures: string[] = [];
    for (const j of DELIVERY_JUDGES) {
      const tally = this.perCheck.get(j.id)!;
      try {
        j.judge(d, this.opts.secret, { headerWord: this.opts.headerWord });
        tally.pass += 1;
      } catch (e) {
        tally.fail += 1;
        failures.push(`${j.id}: ${e instanceof CheckFailure ? e.message : String(e)}`);
      }
    }
    return { eventId, failures };
  }

  /** How many events arrived. */
  eventCount(): number {
    return this.events.size;
  }

  /** Every event settled: its last answer terminal or successful, and `observeMs` passed since without another delivery. */
  allSettled(observeMs: number, now = Date.now()): boolean {
    return [...this.events.values()].every((ds) => {
      const last = ds[ds.length - 1];
      return !retryable(last.answered) && now - last.receivedAtMs >= observeMs;
    });
  }

  /** The verdicts once the listening ended. */
  finish(): PassiveSenderResult {
    const retry = { pass: 0, fail: 0, unobserved: 0 };
    const retryFailures: string[] = [];
    for (const [eventId, ds] of this.events) {
      ds.forEach((d, i) => {
        const next = ds[i + 1];
        if (retryable(d.answered)) {
          if (!next) {
            retry.unobserved += 1;
            retryFailures.push(`FAIL webhook-sender-retries-${d.answered}-with-same-ids: event ${eventId}: delivery #${d.seq} answered ${d.answered} was not retried before the end`);
            return;
          }
          try {
            judgeRetryIds(d, next, this.H);
            retry.pass += 1;
          } catch (e) {
            retry.fail += 1;
            retryFailures.push(`FAIL webhook-sender-retries-${d.answered}-with-same-ids: event ${eventId}: ${(e as Error).message}`);
          }
        } else if (next) {
          retry.fail += 1;
          retryFailures.push(`FAIL ${success(d.answered) ? 'webhook-sender-no-redelivery-after-2xx' : `webhook-sender-no-retry-after-${d.answered}`}: event ${eventId}: delivery #${d.seq} answered ${d.answered} was delivered again (#${next.seq})`);
        } else {
          retry.pass += 1;
        }
      });
    }
    const failed = [...this.perCheck.values()].reduce((n, c) => n + c.fail, 0) + retry.fail + retry.unobserved;
    return { perCheck: this.perCheck, retry, retryFailures, deliveries: this.deliveries, events: this.events.size, failed };
  }
}
