// No patient data leaves a run unless the user asks for full evidence (docs/evidence.md). First the layer
// itself (record/redact.ts over the table of record/patient-fields.ts): the table agrees with the contract both
// ways; a body keeps its shape with every patient value replaced by a placeholder of its type and length, cut or
// whole; free text loses the patient values met in bodies and quoted patient members; `full` keeps everything.
// Then end to end, through the CLI as async child processes: the main job (the reference and every suite), a
// target run against a mutant whose failures carry patient bodies, a narrowed run against it with and without
// --evidence full (which restores the bodies), a client run whose client prints the patient data it syncs, and a
// receiver run: no value of fixtures/seed/seed.json (names, dates of birth, note
// text, transcript turn text, titles) appears in any report file or in the terminal output.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONTRACT_PATH } from '../fixtures/paths.ts';
import { PATIENT_FIELDS, PATIENT_MEMBER_NAMES } from '../record/patient-fields.ts';
import { notePatientData, placeholder, redact, redactBody, redactHeader, redactValue, setEvidenceMode } from '../record/redact.ts';
import { decodeCheckAnnotation, decodeEvidence, encodeCheckAnnotation, evidenceOf, MAX_EVIDENCE_BODY, type Exchange } from '../record/record.ts';
import { evaluateCheck } from '../engine/evaluate.ts';
import { CheckFailure } from '../record/record.ts';
import { htmlEscape } from '../reports/html.ts';
import { xmlEscape } from '../reports/junit.ts';
import { writeOutcomes, writeReports } from '../reports/write.ts';
import { startReference } from '../engine/reference/process.ts';
import { startReceiverSandbox } from './helpers/receiver-sandbox.ts';
import { webhookCommand } from '../cli/webhook.ts';
import { check, context, outcomes } from './helpers/report-data.ts';
import { runCli, ROOT, type CliResult } from './helpers/cli-process.ts';
import { declared } from './helpers/declared.ts';

// ---------------------------------------------------------------------------------------------------------------
// The seeded patient values

interface Seed {
  patients: { first_name: string | null; last_name: string | null; date_of_birth: string | null }[];
  documents: { title: string | null; content_text?: string | null }[];
  transcripts: { turns: { text: string }[] }[];
}
const SEED = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/seed/seed.json'), 'utf8')) as Seed;

