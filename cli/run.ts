// `conformance run`, the main job: start the reference (sandbox) or reach a target named by a profile (after the
// preflight of engine/preflight.ts), run the conformance project (suites and properties) through Playwright, and
// decide the exit code from conformance.json. The implementation is reached only as a child process.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareProfileValidation, profileDigest } from '../profile/profile.ts';
import { markProfileChecked } from '../engine/plan.ts';
import { writeReady } from '../engine/ready.ts';
import { checksByRequirement } from '../engine/declared-checks.ts';
import { answersNear, ONE_WORKER_LANES, preflightTarget, targetProfile, watchesDeploymentSender } from '../engine/preflight.ts';
import { PLAYWRIGHT_CLI, runPlaywright } from '../engine/playwright/runner-process.ts';
import { startReference } from '../engine/reference/process.ts';
import { CALLBACK_HOST, startContainerReference } from '../engine/reference/container.ts';
import { loadWaivers, loadCatalog, type WaiverError } from '../reports/context.ts';
import { exitCodeFor } from '../reports/model.ts';
import { baselineGate, compareToBaseline, type BaselineComparison } from '../reports/diff.ts';
import { mdText } from '../reports/summary.ts';
import { clearReports, prepareOutDir, readReport } from '../reports/out-dir.ts';
import { readComparableReport } from './diff.ts';
import { attestFolder, loadKey } from './attest.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { setting, settingName } from '../engine/config.ts';
import { dbKind, DEFAULT_OUT, evidenceOption, referenceKind, put, displayPath, HELP, parse, ROOT, SetupError, tellProblems } from './common.ts';

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
  // Workers: two (the runner's default, playwright.config.ts) unless --workers or CONFORMANCE_WORKERS says, and one for
  // a near target when this process has a single core. A worker loads Playwright, every check file and the contract's
  // validators (about 2 s of CPU) before its first check; one worker with twice the checks in flight (ONE_WORKER_LANES)
  // saves that, but on two idle cores its checks' CPU runs on one of them: sandbox target runs alternating, one worker
  // 7.0 s CPU and 8.2 s wall (medians of 5), two workers 8.9 s CPU and 6.6 s wall; on a single core (taskset) one
  // worker 10.7 s CPU and 14.8 s wall, two 14.2 s and 19.6 s (medians of 3) (docs/performance.md). A distant target
  // keeps two: one worker would run the properties one after another, each waiting on the distance. A watched
  // deployment sender keeps two: its scenarios hold their worker for minutes while the other checks run in the second
  // one (watchesDeploymentSender). The reference's run keeps two: its own start and PostgreSQL's overlap the second's.
  const chosenWorkers = o.workers ?? setting('workers');
  const oneWorker = chosenWorkers === undefined && o.profile !== undefined && os.availableParallelism() < 2
    && !watchesDeploymentSender(path.resolve(o.profile)) && await answersNear(path.resolve(o.profile), o.target);
  const workers = Number(chosenWorkers ?? (oneWorker ? 1 : 2));
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
      const chosen = targetProfile(file, o.target);
      profilePath = chosen.profilePath;
      if (chosen.cleanup) cleanups.push(chosen.cleanup);
      prepareOutDir(outDir);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-target-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      readyFile = path.join(dir, 'ready');
      const copy = profilePath;
      targetGate = async () => {
        const adviseLanes = o['in-flight'] === undefined && setting('inFlight') === undefined;
        const { answeredInMs, lanes } = await preflightTarget({ file, shownFile: displayPath(file), profilePath: copy, target: o.target, adviseLanes, workers });
        if (lanes === undefined) return adviseLanes && workers === 1 ? `ready in-flight=${ONE_WORKER_LANES}` : 'ready';
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
    // Two workers (the runner's default, playwright.config.ts) for the reference and a target, unless `workers` above says.
    // A third was chosen for the reference when each check was its own test and the waits were sequential; with
    // batches the run is CPU-bound on this two-core machine, and a third worker only adds its own start (about a
    // second of CPU): cold runs alternating, 2 workers 8.8-10.3 s, 3 workers 9.6-11.5 s.
    if (chosenWorkers !== undefined || oneWorker) args.push(`--workers=${workers}`);
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
    // The runner's processes plan their tests for this many workers (engine/planner.ts: with one, the waits share a test).
    put(env, 'workers', String(workers));
    // --max-rps N: an explicit pace for a target behind a rate limiter, shared out over the workers.
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
    if (attestKey) process.stderr.write(`conformance: attested the reports: ${displayPath(attestFolder(outDir, attestKey))}\n`);
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
