// The preflight of a target run: whether the target named by the profile is usable (reachable, this API, at this base URL) before any check runs.
// A refusal is a SetupError (exit 2, one line, cli/errors.ts); anything that answers as the API, however broken, is
// left to the checks. Also how many checks to keep in flight for a distant target. The CLI only prints what it says.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentialKey, loadProfile, validateProfile, unresolvedVariables, type Profile } from '../profile/profile.ts';
import { connectOnce, sendRaw, parseBaseUrl, TransportError, type RawResponse } from '../observe/http.ts';
import { isJsonMediaType } from '../judge/media-type.ts';
import { oneLine } from '../record/redact.ts';
import { SetupError } from './errors.ts';

/** The unauthenticated list request of the identity probe; every route of the API answers JSON (spec §4). */
const PROBE_TARGET = '/external/v1/encounters';
const PROBE_TIMEOUT_MS = 5_000;

/** An answer slower than this may be distance: the keyless probe is asked again before more lanes are advised. */
const DISTANT_MS = 60;

/** Checks in flight in the one worker of a target run (--workers 1, or the CLI's choice on a single core) against a near target: two workers' default 8 each. */
export const ONE_WORKER_LANES = 16;

/**
 * Checks in flight per worker for a target whose answer took `ms`: the default near (undefined), more far away, ⌈ms ÷ 3⌉
 * per worker of two or more (at most 64). One worker takes what two would share (at most 128): the same checks in
 * flight against the target, one worker's start instead of two.
 */
export function lanesFor(ms: number, workers = 2): number | undefined {
  if (ms < DISTANT_MS) return undefined;
  const lanes = Math.min(64, Math.ceil(ms / 3));
  return workers === 1 ? 2 * lanes : lanes;
}

/**
 * Whether the profile has the webhook sender judged as a deployment (`webhook.sender` without a sandbox control URL,
 * delivery not declared off): its scenarios then run one at a time on the deployment's own retry schedule, minutes
 * (107 to 200 s for a Python deployment here), in a test whose worker runs nothing else meanwhile, so its listener
 * answers in time (engine/planner.ts). With a second worker every other check runs during that wait; with one they
 * wait for it (that deployment: 26 to 32 s later, 8 to 22 % of the run). A sandbox's sender answers in a second.
 */
export function watchesDeploymentSender(profileFile: string): boolean {
  const webhook = rawProfile(profileFile)?.webhook as { sender?: unknown; sandboxControlUrl?: unknown; delivery?: unknown } | undefined;
  return !!webhook && typeof webhook === 'object' && webhook.sender !== undefined && webhook.sandboxControlUrl === undefined && webhook.delivery !== 'not_activated';
}

/**
 * Whether the target answers a keyless request near (under DISTANT_MS, the least of up to two), asked before the runner
 * starts: on a single core a target run then takes one worker (cli/run.ts), a distant one keeps two, whose tests run
 * side by side while each waits on the distance (the properties, one at a time in a worker, would wait one after
 * another). Anything but a quick answer (no base URL, refused, slow, no answer in a second) is not near; the preflight
 * proper says what is wrong.
 */
export async function answersNear(profileFile: string, target: string | undefined): Promise<boolean> {
  const baseUrl = target ?? rawProfile(profileFile)?.baseUrl;
  if (typeof baseUrl !== 'string') return false;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    try {
      await sendRaw({ baseUrl: baseUrl.replace(/\/+$/, ''), timeoutMs: 1_000, maxBodyBytes: 64 * 1024 }, { target: PROBE_TARGET, headers: {} });
    } catch {
      return false;
    }
    if (performance.now() - t0 < DISTANT_MS) return true;
  }
  return false;
}

/**
 * How long the target takes to answer, as the least of up to three keyless requests: one slow answer on a busy
 * machine is not distance, and a target that stops answering after the first gets no advice (undefined).
 */
async function answerTime(first: number, baseUrl: string, headers: Record<string, string>): Promise<number | undefined> {
  let least = first;
  for (let i = 0; i < 2 && least >= DISTANT_MS; i++) {
    const t0 = performance.now();
    try {
      await sendRaw({ baseUrl, timeoutMs: Math.min(PROBE_TIMEOUT_MS, Math.ceil(2 * first) + 100), maxBodyBytes: 64 * 1024 }, { target: PROBE_TARGET, headers });
    } catch {
      return undefined;
    }
    least = Math.min(least, performance.now() - t0);
  }
  return least;
}

