// What every command of the CLI shares: the one-line setup error (exit 2), option parsing, the help texts,
// the closing verdict lines and what CI is told. No command logic: the report folder is reports/out-dir.ts's, running
// Playwright engine/playwright/runner-process.ts's.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EVIDENCE_MODES, oneLine, redact, type EvidenceMode } from '../record/redact.ts';
import { setting, settingName, type Setting } from '../engine/config.ts';
import { verdictLine, type ConformanceReport } from '../reports/model.ts';
import { completions } from '../reports/completions.ts';
import { githubAnnotations, stepSummary } from '../reports/summary.ts';
import { REPORT_FILES } from '../reports/write.ts';

/** The harness's own tree: the project root in a clone, dist/ in the npm package (compiled JavaScript). */
export const ROOT = path.resolve(import.meta.dirname, '..');
/** The report folder when --out is not given: reports/out under the current folder (in a clone run from its root, the project's reports/out). */
export const DEFAULT_OUT = 'reports/out';

export const DB_KINDS = ['embedded', 'container', 'url'] as const;
export type DbKind = (typeof DB_KINDS)[number];

import { SetupError } from './errors.ts';

export { SetupError };

/** Audio URLs of a client run expire this soon, so a client that caches one is seen using it late. */
export const CLIENT_AUDIO_TTL_SECONDS = 3;

