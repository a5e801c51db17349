// `conformance attest DIR --key KEY` signs a run's reports (also `run --attest KEY`); `conformance verify DIR
// --key PUB` checks the signature and every report file's digest and prints the verdict the attestation vouches
// for. verify exits 0 only for an intact attestation of a CONFORMANT run: an edited or missing file, a foreign
// key or a forged envelope is REJECTED (exit 1), and a genuine NOT CONFORMANT, INCOMPLETE or PARTIAL run is
// never called certified (exit 1, one clear line). The envelope: <DIR>/conformance.intoto.jsonl (reports/attest.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import { attestedVerdict, keyId, openEnvelope, readEd25519Key, sha256, signEnvelope, statementFor, type Envelope } from '../reports/attest.ts';
import type { ConformanceReport } from '../reports/model.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { displayPath, HELP, parse, readReport, SetupError } from './common.ts';

/** Files of a run an attestation covers when present: the reports and the scores they were built from. */
const ATTESTED = [REPORT_FILES.json, REPORT_FILES.junit, REPORT_FILES.html, REPORT_FILES.outcomes, 'mutation.json', 'variants.json'];

/** Reads the operator's Ed25519 key file; a setup error naming the file otherwise. */
export function loadKey(file: string, kind: 'private' | 'public', option: string): KeyObject {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new SetupError(`cannot read ${option} ${displayPath(file)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return readEd25519Key(pem, kind);
  } catch (e) {
    throw new SetupError(`${option} ${displayPath(file)} is ${(e as Error).message} (an Ed25519 ${kind} key in PEM: openssl genpkey -algorithm ed25519)`);
  }
}

/** Signs the reports in `dir` with `key`: writes the envelope and returns its path. */
export function attestDir(dir: string, key: KeyObject): string {
  const report = readReport(dir);
  if (!report) throw new SetupError(`${displayPath(dir)} holds no readable ${REPORT_FILES.json}: nothing to attest`);
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

export async function attest(argv: string[]): Promise<number> {
  const { values: o, positionals } = parse('attest', argv, { key: { type: 'string' } }, true);
  if (o.help) {
    process.stdout.write(`${HELP.attest}\n`);
    return 0;
  }
  if (positionals.length !== 1 || o.key === undefined) throw new SetupError('attest needs a report folder and a key: conformance attest DIR --key KEY.pem (see conformance attest --help)');
  const key = loadKey(path.resolve(o.key), 'private', '--key');
  const out = attestDir(path.resolve(positionals[0]), key);
  process.stdout.write(`conformance: attested ${displayPath(out)} (Ed25519 key ${keyId(key).slice(0, 16)}…)\n`);
  return 0;
}

export async function verify(argv: string[]): Promise<number> {
  const { values: o, positionals } = parse('verify', argv, { key: { type: 'string' } }, true);
  if (o.help) {
    process.stdout.write(`${HELP.verify}\n`);
    return 0;
  }
  if (positionals.length !== 1 || o.key === undefined) throw new SetupError('verify needs a report folder and a public key: conformance verify DIR --key KEY.pub.pem (see conformance verify --help)');
  const dir = path.resolve(positionals[0]);
  const key = loadKey(path.resolve(o.key), 'public', '--key');
  const file = path.join(dir, REPORT_FILES.attestation);
  let envelope: Envelope;
  try {
    envelope = JSON.parse(fs.readFileSync(file, 'utf8').trim()) as Envelope;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SetupError(code ? `cannot read ${displayPath(file)}: ${code} (was the run attested? conformance attest DIR --key KEY)` : `${displayPath(file)} is not a DSSE envelope (not JSON)`);
  }
  const reject = (why: string) => {
    process.stdout.write(`conformance: REJECTED: ${why}\n`);
    return 1;
  };
  let statement;
  try {
    statement = openEnvelope(envelope, key);
  } catch (e) {
    return reject(`the attestation ${displayPath(file)} does not verify: ${(e as Error).message}`);
  }
  const changed: string[] = [];
  for (const s of statement.subject) {
    const name = s.name ?? '';
    // A subject names a file of this folder, never a path elsewhere.
    if (!name || name !== path.basename(name)) return reject(`the attestation names a file outside the folder: ${name}`);
    const f = path.join(dir, name);
    if (!fs.existsSync(f)) changed.push(`${name} is missing`);
    else if (sha256(fs.readFileSync(f)) !== s.digest?.sha256) changed.push(`${name} was changed after it was attested`);
  }
  if (!statement.subject.some((s) => s.name === REPORT_FILES.json)) changed.push(`${REPORT_FILES.json} is not among the attested files`);
  for (const name of ATTESTED) if (fs.existsSync(path.join(dir, name)) && !statement.subject.some((s) => s.name === name)) changed.push(`${name} was added after the attestation`);
  if (changed.length) return reject(changed.join('; '));
  const v = attestedVerdict(statement);
  const a = v.annotations as { startedAt?: string; target?: { name?: string; baseUrl?: string } | null };
  const spec = statement.predicate.configuration.find((c) => c.name === 'specification');
  const harness = statement.predicate.configuration.find((c) => c.name === 'harness');
  process.stdout.write(`conformance: signature verified (Ed25519 key ${keyId(key).slice(0, 16)}…); ${statement.subject.length} files intact: ${statement.subject.map((s) => s.name).join(', ')}\n`);
  process.stdout.write(`conformance: it vouches for: ${v.label} — ${v.subject}: ${v.reason}\n`);
  process.stdout.write(`conformance: run of ${a.startedAt ?? 'an unknown time'} against ${a.target ? `${a.target.name} (${a.target.baseUrl})` : 'an unknown target'}; specification SHA-256 ${spec?.digest?.sha256 ?? 'unknown'}; ${String((harness?.annotations as { version?: string } | undefined)?.version ? `harness ${(harness!.annotations as { version: string }).version}` : 'harness unknown')}\n`);
  // What the attested report itself says of the run: whether it finished, whether anything failed, what it judged.
  let report: { run?: { sandbox?: boolean }; summary?: { fail?: number }; problems?: string[] } = {};
  try {
    report = JSON.parse(fs.readFileSync(path.join(dir, REPORT_FILES.json), 'utf8'));
  } catch { /* intact but unreadable: judged by its verdict alone */ }
  const sandbox = report.run?.sandbox === true;
  if (v.verdict === 'conformant') {
    process.stdout.write(sandbox
      ? `conformance: CERTIFIED CONFORMANT: a genuine, unedited report of a complete run of the bundled sandbox, not a service (the harness's own reference implementation; it vouches for no deployment)\n`
      : `conformance: CERTIFIED CONFORMANT: a genuine, unedited report of a complete run\n`);
    return 0;
  }
  const unfinished = (report.problems ?? []).find((p) => /the run ended (interrupted|timedout)/.test(p));
  const why: Record<string, string> = {
    partial: 'a PARTIAL run (narrowed by a filter or one shard) makes no conformance claim',
    incomplete: 'an INCOMPLETE run verified only part of what is in scope',
    not_conformant: unfinished && (report.summary?.fail ?? 0) === 0
      ? `the run did not finish (${unfinished.replace(/^the run ended /, '').replace(/; .*$/, '')}): it found no non-conformance, and claims none`
      : 'the run found a non-conformance',
  };
  process.stdout.write(`conformance: NOT CERTIFIED: ${why[v.verdict] ?? `the attested verdict is ${v.label}`}${sandbox ? ' (of the bundled sandbox, not a service)' : ''}; the attestation is genuine, but it certifies no conformance\n`);
  return 1;
}
