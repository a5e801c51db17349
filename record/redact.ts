// The one redaction layer: every string that leaves the harness (evidence, logs, terminal output,
// every report format) passes through it. It removes registered secrets in their plain,
// percent-encoded and base64 forms, bearer tokens, signature headers and signed URLs.
//
// Two kinds of input, never confused: structured values (`redactValue`: headers by name, bodies that
// are JSON by value, with the body text kept and only the string tokens that carry a secret
// re-encoded, so it stays the same valid JSON) and free text (`redact`: terminal lines, details, a
// rendered page). No pattern ever runs across a line break, so a header line can never swallow the
// name of the next one (`www-authenticate: Bearer` then `date: ...`).
//
// Patient data (record/patient-fields.ts, the one table of the contract's patient and clinical-content members)
// never leaves a run either, unless the run asked for full evidence (`--evidence full`, setting `evidence`):
// inside a body, the value of such a member is replaced by a placeholder of the same type and length
// (`"Ada"` -> `"***"`, `"1985-12-10"` -> `"0000-00-00"`), found by the body's structure; every value so replaced is
// remembered for the rest of the process, so free text that quotes it (a check's detail, a terminal line, a body
// that echoes it elsewhere) loses it too, as does a `"first_name":"..."` member quoted in free text. The checks
// judge the real values: this runs only where evidence and details are written or printed.
import { PATIENT_MEMBER_NAMES } from './patient-fields.ts';

const secrets = new Set<string>();

/** Registers a secret (an API key, a signing secret, a signed URL) so it never appears in output. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 6 || secrets.has(value)) return;
  secrets.add(value);
  secretPattern = undefined;
  forgetAnswers();
}

function forgetAnswers(): void {
  redacted.clear();
  redactedBodies.clear();
  runVerdicts.clear();
}

// ---------------------------------------------------------------------------------------------------
// Patient data.

export const EVIDENCE_MODES = ['redacted', 'full'] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];

let modeOverride: EvidenceMode | undefined;
let lastMode: EvidenceMode | undefined;

/**
 * `redacted` (the default): patient and clinical-content values are replaced wherever evidence or text leaves the
 * run. `full`: they are kept (`--evidence full`, for the sandbox's synthetic data). Secrets go in both modes.
 * Read from the `evidence` setting, so the runner's workers and reporters follow the CLI that started them.
 */
export function evidenceMode(): EvidenceMode {
  const mode = modeOverride ?? 'redacted';
  if (mode !== lastMode) {
    // The remembered answers were given under the other mode.
    if (lastMode !== undefined) forgetAnswers();
    lastMode = mode;
  }
  return mode;
}

/** Sets the mode for this process (a command that writes its reports itself); undefined: back to the setting. */
export function setEvidenceMode(mode: EvidenceMode | undefined): void {
  modeOverride = mode;
  evidenceMode();
}

const phiOn = (): boolean => evidenceMode() === 'redacted';

/**
 * The placeholder of a patient value: the same length, every digit `0`, every other character but white space
 * and ASCII punctuation `*` (`Ada Lovelace` -> `*** ********`, `1985-12-10` -> `0000-00-00`). A placeholder is its
 * own placeholder, so redacting twice changes nothing.
 */
export function placeholder(value: string): string {
  let out = '';
  for (const ch of value) out += ch >= '0' && ch <= '9' ? '0' : /^[\s!-/:-@[-`{-~]$/.test(ch) ? ch : '*';
  return out;
}

// Every patient value met in a body this process redacted: free text quoting one loses it. Only values with a
// letter or digit of their own and two or more characters (a one-letter value would shred unrelated text); a
// value is matched as a whole word, case and all.
const patientValues = new Set<string>();
let patientPattern: RegExp | null | undefined;

function notePatientValue(value: string): void {
  const v = value.trim();
  if (v.length < 2 || patientValues.has(v) || placeholder(v) === v) return;
  patientValues.add(v);
  patientPattern = undefined;
  // A body or text answered before this value was known may quote it.
  redactedBodies.clear();
}

/** How many patient values this process has met (tests). */
export function patientValueCount(): number {
  return patientValues.size;
}

function patientRegex(): RegExp | null {
  if (patientPattern === undefined) {
    const alts = [...patientValues].sort((a, b) => b.length - a.length).map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    patientPattern = alts.length ? new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alts.join('|')})(?![\\p{L}\\p{N}_])`, 'gu') : null;
  }
  return patientPattern;
}

