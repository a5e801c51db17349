// §6.4's retryable answers are one table (fixtures/contract/webhook-retries.ts), read by the oracle and by the
// reference alike. Here the table is held equal to the specification's own table, parsed from its text, and
// every reader is held to the table for every status: the receiver checks and the CLI's sender judge (through
// checks/receiver/cases.ts), the reference's delivery worker (reference-impl/webhooks.ts) and the client
// check that tells a terminal 4xx from a retryable one (checks/client/checks.ts).
import { test, expect } from '@playwright/test';
import { isRetryableStatus, RETRYABLE_4XX } from '../fixtures/contract/webhook-retries.ts';
import { isRetryableStatus as receiverSuiteRetryable } from '../checks/receiver/cases.ts';
import { CLIENT_CHECKS } from '../checks/client/checks.ts';
import { judgeClientCheck } from '../engine/client-judge.ts';
import type { ClientExchange, ClientTraffic } from '../observe/client-traffic.ts';
import { isRetryable as referenceRetryable } from '../reference-impl/webhooks.ts';
import { readSpecText, section, tables } from './helpers/spec-text.ts';

/** The §6.4 table: the text of its "retryable failure" and "terminal failure" rows. */
function specRows(): { retryable: string; terminal: string } {
  const [table] = tables(section(readSpecText(), '6.4'));
  const row = (prefix: string) => {
    const r = table?.rows.find((cells) => cells[0].startsWith(prefix));
    if (!r) throw new Error(`spec §6.4: no "${prefix}" row`);
    return r[0];
  };
  return { retryable: row('retryable failure'), terminal: row('terminal failure') };
}

/** The status codes a row names one by one (three digits), and the classes it names ("5xx"). */
const statusesIn = (text: string) => [...text.matchAll(/\b([1-5][0-9]{2})\b/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
const classesIn = (text: string) => [...text.matchAll(/\b([1-5])xx\b/g)].map((m) => Number(m[1]));

test("the table's retryable 4xx are exactly the statuses §6.4 names as retryable, and 5xx is retryable", () => {
  const { retryable, terminal } = specRows();
  expect(statusesIn(retryable)).toEqual([...RETRYABLE_4XX].sort((a, b) => a - b));
  expect(classesIn(retryable)).toEqual([5]);
  // The transport failures the row names (connection, DNS, TLS errors, timeouts) have no status: retryable.
  expect(retryable).toMatch(/connection errors, DNS errors, TLS errors, timeouts/);
  expect(isRetryableStatus(undefined)).toBe(true);
  // The terminal row: 1xx, 3xx, the 4xx it names and "other non-transient 4xx" are not retryable.
  expect(classesIn(terminal)).toEqual([1, 3, 4]);
  for (const s of statusesIn(terminal)) expect(RETRYABLE_4XX.has(s), `${s} is terminal in §6.4`).toBe(false);
  expect(terminal).toMatch(/other non-transient 4xx/);
});

test('isRetryableStatus follows §6.4 for every status: 5xx and the four 4xx retryable, 1xx, 2xx, 3xx and other 4xx not', () => {
  const { retryable } = specRows();
  const named = new Set(statusesIn(retryable));
  for (let s = 100; s <= 599; s++) {
    const want = s >= 500 || named.has(s);
    expect(isRetryableStatus(s), String(s)).toBe(want);
  }
});

test('every reader agrees with the table: the receiver checks, the reference delivery worker, the client check', () => {
  for (let s = 100; s <= 599; s++) {
    expect(receiverSuiteRetryable(s), `receiver-suite ${s}`).toBe(isRetryableStatus(s));
    expect(referenceRetryable({ kind: 'status', status: s }), `reference ${s}`).toBe(isRetryableStatus(s));
  }
  expect(receiverSuiteRetryable(undefined)).toBe(true);
  expect(referenceRetryable({ kind: 'transport', error: 'ECONNRESET' })).toBe(true);

  // The client check counts repeats after a terminal 4xx only: a client that repeats a request after a
  // retryable 4xx (409 included) is not held to it; after a terminal one (400) it is, as a should (a warning: the
  // spec calls no reason terminal).
  const check = CLIENT_CHECKS.find((c) => c.id === 'client-no-repeat-after-terminal-answer')!;
  const ex = (seq: number, status: number): ClientExchange => ({
    seq, phase: 1, at: seq * 1000, method: 'GET', target: '/external/v1/encounters', headers: { authorization: 'Bearer k' },
    bodyBytes: 0, kind: 'api', role: 'full', status, body: '{}', durationMs: 1,
  });
  const traffic = (status: number): ClientTraffic => ({
    exchanges: [1, 2, 3, 4, 5].map((seq) => ex(seq, status)), stdout: '', stderr: '', keys: new Map(), profileIds: new Set(), scenario: null, notInjected: {},
  });
  for (const s of RETRYABLE_4XX) expect(judgeClientCheck(check, traffic(s)).record.outcome, `after ${s}`).toBe('not_verified');
  expect(judgeClientCheck(check, traffic(400)).record.outcome).toBe('warning');
});
