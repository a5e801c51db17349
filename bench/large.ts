// `npm run bench` part `large`: the cost of a target run as the target's data grows. The reference runs on a
// cluster this script starts (`--db url`), behind a counting proxy; `conformance run --profile P --target
// <proxy>` is run on the seeded data, then again after BENCH_LARGE (default 100,000) encounters were added to the
// full key's organization by the bench's bulk insert (bench/dataset.ts). Each run reports its verdict line, wall
// time, CPU (user + system of the whole process tree, from bash's `time`), requests through the proxy and peak
// memory (largest process and the whole tree), and the ratios large/seeded.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { startCluster } from '../platform/embedded-cluster.ts';
import { bulkInsert } from './dataset.ts';
import { delayProxy } from './distant.ts';
import { rssSampler } from './phases.ts';

export interface LargeRun {
  encounters: number;
  wallS: number;
  cpuS: number | null;
  requests: number;
  peakProcessRssMiB: number | null;
  peakRssMiB: number | null;
  exitCode: number | null;
  verdict: string | null;
  counts: string | null;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function runOnce(root: string, profile: string, target: string): Promise<Omit<LargeRun, 'encounters' | 'requests'>> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-bench-large-'));
  const env: NodeJS.ProcessEnv = { ...process.env, TIMEFORMAT: 'cpu %U %S' };
  for (const k of Object.keys(env)) if (k.startsWith('CONFORMANCE_')) delete env[k];
  const cli = [process.execPath, path.join(root, 'cli/conformance.mjs'), 'run', '--profile', profile, '--target', target, '--allow-incomplete', '--out', out];
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `time ${cli.map((a) => `'${a}'`).join(' ')}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const sampler = rssSampler(() => child.pid);
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => {
      const peak = sampler.stop();
      fs.rmSync(out, { recursive: true, force: true });
      const cpu = /cpu ([0-9.]+) ([0-9.]+)/.exec(text);
      resolve({
        wallS: round((performance.now() - t0) / 1000),
        cpuS: cpu ? round(Number(cpu[1]) + Number(cpu[2])) : null,
        peakProcessRssMiB: peak.maxMiB,
        peakRssMiB: peak.sumMiB,
        exitCode: code,
        verdict: /conformance: ((?:CONFORMANT|NOT CONFORMANT|INCOMPLETE|PARTIAL)[^\n]*)/.exec(text)?.[1] ?? null,
        counts: /conformance: ([0-9]+ passed, [0-9]+ failed[^\n]*)/.exec(text)?.[1] ?? null,
      });
    });
  });
}

export async function large(root: string, log: (m: string) => void, extra = Number(process.env.BENCH_LARGE ?? 100_000)): Promise<{ seeded: LargeRun; large: LargeRun; ratios: Record<string, number | null> }> {
  const cluster = await startCluster({ name: 'cec-bench-large-pg', settings: { synchronous_commit: 'off' } });
  const db = new pg.Client({ connectionString: cluster.url });
  let ref: ReferenceHandle | undefined;
  let proxy: Awaited<ReturnType<typeof delayProxy>> | undefined;
  try {
    process.env.DATABASE_URL = cluster.url;
    ref = await startReference({ db: 'url', timeoutMs: 120_000 });
    proxy = await delayProxy(ref.baseUrl, 0);
    const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { resources: Record<string, { encounter_id: string }> };
    await db.connect();
    const org = (await db.query<{ organization_id: string }>('SELECT organization_id FROM encounters WHERE encounter_id = $1', [profile.resources.own_encounter.encounter_id])).rows[0].organization_id;
    const measure = async (encounters: number): Promise<LargeRun> => {
      const before = proxy!.requests();
      const r = await runOnce(root, ref!.profilePath, proxy!.url);
      const run = { encounters, requests: proxy!.requests() - before, ...r };
      log(`large: +${encounters} encounters: ${run.wallS} s wall, ${run.cpuS} s CPU, ${run.requests} requests, largest process ${run.peakProcessRssMiB} MiB; ${run.verdict ?? run.counts}`);
      return run;
    };
    const seeded = await measure(0);
    const insertS = await bulkInsert(db, org, 1, extra);
    log(`large: ${extra} encounters added to ${org} in ${insertS} s`);
    const big = await measure(extra);
    const ratio = (k: 'wallS' | 'cpuS' | 'requests' | 'peakProcessRssMiB') => (big[k] !== null && seeded[k] ? round(Number(big[k]) / Number(seeded[k])) : null);
    return { seeded, large: big, ratios: { wall: ratio('wallS'), cpu: ratio('cpuS'), requests: ratio('requests'), peakProcessRss: ratio('peakProcessRssMiB') } };
  } finally {
    await proxy?.close();
    await ref?.stop();
    await db.end().catch(() => undefined);
    await cluster.stop();
  }
}
