// The signed certificate (reports/attest.ts, reports/attest-dir.ts, cli/attest.ts): `attest` / `run --attest` write an in-toto
// test-result Statement in a DSSE envelope signed with an Ed25519 key; `verify` accepts an untouched attested
// run of a CONFORMANT report, rejects it after one byte of conformance.json changes (or with another key, or a
// forged payload), and refuses to call a PARTIAL or INCOMPLETE run certified. Fabricated report folders first,
// then a real `run --attest` against the reference.
import { test, expect } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pae, DSSE_PAYLOAD_TYPE, TEST_RESULT_PREDICATE, type Envelope, type Statement } from '../reports/attest.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';
import type { Catalog, CollectedCheck } from '../reports/model.ts';
import { check, context, outcomes } from './helpers/report-data.ts';
import { runCli } from './helpers/cli-process.ts';
import { startReference } from '../engine/reference/process.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-attest-'));
const cli = (args: string[], timeoutMs = 60_000) => runCli(args, { sampleMs: 0, timeoutMs });

function keyPair(dir: string, name = 'key'): { priv: string; pub: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  const priv = path.join(dir, `${name}.pem`);
  const pub = path.join(dir, `${name}.pub.pem`);
  fs.writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
  return { priv, pub };
}

const CATALOG: Catalog = { spec: 'x.md', requirements: [{ id: 'A', section: '4.1', area: 'list', statement: 'a', level: 'must' }, { id: 'B', section: '5', area: 'auth', statement: 'b', level: 'must' }] };

/** A report folder as a run writes it (outcomes.json, conformance.json, junit.xml, conformance.html). */
function reportDir(checks: CollectedCheck[], extra: Parameters<typeof outcomes>[1] = {}, ctx: Parameters<typeof context>[0] = {}): string {
  const dir = path.join(tmp(), 'out');
  const o = outcomes(checks, extra);
  writeOutcomes(dir, o);
  writeReports(dir, o, context({ catalog: CATALOG, ...ctx }));
  return dir;
}

const envelopeOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'conformance.intoto.jsonl'), 'utf8')) as Envelope;
const statementOf = (e: Envelope) => JSON.parse(Buffer.from(e.payload, 'base64').toString('utf8')) as Statement;

test('DSSE pre-authentication encoding as its specification gives it', () => {
  expect(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  // Lengths are of bytes, not characters.
  expect(pae('t', Buffer.from('é')).toString()).toBe('DSSEv1 1 t 2 é');
});

test('an attested CONFORMANT run verifies and is certified; the Statement is an in-toto test-result over every report file', async () => {
  const keys = keyPair(tmp());
  const dir = reportDir([check('a', 'pass', ['A']), check('b', 'pass', ['B']), check('c', 'warning', ['A'], { detail: 'a should' })]);
  const a = await cli(['attest', dir, '--key', keys.priv]);
  expect(a.code, a.stderr).toBe(0);
  expect(a.stdout).toMatch(/^conformance: attested .*conformance\.intoto\.jsonl \(Ed25519 key [0-9a-f]{16}…\)$/m);
  const env = envelopeOf(dir);
  expect(env.payloadType).toBe(DSSE_PAYLOAD_TYPE);
  const st = statementOf(env);
  expect(st._type).toBe('https://in-toto.io/Statement/v1');
  expect(st.predicateType).toBe(TEST_RESULT_PREDICATE);
  expect(st.subject.map((s) => s.name)).toEqual(['conformance.html', 'conformance.json', 'junit.xml', 'outcomes.json']);
  for (const s of st.subject) expect(s.digest!.sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, s.name!))).digest('hex'));
  expect(st.predicate).toMatchObject({ result: 'WARNED', passedTests: ['a', 'b'], warnedTests: ['c'], failedTests: [] });
  const names = st.predicate.configuration.map((c) => c.name);
  expect(names).toEqual(['verdict', 'specification', 'contract', 'catalog', 'harness', 'profile']);
  expect(st.predicate.configuration.find((c) => c.name === 'contract')!.digest).toEqual({ sha256: 'a'.repeat(64) });
  expect(st.predicate.configuration.find((c) => c.name === 'harness')!.uri).toBe('pkg:npm/clinical-encounter-conformance@0.1.0');

  const v = await cli(['verify', dir, '--key', keys.pub]);
  expect(v.code, v.stdout + v.stderr).toBe(0);
  expect(v.stdout).toMatch(/^conformance: signature verified \(Ed25519 key [0-9a-f]{16}…\); 4 files intact/m);
  expect(v.stdout).toContain('conformance: it vouches for: CONFORMANT — service: verified 2 of 2 must requirements in scope');
  expect(v.stdout).toMatch(/^conformance: CERTIFIED CONFORMANT/m);
});

