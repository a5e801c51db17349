// The reference implementation under load and faults (bench/load-lib.ts), as a script outside npm test:
//   node_modules/.bin/node bench/load.ts [--requests 100000] [--concurrency 64] [--seed 1] [--out reports/out/load.json]
// Prints the figures as JSON on stdout (progress on stderr), writes them to --out, and exits 1 when any
// response broke the contract or the isolation rule, the outage was not answered 503, the service did
// not recover, or a restart lost rows; 2 on a usage or setup error.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad, problems, type LoadFigures } from './load-lib.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

function positive(name: string, v: string): number {
  if (!/^[1-9][0-9]{0,7}$/.test(v)) throw new Error(`--${name} must be a positive integer (got ${v})`);
  return Number(v);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ options: { requests: { type: 'string', default: '100000' }, concurrency: { type: 'string', default: '64' }, seed: { type: 'string', default: '1' }, out: { type: 'string' } }, strict: true }));
  } catch (e) {
    process.stderr.write(`load: ${(e as Error).message}\n`);
    return 2;
  }
  let requests: number;
  let concurrency: number;
  let seed: number;
  try {
    requests = positive('requests', values.requests);
    concurrency = positive('concurrency', values.concurrency);
    seed = positive('seed', values.seed);
  } catch (e) {
    process.stderr.write(`load: ${(e as Error).message}\n`);
    return 2;
  }
  const out = path.resolve(values.out ?? path.join(ROOT, 'reports/out/load.json'));
  let figures: LoadFigures;
  try {
    figures = await runLoad({ requests, concurrency, seed, log: (l) => process.stderr.write(`load: ${l}\n`) });
  } catch (e) {
    process.stderr.write(`load: setup failed: ${(e as Error).message.split('\n')[0]}\n`);
    return 2;
  }
  const found = problems(figures);
  const report = { command: `node_modules/.bin/node bench/load.ts --requests ${requests} --concurrency ${concurrency} --seed ${seed}`, ...figures, problems: found };
  const text = `${JSON.stringify(report, null, 2)}\n`;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  process.stdout.write(text);
  process.stderr.write(`load: ${found.length === 0 ? 'OK' : `FAILED: ${found.join(' | ')}`}; figures in ${path.relative(process.cwd(), out)}\n`);
  return found.length === 0 ? 0 : 1;
}

process.exit(await main());
