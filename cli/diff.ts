// `conformance diff OLD.json NEW.json`: what changed between two runs' reports (checks newly failing, fixed,
// still failing, newly not verified, changes of scope), as text or, with --markdown, Markdown. Exit 1 when a
// check newly fails (a regression), 0 otherwise; 2 for a file that is not a conformance report. Also the
// reader of `run --baseline` (readComparableReport).
import fs from 'node:fs';
import { diffMarkdown, diffReports, diffText, type ComparableReport } from '../reports/diff.ts';
import { displayPath, HELP, parse, SetupError } from './common.ts';

/** Reads a conformance.json (or any report with a verdict and checks); anything else is a setup error naming the file. */
export function readComparableReport(file: string, what: string): ComparableReport {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SetupError(code ? `cannot read ${what} ${displayPath(file)}: ${code}` : `${what} ${displayPath(file)} is not valid JSON`);
  }
  const r = data as Partial<ComparableReport> | null;
  const valid = !!r && typeof r === 'object' && typeof r.verdict === 'string' && Array.isArray(r.checks) && !!r.run && typeof r.run === 'object'
    && r.checks.every((c) => c && typeof c.id === 'string' && typeof c.outcome === 'string' && Array.isArray(c.requirements));
  if (!valid) throw new SetupError(`${what} ${displayPath(file)} is not a conformance report (conformance.json: verdict, run, checks)`);
  return r as ComparableReport;
}

export async function diff(argv: string[]): Promise<number> {
  const { values: o, positionals } = parse('diff', argv, { markdown: { type: 'boolean' } }, true);
  if (o.help) {
    process.stdout.write(`${HELP.diff}\n`);
    return 0;
  }
  if (positionals.length !== 2) throw new SetupError('diff needs two reports: conformance diff OLD.json NEW.json (see conformance diff --help)');
  const [oldFile, newFile] = positionals;
  const d = diffReports(readComparableReport(oldFile, 'report'), readComparableReport(newFile, 'report'));
  const names = { old: displayPath(oldFile), new: displayPath(newFile) };
  process.stdout.write(o.markdown ? diffMarkdown(d, names) : diffText(d, names));
  return d.newlyFailing.length > 0 ? 1 : 0;
}
