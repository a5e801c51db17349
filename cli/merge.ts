// `conformance merge`: one report (JSON, JUnit, HTML) and one verdict from the outcomes of several shards, or of a
// service run and `conformance webhook sender --profile` (the sender judged apart).
import path from 'node:path';
import { loadProfile } from '../profile/profile.ts';
import { setting } from '../engine/config.ts';
import { loadWaivers, loadRunContext, type WaiverError } from '../reports/context.ts';
import { exitCodeFor, mergeOutcomes, summaryLine } from '../reports/model.ts';
import { supersedeUnverified } from '../reports/merge.ts';
import { readOutcomes, writeOutcomes, writeReports } from '../reports/write.ts';
import { prepareOutDir } from '../reports/out-dir.ts';
import { HELP, parse, SetupError, tellProblems } from './common.ts';

export async function merge(argv: string[]): Promise<number> {
  const { values: o, positionals } = parse('merge', argv, { out: { type: 'string' }, waivers: { type: 'string' }, profile: { type: 'string' }, 'allow-incomplete': { type: 'boolean' }, strict: { type: 'boolean' } }, true);
  if (o.help) {
    process.stdout.write(`${HELP.merge}\n`);
    return 0;
  }
  if (o.out === undefined) throw new SetupError('merge needs --out DIR (see conformance merge --help)');
  if (positionals.length === 0) throw new SetupError('merge needs at least one shard folder (see conformance merge --help)');
  const waiversPath = o.waivers ?? setting('waivers');
  if (waiversPath) {
    try {
      loadWaivers(path.resolve(waiversPath));
    } catch (e) {
      throw new SetupError((e as WaiverError).message);
    }
  }
  if (o.profile !== undefined) loadProfile(path.resolve(o.profile), process.env);
  const parts = positionals.map((dir) => {
    try {
      return readOutcomes(path.resolve(dir));
    } catch (e) {
      throw new SetupError((e as Error).message);
    }
  });
  const outDir = path.resolve(o.out);
  const merged = mergeOutcomes(supersedeUnverified(parts));
  const ctx = loadRunContext({ outDir, profilePath: o.profile !== undefined ? path.resolve(o.profile) : undefined, waiversPath: waiversPath ? path.resolve(waiversPath) : undefined, strict: o.strict === true });
  if (!ctx.target && merged.target) ctx.target = merged.target;
  prepareOutDir(outDir);
  writeOutcomes(outDir, merged);
  const report = writeReports(outDir, merged, ctx);
  process.stdout.write(`${summaryLine(report.summary)}\n`);
  tellProblems(report, outDir, { allowIncomplete: o['allow-incomplete'] });
  return exitCodeFor(report, { allowIncomplete: o['allow-incomplete'] });
}
