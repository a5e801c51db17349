// The check record: the one owner of what travels from a worker to the report. It holds the outcome
// list, the shape of an exchange and of a recorded check, the annotation's encoding and decoding, and
// the trimming of evidence. Checks (engine/evaluate.ts), the reporter and every writer import it; nobody
// else declares these shapes. Redaction happens here, once, structurally, when a record leaves the
// worker (encodeCheckAnnotation, evidenceOf): headers by name, JSON by value, never text over JSON.
import { redactValue } from './redact.ts';

/**
 * The outcomes of a check, in order of severity: `fail` only for what the specification decides,
 * `warning` for a `should` not met, `not_verified` when the profile lacks what the check needs,
 * `informational` for behaviour the specification leaves open (recorded as observed), `pass`.
 */
export const OUTCOMES = ['pass', 'fail', 'warning', 'not_verified', 'informational'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function isOutcome(v: unknown): v is Outcome {
  return typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v);
}

/** One HTTP exchange as evidence. `request.body`: a request body worth showing (webhook deliveries). */
export interface Exchange {
  /**
   * `credentialRole`: the profile role whose key was sent (never the key), so a replay line can name its variable.
   * `signingInput`: for a webhook delivery, the exact HMAC input the harness signed (timestamp, dot, raw body bytes
   * escaped, with their length), never the secret or the digest, so a partner can diff it with its own.
   */
  request: { method: string; target: string; headers: Record<string, string>; body?: string; credentialRole?: string; signingInput?: string };
  response?: { status: number; headers: Record<string, string>; body: string; bodyBytes: number; durationMs: number };
  error?: { kind: string; message: string };
}

/**
 * An exchange as a report reads it back from evidence JSON: any part may be missing (a trimmed or foreign record), so
 * every field is optional. The writers type their reading of evidence with it, never with a shape of their own.
 */
export interface RecordedExchange {
  request?: Partial<Exchange['request']> & { role?: string };
  response?: Partial<NonNullable<Exchange['response']>>;
  error?: Partial<NonNullable<Exchange['error']>>;
}

/** A check's identity: a permanent kebab-case id (reports key on it), the requirement ids it verifies, the rule stated positively. */
export interface CheckDef {
  id: string;
  /** Requirement ids from fixtures/requirements/requirements.json. */
  requirements: string[];
  title: string;
}

/** A check's identity and verdict as the worker records it. */
export interface CheckRecord {
  id: string;
  requirements: string[];
  title: string;
  outcome: Outcome;
  /** Why it failed, why it could not be verified, or what was observed. */
  detail?: string;
  /** not_verified for want of a profile setting: which (`credentials.no_scopes`). */
  lacks?: string;
  /** The profile settings the check asked for (present or not), sorted. */
  uses?: string[];
}

/**
 * The annotation payload: the record plus the switchboard entry that was on (meta-suites only), the title of
 * the case that ran it and the suite file that declared it (a test runs cases of many files), its own duration
 * (a test hosts many checks), and whether the run's breaker ended it.
 */
export interface AnnotatedRecord extends CheckRecord {
  mutant?: string;
  variant?: string;
  case?: string;
  /** The suite file that declared the case, relative to the project root (`checks/service/errors.ts`). */
  file?: string;
  durationMs?: number;
  breaker?: boolean;
}

const ANNOTATION = /^check:([a-z_]+)$/;

/** Encodes a record as a Playwright annotation `check:<outcome>` with a JSON description (redacted by value). */
export function encodeCheckAnnotation(rec: AnnotatedRecord): { type: string; description: string } {
  const { id, requirements, title, detail, lacks, uses, mutant, variant, file, durationMs, breaker } = rec;
  return { type: `check:${rec.outcome}`, description: JSON.stringify(redactValue({ id, requirements, title, detail, lacks, uses, mutant, variant, case: rec.case, file, durationMs, breaker })) };
}

export type DecodedAnnotation = { ok: true; record: AnnotatedRecord } | { ok: false; error: string } | null;

/**
 * Decodes an annotation: null when it is not a check annotation at all; an error (never a silent drop)
 * when it claims to be one but cannot be read, so the report can show it as a harness error.
 */
