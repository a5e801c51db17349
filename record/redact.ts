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
  forgetPatientAnswers();
  for (const byDepth of runVerdicts) byDepth.length = 0;
}

/** The answers that depend on the patient values met so far (a new value may be quoted by any of them). */
function forgetPatientAnswers(): void {
  redactedBodies.clear();
  redactedTexts.clear();
  redactedHeaders.clear();
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
  // By code point (a surrogate pair is one character, one `*`), without a pattern per character.
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) out += '0';
    else if (c < 128 ? KEPT_ASCII[c] === 1 : c < 0xd800 || c > 0xdfff ? SPACE.test(value[i]) : false) out += value[i];
    else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
      out += '*';
    }
  }
  return out;
}

const SPACE = /^\s$/;
/** The ASCII characters a placeholder keeps: white space (`\s`) and punctuation (`!-/`, `:-@`, `[-\``, `{-~`). */
const KEPT_ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (/^[\s!-/:-@[-`{-~]$/.test(String.fromCharCode(c))) KEPT_ASCII[c] = 1;

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
  // A body, text or header answered before this value was known may quote it.
  forgetPatientAnswers();
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
  if (!re) return text;
  // The pattern tries its look-behind at every character: most texts hold no value at all, which a substring search
  // of each value says far sooner (a match of the pattern is always such a substring).
  let any = false;
  for (const v of patientValues) {
    if (text.includes(v)) {
      any = true;
      break;
    }
  }
  return any ? replaceEach(text, re, (m) => placeholder(m[0])) : text;
}

// A patient member quoted in free text: `"first_name":"Ada"`, `'title': 'x'`, `\"text\":\"...` (JSON inside a
// string). Only a colon makes a member: `title="x"` is an HTML attribute, `title: x` (no quotes) prose. The value runs to its closing quote, or to the end of the line when
// it was cut (a body quoted in a detail is often cut in the middle of a value).
const MEMBER_KEY = new RegExp(`(\\\\*)(["']?)\\b(${[...PATIENT_MEMBER_NAMES].join('|')})\\1\\2[ \\t]*:[ \\t]*(\\\\*)(["'])`, 'g');

// A member the pattern matches names one of these; a text that holds none is answered without trying the pattern at
// every character (it starts with an optional run of backslashes, so no fixed first character lets it skip ahead).
const MEMBER_NAMES = [...PATIENT_MEMBER_NAMES];

function redactPatientMembers(text: string): string {
  if (!MEMBER_NAMES.some((n) => text.includes(n))) return text;
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

// Redaction is a pure function of the text, the registered secrets, the mode and the patient values met so far, and
// a report passes the same strings through it several times (each check's evidence as it arrives, outcomes.json, the
// report object, each format): the answers are kept until a secret is added or the mode changes, and those that
// depend on patient data (bodies, `redact`, `redactHeader`) until a patient value is met, which any of them may
// quote. Bounded: cleared whole when full.
const redacted = new Map<string, string>();
const redactedBodies = new Map<string, string>();
const redactedTexts = new Map<string, string>();
const redactedHeaders = new Map<string, string>();
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
// Each with what a match becomes (`$1` of a replace string written out: a group that took part in no match gives '').
type Replacement = (m: RegExpExecArray) => string;
function VALUE_PATTERNS(): [RegExp, Replacement][] {
  return [
    // A bearer credential (token68), unless what follows the scheme is an auth-param
    // (`Bearer realm="api"`, `error=invalid_token`, `realm=&quot;` in a rendered page): a challenge.
    [/\b(Bearer)[ \t]+(?![A-Za-z0-9_-]+=(?:"|&quot;|[A-Za-z0-9_-]))[A-Za-z0-9._~+/=-]+/g, (m) => `${m[1]} ${REDACTED}`],
    [/\bv1=[0-9a-fA-F]{16,}/g, () => `v1=${REDACTED}`],
    // Signed URLs: audio_url fields and any URL carrying a signature or expiry query.
    [/("audio_url"[ \t]*:[ \t]*")[^"]*(")/g, (m) => `${m[1]}${REDACTED}${m[2]}`],
    [/\bhttps?:\/\/[^\s"'<>]*[?&](?:sig|signature|x-amz-signature|token|expires)=[^\s"'<>]*/gi, redactedMark],
  ];
}
const VALUE_ONLY = VALUE_PATTERNS();

// Patterns for free text. Whitespace inside a match is horizontal only ([ \t]): a value ends at the end
// of its line, so `www-authenticate: Bearer` followed by `date: Sun, ...` on the next line stays intact.
const PATTERNS: [RegExp, Replacement][] = [
  // Authorization values of any scheme. A value ends before a tag (`<`: in a rendered page the value is followed
  // by markup, which it must never swallow), and a placeholder (`Bearer <token>`, `&lt;token&gt;`) is no credential.
  [/(authorization["']?[ \t]*[:=][ \t]*["']?)(?![ \t]*(?:bearer|basic)?[ \t]*(?:<|&lt;))(bearer|basic)?[ \t]*[^"'\r\n,}<]+/gi, (m) => `${m[1]}${m[2] ?? ''} ${REDACTED}`],
  // Webhook signature headers: the digest is derived from the secret.
  [/(service-signature["']?[ \t]*[:=][ \t]*["']?)[^"'\r\n,}]+/gi, (m) => `${m[1]}${REDACTED}`],
  ...VALUE_PATTERNS(),
];

export function redact(text: string): string {
  // The mode first: a change of mode forgets every answer given under the other.
  const phi = phiOn();
  let v = redactedTexts.get(text);
  if (v === undefined) {
    const secretsOut = redactSecrets(text);
    v = phi ? redactPatientValues(redactPatientMembers(secretsOut)) : secretsOut;
    // Met during this answer, a patient value cleared the memo: the answer itself already knew it.
    if (redactedTexts.size >= REDACTED_CACHE_MAX) redactedTexts.clear();
    redactedTexts.set(text, v);
  }
  return v;
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
  let out = flat(text);
  const re = secretsRegex();
  if (re) out = replaceEach(out, re, redactedMark);
  for (const [re, rep] of PATTERNS) out = replaceEach(out, re, rep);
  return depth < 2 ? redactEncoded(out, depth) : out;
}

function redactedMark(): string {
  return REDACTED;
}

/**
 * `text.replace(re, ...)` for a global pattern, with the replacement computed from each match: every match is found
 * first (one exec loop), then the text is rebuilt, unless every match is replaced by itself: then the text itself
 * is returned, and the next pattern searches the same flat string. Text already redacted (a report rendered from a
 * redacted model: `authorization: Bearer [REDACTED]` matches, and stays as it is) so costs one search per pattern.
 * V8's own global replace rebuilds the text whatever the replacements: over a rendered report (3 MB, a thousand
 * matches of the authorization pattern) it took 80 ms where the exec loop takes 4, and the next pattern then searched
 * a text of pieces (see `flat`). As with replace, `by` runs only after the last match is found, so it may use any
 * pattern, this one too.
 */
function replaceEach(text: string, re: RegExp, by: (m: RegExpExecArray) => string): string {
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null) return text;
  const found: RegExpExecArray[] = [];
  for (; m !== null; m = re.exec(text)) {
    found.push(m);
    // An empty match moves on by one character (a code point under the u flag), as replace does.
    if (m[0] === '') re.lastIndex = re.unicode && isPairAt(text, re.lastIndex) ? re.lastIndex + 2 : re.lastIndex + 1;
  }
  const next = found.map(by);
  if (next.every((r, i) => r === found[i][0])) return text;
  let out = '';
  let done = 0;
  found.forEach((f, i) => {
    out += text.slice(done, f.index) + next[i];
    done = f.index + f[0].length;
  });
  return flat(out + text.slice(done));
}

/**
 * The same string, made one piece in memory. A string built by `+=` is a tree of pieces; V8 pieces it together for
 * each regular-expression search over it and forgets the result, while reading one character keeps it. Over a text
 * of megabytes searched once per match (a rendered report) that is the difference between a scan and a copy per
 * match. Only a matter of time: the value is the same string.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

function isPairAt(text: string, i: number): boolean {
  const hi = text.charCodeAt(i);
  const lo = text.charCodeAt(i + 1);
  return hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff;
}

// Encoded runs: a signed URL or a bearer header that was never registered is only recognisable by its
// shape, which percent-encoding or base64 hides. Each run is decoded and redacted as text; a run whose
// decoded text carries anything redactable is replaced whole, any other run is kept byte for byte (so
// `limit=%2B1` and ordinary ids survive). A base64 run is a maximal run of base64 characters, sixteen or more, with
// up to two `=` after it, found by one walk over the characters (replaceBase64Runs; as the pattern
// `(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}` it took most of the time of redacting a rendered report). A URL
// run (a maximal run of URL characters, six or more) is only worth decoding when it holds a `%`: those runs are
// found from each `%` outwards (replaceUrlRuns), not by a pattern tried at every character of the text.
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
  // `done`: how far `out` holds the text; `after`: the end of the last run (a run never reaches back past it).
  let done = 0;
  let after = 0;
  while (at >= 0) {
    let start = at;
    while (start > after && urlChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && urlChar(text.charCodeAt(end))) end++;
    if (end - start >= 6) {
      const run = text.slice(start, end);
      const next = fn(run);
      if (next !== run) {
        out += text.slice(done, start) + next;
        done = end;
      }
      after = end;
    }
    at = text.indexOf('%', end);
  }
  // Every run kept as it was: the text itself.
  return done === 0 ? text : flat(out + text.slice(done));
}

function redactEncoded(text: string, depth: number): string {
  const urls = verdicts(URL_RUN, depth);
  const out = replaceUrlRuns(text, (run) => urls.get(run) ?? remember(urls, run, urlRunVerdict(run, depth)));
  const runs = verdicts(BASE64_RUN, depth);
  return replaceBase64Runs(out, (run) => runs.get(run) ?? remember(runs, run, base64RunVerdict(run, depth)));
}

function urlRunVerdict(run: string, depth: number): string {
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
}

function base64RunVerdict(run: string, depth: number): string {
  // The run may start inside a neighbouring token (`\nQmVh...` in escaped text): try each alignment.
  for (let skip = 0; skip < 4 && run.length - skip >= 16; skip++) {
    const decoded = Buffer.from(run.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    if (TEXT.test(decoded) && leaks(decoded, depth)) return skip === 0 ? REDACTED : `${run.slice(0, skip)}${REDACTED}`;
  }
  return run;
}

/** [A-Za-z0-9+/_-]: the characters of a base64 (or base64url) run, by character code. */
const BASE64_CHAR = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-') BASE64_CHAR[c.charCodeAt(0)] = 1;
const base64Char = (c: number): boolean => c < 128 && BASE64_CHAR[c] === 1;

/**
 * Replaces every base64 run of `text` with `fn(run)`: each maximal run of base64 characters sixteen or more long,
 * with up to two `=` after it; the matches of `/(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}/g`.
 */
export function replaceBase64Runs(text: string, fn: (run: string) => string): string {
  let out = '';
  let done = 0;
  const n = text.length;
  for (let i = 0; i < n;) {
    if (!base64Char(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && base64Char(text.charCodeAt(j))) j++;
    if (j - i < 16) {
      i = j;
      continue;
    }
    let end = j;
    if (end < n && text.charCodeAt(end) === 61) end++;
    if (end < n && end > j && text.charCodeAt(end) === 61) end++;
    const run = text.slice(i, end);
    const next = fn(run);
    if (next !== run) {
      out += text.slice(done, i) + next;
      done = end;
    }
    i = end;
  }
  // Every run kept as it was: the text itself (no copy to piece together for the next search).
  return done === 0 ? text : flat(out + text.slice(done));
}

// What an encoded run becomes depends only on the run, the depth and the secrets: a report repeats the same
// runs (check ids are base64url-shaped) thousands of times, so each is decoded once (cleared with `redacted`).
// One memo per kind of run and depth, keyed by the run itself (a rendered report looks up some thirty thousand).
const URL_RUN = 0;
const BASE64_RUN = 1;
const runVerdicts: Map<string, string>[][] = [[], []];
function verdicts(kind: number, depth: number): Map<string, string> {
  return (runVerdicts[kind][depth] ??= new Map());
}

/** Keeps `value` as the answer for `key` (the memo cleared whole when full) and returns it. */
function remember(cache: Map<string, string>, key: string, value: string): string {
  if (cache.size >= REDACTED_CACHE_MAX) cache.clear();
  cache.set(key, value);
  return value;
}

/** Secrets and secret-shaped tokens only (no free-text patterns): for one value that is not prose. */
function redactToken(text: string): string {
  let out = text;
  const re = secretsRegex();
  if (re) out = replaceEach(out, re, redactedMark);
  for (const [p, rep] of VALUE_ONLY) out = replaceEach(out, p, rep);
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
  // The mode first: a change of mode forgets every answer given under the other.
  evidenceMode();
  // The name's length first: no name and value can be read as another pair.
  return remembered(redactedHeaders, `${name.length}:${name}${value}`, () => redactHeaderNow(name, value));
}

function redactHeaderNow(name: string, value: string): string {
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
  return replaceEach(text, JSON_TOKEN, ([token]) => {
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
    // Without a backslash (most tokens) a token is complete when it has its closing quote, and is its own text between the quotes.
    const plain = !token.includes('\\');
    const complete = token.length >= 2 && token.endsWith('"') && (plain || !/\\"$/.test(token.replace(/\\\\/g, '')));
    if (!complete) {
      // A string cut by the end of the text: its raw characters, as far as they go.
      const raw = token.slice(1);
      return `"${phi && inPatient() ? hide(raw) : redact(raw)}`;
    }
    const decoded = plain ? token.slice(1, -1) : decodeToken(token);
    if (decoded === undefined) {
      // A bad escape (`"a\\x"`): not JSON, so the body is not valid and goes through the free-text redaction too;
      // its raw characters are redacted here as a cut string's are. A hostile body never makes redaction throw.
      const raw = token.slice(1, -1);
      return `"${phi && inPatient() ? hide(raw) : redact(raw)}"`;
    }
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

/** A complete string token's value, or undefined when it is not JSON (a bad escape). */
function decodeToken(token: string): string | undefined {
  try {
    return JSON.parse(token) as string;
  } catch {
    return undefined;
  }
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

// The walk below rewrites, in place, the private copy redactValue made (JSON.parse's own objects and arrays): a
// member keeps its place, only its value changes.

function walkAuthored(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = walkAuthored(value[i]);
    return value;
  }
  return walk(value, undefined);
}

const HEADERS_MEMBER = /^(headers|requestHeaders)$/i;

function walk(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && AUTHORED_MEMBERS.has(key)) return walkAuthored(value);
  if (typeof value === 'string') {
    if (key === 'audio_url') return REDACTED;
    if (key === 'body') return redactBody(value);
    return redact(value);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = walk(value[i], undefined);
    return value;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (HEADERS_MEMBER.test(k) && v && typeof v === 'object' && !Array.isArray(v)) o[k] = redactHeaders(v as Record<string, unknown>);
      else if (AUTH_HEADER.test(k) || SIGNATURE_HEADER.test(k)) o[k] = typeof v === 'string' ? redactHeader(k, v) : walk(v, k);
      else o[k] = walk(v, k);
    }
    return o;
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
  // The copy is this call's own: the walk rewrites it in place.
  const plain = plainCopy(value, []);
  const copy = plain === NOT_PLAIN ? (JSON.parse(JSON.stringify(value)) as unknown) : plain;
  // Every body first: a detail or an error beside it may quote a patient value only its body shows as one.
  if (phiOn()) meetBodies(copy, undefined);
  return walk(copy, undefined) as T;
}

/** What plainCopy answers for a value it leaves to JSON. */
const NOT_PLAIN: unique symbol = Symbol('not plain data');

/**
 * The copy `JSON.parse(JSON.stringify(value))` gives, made directly for plain data: objects (of Object.prototype or
 * none) and arrays, strings, numbers, booleans and null. As JSON makes it: a member whose value is undefined, a
 * function or a symbol is left out (null in an array), a number that is not finite becomes null and -0 becomes 0,
 * members keep their order, and every object is a new one of Object.prototype. Unlike JSON it keeps the very strings
 * (the memos above find an answer by a string: a string met before is not hashed again) and allocates no text of the
 * whole value. Anything else (a toJSON method, a Date, a Buffer, a class's instance, a bigint, a cycle) answers
 * NOT_PLAIN, and the caller takes the JSON round trip, which decides those cases (or throws) as it always did.
 */
function plainCopy(value: unknown, ancestors: object[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (ancestors.includes(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  ancestors.push(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = left(v) ? null : plainCopy(v, ancestors);
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out.push(c);
    }
    ancestors.pop();
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (left(v)) continue;
    const c = plainCopy(v, ancestors);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    // JSON.parse makes `__proto__` an own member, as any other (an assignment would set the copy's prototype).
    if (k === '__proto__') Object.defineProperty(out, k, { value: c, writable: true, enumerable: true, configurable: true });
    else out[k] = c;
  }
  ancestors.pop();
  return out;
}

/** What JSON leaves out of an object (and writes as null in an array). */
function left(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
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