export const HELP: Record<string, string> = {
  main: `Usage: conformance <command> [options]

Commands:
  run     run the conformance suites (default target: the reference implementation on embedded PostgreSQL)
  serve   start the reference implementation as a sandbox for partner clients
  client  judge a partner's API client from its own traffic: client -- <command> [args…]
  webhook conformance of a webhook receiver (receiver --url URL) or sender (sender --port N); receiver test vectors (vectors --out DIR)
  examples copy the example client and webhook receiver (TypeScript sources, scenario) here
  merge   merge shard outputs into one report
  diff    what changed between two reports: diff OLD.json NEW.json [--markdown]
  attest  sign a run's reports with an Ed25519 key (in-toto test-result Statement in a DSSE envelope)
  verify  check an attested run: signature, every file's digest, and the verdict it vouches for
  profile write a profile template (init) or try every role of a profile against its target (check)

Run \`conformance <command> --help\` for the options of a command.
Every command also takes --env-file FILE (repeatable): NAME=value lines, the format of a CI secret, read before
the command reads a key; a variable already set in the environment wins. Its values are never printed.
Exit codes: 0 conformant, 1 not conformant, 2 usage or setup error.`,
  run: `Usage: conformance run [options]

Without --profile, starts the reference implementation and runs every suite against it.

Options:
  --target URL        base URL of the target (overrides the profile's baseUrl; needs --profile)
  --profile FILE      target profile (fixtures/profiles/profile.schema.json); runs against its baseUrl
  --out DIR           report folder (default reports/out)
  --seed N            seed for property-based runs (replays a recorded run)
  --grep PATTERN      run only the checks whose "<file> <check id>" matches PATTERN
  --requirement ID    run only the checks that verify requirement ID (as the checks declare it)
  --waivers FILE      reviewed waiver file (fixtures/report/waivers.schema.json)
  --db KIND           database of the reference: embedded (default), container, url (DATABASE_URL)
  --reference KIND    how the reference runs: process (default, a child process on the --db database) or
                      container (reference-impl/Dockerfile beside a PostgreSQL container on one network;
                      images from CONFORMANCE_REFERENCE_IMAGE and CONFORMANCE_DB_IMAGE, see README)
  --shard I/N         run shard I of N (checks split by a hash of their id); reports go to <out>/shard-I-of-N/ (join them with \`conformance merge\`)
  --workers N         parallel Playwright workers (default 2; 1 for a target answering within 60 ms on a single core)
  --list-window N     the most encounters a whole-list check walks (default 200): a larger organization's
                      list is judged on date windows of at most N found by asking \`total\`
  --audio-expiry-wait S  the longest wait, in seconds, for an audio URL to pass its expires_at (default 120):
                      a URL living longer is judged through faults.audio_url_expires_soon, or not verified
  --property-runs N   cases each property draws beside its fixed examples (default 100; fewer trade search
                      for requests against a rate-limited target: 20 sends about 900 in a complete run)
  --in-flight N       checks running at once in each worker (default 8, 16 in a target run's one worker; a distant target costs latency ×
                      requests ÷ (workers × N))
  --max-rps N         at most N requests per second to the target, shared over the workers (a 429, or a
                      gateway's 503 with Retry-After, is always waited out as asked and the exchange retried)
  --mutants           also measure the mutation and variant scores (every check against every mutant and every
                      variant of the reference; sandbox runs only, adds a few minutes); reported in
                      conformance.json and the HTML (e.g. "173/173 mutants caught · 65/65 variants passed")
  --allow-incomplete  exit 0 on INCOMPLETE (nothing failed, but some must requirement in scope was not
                      verified); the reports still say INCOMPLETE
  --strict            a warning (a "should" of the spec not met) fails the run
  --attest KEY        sign the reports with this Ed25519 private key (PEM): writes conformance.intoto.jsonl
                      (see conformance attest --help; check it with conformance verify)
  --baseline FILE     a conformance.json of an earlier run: fail only on failures it does not list (the
                      report still says NOT CONFORMANT), and name its failures that now pass (stale: update it)
  --verbose           print every property seed as it is drawn (by default a seed is printed, with its
                      replay command, only when its property failed)
  --evidence MODE     redacted (default): patient names, dates of birth, document text, transcript turn text
                      and titles are replaced in evidence, reports and output by placeholders of the same
                      length; full: kept as received (for the sandbox's synthetic data). Keys, secrets and
                      audio URLs are redacted in both modes
  -h, --help          this help

Verdicts: CONFORMANT (every must requirement in scope verified and passed), NOT CONFORMANT (an un-waived
failing check), INCOMPLETE (nothing failed, something in scope not verified: name the roles to provide),
PARTIAL (a run narrowed by --grep, --requirement or one --shard: no conformance claim; merge all shards).
Writes <out>/conformance.json, junit.xml, conformance.html and outcomes.json.
Exit codes: 0 conformant (or partial with nothing failed, or incomplete with --allow-incomplete),
1 not conformant or incomplete, 2 usage or setup error (bad option, bad profile, a variable the profile names
that is unset, unreachable target, a target that is not this API, reference did not start).`,
  serve: `Usage: conformance serve [options]

Starts the reference implementation with deterministic seeded data and prints its guide. Ctrl-C stops it.

Options:
  --db KIND           embedded (default), container, url (DATABASE_URL)
  --reference KIND    process (default) or container (the reference and PostgreSQL as containers)
  --port N            port to listen on (default: any free port)
  --profile-out FILE  where to write the sandbox's target profile (default: a temporary file, printed)
  --ids KIND          opaque (default: the ids \`conformance client\` hands out, holding '/', '?', '#', '%',
                      spaces and non-ASCII, which a client must percent-encode) or plain (the seed's own)
  -h, --help          this help`,
  client: `Usage: conformance client [options] -- <command> [args…]
       conformance client --watch [--duration SECONDS] [options]

Judges a partner's API client from its own traffic. Starts the sandbox (the reference implementation with
deterministic data: opaque ids that must be percent-encoded, audio URLs that expire within ${CLIENT_AUDIO_TTL_SECONDS} s) behind a
recording proxy and runs <command> with CONFORMANCE_BASE_URL (the sandbox's base URL), CONFORMANCE_API_KEY
(the full key: every scope) and CONFORMANCE_PROFILE (a sandbox profile: the keys of the other roles, resource
ids) in its environment: once with normal answers only, then once more injecting the scenario's non-stop
reasons and once per declared stop reason. It judges every request and the output (keys only in
Authorization, valid queries, encoded ids, no retry storms, audio URLs used before they expire and never
printed, reason codes handled as declared) within the client's scope, and writes the reports.

Options:
  --scenario FILE     what the client uses and does (schema: fixtures/client/scenario.schema.json):
                      {"uses": ["list", "paging", "sort_order", "date_window", "encounter", "document",
                      "transcript", "audio"], "reasons": {"<reason_code>": "stop" | "retry-later" |
                      "skip-resource"}}. Requirements about parts not in "uses" are out of scope (without
                      "uses", the scope is what the traffic shows); each declared reason is answered once,
                      on a request of its route after a normal answer there, and the client's next
                      requests are held to it
  --reasons A,B,…     inject only these declared reasons (the others are reported not judged)
  --watch             record a client driven by hand: prints the base URL and profile, judges on Ctrl-C
  --duration SECONDS  with --watch: judge after this many seconds
  --timeout SECONDS   stop each run of <command> after this long; it is judged as it stands (default: 300 s for
                      the normal run, then the larger of 30 s and 3 times what the normal run took)
  --max-duration S    the whole judgment's bound (default 900): runs it would not reach are not made, and the
                      reasons they would have judged are reported not judged, saying so
  --out DIR           report folder (default reports/out)
  --db KIND           database of the sandbox: embedded (default), container, url (DATABASE_URL)
  --evidence MODE     redacted (default) or full: whether the sandbox's patient data stays in the evidence,
                      the reports and the client's echoed output (as for \`run\`)
  --allow-incomplete  exit 0 on INCOMPLETE
  --strict            a warning fails the run
  -h, --help          this help

The command's output (redacted) goes to <out>/client-output.log, not the terminal; the verdict is the last line.

Exit codes: 0 conformant, 1 not conformant or incomplete, 2 usage or setup error (the command cannot
start, or ends without a request to the API in its normal run, naming the last lines it printed; the sandbox did
not start; a bad scenario file). The command's own exit code is printed, not used.`,
  attest: `Usage: conformance attest DIR --key KEY.pem

Signs the reports in DIR (conformance.json, junit.xml, conformance.html, outcomes.json, and mutation.json and
variants.json when present): an in-toto Statement v1 with the test-result predicate (result; passed, warned
and failed check ids; configuration: the verdict, the specification, contract and catalog digests, the harness
version, the profile digest), its subjects the SHA-256 of every file, in a DSSE envelope signed with the
Ed25519 private key KEY.pem. Writes DIR/conformance.intoto.jsonl.
A key pair: openssl genpkey -algorithm ed25519 -out key.pem; openssl pkey -in key.pem -pubout -out key.pub.pem

Options:
  --key FILE          the Ed25519 private key (PEM)
  -h, --help          this help`,
  verify: `Usage: conformance verify DIR --key KEY.pub.pem

Checks DIR/conformance.intoto.jsonl: its signature with the Ed25519 public key, and the SHA-256 of every file it
covers (an edited, missing or added report file is rejected), then prints the verdict it vouches for.

Options:
  --key FILE          the Ed25519 public key (PEM) of the operator who attested the run
  -h, --help          this help

Exit codes: 0 a genuine, unedited report of a CONFORMANT run (certified); 1 rejected (a bad signature or an
edited file) or not certified (the genuine report of a NOT CONFORMANT, INCOMPLETE or PARTIAL run); 2 usage
or setup error (no attestation, an unreadable key).`,
  diff: `Usage: conformance diff OLD.json NEW.json [--markdown]

What changed between two conformance reports: checks newly failing, fixed, still failing, failing before and
not run now, newly not verified, and changes of scope (verdict, filter, out-of-scope parts, specification,
contract, catalog and profile digests, target, checks added or dropped).

Options:
  --markdown          Markdown instead of text (for a pull-request comment or a job summary)
  -h, --help          this help

Exit codes: 0 nothing newly fails, 1 a check newly fails, 2 a file that is not a conformance report.`,
  merge: `Usage: conformance merge --out DIR [options] SHARD_DIR...

Merges the outcomes.json of each shard folder into one conformance.json, junit.xml and conformance.html.

Options:
  --out DIR           folder for the merged reports (required)
  --waivers FILE      reviewed waiver file, as for \`run\`
  --profile FILE      target profile (to name the target, its out-of-scope parts, and register its secrets)
  --allow-incomplete  exit 0 on INCOMPLETE, as for \`run\`
  --strict            warnings fail the run, as for \`run\`
  -h, --help          this help

Exit codes as for \`run\`.`,
};

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(command: string, argv: string[], options: T, positionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals });
  } catch (e) {
    const err = e as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(err.message);
    if (unknown) throw new SetupError(`unknown option ${unknown[1]} (see conformance ${command} --help)`);
    const positional = /Unexpected argument '([^']+)'/.exec(err.message);
    if (positional) throw new SetupError(`unexpected argument ${positional[1]} (see conformance ${command} --help)`);
    throw new SetupError(`${err.message.split('. ')[0].replace(/\.$/, '')} (see conformance ${command} --help)`);
  }
}

