// A signed certificate of a run an auditor can verify without re-running it: an in-toto Statement v1 with the
// test-result predicate (https://in-toto.io/attestation/test-result/v0.1: result, passed, warned and failed
// check ids, the configuration that decided them: specification, contract and catalog digests, harness
// version, profile digest, and the verdict), its subjects the SHA-256 of every report file of the run, in a
// DSSE envelope signed with the operator's Ed25519 key. node:crypto signs and verifies Ed25519; DSSE's
// pre-authentication encoding is the few lines of `pae`. No network, no key service: the operator's key pair.
import crypto from 'node:crypto';
import { VERDICT_LABEL, type ConformanceReport } from './model.ts';

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const TEST_RESULT_PREDICATE = 'https://in-toto.io/attestation/test-result/v0.1';
export const DSSE_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface ResourceDescriptor { name?: string; uri?: string; digest?: Record<string, string>; annotations?: Record<string, unknown> }
export interface Statement {
  _type: string;
  subject: ResourceDescriptor[];
  predicateType: string;
  predicate: { result: 'PASSED' | 'WARNED' | 'FAILED'; configuration: ResourceDescriptor[]; passedTests: string[]; warnedTests: string[]; failedTests: string[] };
}
export interface Envelope { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] }

/** DSSE v1 pre-authentication encoding: `DSSEv1 <len(type)> <type> <len(body)> <body>`, lengths in bytes. */
export function pae(payloadType: string, body: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

export const sha256 = (bytes: Buffer | string): string => crypto.createHash('sha256').update(bytes).digest('hex');

/** The key id: SHA-256 of the public key's SubjectPublicKeyInfo (DER). */
export function keyId(key: crypto.KeyObject): string {
  const pub = key.type === 'private' ? crypto.createPublicKey(key) : key;
  return sha256(pub.export({ type: 'spki', format: 'der' }));
}

/** Reads an Ed25519 key (PEM): a private key to sign, or a public key (or a private one, its public half used) to verify. */
export function readEd25519Key(pem: string, kind: 'private' | 'public'): crypto.KeyObject {
  let key: crypto.KeyObject;
  try {
    key = kind === 'private' ? crypto.createPrivateKey(pem) : crypto.createPublicKey(pem);
  } catch (e) {
    throw new Error(`not a PEM ${kind} key (${(e as Error).message.split('\n')[0]})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return key;
}

/**
 * The Statement over a run: its subjects the given report files (name → bytes), its predicate the report's
 * outcome. `result` is PASSED only for CONFORMANT (WARNED when warnings or waivers were accepted along the
 * way), FAILED otherwise: an INCOMPLETE or PARTIAL run claims no conformance, and its verdict says which.
 */
export function statementFor(report: ConformanceReport, files: Record<string, Buffer>): Statement {
  const ids = (pred: (o: string) => boolean) => [...new Set(report.checks.filter((c) => pred(c.outcome)).map((c) => c.id))].sort();
  const failed = ids((o) => o === 'fail');
  const warned = ids((o) => o === 'warning' || o === 'waived');
  const passed = ids((o) => o === 'pass').filter((id) => !failed.includes(id) && !warned.includes(id));
  const result = report.verdict !== 'conformant' ? 'FAILED' : warned.length ? 'WARNED' : 'PASSED';
  const run = report.run;
  const digest = (v: string | null | undefined) => (v ? { digest: { sha256: v } } : {});
  const configuration: ResourceDescriptor[] = [
    { name: 'verdict', uri: `urn:clinical-encounter-conformance:verdict:${report.verdict}`, annotations: {
      verdict: report.verdict, label: VERDICT_LABEL[report.verdict], reason: report.verdictReason, subject: run.subject,
      filter: run.filter, shards: run.shards, summary: report.summary, mustVerified: report.coverage.mustVerified, mustInScope: report.coverage.mustInScope,
      target: run.target, startedAt: run.startedAt, finishedAt: run.finishedAt,
    } },
    { name: 'specification', uri: run.spec ?? 'clinical-encounter-public-api.md', ...digest(run.specSha256), annotations: { title: run.specTitle } },
    { name: 'contract', uri: 'fixtures/contract/openapi.json', ...digest(run.contractSha256) },
    { name: 'catalog', uri: 'fixtures/requirements/requirements.json', ...digest(run.catalogSha256) },
    { name: 'harness', uri: `pkg:npm/clinical-encounter-conformance@${run.harnessVersion}`, annotations: { version: run.harnessVersion } },
    { name: 'profile', uri: 'urn:clinical-encounter-conformance:profile', ...digest(run.profileSha256), annotations: { secretValues: 'left out of the digest' } },
  ];
  return {
    _type: STATEMENT_TYPE,
    subject: Object.entries(files).sort(([a], [b]) => a.localeCompare(b)).map(([name, bytes]) => ({ name, digest: { sha256: sha256(bytes) } })),
    predicateType: TEST_RESULT_PREDICATE,
    predicate: { result, configuration, passedTests: passed, warnedTests: warned, failedTests: failed },
  };
}

export function signEnvelope(statement: Statement, key: crypto.KeyObject): Envelope {
  const body = Buffer.from(JSON.stringify(statement), 'utf8');
  const sig = crypto.sign(null, pae(DSSE_PAYLOAD_TYPE, body), key);
  return { payloadType: DSSE_PAYLOAD_TYPE, payload: body.toString('base64'), signatures: [{ keyid: keyId(key), sig: sig.toString('base64') }] };
}

/** The Statement of an envelope whose signature verifies with the key; throws saying why not. */
export function openEnvelope(envelope: Envelope, key: crypto.KeyObject): Statement {
  if (envelope.payloadType !== DSSE_PAYLOAD_TYPE) throw new Error(`payload type ${envelope.payloadType}, not ${DSSE_PAYLOAD_TYPE}`);
  const body = Buffer.from(envelope.payload, 'base64');
  const ok = (envelope.signatures ?? []).some((s) => {
    try {
      return crypto.verify(null, pae(envelope.payloadType, body), key, Buffer.from(s.sig, 'base64'));
    } catch {
      return false;
    }
  });
  if (!ok) throw new Error(`no signature verifies with key ${keyId(key).slice(0, 16)}…`);
  const st = JSON.parse(body.toString('utf8')) as Statement;
  if (st._type !== STATEMENT_TYPE || st.predicateType !== TEST_RESULT_PREDICATE) throw new Error(`not an in-toto test-result Statement (${st._type}, ${st.predicateType})`);
  return st;
}

/** The verdict an attested Statement vouches for (its `verdict` configuration entry). */
export function attestedVerdict(st: Statement): { verdict: string; label: string; reason: string; subject: string; annotations: Record<string, unknown> } {
  const a = (st.predicate.configuration.find((c) => c.name === 'verdict')?.annotations ?? {}) as Record<string, unknown>;
  return { verdict: String(a.verdict ?? 'unknown'), label: String(a.label ?? a.verdict ?? 'UNKNOWN'), reason: String(a.reason ?? ''), subject: String(a.subject ?? 'service'), annotations: a };
}