/** Opens (and closes) one TCP connection: the reachability half of the probe. */
async function connectProbe(baseUrl: string): Promise<void> {
  const { host, port } = parseBaseUrl(baseUrl);
  const failed = await connectOnce(host, port, PROBE_TIMEOUT_MS);
  if (!failed) return;
  const kind = failed.kind === 'timeout' ? `timeout (${failed.message})` : failed.kind === 'connection_refused' || failed.kind === 'dns' ? failed.kind : (failed.code ?? 'other');
  throw new SetupError(unreachable(baseUrl, kind));
}

/** Whether a body is a JSON object (what every answer of the API is, §4), whatever its label says. */
function isJsonObject(body: Buffer): boolean {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** Whether a body has the shape of a §7 error body (a JSON object with a string reason_code), however wrong its details. */
function hasReasonCode(body: Buffer): boolean {
  try {
    const v = JSON.parse(body.toString('utf8')) as Record<string, unknown> | null;
    return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v.reason_code === 'string';
  } catch {
    return false;
  }
}

/** An answer this API gives to its list route: JSON that is a page (200) or a §7 error body. */
function answersAsApi(r: RawResponse): boolean {
  return looksJson(r) && (r.status === 200 || hasReasonCode(r.body));
}

/**
 * Probes the target once before any check runs, with its own short deadline (PROBE_TIMEOUT_MS, however
 * long the profile's requestMs): one GET /external/v1/encounters without a key.
 * - No TCP connection, or no complete answer within the deadline (a target that accepts and never
 *   answers, or drips bytes): a setup error, exit 2. Nothing could be judged in a useful time.
 * - "Not this API": a complete answer that is not JSON at all, neither labelled JSON nor a body that
 *   parses as a JSON object (an HTML page, a login or http→https redirect, a plain-text 404, an empty
 *   answer): the base URL points at something else, exit 2.
 * - "Not this API here": a 404 whose body is not the §7 error body. The list route never answers 404
 *   (LIST-ERRORS), and a service answers a keyless request 401 before anything else (§4 step 1): a JSON 404
 *   without a reason_code is what a web server or framework says of a path it has no route for. Typically the
 *   base URL carries a path prefix where the API is not (`http://host/api`), or ends in /external/v1, which the
 *   harness adds itself. Exit 2, naming the likely cause and, when it answers there, where the API is.
 * - In both cases the API may still be identified otherwise (a gateway in front of it that answers keyless
 *   requests itself): by its list route answering the `full` key with a page or a §7 error body, or by its
 *   served OpenAPI document. Then the checks judge the keyless answers.
 * - Anything else is the API, however broken, and the checks judge it (exit 1 with evidence): a JSON
 *   body labelled text/plain (the content-type checks fail), a body labelled JSON that does not parse,
 *   a reset or an oversized answer after the connection was accepted.
 */
async function probe(baseUrl: string, headers: Record<string, string> | undefined, fullKey?: string): Promise<number | undefined> {
  await connectProbe(baseUrl);
  const sent = Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => k.toLowerCase() !== 'authorization'));
  let res: RawResponse;
  const t0 = performance.now();
  try {
    res = await sendRaw({ baseUrl, timeoutMs: PROBE_TIMEOUT_MS, maxBodyBytes: 64 * 1024 }, { target: PROBE_TARGET, headers: sent });
  } catch (e) {
    if (e instanceof TransportError && e.kind === 'timeout') {
      const how = e.partial && e.partial.length > 0 ? `completely (${e.partial.length} bytes arrived)` : 'at all';
      throw new SetupError(`target ${baseUrl} did not answer GET ${PROBE_TARGET} ${how} within ${PROBE_TIMEOUT_MS} ms`);
    }
    if (e instanceof TransportError && e.kind !== 'connection_refused' && e.kind !== 'dns' && e.kind !== 'other') return undefined; // answered badly: the checks judge it
    const kind = e instanceof TransportError ? e.kind : oneLine((e as Error).message);
    throw new SetupError(unreachable(baseUrl, kind));
  }
  const first = performance.now() - t0;
  const json = looksJson(res);
  const noRouteHere = json && res.status === 404 && !hasReasonCode(res.body);
  if (json && !noRouteHere) {
    await doubledPrefix(baseUrl, sent, fullKey);
    return answerTime(first, baseUrl, sent);
  }
  // A gateway in front of the API may answer a keyless request itself (a plain-text 401): the API is then
  // identified with the `full` key, or by its served contract; the keyless answers are the checks' to judge.
  if (await identifiedOtherwise(baseUrl, sent, fullKey)) return answerTime(first, baseUrl, sent);
  const type = res.headers['content-type'];
  const said = type ? type.split(';')[0].trim() : res.body.length > 0 ? 'without a content type' : 'with an empty body and no content type';
  const where = res.status >= 300 && res.status < 400 && res.headers.location ? `, redirecting to ${res.headers.location}` : '';
  const answered = `GET ${PROBE_TARGET} without a key answered ${res.status} ${said}${noRouteHere ? ' that is not the §7 error body' : ''}${where}`;
  const cause = res.status === 404 ? await likelyCause(baseUrl, sent) : undefined;
  throw new SetupError(`target ${baseUrl} does not look like the Clinical Encounter Public API (${answered})${cause ? `; ${cause}` : ''}`);
}

