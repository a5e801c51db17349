// The report folder on disk: made ready for a run (writable, the previous run's reports removed) and its conformance.json read back.
import fs from 'node:fs';
import path from 'node:path';
import { SetupError } from '../engine/errors.ts';
import type { ConformanceReport } from './model.ts';
import { makeDir, REPORT_FILES } from './write.ts';

/** The folder's conformance.json, or undefined when there is none (or it is not JSON). */
export function readReport(outDir: string): ConformanceReport | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, REPORT_FILES.json), 'utf8')) as ConformanceReport;
  } catch {
    return undefined;
  }
}

/** Creates the report folder and removes the previous run's reports; a folder that cannot be written is a SetupError. */
export function prepareOutDir(outDir: string): void {
  try {
    makeDir(outDir);
    clearReports(outDir);
    const probeFile = path.join(outDir, `.write-probe-${process.pid}`);
    fs.writeFileSync(probeFile, '');
    fs.rmSync(probeFile);
  } catch (e) {
    throw new SetupError(`cannot write reports to ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export function clearReports(outDir: string): void {
  for (const f of Object.values(REPORT_FILES)) fs.rmSync(path.join(outDir, f), { force: true });
}
