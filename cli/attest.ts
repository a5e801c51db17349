// `conformance attest DIR --key KEY` signs a run's reports (also `run --attest KEY`); `conformance verify DIR
// --key PUB` checks the signature and every report file's digest and prints the verdict the attestation vouches
// for. verify exits 0 only for an intact attestation of a CONFORMANT run: an edited or missing file, a foreign
// key or a forged envelope is REJECTED (exit 1), and a genuine NOT CONFORMANT, INCOMPLETE or PARTIAL run is
// never called certified (exit 1, one clear line). The envelope: <DIR>/conformance.intoto.jsonl (reports/attest.ts);
// signing the folder and checking an attestation against it: reports/attest-dir.ts. This command reads and prints.
import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import { keyId, readEd25519Key, type Envelope } from '../reports/attest.ts';
import { attestDir, checkAttestation } from '../reports/attest-dir.ts';
import { REPORT_FILES } from '../reports/write.ts';
import { displayPath, HELP, parse, SetupError } from './common.ts';

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

/** Signs the reports in `dir` with `key` (reports/attest-dir.ts): the envelope's path; a folder without a report is a setup error. */
export function attestFolder(dir: string, key: KeyObject): string {
  const out = attestDir(dir, key);
  if (out === undefined) throw new SetupError(`${displayPath(dir)} holds no readable ${REPORT_FILES.json}: nothing to attest`);
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
  const out = attestFolder(path.resolve(positionals[0]), key);
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
  const checked = checkAttestation(dir, envelope, key, displayPath(file));
  if ('rejected' in checked) {
    process.stdout.write(`conformance: REJECTED: ${checked.rejected}\n`);
    return 1;
  }
  const { statement, verdict: v, sandbox } = checked;
  const a = v.annotations as { startedAt?: string; target?: { name?: string; baseUrl?: string } | null };
  const spec = statement.predicate.configuration.find((c) => c.name === 'specification');
  const harness = statement.predicate.configuration.find((c) => c.name === 'harness');
  process.stdout.write(`conformance: signature verified (Ed25519 key ${keyId(key).slice(0, 16)}…); ${statement.subject.length} files intact: ${statement.subject.map((s) => s.name).join(', ')}\n`);
  process.stdout.write(`conformance: it vouches for: ${v.label} — ${v.subject}: ${v.reason}\n`);
  process.stdout.write(`conformance: run of ${a.startedAt ?? 'an unknown time'} against ${a.target ? `${a.target.name} (${a.target.baseUrl})` : 'an unknown target'}; specification SHA-256 ${spec?.digest?.sha256 ?? 'unknown'}; ${String((harness?.annotations as { version?: string } | undefined)?.version ? `harness ${(harness!.annotations as { version: string }).version}` : 'harness unknown')}\n`);
  if (checked.certified) {
    process.stdout.write(sandbox
      ? `conformance: CERTIFIED CONFORMANT: a genuine, unedited report of a complete run of the bundled sandbox, not a service (the harness's own reference implementation; it vouches for no deployment)\n`
      : `conformance: CERTIFIED CONFORMANT: a genuine, unedited report of a complete run\n`);
    return 0;
  }
  process.stdout.write(`conformance: NOT CERTIFIED: ${checked.why}${sandbox ? ' (of the bundled sandbox, not a service)' : ''}; the attestation is genuine, but it certifies no conformance\n`);
  return 1;
}