function looksJson(res: RawResponse): boolean {
  return isJsonMediaType(res.headers['content-type']) || isJsonObject(res.body);
}

/** The API answers its list route with the `full` key (a page or a §7 error body), or serves its OpenAPI document (§1). */
async function identifiedOtherwise(baseUrl: string, headers: Record<string, string>, fullKey: string | undefined): Promise<boolean> {
  const attempts: { target: string; headers: Record<string, string>; ok: (r: RawResponse) => boolean }[] = [
    ...(fullKey ? [{ target: `${PROBE_TARGET}?limit=1`, headers: { ...headers, authorization: `Bearer ${fullKey}` }, ok: answersAsApi }] : []),
    { target: '/openapi/v1/openapi.json', headers, ok: (r: RawResponse) => r.status === 200 && isJsonObject(r.body) && /"openapi"\s*:/.test(r.body.toString('utf8')) },
  ];
  for (const a of attempts) {
    try {
      if (a.ok(await sendRaw({ baseUrl, timeoutMs: PROBE_TIMEOUT_MS, maxBodyBytes: 4 * 1024 * 1024 }, { target: a.target, headers: a.headers }))) return true;
    } catch {
      /* not identified this way */
    }
  }
  return false;
}

/**
 * A base URL ending in /external/v1, which the harness adds itself: the API answers the keyless probe there too
 * (401 comes before routing), but not its list route with the `full` key, which it answers 200 at the base URL
 * without /external/v1. Then the path is the mistake, not the API: exit 2 naming both. Asked only of such base
 * URLs; a `full` key refused at both is the checks' to judge.
 */
