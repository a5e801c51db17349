// A run's report folder attested on disk: its files signed (reports/attest.ts), and an attestation checked against them (signature, every digest, what it certifies).
import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import { attestedVerdict, openEnvelope, sha256, signEnvelope, statementFor, type Envelope, type Statement } from './attest.ts';
import type { ConformanceReport } from './model.ts';
import { readReport } from './out-dir.ts';
import { REPORT_FILES } from './write.ts';

/** Files of a run an attestation covers when present: the reports and the scores they were built from. */
const ATTESTED = [REPORT_FILES.json, REPORT_FILES.junit, REPORT_FILES.html, REPORT_FILES.outcomes, 'mutation.json', 'variants.json'];

/** Signs the reports in `dir` with `key`: writes the envelope and returns its path; undefined when the folder holds no readable report. */
export function attestDir(dir: string, key: KeyObject): string | undefined {
  const report = readReport(dir);
  if (!report) return undefined;
  const files: Record<string, Buffer> = {};
  for (const name of ATTESTED) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) files[name] = fs.readFileSync(file);
  }
  // The statement is built from the very bytes it covers.
  const attested = JSON.parse(files[REPORT_FILES.json].toString('utf8')) as ConformanceReport;
  const envelope = signEnvelope(statementFor(attested, files), key);
  const out = path.join(dir, REPORT_FILES.attestation);
  fs.writeFileSync(out, `${JSON.stringify(envelope)}\n`);
  return out;
}

export type AttestationCheck =
  | { rejected: string }
  | { statement: Statement; verdict: ReturnType<typeof attestedVerdict>; certified: boolean; sandbox: boolean; why?: string };

/**
 * What an attestation (`shownFile`: how its file is named in a rejection) says of the folder `dir`: rejected (a bad
 * signature, a file outside the folder, a file missing, changed or added), or genuine, with the verdict it vouches for,
 * whether that certifies conformance (a CONFORMANT run only), whether it is of the bundled sandbox, and why not.
 */
export function checkAttestation(dir: string, envelope: Envelope, key: KeyObject, shownFile: string): AttestationCheck {
  let statement: Statement;
  try {
    statement = openEnvelope(envelope, key);
  } catch (e) {
    return { rejected: `the attestation ${shownFile} does not verify: ${(e as Error).message}` };
  }
  const changed: string[] = [];
  for (const s of statement.subject) {
    const name = s.name ?? '';
    // A subject names a file of this folder, never a path elsewhere.
    if (!name || name !== path.basename(name)) return { rejected: `the attestation names a file outside the folder: ${name}` };
    const f = path.join(dir, name);
    if (!fs.existsSync(f)) changed.push(`${name} is missing`);
    else if (sha256(fs.readFileSync(f)) !== s.digest?.sha256) changed.push(`${name} was changed after it was attested`);
  }
  if (!statement.subject.some((s) => s.name === REPORT_FILES.json)) changed.push(`${REPORT_FILES.json} is not among the attested files`);
  for (const name of ATTESTED) if (fs.existsSync(path.join(dir, name)) && !statement.subject.some((s) => s.name === name)) changed.push(`${name} was added after the attestation`);
  if (changed.length) return { rejected: changed.join('; ') };
  const v = attestedVerdict(statement);
  // What the attested report itself says of the run: whether it finished, whether anything failed, what it judged.
  let report: { run?: { sandbox?: boolean }; summary?: { fail?: number }; problems?: string[] } = {};
  try {
    report = JSON.parse(fs.readFileSync(path.join(dir, REPORT_FILES.json), 'utf8'));
  } catch { /* intact but unreadable: judged by its verdict alone */ }
  const sandbox = report.run?.sandbox === true;
  if (v.verdict === 'conformant') return { statement, verdict: v, certified: true, sandbox };
  const unfinished = (report.problems ?? []).find((p) => /the run ended (interrupted|timedout)/.test(p));
  const why: Record<string, string> = {
    partial: 'a PARTIAL run (narrowed by a filter or one shard) makes no conformance claim',
    incomplete: 'an INCOMPLETE run verified only part of what is in scope',
    not_conformant: unfinished && (report.summary?.fail ?? 0) === 0
      ? `the run did not finish (${unfinished.replace(/^the run ended /, '').replace(/; .*$/, '')}): it found no non-conformance, and claims none`
      : 'the run found a non-conformance',
  };
  return { statement, verdict: v, certified: false, sandbox, why: why[v.verdict] ?? `the attested verdict is ${v.label}` };
}
