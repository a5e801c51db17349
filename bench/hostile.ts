// `npm run bench` part `hostile`: the WHOLE conformance run (every check, not a slice) against each hostile
// target of tests/hostile/servers.ts (hang, drip, 50 MB bodies declared or streamed, reset, invalid JSON, an
// empty 200, a redirect loop, an HTML 500), timed end to end with its exit code and the harness's peak memory.
// The robustness tests (tests/hostile-targets.spec.ts) judge what such a run says; this only measures how long
// it takes to say it. The profile gives the roles most checks need, at the default request timeout (10 s).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOSTILE_NAMES, startHostile, type HostileName } from '../tests/hostile/servers.ts';
import { rssSampler } from './phases.ts';

export interface HostileRun {
  name: HostileName;
  wallS: number;
  exitCode: number | null;
  counts: string | null;
  /** The line a setup error ends with (exit 2), or the verdict line. */
  last: string;
  peakRssMiB: number | null;
  peakProcessRssMiB: number | null;
}

function profile(dir: string): string {
  const enc = 'enc-hostile-own';
  const file = path.join(dir, 'hostile.profile.json');
  fs.writeFileSync(file, JSON.stringify({
    name: 'bench-hostile',
    baseUrl: 'http://127.0.0.1:9', // replaced by --target
    credentials: { full: { key: 'k_live_bench_hostile_full_5d1c' }, invalid_key: { key: 'k_live_bench_hostile_invalid_9a2e' } },
    resources: {
      own_encounter: { encounter_id: enc },
      clinical_document: { encounter_id: enc, document_id: 'doc-hostile-clinical' },
      ambient_transcript_with_audio: { encounter_id: enc, document_id: 'doc-hostile-ambient' },
    },
  }), { mode: 0o600 });
  return file;
}

export async function hostile(root: string, log: (m: string) => void, names: readonly HostileName[] = HOSTILE_NAMES): Promise<HostileRun[]> {
  const runs: HostileRun[] = [];
  for (const name of names) {
    const server = await startHostile(name);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cec-hostile-${name}-`));
    try {
      const env = { ...process.env };
      for (const k of Object.keys(env)) if (k.startsWith('CONFORMANCE_')) delete env[k];
      const t0 = performance.now();
      let text = '';
      let peak = { sumMiB: null as number | null, maxMiB: null as number | null };
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [path.join(root, 'cli/conformance.mjs'), 'run', '--target', server.baseUrl, '--profile', profile(dir), '--out', path.join(dir, 'out')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
        const sampler = rssSampler(() => child.pid);
        child.stdout.on('data', (d: Buffer) => (text += d.toString('utf8')));
        child.stderr.on('data', (d: Buffer) => (text += d.toString('utf8')));
        child.on('close', (c) => {
          peak = sampler.stop();
          resolve(c);
        });
      });
      const wallS = Math.round((performance.now() - t0) / 10) / 100;
      const lines = text.trim().split('\n');
      const run: HostileRun = {
        name, wallS, exitCode: code, counts: /conformance: ([0-9]+ passed, [0-9]+ failed[^\n]*)/.exec(text)?.[1] ?? null,
        last: (lines.filter((l) => l.startsWith('conformance: ')).slice(-1)[0] ?? lines.slice(-1)[0] ?? '').slice(0, 240), peakRssMiB: peak.sumMiB, peakProcessRssMiB: peak.maxMiB,
      };
      log(`hostile: ${name}: ${run.wallS} s, exit ${run.exitCode}, ${run.counts ?? run.last}, peak ${run.peakRssMiB} MiB (largest process ${run.peakProcessRssMiB} MiB)`);
      runs.push(run);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return runs;
}