/** One redacted line (record/redact.ts), for the commands that import it from here. */
export { oneLine };

export const REFERENCE_KINDS = ['process', 'container'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

/** --reference and --db together: a containerised reference always has its database in a container. */
export function referenceKind(value: string | undefined, db: string | undefined): ReferenceKind {
  const v = value ?? 'process';
  if (!(REFERENCE_KINDS as readonly string[]).includes(v)) throw new SetupError(`--reference must be one of ${REFERENCE_KINDS.join(', ')} (got ${v})`);
  if (v === 'container' && db !== undefined && db !== 'container') throw new SetupError(`--reference container runs its database in a container too (got --db ${db})`);
  return v as ReferenceKind;
}

export function dbKind(value: string | undefined): DbKind {
  const v = value ?? setting('db') ?? 'embedded';
  if (!(DB_KINDS as readonly string[]).includes(v)) throw new SetupError(`--db must be one of ${DB_KINDS.join(', ')} (got ${v})`);
  return v as DbKind;
}

/** Sets (or, for undefined, removes) one setting in a child's environment. */
/** `--evidence redacted|full` (record/redact.ts): the mode, or undefined when the flag is absent (redacted). */
export function evidenceOption(value: string | undefined): EvidenceMode | undefined {
  if (value === undefined) return undefined;
  if (!(EVIDENCE_MODES as readonly string[]).includes(value)) throw new SetupError(`--evidence must be ${EVIDENCE_MODES.join(' or ')} (got ${value})`);
  return value as EvidenceMode;
}

export function put(env: NodeJS.ProcessEnv, key: Setting, value: string | undefined): void {
  const name = settingName(key);
  if (value === undefined) delete env[name];
  else env[name] = value;
}

export function displayPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

export function tellProblems(report: ConformanceReport, outDir: string, opts: { allowIncomplete?: boolean; summaryExtra?: string[] } = {}): void {
  for (const p of report.problems) process.stderr.write(`conformance: problem: ${oneLine(p)}\n`);
  for (const w of report.warnings) process.stderr.write(`conformance: warning: ${oneLine(w)}\n`);
  if (report.verdict === 'incomplete' || (report.missingRoles ?? []).length > 0) tellMissingRoles(report, opts);
  const scores = [
    report.mutation ? `${report.mutation.caught}/${report.mutation.total} mutants caught` : '',
    report.variants ? `${report.variants.passed}/${report.variants.total} variants passed` : '',
  ].filter(Boolean);
  if (scores.length) process.stderr.write(`conformance: ${scores.join(' · ')}\n`);
  // The verdict goes to stdout, where CI captures a step's result (`… | tee -a "$GITHUB_STEP_SUMMARY"`);
  // the progress and the explanations above stay on stderr.
  // The CI's annotations and job summary first: the verdict stays the last line.
  publishToCi(report, opts.summaryExtra);
  process.stdout.write(`${verdictLine(report)}; reports in ${displayPath(outDir)}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})\n`);
}

/**
 * Tells the CI system, by its own conventions: on GitHub Actions (GITHUB_ACTIONS=true) one `::error`
 * annotation per failing check on stdout; wherever $GITHUB_STEP_SUMMARY names a file, the Markdown job
 * summary appended to it. A summary file that cannot be written is one line on stderr, never a failed run.
 */
export function publishToCi(report: ConformanceReport, extra: string[] = [], env: NodeJS.ProcessEnv = process.env): void {
  // Once per workflow run: a step whose results a later step merges and publishes (the reusable gate's run job)
  // says so with CONFORMANCE_CI_PUBLISH=off.
  if (setting('ciPublish', env) === 'off') return;
  if (env.GITHUB_ACTIONS === 'true') for (const line of githubAnnotations(report)) process.stdout.write(`${redact(line)}\n`);
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  try {
    fs.appendFileSync(file, redact(stepSummary(report, extra, env)));
  } catch (e) {
    process.stderr.write(`conformance: cannot write the job summary to $GITHUB_STEP_SUMMARY: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
  }
}

/** What the profile would need to verify the rest: one row per missing role, most checks first. */
function tellMissingRoles(report: ConformanceReport, opts: { allowIncomplete?: boolean }): void {
  const roles = report.missingRoles ?? [];
  if (roles.length > 0) {
    process.stderr.write(`conformance: not verified for want of these profile roles (checks / requirements each would unlock):\n`);
    for (const r of roles.slice(0, 25)) process.stderr.write(`conformance:   ${r.kind.padEnd(10)} ${r.role.padEnd(40)} ${String(r.checks).padStart(4)} checks ${String(r.requirements).padStart(4)} requirements\n`);
    if (roles.length > 25) process.stderr.write(`conformance:   … and ${roles.length - 25} more (see ${REPORT_FILES.json} missingRoles)\n`);
  }
  // The sender is the service's (§6.2-§6.4 sender side): never dropped from a service run, and never silently.
  const sender = roles.find((r) => r.role === 'webhook.delivery' || r.role === 'webhook.sender' || r.role === 'webhook.sandboxControlUrl');
  if (sender) process.stderr.write(`conformance: ${sender.checks} webhook sender checks not verified: set webhook.delivery "not_activated" if the deployment sends no webhooks yet (§6), or give webhook.sender so the harness can judge its deliveries (or judge them apart with \`conformance webhook sender\` and \`conformance merge\`)\n`);
  if (report.verdict === 'incomplete') {
    const out = report.coverage.mustNotVerified.length;
    process.stderr.write(`conformance: ${out} must requirement${out === 1 ? '' : 's'} in scope not verified; what would complete the run${opts.allowIncomplete ? '' : ' (--allow-incomplete exits 0 on INCOMPLETE)'}:\n`);
    for (const line of completions(report)) process.stderr.write(`conformance:   ${line}\n`);
  }
}