/** Every seeded patient value (a multi-line note also line by line): names, dates of birth, titles, note text, turn text. */
function seededValues(): string[] {
  const all = new Set<string>();
  const add = (v: string | null | undefined) => {
    if (!v) return;
    all.add(v);
    for (const line of v.split('\n')) if (line.trim().length >= 2) all.add(line.trim());
  };
  for (const p of SEED.patients) [p.first_name, p.last_name, p.date_of_birth].forEach(add);
  for (const d of SEED.documents) [d.title, d.content_text].forEach(add);
  for (const t of SEED.transcripts) for (const turn of t.turns) add(turn.text);
  return [...all];
}
const SEEDED = seededValues();

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each seeded value found in `text` (as written, JSON-escaped, HTML- or XML-escaped), as a whole word, with its context. */
export function leaksIn(text: string, where: string, values: string[] = SEEDED): string[] {
  const found: string[] = [];
  for (const v of values) {
    for (const form of new Set([v, JSON.stringify(v).slice(1, -1), htmlEscape(v), xmlEscape(v)])) {
      const m = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRe(form)}(?![\\p{L}\\p{N}_])`, 'u').exec(text);
      if (m) {
        found.push(`${where}: ${JSON.stringify(v)} in …${text.slice(Math.max(0, m.index - 60), m.index + form.length + 30)}…`);
        break;
      }
    }
  }
  return found;
}

function leaksInDir(dir: string): string[] {
  const found: string[] = [];
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const p = path.join(dir, f);
    if (fs.statSync(p).isFile()) found.push(...leaksIn(fs.readFileSync(p, 'utf8'), path.relative(dir, p)));
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// The layer

test.describe('the layer', () => {
  test.afterEach(() => setEvidenceMode(undefined));

  test('the table agrees with the contract both ways: every row is a string member, every member so named is a row', () => {
    const schemas = (JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')) as { components: { schemas: Record<string, any> } }).components.schemas;
    for (const f of PATIENT_FIELDS) {
      let node = schemas[f.schema];
      expect(node, f.schema).toBeTruthy();
      for (const seg of f.member.split('.')) node = node?.properties?.[seg];
      expect(node, `${f.schema}.${f.member}`).toBeTruthy();
      expect([node.type].flat(), `${f.schema}.${f.member}`).toContain('string');
    }
    // Matching by member name inside any body is exactly the table only if no other member of the contract
    // carries one of its names.
    const rows = new Set(PATIENT_FIELDS.map((f) => `${f.schema}.${f.member}`));
    const named: string[] = [];
    const walk = (node: any, at: string) => {
      for (const [k, v] of Object.entries<any>(node?.properties ?? {})) {
        if (PATIENT_MEMBER_NAMES.has(k)) named.push(`${at}.${k}`);
        walk(v, `${at}.${k}`);
      }
    };
    for (const [name, s] of Object.entries(schemas)) walk(s, name);
    expect(named.filter((n) => !rows.has(n))).toEqual([]);
    // §2's patient and clinical-content members are all there.
    expect([...PATIENT_MEMBER_NAMES].sort()).toEqual(['date_of_birth', 'first_name', 'last_name', 'text', 'title']);
  });

  test('a placeholder keeps type and length, a date keeps its shape, and is its own placeholder', () => {
    for (const v of ['Ada', 'Ada Lovelace', '1985-12-10', '# Visit note\n\nPatient reports improvement.', 'Zoë Ünal ✓', '']) {
      const p = placeholder(v);
      expect([...p].length).toBe([...v].length);
      expect(placeholder(p)).toBe(p);
    }
    expect(placeholder('1985-12-10')).toBe('0000-00-00');
    expect(placeholder('Ada Lovelace')).toBe('*** ********');
    expect(placeholder('# Visit note\n\nok.')).toBe('# ***** ****\n\n**.');
  });

  test('a JSON body keeps its shape and bytes; only the patient members change, wherever they sit', () => {
    const body = '{"items":[{"encounter_id":"enc_1","status":"completed","patient":{"patient_id":"pat_a1","first_name":"Ada","last_name":null,"date_of_birth":"1985-12-10"},'
      + '"documents":[{"document_id":"d1","schema_type":"document","title":"Visit note"}]}], "limit" : 1,"offset":0,"total":1}';
    const out = redactBody(body);
    expect(out).toBe(body.replace('"Ada"', '"***"').replace('"1985-12-10"', '"0000-00-00"').replace('"Visit note"', '"***** ****"'));
    expect(JSON.parse(out).items[0].patient.last_name).toBeNull(); // type kept
    const doc = redactBody('{"document":{"document_id":"d","schema_type":"document","title":"Note","content":{"format":"markdown","text":"He said \\"no\\".\\nDone."}}}');
    expect(JSON.parse(doc).document.content).toEqual({ format: 'markdown', text: '** **** "**".\n****.' });
    const turns = redactBody('{"transcript":{"provider":"asr","turns":[{"speaker":"patient","text":"I have had a cough.","start":3.1,"end":5.7}]}}');
    expect(JSON.parse(turns).transcript).toEqual({ provider: 'asr', turns: [{ speaker: 'patient', text: '* **** *** * *****.', start: 3.1, end: 5.7 }] });
    // A non-conformant target puts the values elsewhere: an array under a patient member, an object inside it.
    expect(JSON.parse(redactBody('{"first_name":["Grace",{"x":"Hopper"}],"n":1}'))).toEqual({ first_name: ['*****', { x: '******' }], n: 1 });
  });

  test('a body cut for evidence is read as far as it goes: the cut value and the truncation mark', () => {
    const long = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ encounter_id: `e${i}`, patient: { patient_id: 'p', first_name: 'Augusta', last_name: 'Byron-King' } })) });
    const ex: Exchange = { request: { method: 'GET', target: '/external/v1/encounters', headers: {} }, response: { status: 200, headers: {}, body: long, bodyBytes: long.length, durationMs: 1 } };
    // Cut in the middle of a last name.
    const cutAt = long.indexOf('Byron-King', MAX_EVIDENCE_BODY - 20) + 3;
    const cutEx = { ...ex, response: { ...ex.response!, body: long.slice(0, cutAt) + 'x'.repeat(MAX_EVIDENCE_BODY) } };
    for (const e of [ex, cutEx]) {
      const body = (decodeEvidence(evidenceOf([e])) as Exchange[])[0].response!.body;
      expect(body).toMatch(/…\[truncated, \d+ bytes\]$/);
      expect(body).not.toMatch(/Augusta|Byron|Byr\b/);
      expect(body).toContain('"first_name":"*******"');
    }
    // The reporter redacts the same evidence again: nothing changes (a placeholder is a fixed point).
    const once = JSON.parse(evidenceOf([ex]));
    expect(redactValue(once)).toEqual(once);
  });

  test('free text: a quoted patient member goes, and so does every patient value met in a body, as a whole word', () => {
    expect(redact('got {"first_name":"Ada","x":1} and \'title\': \'Visit note\' and \\"text\\":\\"No fever.\\"')).toBe('got {"first_name":"***","x":1} and \'title\': \'***** ****\' and \\"text\\":\\"** *****.\\"');
    // A body quoted in a detail is often cut inside a value.
    expect(redact('got 200: {"patient":{"last_name":"Lovel')).toBe('got 200: {"patient":{"last_name":"*****');
    notePatientData('{"patient":{"first_name":"Ottoline","last_name":"Morrell"},"title":"Follow-up on asthma"}');
    expect(redact('expected Ottoline Morrell, got Ottolines; Follow-up on asthma.')).toBe('expected ******** *******, got Ottolines; ******-** ** ******.');
    // Headers of the answer too (a filename naming the patient).
    expect(redactHeader('content-disposition', 'attachment; filename="Ottoline.pdf"')).toBe('attachment; filename="********.pdf"');
    // A member name never changes, even when it equals a value met.
    // (a member name no other test of this worker writes in its own text: the values met are remembered per process)
    notePatientData('{"title":"workflow_variant"}');
    expect(redactBody('{"workflow_variant":"ambient"}')).toBe('{"workflow_variant":"ambient"}');
  });

  test('only a patient member\'s own string is remembered: a schema under that name (an OpenAPI document) renames nothing', () => {
    // The served OpenAPI document describes the patient members: their schemas sit where the values would.
    const doc = '{"openapi":"3.1.0","components":{"schemas":{"P":{"properties":{"date_of_birth":{"type":"string","format":"date"},"title":{"type":["string","null"]}}}}}}';
    expect(redactBody(doc)).toContain('"date_of_birth":{"type":"******","format":"****"}'); // still hidden in its body
    expect(redact('start_at given a date string: the date-time of an id')).toBe('start_at given a date string: the date-time of an id');
    // A word that is a patient member's own value (a one-word title) is remembered for free text, yet never
    // renames what the harness wrote: a check's id, its requirements, its case, in the annotation and every report.
    notePatientData('{"title":"grammar"}');
    expect(redact('the grammar of a query')).toBe('the ******* of a query');
    const rec = { id: 'query-grammar-start-at-epoch-seconds-rejected', requirements: ['LIST-LIMIT-CANONICAL'], title: 'probe', outcome: 'fail' as const, detail: 'grammar', case: 'query-grammar-start-at-epoch-seconds-rejected' };
    const a = decodeCheckAnnotation(encodeCheckAnnotation(rec));
    expect(a && a.ok && [a.record.id, a.record.case, a.record.detail]).toEqual([rec.id, rec.id, '*******']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-phi-ids-'));
    writeReports(dir, outcomes([check(rec.id, 'fail', rec.requirements, { detail: 'grammar', test: rec.id })]), context());
    for (const f of ['conformance.json', 'junit.xml', 'conformance.html']) expect(fs.readFileSync(path.join(dir, f), 'utf8'), f).toContain(rec.id);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a check detail that quotes a value of its own evidence loses it; the check still judged the real value', async () => {
    const body = JSON.stringify({ encounter: { encounter_id: 'e', patient: { patient_id: 'p', first_name: 'Philippa', last_name: 'Fawcett' }, documents: [] } });
    let judged = '';
    const { rec, exchanges } = await evaluateCheck(declared('phi-detail-probe', 'probe', ['R']), async (scope) => {
      scope.record({ request: { method: 'GET', target: '/x', headers: {} }, response: { status: 200, headers: {}, body, bodyBytes: body.length, durationMs: 1 } });
      judged = JSON.parse(body).encounter.patient.first_name;
      throw new CheckFailure('names differ', `list says ${judged} Fawcett, detail says Philippa Fawcet`);
    });
    expect(judged).toBe('Philippa');
    expect(rec.detail).toBe('names differ: list says ******** *******, detail says ******** Fawcet');
    const a = decodeCheckAnnotation(encodeCheckAnnotation(rec));
    expect(a && a.ok && a.record.detail).toBe(rec.detail);
    expect(evidenceOf(exchanges)).not.toMatch(/Philippa|Fawcett/);
  });

  test('--evidence full keeps every body and detail as received; secrets still go', () => {
    setEvidenceMode('full');
    const body = '{"patient":{"first_name":"Mary","last_name":"Somerville","date_of_birth":"1780-12-26"},"audio_url":"https://s/x?sig=1"}';
    expect(redactBody(body)).toBe(body.replace('https://s/x?sig=1', '[REDACTED]'));
    expect(redact('"first_name":"Mary"')).toBe('"first_name":"Mary"');
    setEvidenceMode('redacted');
    expect(redactBody(body)).toContain('"first_name":"****","last_name":"**********","date_of_birth":"0000-00-00"');
  });

  test('every report format of fabricated outcomes: no patient value in any file, the shapes kept', () => {
    const body = JSON.stringify({ items: [{ encounter_id: 'e', patient: { patient_id: 'p', first_name: 'Ada', last_name: 'Lovelace', date_of_birth: '1985-12-10' }, documents: [{ document_id: 'd', schema_type: 'document', title: 'Visit note' }] }] });
    const evidence = [{ request: { method: 'GET', target: '/external/v1/encounters', headers: {} }, response: { status: 200, headers: { 'content-type': 'text/plain' }, body, bodyBytes: body.length, durationMs: 2 } }];
    const run = outcomes([
      check('phi-fail', 'fail', ['LIST-LIMIT-DEFAULT'], { detail: 'first item: Ada Lovelace (1985-12-10), title "Visit note"', evidence }),
      check('phi-info', 'informational', ['LIST-ORDER-TIES'], { detail: 'saw {"title":"Ambient recording"}' }),
    ], { testFailures: [{ project: 'conformance', file: 'x.spec.ts', test: 't', error: 'boom: Lovelace' }] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-phi-'));
    try {
      writeOutcomes(dir, run);
      writeReports(dir, run, context());
      expect(leaksInDir(dir)).toEqual([]);
      const report = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
      const kept = JSON.parse(report.checks[0].evidence[0].response.body);
      expect(kept.items[0].patient).toEqual({ patient_id: 'p', first_name: '***', last_name: '********', date_of_birth: '0000-00-00' });
      expect(report.checks[0].detail).toBe('first item: *** ******** (0000-00-00), title "***** ****"');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// End to end

test.describe('end to end', () => {
  test.describe.configure({ mode: 'serial' });
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cec-phi-e2e-'));
  const terminal = (r: CliResult) => `${r.stdout}\n${r.stderr}`;
  /** How many patient members of the evidence were replaced (proof that patient bodies were there to redact). */
  const placeholders = (dir: string) => (fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8').match(/\\"(?:first_name|last_name|title|text)\\":\\"[*0 .,?#'-]+\\"/g) ?? []).length;

  test('--evidence takes redacted or full; anything else is a usage error before anything starts', async () => {
    for (const args of [['run', '--evidence', 'all'], ['client', '--evidence', 'yes', '--', 'true']]) {
      const r = await runCli(args, { timeoutMs: 60_000, sampleMs: 0 });
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`conformance: --evidence must be redacted or full (got ${args[2]})`);
    }
  });

  test('the main job (reference and every suite): no seeded patient value in any report file or the terminal', async () => {
    test.setTimeout(600_000);
    const out = tmp();
    const r = await runCli(['run', '--out', out], { timeoutMs: 540_000, sampleMs: 0 });
    expect(fs.existsSync(path.join(out, 'conformance.json')), r.stderr.slice(-2000)).toBe(true);
    expect([...leaksInDir(out), ...leaksIn(terminal(r), 'terminal')]).toEqual([]);
    expect(placeholders(out)).toBeGreaterThan(20);
    fs.rmSync(out, { recursive: true, force: true });
  });

  test('a target run against a mutant that fails many checks with patient bodies: nothing leaks', async () => {
    test.setTimeout(600_000);
    const ref = await startReference({ args: ['--mutant', 'wrong-content-type'] });
    const out = tmp();
    try {
      const r = await runCli(['run', '--target', ref.baseUrl, '--profile', ref.profilePath, '--out', out], { timeoutMs: 540_000, sampleMs: 0 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { checks: { outcome: string; evidence?: unknown }[] };
      const failing = report.checks.filter((c) => c.outcome === 'fail' && c.evidence);
      expect(failing.length).toBeGreaterThanOrEqual(10);
      expect(placeholders(out)).toBeGreaterThan(20);
      expect([...leaksInDir(out), ...leaksIn(terminal(r), 'terminal')]).toEqual([]);
    } finally {
      await ref.stop();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  test('--evidence full restores the bodies: the same failures with the patient data as the target sent it', async () => {
    test.setTimeout(600_000);
    const ref = await startReference({ args: ['--mutant', 'wrong-content-type'] });
    const dirs = [tmp(), tmp()];
    try {
      const args = (out: string) => ['run', '--target', ref.baseUrl, '--profile', ref.profilePath, '--out', out, '--grep', '(?:^|\\s)schema-success-(?:list|encounter|document|transcript)[\\w-]*$', '--workers', '1'];
      const redacted = await runCli(args(dirs[0]), { timeoutMs: 300_000, sampleMs: 0 });
      const full = await runCli([...args(dirs[1]), '--evidence', 'full'], { timeoutMs: 300_000, sampleMs: 0 });
      const failing = (dir: string) => (JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8')) as { checks: { id: string; outcome: string }[] })
        .checks.filter((c) => c.outcome === 'fail').map((c) => c.id).sort();
      expect(redacted.code, redacted.stderr.slice(-2000)).toBe(1);
      expect(full.code, full.stderr.slice(-2000)).toBe(1);
      expect(failing(dirs[1])).toEqual(failing(dirs[0]));
      expect(failing(dirs[0]).length).toBeGreaterThanOrEqual(4);
      expect([...leaksInDir(dirs[0]), ...leaksIn(terminal(redacted), 'terminal')]).toEqual([]);
      expect(placeholders(dirs[0])).toBeGreaterThan(5);
      // Full evidence: names, dates of birth, titles, note text and turns as received, in the JSON and the HTML.
      const json = fs.readFileSync(path.join(dirs[1], 'conformance.json'), 'utf8');
      for (const member of ['"first_name":"Ada"', '"last_name":"Lovelace"', '"date_of_birth":"1985-12-10"', '"title":"Visit note"', '"text":"I have had a cough."']) {
        expect(json).toContain(JSON.stringify(member).slice(1, -1)); // inside the recorded body, a JSON string
      }
      expect(leaksIn(fs.readFileSync(path.join(dirs[1], 'conformance.html'), 'utf8'), 'html').length).toBeGreaterThan(5);
      expect(placeholders(dirs[1])).toBe(0);
    } finally {
      await ref.stop();
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  });

  test('a client run: the patient data the client prints is kept redacted (client-output.log beside the reports), and no report carries it', async () => {
    test.setTimeout(300_000);
    const out = tmp();
    const printed = path.join(tmp(), 'printed.jsonl');
    try {
      const r = await runCli(['client', '--out', out, '--', process.execPath, path.join(ROOT, 'tests/clients/phi-client.ts')], { timeoutMs: 240_000, sampleMs: 0, env: { PHI_CLIENT_PRINTED: printed } });
      expect(fs.existsSync(path.join(out, 'conformance.json')), r.stderr.slice(-2000)).toBe(true);
      // The client did print patient data: names, dates of birth, titles, note text and turns.
      const values = [...new Set(fs.readFileSync(printed, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string))];
      expect(values).toEqual(expect.arrayContaining(['Ada Lovelace', '1985-12-10', 'Visit note', 'I have had a cough.']));
      // The client's output is kept in a file beside the reports (the terminal ends with the verdict), redacted.
      expect(fs.readFileSync(path.join(out, 'client-output.log'), 'utf8')).toMatch(/^phi-client: patient: \*\*\* \*\*\*\*\*\*\*\*$/m);
      expect(r.stdout).not.toMatch(/^phi-client: /m);
      expect([...leaksInDir(out), ...leaksIn(terminal(r), 'terminal'), ...leaksIn(terminal(r), 'terminal', values)]).toEqual([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  test('a receiver run: nothing of a patient in its output or reports (the event carries identifiers only, §6.1)', async () => {
    test.setTimeout(180_000);
    const secret = 'whsec_phi_receiver_test_8a7b6c5d';
    const sandbox = await startReceiverSandbox(secret);
    const out = tmp();
    try {
      const lines: string[] = [];
      const code = await webhookCommand(['receiver', '--url', sandbox.url, '--out', out, '--verbose'], { env: { CONFORMANCE_WEBHOOK_SECRET: secret }, stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) });
      expect([0, 1]).toContain(code);
      expect(fs.existsSync(path.join(out, 'conformance.json'))).toBe(true);
      expect([...leaksInDir(out), ...leaksIn(lines.join('\n'), 'terminal')]).toEqual([]);
    } finally {
      await sandbox.close();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