async function doubledPrefix(baseUrl: string, headers: Record<string, string>, fullKey: string | undefined): Promise<void> {
  const { basePath } = parseBaseUrl(baseUrl);
  if (!fullKey || !/\/external\/v1$/.test(basePath)) return;
  const ask = async (base: string) => {
    try {
      return await sendRaw({ baseUrl: base, timeoutMs: PROBE_TIMEOUT_MS, maxBodyBytes: 4 * 1024 * 1024 }, { target: `${PROBE_TARGET}?limit=1`, headers: { ...headers, authorization: `Bearer ${fullKey}` } });
    } catch {
      return undefined;
    }
  };
  const here = await ask(baseUrl);
  if (!here || here.status === 200) return;
  const shorter = baseUrl.replace(/\/external\/v1\/*$/, '');
  const there = await ask(shorter);
  if (!there || there.status !== 200 || !answersAsApi(there)) return;
  const reason = (() => {
    try {
      return String((JSON.parse(here.body.toString('utf8')) as { reason_code?: unknown }).reason_code ?? '');
    } catch {
      return '';
    }
  })();
  throw new SetupError(`target ${baseUrl} does not look like the Clinical Encounter Public API here (GET ${PROBE_TARGET} with the full key answered ${here.status}${reason ? ` ${reason}` : ''}); the base URL's path prefix /external/v1 is the likely cause: the API answers at ${shorter} (the harness adds /external/v1 itself)`);
}

/**
 * Why no route of the API answers at a base URL that answered 404: its path. The base URL without /external/v1 at
 * its end (the harness adds it), then without any path, is asked the same keyless question; the first that
 * answers as the API is named. Undefined for a base URL without a path (nothing to suggest).
 */
async function likelyCause(baseUrl: string, headers: Record<string, string>): Promise<string | undefined> {
  const { basePath } = parseBaseUrl(baseUrl);
  if (basePath === '') return undefined;
  const origin = baseUrl.slice(0, baseUrl.length - baseUrl.replace(/^https?:\/\/[^/?#]+/, '').length);
  const candidates = [...new Set([/\/external\/v1$/.test(basePath) ? origin + basePath.replace(/\/external\/v1$/, '') : undefined, origin])].filter((c): c is string => c !== undefined);
  for (const candidate of candidates) {
    try {
      const r = await sendRaw({ baseUrl: candidate, timeoutMs: PROBE_TIMEOUT_MS, maxBodyBytes: 64 * 1024 }, { target: PROBE_TARGET, headers });
      if (answersAsApi(r)) return `the base URL's path prefix ${basePath} is the likely cause: the API answers at ${candidate} (the harness adds ${PROBE_TARGET.replace(/\/encounters$/, '')} itself)`;
    } catch {
      /* not there either */
    }
  }
  return `the base URL's path prefix ${basePath} is the likely cause: no route of this API answers under it (the harness adds ${PROBE_TARGET.replace(/\/encounters$/, '')} to the base URL itself)`;
}

/** The profile file as a JSON object, unvalidated, or undefined when it is not one (loadProfile then says why). */
function rawProfile(file: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A variable the profile names but the environment does not set is a setup error naming it. */
function requireResolved(profile: Profile, shownFile: string): void {
  const missing = unresolvedVariables(profile, process.env);
  if (missing.length === 0) return;
  throw new SetupError(unsetVariablesMessage(missing, shownFile));
}

/**
 * The one line for a profile whose variables are unset: how many, of which roles, the first few by name, and the
 * next step. Short enough never to be cut (cli/errors.ts folds a line to its length limit at a word).
 */
export function unsetVariablesMessage(missing: readonly { variable: string; where: string }[], file: string): string {
  const shown = missing.slice(0, 4).map((m) => `${m.variable} (${m.where})`).join(', ');
  const more = missing.length > 4 ? ` and ${missing.length - 4} more` : '';
  const roles = new Set(missing.map((m) => m.where.split('.')[0]));
  return `profile ${file} names ${missing.length} environment variable${missing.length === 1 ? '' : 's'} that ${missing.length === 1 ? 'is' : 'are'} unset or empty (${[...roles].join(', ')}): ${shown}${more}. Set ${missing.length === 1 ? 'it' : 'them'} (export NAME=value, or --env-file FILE of NAME=value lines), or delete the roles the target cannot offer (their checks end not verified); conformance profile check --profile ${file} lists every role`;
}

/** What to check when a target cannot be reached, by how the connection failed. */
function unreachable(baseUrl: string, kind: string): string {
  const next = kind === 'dns' ? 'is the host name right, and resolvable from here?'
    : kind === 'connection_refused' ? 'is the service running, on this port, and listening on an address this machine reaches?'
      : kind.startsWith('timeout') ? 'is a firewall or a VPN in the way, or the service overloaded?'
        : 'is the base URL right (scheme, host, port)?';
  return `target ${baseUrl} is unreachable: ${kind} (one TCP connection to ${(() => { try { const u = new URL(baseUrl); return `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`; } catch { return baseUrl; } })()} was tried): ${next} The profile's baseUrl, or --target, names it`;
}

/**
 * The profile a target run uses: the file itself, or with --target a private temporary copy whose baseUrl is the
 * target (a profile may hold keys inline, so the copy never goes near the report folder). `cleanup` removes the copy.
 */
export function targetProfile(file: string, target: string | undefined): { profilePath: string; cleanup?: () => void } {
  const raw = rawProfile(file);
  if (raw === undefined) loadProfile(file, process.env); // not a readable JSON object: loadProfile says why, in its words
  if (target === undefined) return { profilePath: file };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-profile-'));
  const profilePath = path.join(dir, 'target.profile.json');
  const baseUrl = target.replace(/\/+$/, '');
  // The profile's name named the service at the profile's own base URL (a sandbox profile says
  // "reference-impl (embedded)"): pointed at another service, the report names that one by its URL.
  const renamed = typeof raw?.baseUrl === 'string' && raw.baseUrl.replace(/\/+$/, '') !== baseUrl ? { name: baseUrl } : {};
  fs.writeFileSync(profilePath, JSON.stringify({ ...raw, ...renamed, baseUrl }), { mode: 0o600 });
  return { profilePath, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The preflight of a target run: the profile loaded and every variable it names set (`shownFile` names it in the
 * error), the --target copy validated, the base URL parsed, the target probed. Resolves once the target may be used,
 * with how fast it answered and, when `adviseLanes`, the checks in flight it advises (undefined: the default).
 */
export async function preflightTarget(o: { file: string; shownFile: string; profilePath: string; target?: string; adviseLanes: boolean; workers?: number }): Promise<{ answeredInMs?: number; lanes?: number }> {
  let profile = loadProfile(o.file, process.env);
  requireResolved(profile, o.shownFile);
  if (o.target !== undefined) profile = validateProfile(JSON.parse(fs.readFileSync(o.profilePath, 'utf8')), `--target ${o.target}`, process.env);
  try {
    parseBaseUrl(profile.baseUrl);
  } catch (e) {
    throw new SetupError((e as Error).message);
  }
  const answeredInMs = await probe(profile.baseUrl, profile.requestHeaders, credentialKey(profile, 'full', process.env));
  // A distant target: a check spends its time waiting, so more of them in flight (bounded by --max-rps).
  const lanes = o.adviseLanes && answeredInMs !== undefined ? lanesFor(answeredInMs, o.workers) : undefined;
  return { answeredInMs, lanes };
}