test('one changed byte of conformance.json, a missing or an added file, another key or a forged payload: REJECTED', async () => {
  const work = tmp();
  const keys = keyPair(work);
  const other = keyPair(work, 'other');
  const dir = reportDir([check('a', 'pass', ['A']), check('b', 'pass', ['B'])]);
  expect((await cli(['attest', dir, '--key', keys.priv])).code).toBe(0);
  const json = path.join(dir, 'conformance.json');
  const original = fs.readFileSync(json);

  // One byte: the verdict still reads the same to a human eye ("conformant" → "conformanT").
  const edited = Buffer.from(original);
  const at = edited.indexOf('"conformant"') + 10;
  edited[at] = 'T'.charCodeAt(0);
  fs.writeFileSync(json, edited);
  const r1 = await cli(['verify', dir, '--key', keys.pub]);
  expect(r1.code).toBe(1);
  expect(r1.stdout.trim()).toBe('conformance: REJECTED: conformance.json was changed after it was attested');
  fs.writeFileSync(json, original);
  expect((await cli(['verify', dir, '--key', keys.pub])).code).toBe(0);

  fs.renameSync(path.join(dir, 'junit.xml'), path.join(work, 'junit.xml'));
  expect((await cli(['verify', dir, '--key', keys.pub])).stdout.trim()).toBe('conformance: REJECTED: junit.xml is missing');
  fs.renameSync(path.join(work, 'junit.xml'), path.join(dir, 'junit.xml'));
  fs.writeFileSync(path.join(dir, 'mutation.json'), '{"total":1,"caught":1}');
  expect((await cli(['verify', dir, '--key', keys.pub])).stdout.trim()).toBe('conformance: REJECTED: mutation.json was added after the attestation');
  fs.rmSync(path.join(dir, 'mutation.json'));

  const foreign = await cli(['verify', dir, '--key', other.pub]);
  expect(foreign.code).toBe(1);
  expect(foreign.stdout).toMatch(/^conformance: REJECTED: the attestation .* does not verify: no signature verifies with key [0-9a-f]{16}…$/m);

  // A forged Statement (a PARTIAL run's envelope made to say CONFORMANT) under the old signature.
  const env = envelopeOf(dir);
  const st = statementOf(env);
  st.predicate.failedTests = [];
  st.predicate.result = 'PASSED';
  fs.writeFileSync(path.join(dir, 'conformance.intoto.jsonl'), JSON.stringify({ ...env, payload: Buffer.from(JSON.stringify({ ...st, subject: st.subject.slice(0, 1) })).toString('base64') }));
  const forged = await cli(['verify', dir, '--key', keys.pub]);
  expect(forged.code).toBe(1);
  expect(forged.stdout).toContain('REJECTED: the attestation');
});

test('a genuine INCOMPLETE or NOT CONFORMANT run is never called certified', async () => {
  const keys = keyPair(tmp());
  const incomplete = reportDir([check('a', 'pass', ['A'])]);
  expect((await cli(['attest', incomplete, '--key', keys.priv])).code).toBe(0);
  const i = await cli(['verify', incomplete, '--key', keys.pub]);
  expect(i.code).toBe(1);
  expect(i.stdout).toContain('conformance: it vouches for: INCOMPLETE — service: verified 1 of 2 must requirements in scope; nothing failed');
  expect(i.stdout).toMatch(/^conformance: NOT CERTIFIED: an INCOMPLETE run verified only part of what is in scope; the attestation is genuine, but it certifies no conformance$/m);
  const failing = reportDir([check('a', 'fail', ['A']), check('b', 'pass', ['B'])]);
  expect((await cli(['attest', failing, '--key', keys.priv])).code).toBe(0);
  expect(statementOf(envelopeOf(failing)).predicate).toMatchObject({ result: 'FAILED', failedTests: ['a'], passedTests: ['b'] });
  const f = await cli(['verify', failing, '--key', keys.pub]);
  expect(f.code).toBe(1);
  expect(f.stdout).toMatch(/^conformance: NOT CERTIFIED: the run found a non-conformance/m);
});

