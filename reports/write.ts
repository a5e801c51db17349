// Writes every report format for one run into an output folder: conformance.json, junit.xml and
// conformance.html. Everything written passes through the one redaction layer: the report object is
// deep-redacted string by string (`redactValue`) before any rendering, so no format can leak what
// another hid; the rendered XML and HTML then pass through `redactSecrets()` once more as text. JSON is not
// redacted again as text: a pattern run over escaped JSON can eat an escape and break the file.
import fs from 'node:fs';
import path from 'node:path';
import { redactSecrets, redactValue } from '../record/redact.ts';
import { buildReport, sanitizeEvidence, type ConformanceReport, type OutcomesFile, type RunContext } from './model.ts';
import { toJunit } from './junit.ts';
import { toHtml } from './html.ts';

/** The files of a run's report folder. `attestation` is written only by `run --attest`/`attest`; a new run removes an old one. */
export const REPORT_FILES = { json: 'conformance.json', junit: 'junit.xml', html: 'conformance.html', outcomes: 'outcomes.json', attestation: 'conformance.intoto.jsonl' } as const;

function writeRedacted(file: string, text: string): void {
  // The patient values went in the value pass: as text, a word once met as a patient value would also rename
  // check ids and spec quotes in the markup, so only secrets (a rendering may show them another way) go here.
  fs.writeFileSync(file, redactSecrets(text));
}

function writeJson(file: string, value: unknown): void {
  writeRedactedJson(file, redactValue(value));
}

/** For a value that is already the output of `redactValue` (a second pass would change nothing). */
function writeRedactedJson(file: string, value: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdirSync never returns for a path under /proc
 * (seen with Node 24), and a report folder there must end in a clear error, not a hang.
 */
export function makeDir(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) fs.mkdirSync(d);
}

/** Builds the report from outcomes and context and writes the three formats. Returns the report. */
export function writeReports(outDir: string, outcomes: OutcomesFile, ctx: RunContext): ConformanceReport {
  const report = redactValue(buildReport(outcomes, ctx));
  makeDir(outDir);
  writeRedactedJson(path.join(outDir, REPORT_FILES.json), { $schema: 'https://conformance.local/conformance-report.schema.json', ...report });
  writeRedacted(path.join(outDir, REPORT_FILES.junit), toJunit(report));
  writeRedacted(path.join(outDir, REPORT_FILES.html), toHtml(report));
  return report;
}

export function writeOutcomes(outDir: string, outcomes: OutcomesFile): void {
  makeDir(outDir);
  writeJson(path.join(outDir, REPORT_FILES.outcomes), { ...outcomes, checks: outcomes.checks.map((c) => ({ ...c, evidence: sanitizeEvidence(c.evidence) })) });
}

export function readOutcomes(dir: string): OutcomesFile {
  const file = path.join(dir, REPORT_FILES.outcomes);
  let data: OutcomesFile;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8')) as OutcomesFile;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(code ? `cannot read ${file}: ${code}` : `${file} is not valid JSON`);
  }
  if (!Array.isArray(data.checks)) throw new Error(`${file} has no checks array`);
  return data;
}
