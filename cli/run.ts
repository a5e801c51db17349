// `conformance run`, the main job: start the reference (sandbox) or reach a target named by a profile (after a
// preflight), run the conformance project (suites and properties) through Playwright, and decide the exit code
// from conformance.json. The implementation is reached only as a child process.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentialKey, loadProfile, markProfileChecked, prepareProfileValidation, profileDigest, validateProfile, unresolvedVariables, type Profile } from '../profile/profile.ts';
import { writeReady } from '../observe/ready.ts';
import { checksByRequirement } from './declared-checks.ts';
import { connectOnce, sendRaw, parseBaseUrl, TransportError, type RawResponse } from '../observe/http.ts';
import { isJsonMediaType } from '../judge/media-type.ts';
import { startReference } from './reference-process.ts';
import { CALLBACK_HOST, startContainerReference } from './reference-container.ts';
import { loadWaivers, loadCatalog, type WaiverError } from '../reports/context.ts';
import { exitCodeFor } from '../reports/model.ts';
import { baselineGate, compareToBaseline, type BaselineComparison } from '../reports/diff.ts';
import { mdText } from '../reports/summary.ts';
import { readComparableReport } from './diff.ts';
import { attestDir, loadKey } from './attest.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { setting, settingName } from '../engine/config.ts';
import { clearReports, dbKind, DEFAULT_OUT, evidenceOption, referenceKind, put, displayPath, HELP, oneLine, parse, PLAYWRIGHT_CLI, prepareOutDir, readReport, ROOT, runPlaywright, SetupError, tellProblems } from './common.ts';

/** The unauthenticated list request of the identity probe; every route of the API answers JSON (spec §4). */
const PROBE_TARGET = '/external/v1/encounters';
const PROBE_TIMEOUT_MS = 5_000;

/** An answer slower than this may be distance: the keyless probe is asked again before more lanes are advised. */
const DISTANT_MS = 60;