export function decodeCheckAnnotation(a: { type: string; description?: string }): DecodedAnnotation {
  const m = ANNOTATION.exec(a.type);
  if (!m) return null;
  if (!isOutcome(m[1])) return { ok: false, error: `unknown check outcome "${m[1]}"` };
  let d: Partial<AnnotatedRecord>;
  try {
    d = JSON.parse(a.description ?? '') as Partial<AnnotatedRecord>;
  } catch (e) {
    return { ok: false, error: `unreadable check record (${(e as Error).message})` };
  }
  if (!d || typeof d.id !== 'string' || !Array.isArray(d.requirements) || typeof d.title !== 'string') {
    return { ok: false, error: 'check record without id, requirements or title' };
  }
  return { ok: true, record: { ...d, id: d.id, requirements: d.requirements, title: d.title, outcome: m[1] } };
}

export const MAX_EVIDENCE_BODY = 8 * 1024;

/**
 * Keeps only the exchange fields (request, response, error) and truncates long bodies. Callers may pass
 * richer objects (a raw response whose body Buffer would serialise as an array of byte numbers that no
 * redaction can see). Values of any other shape are kept as they are.
 */
export function trimExchanges(evidence: unknown): unknown {
  if (!Array.isArray(evidence)) return evidence;
  return evidence.map((ex: unknown) => {
    if (!ex || typeof ex !== 'object' || !('request' in ex)) return ex;
    const { request, response, error } = ex as { request: unknown; response?: Record<string, unknown>; error?: unknown };
    const out: Record<string, unknown> = { request };
    if (response && typeof response === 'object') {
      const { status, headers, body, bodyBytes, durationMs } = response;
      const text = typeof body === 'string' ? body : body === undefined ? undefined : '[non-text body omitted]';
      out.response = {
        status, headers, bodyBytes, durationMs,
        body: text !== undefined && text.length > MAX_EVIDENCE_BODY ? `${text.slice(0, MAX_EVIDENCE_BODY)}…[truncated, ${String(bodyBytes)} bytes]` : text,
      };
    }
    if (error !== undefined) out.error = error;
    return out;
  });
}

/** Exchanges as evidence: trimmed, then redacted by structure (headers by name, JSON by value). */
export function evidenceExchanges(exchanges: Exchange[]): Exchange[] {
  return redactValue(trimExchanges(exchanges)) as Exchange[];
}

/** Serialises exchanges for evidence (evidenceExchanges, compact): it travels to the reporter in every check's attachment. */
export function evidenceOf(exchanges: Exchange[]): string {
  return JSON.stringify(evidenceExchanges(exchanges));
}

/** Reads an evidence attachment back; text that is not JSON is kept as text. */
export function decodeEvidence(body: Buffer | string | undefined): unknown {
  if (body === undefined) return undefined;
  const text = typeof body === 'string' ? body : body.toString('utf8');
  try {
    return trimExchanges(JSON.parse(text));
  } catch {
    return text;
  }
}

/** Thrown by a check when the target departs from the contract. `title` names the violation. */
export class CheckFailure extends Error {
  readonly title: string;
  readonly detail: string;
  constructor(title: string, detail = '') {
    super(detail ? `${title}: ${detail}` : title);
    this.name = 'CheckFailure';
    this.title = title;
    this.detail = detail;
  }
}

/**
 * Thrown when the profile lacks what the check needs. Never counted as a pass. `lacks`: the profile setting whose
 * absence ended the check (`credentials.no_scopes`, `resources.other_org_encounter`, `webhook.sandboxControlUrl`),
 * carried in the record so the reports say what would unlock it without reading the reason's words.
 */
export class NotVerified extends Error {
  readonly lacks?: string;
  constructor(reason: string, lacks?: string) {
    super(reason);
    this.name = 'NotVerified';
    if (lacks !== undefined) this.lacks = lacks;
  }
}

/** What the check body can call besides sending requests. */
export interface CheckScope {
  /**
   * Returns the value, or ends the check as not_verified naming what the profile lacks. `setting`: the profile
   * setting that gives the value (`credentials.no_scopes`), recorded among the settings the check used and, when
   * absent, as what it lacks.
   */
  need<T>(value: T | undefined | null, what: string, setting?: string): T;
  /** Marks the check informational (unspecified behaviour, recorded as observed). */
  observe(text: string): void;
  /** Marks the check `warning`: a `should` of the specification not met (fails the run only under --strict). */
  warn(text: string): void;
  /**
   * Records an open detail observed beside a decided rule (e.g. which 4xx reason a rejection carried when the
   * spec decides the rejection but not its reason): the outcome stays what the decided rule gives; the note
   * is kept as the detail. Use `observe` instead when the check judges nothing decided.
   */
  note(text: string): void;
  /** Records an exchange as evidence. */
  record(ex: Exchange): void;
}