test('verify names each kind of run it refuses: an interrupted run found nothing and claims nothing; the bundled sandbox is named, not taken for a service (issue 40)', async () => {
  const keys = keyPair(tmp());
  const interrupted = reportDir([check('a', 'pass', ['A']), check('b', 'pass', ['B'])], { runStatus: 'interrupted' });
  expect((await cli(['attest', interrupted, '--key', keys.priv])).code).toBe(0);
  const i = await cli(['verify', interrupted, '--key', keys.pub]);
  expect(i.code).toBe(1);
  expect(i.stdout).toMatch(/^conformance: NOT CERTIFIED: the run did not finish \(interrupted\): it found no non-conformance, and claims none; the attestation is genuine, but it certifies no conformance$/m);
  expect(i.stdout).not.toContain('found a non-conformance;');
  const sandbox = reportDir([check('a', 'pass', ['A']), check('b', 'pass', ['B'])], {}, { sandbox: true });
  expect((await cli(['attest', sandbox, '--key', keys.priv])).code).toBe(0);
  const s = await cli(['verify', sandbox, '--key', keys.pub]);
  expect(s.code).toBe(0);
  expect(s.stdout).toMatch(/^conformance: CERTIFIED CONFORMANT: a genuine, unedited report of a complete run of the bundled sandbox, not a service/m);
});

test('a key that is not an Ed25519 key, or a folder without an attestation, is a setup error (exit 2)', async () => {
  const work = tmp();
  const rsa = path.join(work, 'rsa.pem');
  fs.writeFileSync(rsa, crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const dir = reportDir([check('a', 'pass', ['A'])]);
  const r = await cli(['attest', dir, '--key', rsa]);
  expect(r.code).toBe(2);
  expect(r.stderr.trim()).toMatch(/^conformance: --key .*rsa\.pem is an rsa key, not Ed25519/);
  const keys = keyPair(work);
  const none = await cli(['verify', dir, '--key', keys.pub]);
  expect(none.code).toBe(2);
  expect(none.stderr.trim()).toMatch(/^conformance: cannot read .*conformance\.intoto\.jsonl: ENOENT \(was the run attested\?/);
});

test('run --attest against the reference: the PARTIAL run is attested, verified intact, and refused as a certificate; one byte later it is rejected', async () => {
  test.setTimeout(400_000);
  const work = tmp();
  const keys = keyPair(work);
  const ref = await startReference();
  try {
    const out = path.join(work, 'out');
    const r = await runCli(['run', '--profile', ref.profilePath, '--out', out, '--grep', '(?:^|\\s)auth-missing-bearer-', '--attest', keys.priv], { sampleMs: 0, timeoutMs: 300_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).toMatch(/conformance: attested the reports: .*conformance\.intoto\.jsonl/);
    const v = await cli(['verify', out, '--key', keys.pub]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/files intact: conformance\.html, conformance\.json, junit\.xml, outcomes\.json$/m);
    expect(v.stdout).toMatch(/^conformance: it vouches for: PARTIAL — service: a narrowed run/m);
    expect(v.stdout).toMatch(/^conformance: NOT CERTIFIED: a PARTIAL run \(narrowed by a filter or one shard\) makes no conformance claim/m);
    const json = path.join(out, 'conformance.json');
    const bytes = fs.readFileSync(json);
    bytes[bytes.length - 2] ^= 0x01;
    fs.writeFileSync(json, bytes);
    const x = await cli(['verify', out, '--key', keys.pub]);
    expect(x.code).toBe(1);
    expect(x.stdout.trim()).toBe('conformance: REJECTED: conformance.json was changed after it was attested');
    // A new run into the folder removes the old attestation with the old reports.
    const again = await runCli(['run', '--profile', ref.profilePath, '--out', out, '--grep', '(?:^|\\s)auth-missing-bearer-list$'], { sampleMs: 0, timeoutMs: 300_000 });
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(fs.existsSync(path.join(out, 'conformance.intoto.jsonl'))).toBe(false);
  } finally {
    await ref.stop();
  }
});
