// The client's scope and its runs, as pure functions and one in-process proxy: the scenario file and its schema
// (checks/client/scenario.ts), the scope a scenario declares or the traffic shows and what it leaves out, the
// verdict line and "what would unlock" of a client report, the plan of runs (engine/client-runs.ts), and where
// the recording proxy lands each injected answer (after a normal answer on the route, a few requests apart).
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { judgeClient } from '../engine/client-run.ts';
import { CLIENT_CHECKS } from '../checks/client/checks.ts';
import { judgeClientChecks } from '../engine/client-judge.ts';
import { INJECTABLE_REASONS } from '../observe/client-traffic.ts';
import { RecordingProxy } from '../observe/client-proxy.ts';
import { MAX_RUNS, parseReasonsOption, planReasons, reasonNotes } from '../engine/client-runs.ts';
import { outOfScopeRequirements, parseScenario, partsUsed, REQUIREMENT_PARTS, resolveScope, SCOPE_PARTS, ScenarioError, scopeNote } from '../checks/client/scenario.ts';
import type { ClientExchange, ClientTraffic, Scenario } from '../observe/client-traffic.ts';
import { STATUS_BY_REASON } from '../judge/assertions.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { CLIENT_SCENARIO_SCHEMA_PATH, REPORT_SCHEMA_PATH } from '../fixtures/paths.ts';
import { toHtml } from '../reports/html.ts';
import { loadCatalog } from '../reports/context.ts';
import { buildReport, subjectsOf, verdictLine, type RunContext } from '../reports/model.ts';

const CATALOG = loadCatalog()!;
const L = '/external/v1/encounters';
const e = encodeURIComponent;
const ENC = 'enc/α ?#%1';
const DOC = 'doc 2/β';
const KEY = 'k_live_scope_full_0123456789';
const T0 = Date.parse('2030-01-01T00:00:00Z');

/** A record of GETs with the full key, answered 200 one second apart. */
function traffic(targets: string[], scenario: Scenario | null): ClientTraffic {
  const exchanges = targets.map((target, i): ClientExchange => ({
    seq: i + 1, phase: 1, at: T0 + i * 1000, method: 'GET', target, headers: { authorization: `Bearer ${KEY}` }, bodyBytes: 0,
    kind: 'api', role: 'full', status: 200, body: '', durationMs: 5,
  }));
  return { exchanges, stdout: '', stderr: '', keys: new Map([[KEY, 'full']]), profileIds: new Set([ENC, DOC]), scenario, notInjected: {} };
}

/** What a careful sync job that needs neither dates nor audio sends. */
const CAREFUL = [
  `${L}?limit=25&offset=0&sort_order=asc`,
  `${L}/${e(ENC)}`,
  `${L}/${e(ENC)}/documents/${e(DOC)}`,
  `${L}/${e(ENC)}/documents/${e(DOC)}/transcript`,
];

function context(run: ReturnType<typeof judgeClient>): RunContext {
  return {
    harnessVersion: 'test', subject: 'client', target: null, contractSha256: null, catalogSha256: null, catalog: CATALOG, waivers: [], mutation: null, today: '2030-01-01',
    outOfScope: run.outOfScope, scopeNote: run.scopeNote, unlock: run.unlock,
  };
}

