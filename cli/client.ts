// `conformance client -- <command> [args…]`: a partner's API client judged from its own traffic. This command
// reads the options (the scenario, the reasons to inject, the bounds) and prints; engine/client-run.ts starts the
// sandbox behind the recording proxy, runs the partner's command (normal answers, then the injected reasons, then
// each declared stop), judges its traffic (engine/client-judge.ts) and writes the reports with the subject `client`.
// `--watch` records a client the partner drives by hand instead, until Ctrl-C or --duration. The command's
// own exit status (of its normal run) is reported beside the verdict.
import path from 'node:path';
import { redact, setEvidenceMode } from '../record/redact.ts';
import { parseReasonsOption, planReasons, type ReasonPlan } from '../engine/client-runs.ts';
import { DEFAULT_MAX_DURATION_S, runClientJudgment } from '../engine/client-run.ts';
import { loadScenario as readScenario, ScenarioError, type Scenario } from '../checks/client/scenario.ts';
import { exitCodeFor, summaryLine, verdictLine } from '../reports/model.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { prepareOutDir } from '../reports/out-dir.ts';
import { CLIENT_AUDIO_TTL_SECONDS, dbKind, DEFAULT_OUT, displayPath, evidenceOption, HELP, parse, publishToCi, SetupError } from './common.ts';

/** Reads and checks a scenario file (fixtures/client/scenario.schema.json): a bad one is a setup error. */
export function loadScenario(file: string): Scenario {
  try {
    return readScenario(file);
  } catch (e) {
    if (e instanceof ScenarioError) throw new SetupError(e.message);
    throw e;
  }
}

const seconds = (v: string | undefined, name: string, max: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,6}$/.test(v) || Number(v) < 1 || Number(v) > max) throw new SetupError(`--${name} must be 1..${max} seconds (got ${v})`);
  return Number(v);
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export async function client(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values: o } = parse('client', own, {
    scenario: { type: 'string' }, reasons: { type: 'string' }, watch: { type: 'boolean' }, duration: { type: 'string' }, timeout: { type: 'string' }, 'max-duration': { type: 'string' },
    out: { type: 'string' }, db: { type: 'string' }, 'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' }, evidence: { type: 'string' },
  });
  if (o.help) {
    process.stdout.write(`${HELP.client}\n`);
    return 0;
  }
  setEvidenceMode(evidenceOption(o.evidence));
  if (o.watch && command.length) throw new SetupError('use either --watch or -- <command>, not both');
  if (!o.watch && command.length === 0) throw new SetupError('missing the client command: conformance client -- <command> [args…] (or --watch)');
  if (o.duration !== undefined && !o.watch) throw new SetupError('--duration applies to --watch only');
  const durationS = seconds(o.duration, 'duration', 86_400);
  const timeoutGiven = seconds(o.timeout, 'timeout', 86_400);
  const maxDurationS = seconds(o['max-duration'], 'max-duration', 86_400) ?? DEFAULT_MAX_DURATION_S;
  const scenario = o.scenario !== undefined ? loadScenario(path.resolve(o.scenario)) : null;
  if (o.reasons !== undefined && !scenario) throw new SetupError('--reasons narrows the reasons of a scenario: give --scenario FILE');
  let only: string[] | null = null;
  try {
    only = o.reasons !== undefined ? parseReasonsOption(o.reasons, scenario!.reasons) : null;
  } catch (e) {
    throw new SetupError((e as Error).message);
  }
  const plan: ReasonPlan = planReasons(scenario?.reasons ?? {}, only);
  const db = dbKind(o.db);
  const outDir = path.resolve(o.out ?? DEFAULT_OUT);
  prepareOutDir(outDir);

  const run = await runClientJudgment({
    command, watch: o.watch === true, durationS, timeoutS: timeoutGiven, maxDurationS, scenario, plan, db, audioTtlS: CLIENT_AUDIO_TTL_SECONDS, outDir, strict: o.strict === true,
    say: (text) => process.stderr.write(text), shown: displayPath,
  });
  const { report } = run;
  for (const c of report.checks) if (c.outcome === 'fail' || c.outcome === 'warning') process.stdout.write(redact(`${c.outcome.toUpperCase()} ${c.id}: ${c.detail ?? ''}\n`));
  // Every check not verified, with its reason and what would let it judge.
  for (const c of report.checks) {
    if (c.outcome !== 'not_verified') continue;
    process.stdout.write(redact(`NOT VERIFIED ${c.id}: ${c.detail ?? ''}${run.unlock[c.id] ? ` — would judge with: ${run.unlock[c.id]}` : ''}\n`));
  }
  for (const w of report.warnings) process.stderr.write(`conformance: warning: ${redact(w)}\n`);
  process.stderr.write(`conformance: recorded ${plural(run.requests, 'API request')} and ${plural(run.others, 'other')}\n`);
  if (!o.watch) {
    const parts = ['1 with normal answers only', run.kinds.nonStop ? `${run.kinds.nonStop} injecting the non-stop reasons` : '', run.kinds.stop ? `${run.kinds.stop} with one stop reason each, on each route group used` : ''].filter(Boolean);
    process.stderr.write(`conformance: ${plural(run.runs, 'run')} of the client command in ${run.elapsedS.toFixed(1)} s (${parts.join(', ')})\n`);
  }
  const { finished } = run;
  if (finished) process.stderr.write(`conformance: the client command ${finished.timedOut ? 'was stopped at its time limit' : finished.signal ? `ended on ${finished.signal}` : `exited with code ${finished.code}`} (run 1, normal answers); its output (redacted): ${displayPath(run.logFile)}\n`);
  process.stderr.write(`${summaryLine(report.summary)}\n`);
  publishToCi(report);
  process.stdout.write(`${redact(verdictLine(report))}; reports in ${displayPath(outDir)}/ (${REPORT_FILES.html}, ${REPORT_FILES.json}, ${REPORT_FILES.junit})\n`);
  return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] === true });
}