function redactPatientValues(text: string): string {
  const re = patientRegex();
  return re ? text.replace(re, placeholder) : text;
}

// A patient member quoted in free text: `"first_name":"Ada"`, `'title': 'x'`, `\"text\":\"...` (JSON inside a
// string). Only a colon makes a member: `title="x"` is an HTML attribute, `title: x` (no quotes) prose. The value runs to its closing quote, or to the end of the line when
// it was cut (a body quoted in a detail is often cut in the middle of a value).
const MEMBER_KEY = new RegExp(`(\\\\*)(["']?)\\b(${[...PATIENT_MEMBER_NAMES].join('|')})\\1\\2[ \\t]*:[ \\t]*(\\\\*)(["'])`, 'g');

function redactPatientMembers(text: string): string {
  if (!MEMBER_KEY.test(text)) return text;
  MEMBER_KEY.lastIndex = 0;
  let out = '';
  let done = 0;
  for (let m = MEMBER_KEY.exec(text); m; m = MEMBER_KEY.exec(text)) {
    if (m.index < done) continue;
    const close = `${m[4]}${m[5]}`;
    const start = m.index + m[0].length;
    let end = start;
    // Inside an unescaped value a backslash escapes the next character; an escaped value ends at its escaped quote.
    while (end < text.length && text[end] !== '\n' && text[end] !== '\r' && !text.startsWith(close, end)) end += m[4] === '' && text[end] === '\\' ? 2 : 1;
    end = Math.min(end, text.length);
    const value = text.slice(start, end);
    notePatientValue(value);
    out += text.slice(done, start) + placeholder(value);
    done = end;
    MEMBER_KEY.lastIndex = Math.max(end, MEMBER_KEY.lastIndex);
  }
  return out + text.slice(done);
}

/** Free text without patient data: quoted patient members and every patient value met so far. */
function redactPatientText(text: string): string {
  return phiOn() ? redactPatientValues(redactPatientMembers(text)) : text;
}

// Redaction is a pure function of the text and the registered secrets, and a report passes the same strings
// through it several times (outcomes, the report object, each format): the answers are kept until a secret
// is added. Bounded: cleared whole when full.
const redacted = new Map<string, string>();
const redactedBodies = new Map<string, string>();
const REDACTED_CACHE_MAX = 50_000;

// Every form of every secret in one alternation (longest first), rebuilt only when a secret is added:
// one pass over the text instead of one split/join per form per secret.
let secretPattern: RegExp | null | undefined;

function secretsRegex(): RegExp | null {
  if (secretPattern === undefined) {
    const all = new Set<string>();
    for (const s of secrets) for (const f of forms(s)) if (f) all.add(f);
    const alts = [...all].sort((a, b) => b.length - a.length).map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    secretPattern = alts.length ? new RegExp(alts.join('|'), 'g') : null;
  }
  return secretPattern;
}

export function registeredSecretCount(): number {
  return secrets.size;
}

export const REDACTED = '[REDACTED]';

function forms(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [secret, encodeURIComponent(secret), b64, b64.replace(/=+$/, ''), Buffer.from(secret).toString('base64url'), JSON.stringify(secret).slice(1, -1)];
}