test.describe('the scenario file', () => {
  test('its schema names exactly the 27 reason codes of §7.1 and the three actions', () => {
    const schema = JSON.parse(fs.readFileSync(CLIENT_SCENARIO_SCHEMA_PATH, 'utf8')) as { properties: { reasons: { propertyNames: { enum: string[] }; additionalProperties: { enum: string[] } }; uses: { items: { enum: string[] } } } };
    expect([...schema.properties.reasons.propertyNames.enum].sort()).toEqual(Object.keys(STATUS_BY_REASON).sort());
    expect(schema.properties.reasons.additionalProperties.enum).toEqual(['stop', 'retry-later', 'skip-resource']);
    expect(schema.properties.uses.items.enum).toEqual([...SCOPE_PARTS]);
  });

  test('the example client\'s scenario and the careful client\'s pass it', () => {
    for (const f of ['reference-client/scenario.json', 'tests/clients/careful-client.scenario.json']) {
      const s = parseScenario(JSON.parse(fs.readFileSync(f, 'utf8')), f);
      expect(Object.keys(s.reasons).length, f).toBeGreaterThan(5);
      expect(s.uses, f).not.toBeNull();
    }
  });

  test('a bad scenario is refused with the field named', () => {
    const bad: [unknown, RegExp][] = [
      [{}, /must give "uses", "reasons" or both/],
      [[], /field \(root\) must be object/],
      [{ reasons: { revoked_keys: 'stop' } }, /field \/reasons names "revoked_keys", which is not a reason code of §7\.1/],
      [{ reasons: { revoked_key: 'halt' } }, /field \/reasons\/revoked_key must be equal to one of the allowed values \(stop, retry-later, skip-resource\)/],
      [{ uses: ['list', 'dates'] }, /field \/uses\/1 must be equal to one of the allowed values/],
      [{ uses: ['list', 'list'] }, /field \/uses must NOT have duplicate items/],
      [{ uses: ['encounter', 'date_window'] }, /names a feature of the list's query \(date_window\) without "list"/],
      [{ uses: ['list'], extra: 1 }, /must NOT have additional properties 'extra'/],
      // An object where a list is wanted (a partner writing the file from the prose): the form is said, with the parts.
      [{ uses: { routes: ['GET /external/v1/encounters'], paging: true } }, /field \/uses must be array; "uses" is a list of the parts the client uses, from: list, paging, sort_order, date_window, encounter, document, transcript, audio/],
    ];
    for (const [data, message] of bad) {
      expect(() => parseScenario(data, 'scenario x.json'), JSON.stringify(data)).toThrow(ScenarioError);
      expect(() => parseScenario(data, 'scenario x.json'), JSON.stringify(data)).toThrow(message);
    }
    expect(parseScenario({ uses: ['list'] })).toEqual({ uses: ['list'], reasons: {} });
    // The form docs/partners.md shows a partner is one the harness accepts.
    const shown = /Its form:\s*```json\n([\s\S]*?)```/.exec(fs.readFileSync('docs/partners.md', 'utf8'));
    expect(shown, 'docs/partners.md shows the scenario form').not.toBeNull();
    expect(parseScenario(JSON.parse(shown![1])).uses).toEqual(SCOPE_PARTS);
    expect(parseScenario({ reasons: { revoked_key: 'stop' } })).toEqual({ uses: null, reasons: { revoked_key: 'stop' } });
  });
});

test.describe('the client\'s scope', () => {
  test('the table names client requirements the client checks cite, and every part has one', () => {
    const byId = new Map(CATALOG.requirements.map((r) => [r.id, r]));
    const cited = new Set(CLIENT_CHECKS.flatMap((c) => c.requirements));
    for (const id of Object.keys(REQUIREMENT_PARTS)) {
      expect(byId.get(id), id).toBeDefined();
      expect(subjectsOf(byId.get(id)!), id).toContain('client');
      expect(cited.has(id), id).toBe(true);
    }
    for (const p of SCOPE_PARTS) expect(Object.values(REQUIREMENT_PARTS).some((parts) => parts.includes(p)), p).toBe(true);
  });

  test('declared: what it leaves out is out of scope; a declared part never used and a used part never declared are named', () => {
    const used = partsUsed(traffic(CAREFUL, null).exchanges);
    expect([...used].sort()).toEqual(['document', 'encounter', 'list', 'paging', 'sort_order', 'transcript']);
    const scope = resolveScope(['list', 'paging', 'sort_order', 'encounter', 'document', 'transcript'], used);
    expect(scope).toEqual({ origin: 'declared', parts: ['list', 'paging', 'sort_order', 'encounter', 'document', 'transcript'], unused: ['date_window', 'audio'], unexercised: [], undeclaredUsed: [] });
    expect(outOfScopeRequirements(scope).map((o) => o.part).sort()).toEqual(['AUDIO-NO-QUERY', 'AUDIO-URL-NOT-AFTER-EXPIRY', 'AUDIO-URL-NOT-DURABLE', 'AUDIO-URL-NOT-LOGGED', 'LIST-DATETIME-TZ-AWARE', 'LIST-START-BEFORE-END']);
    expect(outOfScopeRequirements(scope).find((o) => o.part === 'AUDIO-URL-NOT-LOGGED')?.reason).toBe("audio not used (not in the scenario's `uses`)");
    expect(scopeNote(scope)).toEqual({ label: 'in its declared scope', notes: ['date window, audio not used'] });

    const odd = resolveScope(['list', 'paging', 'encounter', 'audio'], used);
    expect(odd.unexercised).toEqual(['audio']);
    expect(odd.undeclaredUsed).toEqual(['sort_order', 'document', 'transcript']);
    expect(scopeNote(odd).notes).toEqual(['date window not used', 'declared but never exercised: audio', 'used without being declared (judged): sort_order, document route, transcript route']);
    // A client of the list route only: no id in any path, so CONTRACT-NO-ID-INFERENCE is out of scope too.
    const listOnly = resolveScope(['list'], new Set(['list']));
    expect(outOfScopeRequirements(listOnly).map((o) => o.part)).toContain('CONTRACT-NO-ID-INFERENCE');
    expect(scopeNote(listOnly).notes).toEqual(['paging, sort_order, date window, encounter route, document route, transcript route, audio not used']);
  });

  test('inferred: without `uses` the scope is what the traffic shows, and the verdict says so', () => {
    const run = judgeClient(traffic(CAREFUL, null), 'careful', 'http://127.0.0.1:9', new Date(T0).toISOString());
    expect(run.scopeNote.label).toBe('in the scope inferred from its traffic (no `uses` declared)');
    expect(run.outOfScope.find((o) => o.part === 'AUDIO-URL-NOT-LOGGED')?.reason).toBe('audio not used (not in the traffic (scope inferred: no `uses` in a scenario))');
  });

  test('a careful client that needs neither dates nor audio: its checks about them are out of scope, and the verdict says which parts it does not use', () => {
    const scenario: Scenario = { uses: ['list', 'paging', 'sort_order', 'encounter', 'document', 'transcript'], reasons: {} };
    const judged = judgeClientChecks(traffic(CAREFUL, scenario));
    const audio = judged.find((j) => j.check.id === 'client-audio-url-not-printed')!;
    expect(audio.record.outcome).toBe('not_verified');
    expect(audio.record.detail).toMatch(/^out of scope: audio not used \(not in the scenario's `uses`\) \(the client got no audio URL\)$/);
    expect(audio.unlock).toBeUndefined();
    // In scope and not judged (no scenario reasons): not verified, with what would unlock it.
    const reasons = judged.find((j) => j.check.id === 'client-follows-declared-reason-handling')!;
    expect(reasons.record.outcome).toBe('not_verified');
    expect(reasons.unlock).toMatch(/a scenario whose `reasons` declare/);

    const run = judgeClient(traffic(CAREFUL, scenario), 'careful', 'http://127.0.0.1:9', new Date(T0).toISOString());
    const report = buildReport(run.outcomes, context(run));
    expect(report.coverage.mustInScope).toBe(17);
    expect(report.verdict).toBe('incomplete');
    expect(verdictLine(report)).toMatch(/^conformance: INCOMPLETE — client: verified \d+ of 17 must requirements in its declared scope; nothing failed; date window, audio not used$/);
    expect(report.requirements.find((r) => r.id === 'AUDIO-URL-NOT-LOGGED')?.status).toBe('out_of_scope');
    // What would unlock the rest: declared by the checks, grouped, shown in the HTML.
    const roles = report.missingRoles.filter((m) => m.kind === 'client').map((m) => m.role);
    expect(roles).toContain('a scenario whose `reasons` declare what the client does per reason code (--scenario FILE)');
    expect(roles.some((r) => /fetches audio/.test(r)), 'the audio checks are out of scope: nothing to unlock').toBe(false);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    const valid = ajv.compile(JSON.parse(fs.readFileSync(REPORT_SCHEMA_PATH, 'utf8')));
    expect(valid(JSON.parse(JSON.stringify(report))), JSON.stringify(valid.errors)).toBe(true);
    const html = toHtml(report);
    expect(html).toContain('a scenario whose `reasons` declare what the client does per reason code (--scenario FILE)');
    expect(html).not.toContain('Not known for this report');
  });

  test('a declared route never called: INCOMPLETE, naming it', () => {
    const scenario: Scenario = { uses: ['list', 'paging', 'sort_order', 'encounter', 'document', 'transcript', 'audio'], reasons: {} };
    const run = judgeClient(traffic(CAREFUL, scenario), 'careful', 'http://127.0.0.1:9', new Date(T0).toISOString());
    const report = buildReport(run.outcomes, context(run));
    expect(report.verdict).toBe('incomplete');
    expect(report.verdictReason).toMatch(/declared but never exercised: audio/);
    expect(report.checks.find((c) => c.id === 'client-queries-only-accepted-keys')?.detail).toMatch(/declares audio \(`uses`\), but the client never called it/);
  });
});

test.describe('the runs', () => {
  test('planReasons: the non-stop reasons together, one run per stop; what is never injected is noted', () => {
    const plan = planReasons({ encounter_not_found: 'skip-resource', digest_key_unavailable: 'retry-later', revoked_key: 'stop', missing_scope: 'stop', invalid_limit: 'stop' }, null);
    expect(plan.nonStop).toEqual(['encounter_not_found', 'digest_key_unavailable']);
    expect(plan.stops).toEqual(['revoked_key', 'missing_scope']);
    expect(plan.notes).toEqual({ invalid_limit: { why: "the client's own request decides it (a malformed request is the client's fault, never injected)", blocks: false } });
    const narrowed = planReasons({ encounter_not_found: 'skip-resource', revoked_key: 'stop', missing_scope: 'stop' }, ['revoked_key']);
    expect(narrowed.nonStop).toEqual([]);
    expect(narrowed.stops).toEqual(['revoked_key']);
    expect(narrowed.notes.missing_scope).toEqual({ why: 'not judged in this run: --reasons narrows it to revoked_key', blocks: true });
    expect(MAX_RUNS).toBeGreaterThan(Object.keys(INJECTABLE_REASONS).length);
  });

  test('--reasons names only declared reasons', () => {
    expect(parseReasonsOption('revoked_key, missing_scope,revoked_key', { revoked_key: 'stop', missing_scope: 'stop' })).toEqual(['revoked_key', 'missing_scope']);
    expect(() => parseReasonsOption('expired_key', { revoked_key: 'stop' })).toThrow('--reasons names expired_key, which the scenario does not declare');
    expect(() => parseReasonsOption(' , ', { revoked_key: 'stop' })).toThrow(/comma-separated/);
  });

  test('reasonNotes: a reason no run injected blocks when its routes are in scope, not when the client does not use them', () => {
    const scope = resolveScope(['list', 'encounter'], new Set(['list', 'encounter']));
    const notes = reasonNotes(planReasons({ audio_not_found: 'skip-resource', encounter_not_found: 'skip-resource' }, null), { audio_not_found: 'no eligible request', encounter_not_found: 'no eligible request' }, scope);
    expect(notes).toEqual({
      audio_not_found: { why: 'the client does not use the audio route it belongs to', blocks: false },
      encounter_not_found: { why: 'no eligible request', blocks: true },
    });
  });
});

test.describe('the recording proxy lands each injection after a normal answer on its route', () => {
  let upstream: http.Server;
  let proxy: RecordingProxy;
  let base: string;
  test.beforeAll(async () => {
    upstream = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[]}'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const port = (upstream.address() as net.AddressInfo).port;
    proxy = new RecordingProxy({ upstream: new URL(`http://127.0.0.1:${port}`), keys: new Map([[KEY, 'full']]) });
    base = await proxy.listen();
  });
  test.afterAll(async () => {
    await proxy.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  const get = async (target: string) => {
    const res = await fetch(`${base}${target}`, { headers: { authorization: `Bearer ${KEY}` } });
    return { status: res.status, reason: ((await res.json()) as { reason_code?: string }).reason_code };
  };

  test('a normal run injects nothing; then each reason on its own route, after a normal answer there, two normal requests apart; a stop in a run of its own', async () => {
    proxy.beginRun(1);
    for (const t of [L, `${L}/${e(ENC)}`, `${L}/${e(ENC)}/documents/${e(DOC)}/transcript`, `${L}/${e(ENC)}/documents/${e(DOC)}/transcript`]) expect((await get(t)).status).toBe(200);
    expect(proxy.endRun()).toEqual({ injected: [], pending: [] });

    proxy.beginRun(2, ['transcript_not_found', 'encounter_not_found'], { transcript_not_found: 'skip-resource', encounter_not_found: 'skip-resource' });
    const seen: (string | undefined)[] = [];
    const tr = `${L}/${e(ENC)}/documents/${e(DOC)}/transcript`;
    // The first transcript request of the run is answered normally; the next one may carry its reason.
    for (const t of [L, `${L}/${e(ENC)}`, tr, `${L}/${e(ENC)}`, tr, L, `${L}/${e(DOC)}`, `${L}/${e(DOC)}`]) seen.push((await get(t)).reason);
    expect(seen).toEqual([undefined, undefined, undefined, 'encounter_not_found', undefined, undefined, undefined, undefined]);
    // The transcript reason waits for a transcript request: none came after its turn.
    expect(proxy.endRun()).toEqual({ injected: ['encounter_not_found'], pending: ['transcript_not_found'] });

    proxy.beginRun(3, ['transcript_not_found'], { transcript_not_found: 'skip-resource' });
    expect((await get(tr)).reason).toBeUndefined();
    expect(await get(tr)).toEqual({ status: 404, reason: 'transcript_not_found' });
    // The client's retry of an injected request gets the real answer.
    expect((await get(tr)).status).toBe(200);
    expect(proxy.endRun()).toEqual({ injected: ['transcript_not_found'], pending: [] });

    proxy.beginRun(4, ['revoked_key'], { revoked_key: 'stop' });
    expect((await get(`${L}?limit=25&offset=0`)).status).toBe(200);
    expect(await get(`${L}?limit=25&offset=25`)).toEqual({ status: 401, reason: 'revoked_key' });
    expect(proxy.endRun()).toEqual({ injected: ['revoked_key'], pending: [] });
    expect(proxy.exchanges.filter((x) => x.injected).map((x) => [x.phase, x.injected])).toEqual([[2, 'encounter_not_found'], [3, 'transcript_not_found'], [4, 'revoked_key']]);
  });
});