/** Checks in flight per worker for a target whose answer took `ms`: the default 8 near, more far away (at most 64). */
export function lanesFor(ms: number): number | undefined {
  if (ms < DISTANT_MS) return undefined;
  return Math.min(64, Math.ceil(ms / 3));
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
function requireResolved(profile: Profile, file: string): void {
  const missing = unresolvedVariables(profile);
  if (missing.length === 0) return;
  throw new SetupError(unsetVariablesMessage(missing, displayPath(file)));
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

async function requirementGrep(id: string): Promise<string> {
  const catalog = loadCatalog();
  if (catalog && !catalog.requirements.some((r) => r.id === id)) throw new SetupError(`--requirement ${id} is not in the requirement catalog`);
  // From the checks' declarations (engine/registry.ts), the service's: the other subjects have runs of their own.
  const checks = (await checksByRequirement('service'))[id] ?? [];
  if (checks.length === 0) throw new SetupError(`no check of the service verifies ${id} (none declares it)`);
  const escaped = checks.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Playwright matches --grep against the whole title path ("<file> <describe> <title>"); check ids are the titles.
  return `(?:^|\\s)(?:${escaped.join('|')})$`;
}

/** What a baseline says of this run, one line each: new failures (each named), known ones, stale ones (each named). */
function baselineLines(cmp: BaselineComparison, file: string): string[] {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const lines = [`baseline ${file}: ${n(cmp.newFailures.length, 'new failure')}, ${n(cmp.known.length, 'known failure')} (still failing), ${n(cmp.stale.length, 'baselined failure')} now passing`];
  for (const c of cmp.newFailures) lines.push(`NEW FAILURE ${c.id} [${c.requirements.join(', ')}]: not in the baseline`);
  for (const c of cmp.stale) lines.push(`STALE BASELINE ${c.id}: failed in the baseline, now ${c.outcome}; update the baseline (use this run's conformance.json)`);
  return lines;
}

export async function run(argv: string[]): Promise<number> {
  const { values: o } = parse('run', argv, {
    target: { type: 'string' }, profile: { type: 'string' }, out: { type: 'string' }, seed: { type: 'string' },
    grep: { type: 'string' }, requirement: { type: 'string' }, waivers: { type: 'string' }, db: { type: 'string' }, reference: { type: 'string' },
    shard: { type: 'string' }, workers: { type: 'string' }, mutants: { type: 'boolean' }, 'max-rps': { type: 'string' }, 'in-flight': { type: 'string' }, 'list-window': { type: 'string' },
    'property-runs': { type: 'string' }, 'audio-expiry-wait': { type: 'string' },
    'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' }, verbose: { type: 'boolean' }, baseline: { type: 'string' }, attest: { type: 'string' }, evidence: { type: 'string' },
  });
  if (o.help) {
    process.stdout.write(`${HELP.run}\n`);
    return 0;
  }
  const evidence = evidenceOption(o.evidence);
  if (o.seed !== undefined && !/^-?[0-9]{1,10}$/.test(o.seed)) throw new SetupError(`--seed must be an integer (got ${o.seed})`);
  if (o.workers !== undefined && !/^[1-9][0-9]{0,2}$/.test(o.workers)) throw new SetupError(`--workers must be a positive integer (got ${o.workers})`);
  if (o['list-window'] !== undefined && !/^[1-9][0-9]{1,3}$/.test(o['list-window'])) throw new SetupError(`--list-window must be an integer from 10 to 9999 (got ${o['list-window']})`);
  if (o['property-runs'] !== undefined && !/^[1-9][0-9]{0,4}$/.test(o['property-runs'])) throw new SetupError(`--property-runs must be a positive integer (got ${o['property-runs']})`);
  if (o['audio-expiry-wait'] !== undefined && !/^[1-9][0-9]{0,3}$/.test(o['audio-expiry-wait'])) throw new SetupError(`--audio-expiry-wait must be a whole number of seconds from 1 to 9999 (got ${o['audio-expiry-wait']})`);
  if (o['in-flight'] !== undefined && !/^[1-9][0-9]{0,2}$/.test(o['in-flight'])) throw new SetupError(`--in-flight must be a positive integer (got ${o['in-flight']})`);
  let shard: { i: number; n: number } | undefined;
  if (o.shard !== undefined) {
    const m = /^([0-9]+)\/([0-9]+)$/.exec(o.shard);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new SetupError(`--shard must be I/N with 1 <= I <= N (got ${o.shard})`);
    shard = { i: Number(m[1]), n: Number(m[2]) };
  }
  const maxRps = o['max-rps'] === undefined ? undefined : Number(o['max-rps']);
  if (maxRps !== undefined && (!/^[0-9]{1,5}(\.[0-9]+)?$/.test(o['max-rps']!) || !(maxRps > 0))) throw new SetupError(`--max-rps must be a positive number of requests per second (got ${o['max-rps']})`);
  if (o.grep !== undefined && o.requirement !== undefined) throw new SetupError('use either --grep or --requirement, not both');
  if (o.grep !== undefined) {
    try {
      new RegExp(o.grep);
    } catch {
      throw new SetupError(`--grep is not a valid regular expression: ${o.grep}`);
    }
  }
  const grep = o.requirement !== undefined ? await requirementGrep(o.requirement) : o.grep;
  if (o.target !== undefined && o.profile === undefined) throw new SetupError('--target needs --profile FILE (the profile names the credentials and resources to use)');
  if (o.mutants && (o.target !== undefined || o.profile !== undefined)) throw new SetupError('--mutants needs the reference sandbox (run without --target and --profile)');
  if (o.mutants && !fs.existsSync(path.join(ROOT, 'tests', 'mutants.spec.ts'))) throw new SetupError('--mutants needs a clone of the harness (its meta-suites, tests/mutants.spec.ts and tests/variants.spec.ts, are not part of the npm package)');
  if (o.profile !== undefined && o.db !== undefined) throw new SetupError('--db applies only when the reference is started (without --profile)');
  if (o.profile !== undefined && o.reference !== undefined) throw new SetupError('--reference applies only when the reference is started (without --profile)');
  const referenceAs = referenceKind(o.reference, o.db);
  // The reference image is built from reference-impl/ alone (what partners get): it has no switchboard of mutants and variants.
  if (o.mutants && referenceAs === 'container') throw new SetupError('--mutants needs the reference as a process (its switchboard holds the mutants and variants); the reference image has none: run without --reference container');
  const db = o.profile === undefined ? (referenceAs === 'container' ? 'container' : dbKind(o.db)) : undefined;
  const fromEnv = setting('waivers');
  const waiversPath = o.waivers !== undefined ? path.resolve(o.waivers) : fromEnv ? path.resolve(fromEnv) : undefined;
  if (waiversPath) {
    try {
      loadWaivers(waiversPath);
    } catch (e) {
      throw new SetupError((e as WaiverError).message);
    }
  }
  // Read before anything runs: a baseline that is not a report is a setup error, not a surprise at the end.
  const baselinePath = o.baseline !== undefined ? path.resolve(o.baseline) : undefined;
  const baseline = baselinePath ? readComparableReport(baselinePath, '--baseline') : undefined;
  // The signing key, read before anything runs: a key that cannot sign is a setup error, not an unsigned run.
  const attestKey = o.attest !== undefined ? loadKey(path.resolve(o.attest), 'private', '--attest') : undefined;
  const outRoot = path.resolve(o.out ?? DEFAULT_OUT);
  const outDir = shard ? path.join(outRoot, `shard-${shard.i}-of-${shard.n}`) : outRoot;

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    let profilePath: string;
    let switchboardToken: string | undefined;
    let referenceReady: Promise<void> = Promise.resolve();
    let readyFile: string | undefined;
    // A target run: the runner starts at once and loads its suites while the profile is validated and the target
    // probed (the profile's schema alone is a quarter of a second); its workers wait for the ready file, its
    // output is held until then, and on a refusal it is stopped and writes nothing (reports/conformance-reporter.ts).
    /** Resolves once the target may be used, with what the ready file says (observe/ready.ts). */
    let targetGate: (() => Promise<string>) | undefined;
    if (o.profile !== undefined) {
      const file = path.resolve(o.profile);
      const raw = rawProfile(file);
      if (raw === undefined) loadProfile(file); // not a readable JSON object: loadProfile says why, in its words
      profilePath = file;
      if (o.target !== undefined) {
        // The override lives in a private temporary copy: a profile may hold keys inline, so it never goes near the report folder.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-profile-'));
        profilePath = path.join(dir, 'target.profile.json');
        const baseUrl = o.target.replace(/\/+$/, '');
        // The profile's name named the service at the profile's own base URL (a sandbox profile says
        // "reference-impl (embedded)"): pointed at another service, the report names that one by its URL.
        const renamed = typeof raw?.baseUrl === 'string' && raw.baseUrl.replace(/\/+$/, '') !== baseUrl ? { name: baseUrl } : {};
        fs.writeFileSync(profilePath, JSON.stringify({ ...raw, ...renamed, baseUrl }), { mode: 0o600 });
        cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      }
      prepareOutDir(outDir);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-target-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      readyFile = path.join(dir, 'ready');
      const copy = profilePath;
      targetGate = async () => {
        let profile = loadProfile(file);
        requireResolved(profile, file);
        if (o.target !== undefined) profile = validateProfile(JSON.parse(fs.readFileSync(copy, 'utf8')), `--target ${o.target}`);
        try {
          parseBaseUrl(profile.baseUrl);
        } catch (e) {
          throw new SetupError((e as Error).message);
        }
        const answeredInMs = await probe(profile.baseUrl, profile.requestHeaders, credentialKey(profile, 'full'));
        // A distant target: a check spends its time waiting, so more of them in flight (bounded by --max-rps).
        const lanes = o['in-flight'] === undefined && setting('inFlight') === undefined && answeredInMs !== undefined ? lanesFor(answeredInMs) : undefined;
        if (lanes === undefined) return 'ready';
        process.stderr.write(`conformance: the target answered in ${Math.round(answeredInMs!)} ms: ${lanes} checks in flight per worker (--in-flight N sets it)\n`);
        return `ready in-flight=${lanes}`;
      };
    } else {
      // A report folder that cannot be written is a setup error before the reference is started.
      prepareOutDir(outDir);
      process.stderr.write(`conformance: starting the reference implementation (${referenceAs === 'container' ? '--reference container' : `--db ${db}`})\n`);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-reference-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      profilePath = path.join(dir, 'reference.profile.json');
      switchboardToken = crypto.randomBytes(16).toString('hex');
      const starting = referenceAs === 'container'
        ? startContainerReference({ timeoutMs: 180_000, profilePath, switchboardToken })
        : startReference({ db, timeoutMs: 180_000, profilePath, switchboardToken });
      const started = starting.then((ref) => {
        cleanups.push(() => ref.stop());
        process.stderr.write(`conformance: reference ready at ${ref.baseUrl}\n`);
        return ref;
      });
      referenceReady = started.then(
        () => undefined,
        (e: Error) => {
          throw new SetupError(`reference implementation did not start: ${e.message}`);
        },
      );
      // Playwright loads its configuration and every test file while the reference starts; its workers wait
      // for this file (observe/ready.ts) before any check runs. It also names the bytes of the reference's
      // profile, validated here once (the schema compiled while the reference starts), so that no worker
      // compiles the profile's schema again.
      readyFile = path.join(dir, 'ready');
      prepareProfileValidation();
      void referenceReady.then(
        () => {
          // The bytes validated here are the bytes vouched for (one read); a profile that does not validate is
          // vouched for by no one: each worker validates it, and reports what is wrong.
          const vouched: NodeJS.ProcessEnv = {};
          try {
            markProfileChecked(profilePath, vouched);
          } catch { /* see above */ }
          const digest = vouched[settingName('profileChecked')];
          writeReady(readyFile!, digest ? `ready ${digest}` : 'ready');
        },
        (e: Error) => writeReady(readyFile!, e.message),
      );
      if (o.mutants) await referenceReady;
    }

    // Scores from another run are never this run's.
    for (const f of ['mutation.json', 'variants.json']) fs.rmSync(path.join(outDir, f), { force: true });
    if (o.mutants) {
      if (!switchboardToken) throw new SetupError('--mutants needs the reference sandbox (run without --target and --profile)');
      process.stderr.write('conformance: measuring the mutation and variant scores (tests/mutants.spec.ts, tests/variants.spec.ts against this sandbox)\n');
      const mutEnv: NodeJS.ProcessEnv = { ...process.env };
      for (const [k, v] of [['profile', profilePath], ['switchboardToken', switchboardToken], ['out', outDir], ['progress', 'terse'], ['sandbox', '1']] as const) put(mutEnv, k, v);
      const mutArgs = [PLAYWRIGHT_CLI, 'test', '--project=unit', '--workers=1', 'tests/mutants.spec.ts', 'tests/variants.spec.ts'];
      await runPlaywright(mutArgs, mutEnv, cleanups);
      if (!fs.existsSync(path.join(outDir, 'mutation.json'))) process.stderr.write('conformance: the mutant meta-suite wrote no mutation.json; the report will say the score is unknown\n');
      if (!fs.existsSync(path.join(outDir, 'variants.json'))) process.stderr.write('conformance: the variant meta-suite wrote no variants.json; the report will say the score is unknown\n');
      // Its own reporters wrote outcomes for the meta-suite's tests; the main run below writes the reports.
      clearReports(outDir);
    }
    // The switched phase (conditions given as on/off commands) runs after the rest, as the project that depends on it.
    const args = [PLAYWRIGHT_CLI, 'test', '--project=conformance', '--project=conformance-switched'];
    // Two workers (the runner's default, playwright.config.ts) for the reference as for a target. A third was chosen
    // for the reference when each check was its own test and the waits were sequential; with batches the run is
    // CPU-bound on this two-core machine, and a third worker only adds its own start (about a second of CPU):
    // cold runs alternating, 2 workers 8.8-10.3 s, 3 workers 9.6-11.5 s.
    if (o.workers !== undefined) args.push(`--workers=${o.workers}`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    put(env, 'profile', profilePath);
    // The profile this command validated (a target run) is trusted by the runner's processes for these bytes
    // (profile/profile.ts loadProfile); the reference's own profile is validated by global setup. Never the
    // caller's environment.
    put(env, 'profileChecked', o.profile !== undefined ? profileDigest(fs.readFileSync(profilePath, 'utf8')) : undefined);
    put(env, 'out', outDir);
    put(env, 'setupError', undefined);
    // Only the sandbox the CLI started itself may stand in the harness's example webhook receiver.
    // Nothing of an enclosing run's sandbox (its token, its sandbox flag) may leak into this one.
    put(env, 'referencePid', undefined);
    put(env, 'switchboardToken', switchboardToken);
    // Sandbox mode only when this command started the reference itself: `--profile` alone is a target run.
    put(env, 'sandbox', switchboardToken !== undefined ? '1' : undefined);
    const filter = { ...(o.grep !== undefined ? { grep: o.grep } : {}), ...(o.requirement !== undefined ? { requirement: o.requirement } : {}) };
    put(env, 'filter', Object.keys(filter).length > 0 ? JSON.stringify(filter) : undefined);
    // Cases, not the runner's tests, are filtered and sharded: a test runs a batch of cases (engine/playwright/fixtures.ts).
    put(env, 'grep', grep);
    put(env, 'shard', shard ? `${shard.i}/${shard.n}` : undefined);
    put(env, 'inFlight', o['in-flight']);
    put(env, 'listWindow', o['list-window']);
    put(env, 'propertyRuns', o['property-runs']);
    put(env, 'audioExpiryWait', o['audio-expiry-wait']);
    put(env, 'strict', o.strict ? '1' : undefined);
    put(env, 'verbose', o.verbose ? '1' : undefined);
    put(env, 'evidence', evidence);
    put(env, 'progress', 'terse');
    // --max-rps N: an explicit pace for a target behind a rate limiter, shared out over the workers.
    const workers = Number(o.workers ?? setting('workers') ?? 2);
    put(env, 'paceMs', maxRps !== undefined ? String(Math.ceil((1000 * workers) / maxRps)) : undefined);
    if (o.seed !== undefined) put(env, 'seed', o.seed); // otherwise an exported CONFORMANCE_SEED replays a run
    put(env, 'waivers', waiversPath);
    put(env, 'waitReady', readyFile);
    // A reference in a container delivers its webhooks to the harness through the host's gateway.
    put(env, 'callbackHost', referenceAs === 'container' ? CALLBACK_HOST : setting('callbackHost'));
    let gate = referenceReady;
    let release = () => {};
    if (targetGate) {
      const checked = targetGate;
      // Started only once the runner is: `runPlaywright` spawns it before this promise's first await.
      const said = new Promise<void>((resolve) => {
        release = resolve;
      }).then(checked);
      gate = said.then(() => undefined);
      said.then(
        (text) => writeReady(readyFile!, text),
        (e: Error) => writeReady(readyFile!, e.message || 'the target was refused'),
      );
    }
    const running = runPlaywright(args, env, cleanups, gate);
    release();
    const code = await running;
    await gate; // a reference that never started, or a target refused, is the reason, whatever Playwright said
    const report = readReport(outDir);
    if (!report) throw new SetupError(`playwright exited with code ${code} without writing ${REPORT_FILES.json} (${grep !== undefined ? 'did the --grep/--requirement filter match any check? ' : ''}see the output above)`);
    if (attestKey) process.stderr.write(`conformance: attested the reports: ${displayPath(attestDir(outDir, attestKey))}\n`);
    if (!baseline) {
      tellProblems(report, outDir, { allowIncomplete: o['allow-incomplete'] });
      return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] });
    }
    const cmp = compareToBaseline(baseline, report);
    // The decision comes last, with its exit code and why, whatever the combination (new failures, an
    // INCOMPLETE run, an expired waiver, --strict): the line before the exit never contradicts it.
    const decision = baselineGate(report, cmp, { allowIncomplete: o['allow-incomplete'] });
    const lines = [...baselineLines(cmp, displayPath(baselinePath!)), `${decision.why}: exit ${decision.code}`];
    tellProblems(report, outDir, { allowIncomplete: o['allow-incomplete'], summaryExtra: ['### Baseline', '', ...lines.map((l) => `- ${mdText(l)}`)] });
    for (const l of lines) process.stdout.write(`conformance: ${l}\n`);
    return decision.code;
  } finally {
    await cleanup();
  }
}
