// The terminal summary of a receiver run (`conformance webhook receiver`): the results that did not pass, grouped by cause, and one hint about the valid deliveries.
// Each cause with the §6.3 steps of its checks and one example delivery; pure, from the run's records: the CLI prints
// its lines.
import { ACTED_ON_INVALID, BODY_HANDLING, isRetryableStatus, LACKS, RECEIVER_CASES, SIGNING_INPUT, specStepOf, type ReceiverCase } from '../checks/receiver/cases.ts';
import type { ReceiverCheckResult } from './receiver-run.ts';
import type { Exchange } from '../record/record.ts';

/** The deliveries a receiver check sent, with the answers. */
export const exchangesOf = (r: ReceiverCheckResult): Exchange[] => r.evidence;

export function answerOf(ex: Exchange | undefined): string {
  if (!ex) return 'nothing sent';
  if (ex.response?.status !== undefined) return `answered ${ex.response.status}`;
  return ex.error?.kind === 'timeout' ? 'gave no answer (timeout)' : `failed at the transport level (${ex.error?.kind ?? 'error'})`;
}

const INVALID = new Set<ReceiverCase['expectation']>(['reject', 'decision', 'payload-policy', 'unsupported-type']);

/** Why a check did not pass, in words shared by every check that did the same; the summary groups on it. */
export function causeOf(r: ReceiverCheckResult, c: ReceiverCase | undefined): string {
  const exchanges = exchangesOf(r);
  const said = answerOf(exchanges[exchanges.length - 1]);
  const title = (r.detail ?? '').split(':')[0];
  if (c && INVALID.has(c.expectation)) {
    if (r.outcome === 'fail') return title === ACTED_ON_INVALID ? 'invalid deliveries led to follow-up REST fetches (§6.3: must not fetch follow-up resources or do clinical work)' : title;
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