// Patterns safe inside any single value (a header value, a JSON string): they match a whole token
// that is a secret by its shape, never a part of the surrounding structure.
function VALUE_PATTERNS(): [RegExp, string][] {
  return [
    // A bearer credential (token68), unless what follows the scheme is an auth-param
    // (`Bearer realm="api"`, `error=invalid_token`, `realm=&quot;` in a rendered page): a challenge.
    [/\b(Bearer)[ \t]+(?![A-Za-z0-9_-]+=(?:"|&quot;|[A-Za-z0-9_-]))[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
    [/\bv1=[0-9a-fA-F]{16,}/g, `v1=${REDACTED}`],
    // Signed URLs: audio_url fields and any URL carrying a signature or expiry query.
    [/("audio_url"[ \t]*:[ \t]*")[^"]*(")/g, `$1${REDACTED}$2`],
    [/\bhttps?:\/\/[^\s"'<>]*[?&](?:sig|signature|x-amz-signature|token|expires)=[^\s"'<>]*/gi, REDACTED],
  ];
}
const VALUE_ONLY = VALUE_PATTERNS();

// Patterns for free text. Whitespace inside a match is horizontal only ([ \t]): a value ends at the end
// of its line, so `www-authenticate: Bearer` followed by `date: Sun, ...` on the next line stays intact.
const PATTERNS: [RegExp, string][] = [
  // Authorization values of any scheme. A value ends before a tag (`<`: in a rendered page the value is followed
  // by markup, which it must never swallow), and a placeholder (`Bearer <token>`, `&lt;token&gt;`) is no credential.
  [/(authorization["']?[ \t]*[:=][ \t]*["']?)(?![ \t]*(?:bearer|basic)?[ \t]*(?:<|&lt;))(bearer|basic)?[ \t]*[^"'\r\n,}<]+/gi, `$1$2 ${REDACTED}`],
  // Webhook signature headers: the digest is derived from the secret.
  [/(service-signature["']?[ \t]*[:=][ \t]*["']?)[^"'\r\n,}]+/gi, `$1${REDACTED}`],
  ...VALUE_PATTERNS(),
];

export function redact(text: string): string {
  return redactPatientText(redactSecrets(text));
}

/**
 * Secrets and secret-shaped tokens only, for text that cannot be patient data (a JSON member name, a report
 * rendered from a value `redactValue` already took the patient values out of).
 */
export function redactSecrets(text: string): string {
  return remembered(redacted, text, () => redactAt(text, 0));
}

/** The answer kept in `cache` for `key`, computed once; the cache is cleared whole when full. */
function remembered(cache: Map<string, string>, key: string, compute: () => string): string {
  let v = cache.get(key);
  if (v === undefined) {
    v = compute();
    if (cache.size >= REDACTED_CACHE_MAX) cache.clear();
    cache.set(key, v);
  }
  return v;
}

function redactAt(text: string, depth: number): string {
  let out = text;
  const re = secretsRegex();
  if (re) out = out.replace(re, REDACTED);
  for (const [re, rep] of PATTERNS) out = out.replace(re, rep);
  return depth < 2 ? redactEncoded(out, depth) : out;
}

// Encoded runs: a signed URL or a bearer header that was never registered is only recognisable by its
// shape, which percent-encoding or base64 hides. Each run is decoded and redacted as text; a run whose
// decoded text carries anything redactable is replaced whole, any other run is kept byte for byte (so
// `limit=%2B1` and ordinary ids survive). A base64 run is found by a linear pattern: no nested quantifiers, and
// a run only starts where the previous character cannot belong to it (the lookbehind), so a short word is tried
// once, not once per character. A URL run (a maximal run of URL characters, six or more) is only worth decoding
// when it holds a `%`: those runs are found from each `%` outwards (replaceUrlRuns), not by a pattern tried at
// every character of the text (which made it most of a report's redaction time).
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}/g;
const TEXT = /^[\t\n\r\x20-\x7e\u00a0-\ufffc]+$/;

function leaks(decoded: string, depth: number): boolean {
  return redactAt(decoded, depth + 1) !== decoded;
}

/** [A-Za-z0-9._~%+-]: the characters of a URL run. */
function urlChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 126 || c === 37 || c === 43 || c === 45;
}

/** Replaces every maximal run of URL characters that is six or more long and holds a `%` with `fn(run)`. */
export function replaceUrlRuns(text: string, fn: (run: string) => string): string {
  let at = text.indexOf('%');
  if (at < 0) return text;
  let out = '';
  let done = 0;
  while (at >= 0) {
    let start = at;
    while (start > done && urlChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && urlChar(text.charCodeAt(end))) end++;
    if (end - start >= 6) {
      out += text.slice(done, start) + fn(text.slice(start, end));
      done = end;
    }
    at = text.indexOf('%', end);
  }
  return out + text.slice(done);
}

function redactEncoded(text: string, depth: number): string {
  const out = replaceUrlRuns(text, (run) => runVerdict('u', run, depth, () => {
    if (!/%[0-9A-Fa-f]{2}/.test(run)) return run;
    for (const candidate of [run, run.replace(/\+/g, ' ')]) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(candidate);
      } catch {
        continue;
      }
      if (decoded !== run && leaks(decoded, depth)) return REDACTED;
    }
    return run;
  }));
  return out.replace(BASE64_RUN, (run) => runVerdict('b', run, depth, () => {
    // The run may start inside a neighbouring token (`\nQmVh...` in escaped text): try each alignment.
    for (let skip = 0; skip < 4 && run.length - skip >= 16; skip++) {
      const decoded = Buffer.from(run.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (TEXT.test(decoded) && leaks(decoded, depth)) return skip === 0 ? REDACTED : `${run.slice(0, skip)}${REDACTED}`;
    }
    return run;
  }));
}

// What an encoded run becomes depends only on the run, the depth and the secrets: a report repeats the same
// runs (check ids are base64url-shaped) thousands of times, so each is decoded once (cleared with `redacted`).
const runVerdicts = new Map<string, string>();
function runVerdict(kind: string, run: string, depth: number, decide: () => string): string {
  return remembered(runVerdicts, `${kind}${depth}:${run}`, decide);
}

/** Secrets and secret-shaped tokens only (no free-text patterns): for one value that is not prose. */
function redactToken(text: string): string {
  let out = text;
  const re = secretsRegex();
  if (re) out = out.replace(re, REDACTED);
  for (const [p, rep] of VALUE_ONLY) out = out.replace(p, rep);
  return redactEncoded(out, 0);
}

// Header names whose whole value is a credential (keep nothing), whose value is `scheme credentials`
// (keep the scheme), or a list of `name=value` pairs (keep the names).
const SECRET_HEADER = /token|secret|api[-_]?key|password|session/i;
const AUTH_HEADER = /authorization/i;
const COOKIE_HEADER = /^(set-)?cookie$/i;
const SIGNATURE_HEADER = /signature/i;

/** Redacts one header value by the header's name; other headers lose only secrets and signed URLs. */
export function redactHeader(name: string, value: string): string {
  if (value === REDACTED) return value;
  if (AUTH_HEADER.test(name)) {
    // `Bearer <token>` keeps its scheme; a lone word that could be a scheme (`Bearer`, `Basic`) is kept.
    const m = /^([ \t]*)([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)([ \t]+)(.*)$/s.exec(value);
    if (m) return m[4] === '' ? value : `${m[1]}${m[2]}${m[3]}${REDACTED}`;
    return /^[ \t]*[A-Za-z]{1,12}[ \t]*$/.test(value) ? value : value === '' ? value : REDACTED;
  }
  if (SIGNATURE_HEADER.test(name)) {
    // `t=1700000000,v1=<hex>`: the timestamp stays readable, every digest goes.
    return value.split(',').map((part) => (/^[ \t]*t=[0-9]*[ \t]*$/.test(part) ? part : part.includes('=') ? `${part.slice(0, part.indexOf('=') + 1)}${REDACTED}` : REDACTED)).join(',');
  }
  if (COOKIE_HEADER.test(name)) {
    return value.split(';').map((pair, i) => {
      const eq = pair.indexOf('=');
      // In set-cookie only the first pair is the cookie; the rest are attributes (Path, Expires).
      if (i > 0 && /^set-/i.test(name)) return redactToken(pair);
      return eq < 0 ? pair : `${pair.slice(0, eq + 1)}${REDACTED}`;
    }).join(';');
  }
  if (SECRET_HEADER.test(name)) return value === '' ? value : REDACTED;
  return redactPatientText(redactToken(value));
}

export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' ? redactHeader(k, v) : redactValue(v)]));
}

// The tokens of a JSON text that carry structure: a string (the quotes included), a string cut by the end of the
// text (a body trimmed for evidence), and the punctuation. Numbers and literals are what lies between them.
const JSON_TOKEN = /"(?:[^"\\\u0000-\u001f]|\\.)*"|"(?:[^"\\]|\\.)*\\?$|[{}[\],:]/g;
// The mark trimExchanges (record/record.ts) puts after a body it cut.
const TRUNCATION_MARK = /…\[truncated, [^\]\n]*\]$/;
/** Bodies longer than this are redacted each time they are met, not remembered (the memo would hold them). */
const REMEMBERED_BODY_MAX = 64 * 1024;

/**
 * Redacts a body. A body that is JSON keeps its text byte for byte except the string tokens that change: a
 * secret (re-encoded after redaction, so the result is the same valid JSON: a secret between quotes and
 * backslashes leaves no half-escape behind), the value of an `audio_url` member (whole), and, unless the run keeps
 * full evidence, every string inside a patient member of record/patient-fields.ts (a placeholder of the same
 * length). A body cut for evidence, or one that is broken JSON, is read the same way as far as it goes, then
 * passed through the free-text redaction too. A body that does not start like JSON is free text.
 */
export function redactBody(text: string): string {
  // A report passes each evidence body through here several times (on arrival, outcomes, the report): one
  // JSON.parse and one pass over its string tokens per distinct body, not per pass.
  if (text.length > REMEMBERED_BODY_MAX) return redactBodyNow(text);
  return remembered(redactedBodies, text, () => redactBodyNow(text));
}

function redactBodyNow(text: string): string {
  const mark = TRUNCATION_MARK.exec(text)?.[0] ?? '';
  const core = mark ? text.slice(0, text.length - mark.length) : text;
  if (!/^\s*[[{"]/.test(core)) return redact(text);
  let valid = !mark;
  if (valid) {
    try {
      JSON.parse(core);
    } catch {
      valid = false;
    }
  }
  const scanned = scanJson(core, phiOn());
  return `${valid ? scanned : redact(scanned)}${mark}`;
}

/**
 * One pass over the tokens of a JSON text (complete or cut), replacing the string tokens that change. `phi`: the
 * strings inside a patient member become placeholders (and are remembered as patient values); every other string
 * passes through `redact`, and the value of an `audio_url` member is redacted whole.
 */
function scanJson(text: string, phi: boolean): string {
  // Each open container: an object or an array, and whether it sits inside a patient member.
  const stack: { object: boolean; patient: boolean }[] = [];
  let expectKey = false;
  let key: string | undefined;
  const inPatient = (): boolean => {
    const top = stack[stack.length - 1];
    return !!top && (top.patient || (top.object && key !== undefined && PATIENT_MEMBER_NAMES.has(key)));
  };
  // Only a string that is itself the value of a patient member is remembered for free text. Strings nested
  // deeper (an array or object under such a name: a non-conformant target's shape, or a schema in an OpenAPI
  // document, `"date_of_birth":{"type":"string","format":"date"}`) still become placeholders in this body, but
  // remembering them would shred every text with the words `string` or `date` in it.
  const direct = (): boolean => {
    const top = stack[stack.length - 1];
    return !!top && top.object && !top.patient && key !== undefined && PATIENT_MEMBER_NAMES.has(key);
  };
  const hide = (value: string): string => {
    if (direct()) notePatientValue(value);
    return placeholder(value);
  };
  return text.replace(JSON_TOKEN, (token: string) => {
    const top = stack[stack.length - 1];
    switch (token) {
      case '{':
      case '[':
        stack.push({ object: token === '{', patient: phi && inPatient() });
        expectKey = token === '{';
        key = undefined;
        return token;
      case '}':
      case ']':
        stack.pop();
        expectKey = false;
        key = undefined;
        return token;
      case ':':
        expectKey = false;
        return token;
      case ',':
        if (top?.object) {
          expectKey = true;
          key = undefined;
        }
        return token;
    }
    const complete = token.length >= 2 && token.endsWith('"') && !/\\"$/.test(token.replace(/\\\\/g, ''));
    if (!complete) {
      // A string cut by the end of the text: its raw characters, as far as they go.
      const raw = token.slice(1);
      return `"${phi && inPatient() ? hide(raw) : redact(raw)}`;
    }
    const decoded = JSON.parse(token) as string;
    if (top?.object && expectKey) {
      key = decoded;
      expectKey = false;
      // A member name is the contract's word, never patient data: secrets only.
      const next = redactSecrets(decoded);
      return next === decoded ? token : JSON.stringify(next);
    }
    let next: string;
    if (phi && inPatient()) {
      next = hide(decoded);
    } else {
      next = top?.object && key === 'audio_url' ? REDACTED : redact(decoded);
    }
    return next === decoded ? token : JSON.stringify(next);
  });
}

/** Meets the patient values of a body without keeping the result (free text said about it may quote them). */
export function notePatientData(body: string | undefined): void {
  if (body === undefined || body === '' || !phiOn()) return;
  if (/^\s*[[{]/.test(body)) redactBody(body);
  else redactPatientMembers(body);
}

/**
 * Members of the harness's own records that name what ran (a check's id and requirement ids, the case and suite file
 * that ran it, the mutant or variant switched on): written by the harness, never by a target, so never patient data.
 * Only secrets are taken out of them; a word remembered as a patient value must not rename a check.
 */
export const AUTHORED_MEMBERS: ReadonlySet<string> = new Set(['id', 'requirements', 'case', 'file', 'test', 'mutant', 'variant']);

function walkAuthored(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(walkAuthored);
  return walk(value, undefined);
}

function walk(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && AUTHORED_MEMBERS.has(key)) return walkAuthored(value);
  if (typeof value === 'string') {
    if (key === 'audio_url') return REDACTED;
    if (key === 'body') return redactBody(value);
    return redact(value);
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, undefined));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => {
      if (/^(headers|requestHeaders)$/i.test(k) && v && typeof v === 'object' && !Array.isArray(v)) return [k, redactHeaders(v as Record<string, unknown>)];
      if (AUTH_HEADER.test(k) || SIGNATURE_HEADER.test(k)) return [k, typeof v === 'string' ? redactHeader(k, v) : walk(v, k)];
      return [k, walk(v, k)];
    }));
  }
  return value;
}

/**
 * Deep-redacts a JSON-able value (evidence, a record, a report) by structure: header objects by name
 * (`headers`), bodies by JSON value (`body`), `audio_url` whole, every other string as text. The
 * result is a new value; the input is not changed.
 */
export function redactValue<T>(value: T): T {
  if (value === undefined) return value;
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  // Every body first: a detail or an error beside it may quote a patient value only its body shows as one.
  if (phiOn()) meetBodies(copy, undefined);
  return walk(copy, undefined) as T;
}

function meetBodies(value: unknown, key: string | undefined): void {
  if (typeof value === 'string') {
    if (key === 'body') redactBody(value);
  } else if (Array.isArray(value)) {
    for (const v of value) meetBodies(v, undefined);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) meetBodies(v, k);
  }
}

/** Any text, or an error's message (its name when it has none), as one redacted line of at most `max` characters (cut with …). */
export function oneLine(e: unknown, max = 600): string {
  const text = redact(e instanceof Error ? e.message || e.name : String(e)).replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
