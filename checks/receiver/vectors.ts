// The receiver battery as language-neutral test vectors: every check of the receiver suite that judges ONE
// delivery on its own (receiver-suite.ts `wire`), built with a fixed clock and a test-only secret, with what a
// verifier following §6.3 must decide. A partner's unit tests, in any language, feed each vector's raw body
// bytes, headers, secret and clock to their verifier and compare with `expected`. The scenarios that need a
// receiver's memory (replays, retries, concurrent duplicates) are not vectors; `conformance webhook receiver`
// judges them over HTTP. Pure: nothing here touches the network or the file system.
import { DECISION_REASONS, verify, TIMESTAMP_TOLERANCE_SECONDS, WEBHOOK_HEADERS } from '../../judge/signature.ts';
import type { HeaderBag } from '../../judge/signature.ts';
import { RECEIVER_CASES, ReceiverContext, specStepOf } from './cases.ts';
import type { ReceiverCase, Wire } from './cases.ts';

export const VECTORS_FORMAT = 'clinical-encounter-webhook-receiver-vectors/1';
export const VECTORS_FILE = 'webhook-receiver-vectors.json';

/**
 * The signing secret of the vectors: made up for them and published with them, so it protects nothing. It is a
 * TEST-ONLY value: never configure it on a real endpoint.
 */
export const TEST_ONLY_SECRET = 'whsec_TEST_ONLY_conformance_vectors_not_a_real_secret';
/** The receiver clock of every vector: 2027-01-15T08:00:00Z, a whole second. */
export const VECTORS_CLOCK_SECONDS = 1_800_000_000;
const RUN_ID = 'vectors';

export interface ReceiverVector {
  /** Stable name, the check id without `webhook-receiver-`: `accepts-valid-delivery`, `rejects-signature-other-secret`. */
  name: string;
  /** The receiver check that sends this delivery. */
  check: string;
  title: string;
  /** What a verifier following §6.3 decides. */
  expected: 'accept' | 'reject';
  /**
   * True where the specification leaves the outcome open and `expected` is the harness's decision (uppercase hex,
   * repeated identical header lines, a byte-order mark, a leading zero, payload policy, an unsupported type, the
   * sub-second boundary): a receiver deciding otherwise is recorded, not failed.
   */
  open: boolean;
  /** The §6 step (or §6.1/§6.2 rule) the delivery exercises. */
  clause: string;
  /** Requirement ids of fixtures/requirements/requirements.json. */
  requirements: string[];
  /** The reason the harness's verifier gives (judge/signature.ts VERIFY_REASONS), for orientation. */
  harnessReason: string | null;
  /** The receiver clock for this delivery. */
  receiverClock: { unixSeconds: number; unixMs: number };
  /** Header lines in order, as [name, value]; a name given twice is two lines. */
  headers: [string, string][];
  body: { base64: string; length: number; utf8: string | null };
  /** The HMAC input as signed: `{timestamp}.{raw body}` (base64), for a verifier that wants to compare it. */
  signingInput: { timestamp: string | null; base64: string };
}

export interface ReceiverVectors {
  $comment: string;
  format: typeof VECTORS_FORMAT;
  spec: string;
  secret: { utf8: string; testOnly: true; note: string };
  headerNames: typeof WEBHOOK_HEADERS;
  toleranceSeconds: number;
  vectors: ReceiverVector[];
}

function headerPairs(headers: HeaderBag): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value as string]) out.push([name, String(v)]);
  }
  return out;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8View(bytes: Buffer): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

const OPEN = new Set<ReceiverCase['expectation']>(['decision', 'boundary', 'payload-policy', 'unsupported-type']);

/** The context vectors are built in: the fixed clock, the test-only secret, fixed event ids. */
export function vectorContext(secret: string = TEST_ONLY_SECRET, nowSeconds = VECTORS_CLOCK_SECONDS, runId = RUN_ID): ReceiverContext {
  return new ReceiverContext({ url: 'http://vectors.invalid/', secret, clock: () => nowSeconds * 1000, runId });
}

/** The cases that are one delivery each, in suite order. */
export function singleDeliveryCases(): ReceiverCase[] {
  return RECEIVER_CASES.filter((c) => c.wire !== undefined);
}

/** The vector name of a case. */
export const vectorName = (c: ReceiverCase) => c.id.replace(/^webhook-receiver-/, '');

/** One delivery of the battery by its vector name, built in `ctx` (its clock, its secret). */
export function deliveryByName(name: string, ctx: ReceiverContext): { case: ReceiverCase; wire: Wire } | undefined {
  const c = singleDeliveryCases().find((x) => vectorName(x) === name);
  return c ? { case: c, wire: c.wire!(ctx) } : undefined;
}

/** What a case's delivery should get: accept for the valid ones, reject for every defect. */
export function expectedOf(c: ReceiverCase): 'accept' | 'reject' {
  return c.expectation === 'accept' || c.expectation === 'boundary' ? 'accept' : 'reject';
}

/** Builds the vectors; each expected outcome is checked against the harness's own verifier before it is written. */
export function buildReceiverVectors(): ReceiverVectors {
  const ctx = vectorContext();
  const nowMs = VECTORS_CLOCK_SECONDS * 1000;
  const vectors = singleDeliveryCases().map((c): ReceiverVector => {
    const wire = c.wire!(ctx);
    const timestamp = headerPairs(wire.headers).find(([n]) => n.toLowerCase() === WEBHOOK_HEADERS.timestamp.toLowerCase())?.[1] ?? null;
    const verdict = verify({ headers: wire.headers, rawBody: wire.body, secret: TEST_ONLY_SECRET, nowMs });
    const expected = expectedOf(c);
    if ((expected === 'accept') !== verdict.ok) throw new Error(`vector ${vectorName(c)}: expected ${expected}, the harness verifier says ${verdict.ok ? 'accept' : verdict.reason}`);
    const reason = verdict.ok ? null : verdict.reason;
    return {
      name: vectorName(c),
      check: c.id,
      title: c.title,
      expected,
      open: OPEN.has(c.expectation) || (reason !== null && reason in DECISION_REASONS),
      clause: c.reason ? specStepOf(c.reason) : expected === 'accept' ? '§6.3 steps 1-10: a valid delivery' : '§6.3',
      requirements: [...c.requirements],
      harnessReason: reason,
      receiverClock: { unixSeconds: VECTORS_CLOCK_SECONDS, unixMs: nowMs },
      headers: headerPairs(wire.headers),
      body: { base64: wire.body.toString('base64'), length: wire.body.length, utf8: utf8View(wire.body) },
      signingInput: { timestamp, base64: timestamp === null ? '' : Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), wire.body]).toString('base64') },
    };
  });
  return {
    $comment: 'Receiver test vectors of the Clinical Encounter Public API conformance harness (spec §6.2, §6.3). For each vector: give your verifier the raw body bytes (body.base64), the header lines, secret.utf8 and the receiver clock, and compare its decision with `expected`. Where `open` is true the specification leaves the outcome open and `expected` is the harness\'s decision. The secret is a TEST-ONLY value published with these vectors.',
    format: VECTORS_FORMAT,
    spec: 'clinical-encounter-public-api.md §6.1-§6.3',
    secret: { utf8: TEST_ONLY_SECRET, testOnly: true, note: 'TEST-ONLY signing secret, made up for these vectors and published with them: it protects nothing. Never configure it on a real endpoint.' },
    headerNames: WEBHOOK_HEADERS,
    toleranceSeconds: TIMESTAMP_TOLERANCE_SECONDS,
    vectors,
  };
}
