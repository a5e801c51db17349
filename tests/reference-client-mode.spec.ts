// The reference in its mode for judging partners' API clients: `--opaque-ids` (every client-visible id of the seed
// replaced by one that must be percent-encoded in a path segment) and `--audio-ttl-seconds N` (audio URLs refused N
// seconds after issue). The mapping is checked as a function (reference-impl/opaque-ids.ts, no server); the served
// sandbox over HTTP only, one reference for the file.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { opaqueId, opaqueSeed } from '../reference-impl/opaque-ids.ts';
import { guideRows, guideText } from '../reference-impl/profile.ts';
import { expandGenerated, loadSeed, type Seed } from '../reference-impl/seed.ts';
import { runToExit } from './helpers/reference-process.ts';

test.describe.configure({ mode: 'serial' });

const UNRESERVED = /^[A-Za-z0-9\-._~]*$/;
const original = loadSeed();
const mapped = opaqueSeed(original);

/** Every client-visible id of the seed (the generated rows and the unknown encounter included), by kind. */
function originalIds(seed: Seed): Record<string, string[]> {
  const gen = expandGenerated(seed.generated);
  const strings = (xs: unknown[]) => [...new Set(xs.filter((x): x is string => typeof x === 'string'))];
  return {
    organization: strings(seed.organizations.map((o) => o.organization_id)),
    patient: strings(seed.patients.map((p) => p.patient_id)),
    encounter: strings([...seed.encounters, ...gen.encounters].map((e) => e.encounter_id).concat(Object.values(seed.roles).map((r) => r.encounter_id))),
    document: strings([...seed.documents, ...gen.documents].map((d) => d.document_id)),
  };
}

/**
 * The encounter id a server that splits the path on '/' and then decodes each segment sees when a client puts `text`
 * after /external/v1/encounters/ and hands the URL to a URL parser; null when the target has no such one segment.
 */
function idSeen(text: string): string | null {
  const u = new URL(`http://127.0.0.1/external/v1/encounters/${text}`);
  const segments = u.pathname.split('/');
  if (u.search !== '' || u.hash !== '' || segments.length !== 5) return null;
  try {
    return decodeURIComponent(segments[4]);
  } catch {
    return null;
  }
}

test.describe('the opaque id mapping (opaque-ids.ts)', () => {
  test('is deterministic and gives every id of the seed its own opaque id', () => {
    const again = opaqueSeed(loadSeed());
    expect(again.seed).toEqual(mapped.seed);
    expect([...again.ids]).toEqual([...mapped.ids]);
    const all = Object.values(originalIds(original)).flat();
    expect(all.length).toBeGreaterThan(250);
    for (const id of all) {
      expect(mapped.ids.get(id), id).toBe(opaqueId(id));
      expect(opaqueId(id)).toBe(opaqueId(id));
    }
    const opaque = all.map((id) => mapped.ids.get(id)!);
    expect(new Set(opaque).size, 'unique over the seed').toBe(all.length);
    for (const id of opaque) expect(all.includes(id)).toBe(false);
  });

  test('every opaque id must be percent-encoded in a path segment, and an unencoded one changes the request target', () => {
    for (const id of mapped.ids.values()) {
      const label = JSON.stringify(id);
      expect(UNRESERVED.test(id), label).toBe(false);
      expect(encodeURIComponent(id), label).not.toBe(id);
      expect(/[/?#]/.test(id), `${label}: '/', '?' or '#'`).toBe(true);
      expect(id.includes('%'), `${label}: '%'`).toBe(true);
      expect(/^[^ ].* .*[^ ]$/.test(id), `${label}: a space inside`).toBe(true);
      expect(/[^\x00-\x7f]/.test(id), `${label}: non-ASCII`).toBe(true);
      expect(decodeURIComponent(encodeURIComponent(id)), label).toBe(id);
      expect(idSeen(id), `${label} reaches the server intact without encoding`).not.toBe(id);
      expect(idSeen(encodeURIComponent(id)), label).toBe(id);
      expect(id.split('/').some((piece) => piece === '.' || piece === '..'), `${label}: a dot segment`).toBe(false);
    }
  });

  test('no two opaque ids share a prefix, their lengths vary, and nothing of the original shows', () => {
    const byKind = originalIds(original);
    const all = Object.values(byKind).flat().map((id) => mapped.ids.get(id)!);
    const head = (id: string, n: number) => [...id].slice(0, n).join('');
    expect(new Set(all.map((id) => head(id, 4))).size, 'first four characters').toBe(all.length);
    for (const [kind, ids] of Object.entries(byKind)) {
      const opaque = ids.map((id) => mapped.ids.get(id)!);
      if (opaque.length > 1) expect(new Set(opaque.map((id) => head(id, 1))).size, `${kind}: first characters`).toBeGreaterThan(1);
    }
    expect(new Set(all.map((id) => [...id].length)).size, 'distinct lengths').toBeGreaterThanOrEqual(10);
    for (const [from, to] of mapped.ids) {
      expect(to.includes(from), `${JSON.stringify(to)} holds ${from}`).toBe(false);
      expect(/enc_|doc_|pat_|org_/.test(to), JSON.stringify(to)).toBe(false);
    }
  });

  test('the opaque seed is the seed with its ids replaced consistently, rows, foreign keys, roles and storage keys', () => {
    const back = new Map([...mapped.ids].map(([from, to]) => [to, from]));
    const unmap = (value: unknown, key = ''): unknown => {
      if (Array.isArray(value)) return value.map((x) => unmap(x, key));
      if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, unmap(x, k)]));
      if (typeof value === 'string' && /(^|_)id$|^storage_key$|^patient_ids$/.test(key) && back.has(value)) return back.get(value);
      return value;
    };
    const gen = expandGenerated(original.generated);
    const expected = { ...original, encounters: [...original.encounters, ...gen.encounters], documents: [...original.documents, ...gen.documents], generated: { ...original.generated, count: 0 } };
    expect(unmap(mapped.seed)).toEqual(expected);
    // Nothing of the seed's own ids (nor its storage keys) is left as a value.
    const text = JSON.stringify(mapped.seed);
    for (const from of mapped.ids.keys()) expect(text.includes(JSON.stringify(from)), from).toBe(false);
    // The keys act for the mapped organizations; API key secrets are unchanged.
    expect(mapped.seed.api_keys.map((k) => k.key)).toEqual(original.api_keys.map((k) => k.key));
    expect(mapped.seed.api_keys.find((k) => k.role === 'full')!.organization_id).toBe(opaqueId(original.api_keys.find((k) => k.role === 'full')!.organization_id!));
  });

  test('the guide prints every id percent-encoded in its paths', () => {
    const text = guideText(mapped.seed, 'http://127.0.0.1:1', 'guide-token');
    const urls = [...text.matchAll(/'(http:\/\/127\.0\.0\.1:1\/external\/v1\/encounters\/[^']+)'/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThan(10);
    const opaque = new Set(mapped.ids.values());
    for (const url of urls) {
      const u = new URL(url);
      expect(u.href, 'no normalisation by a URL parser').toBe(url);
      const [, , , , encounter, , document] = u.pathname.split('/');
      expect(opaque.has(decodeURIComponent(encounter)), url).toBe(true);
      if (document !== undefined) expect(opaque.has(decodeURIComponent(document)), url).toBe(true);
    }
  });

  test('--audio-ttl-seconds outside 1..3600 is a one-line usage error', async () => {
    for (const value of ['0', '3601', '1.5', 'abc', '030', '-5']) {
      const { code, stdout, stderr } = await runToExit([`--audio-ttl-seconds=${value}`], {}, 20_000);
      expect(code, value).toBe(2);
      expect(stdout).toBe('');
      expect(stderr, value).toBe('reference-impl: usage: --audio-ttl-seconds must be a whole number of seconds, 1..3600\n');
    }
  });
});

interface Res { status: number; text: string; json: any }

const agent = new http.Agent({ keepAlive: true });
/** GET with the request target sent exactly as written (no URL parser in between). */
function call(baseUrl: string, target: string, headers: Record<string, string> = {}): Promise<Res> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode!, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test.describe('the served sandbox with --opaque-ids --audio-ttl-seconds 2', () => {
  let ref: ReferenceHandle;
  let profile: any;
  let dir: string;
  const full = () => ({ authorization: `Bearer ${profile.credentials.full.key}` });
  const e = encodeURIComponent;
  const role = (name: string) => profile.resources[name] as { encounter_id: string; document_id: string };
  /** Every path of the five routes for the audio role's ids, built by `put` (encoding or not). */
  const paths = (put: (id: string) => string) => {
    const r = role('ambient_transcript_with_audio');
    const doc = `/external/v1/encounters/${put(r.encounter_id)}/documents/${put(r.document_id)}`;
    return { detail: `/external/v1/encounters/${put(role('own_encounter').encounter_id)}`, document: doc, transcript: `${doc}/transcript`, audio: `${doc}/audio` };
  };

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ref-client-mode-'));
    const profilePath = path.join(dir, 'profile.json');
    ref = await startReference({ db: 'embedded', args: ['--opaque-ids', '--audio-ttl-seconds', '2'], profilePath });
    profile = JSON.parse(fs.readFileSync(profilePath, 'utf8'));
  });

  test.afterAll(async () => {
    await ref?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the written profile names the opaque ids of the mapping; the keys are the seed\'s', () => {
    const { resources } = profile;
    for (const [name, ids] of Object.entries(mapped.seed.roles)) expect(resources[name], name).toEqual(ids);
    expect(profile.credentials.full.key).toBe(original.api_keys.find((k) => k.role === 'full')!.key);
  });

  test('with ids encoded: the list, the encounter, the document, the transcript and the audio answer 200 with the opaque ids', async () => {
    const list = await call(ref.baseUrl, '/external/v1/encounters?limit=100', full());
    expect(list.status).toBe(200);
    expect(list.json.items.length).toBeGreaterThan(50);
    const own = role('own_encounter').encounter_id;
    expect(list.json.items.map((i: any) => i.encounter_id)).toContain(own);
    const opaque = new Set(mapped.ids.values());
    for (const item of list.json.items) {
      const ids = [item.encounter_id, item.organization_id, item.patient?.patient_id, ...item.documents.map((d: any) => d.document_id)].filter((x) => x !== undefined);
      for (const id of ids) expect(opaque.has(id), JSON.stringify(id)).toBe(true);
    }
    const p = paths(e);
    const r = role('ambient_transcript_with_audio');
    const detail = await call(ref.baseUrl, p.detail, full());
    expect(detail.status, detail.text).toBe(200);
    expect(detail.json.encounter.encounter_id).toBe(own);
    expect(detail.json.encounter.documents.map((d: any) => d.document_id)).toContain(r.document_id);
    const document = await call(ref.baseUrl, p.document, full());
    expect(document.status, document.text).toBe(200);
    expect(document.json.document).toMatchObject({ document_id: r.document_id, encounter_id: r.encounter_id, schema_type: 'ambient_transcript' });
    const transcript = await call(ref.baseUrl, p.transcript, full());
    expect(transcript.status, transcript.text).toBe(200);
    expect(transcript.json).toMatchObject({ document_id: r.document_id, encounter_id: r.encounter_id });
    const audio = await call(ref.baseUrl, p.audio, full());
    expect(audio.status, audio.text).toBe(200);
    expect(Object.keys(audio.json).sort()).toEqual(['audio_url', 'expires_at']);
    // No id of the seed itself shows anywhere (the storage key inside the audio URL included).
    for (const body of [list, detail, document, transcript, audio]) {
      for (const from of mapped.ids.keys()) expect(body.text.includes(from) || body.text.includes(e(from)), from).toBe(false);
    }
  });

  test('with ids NOT encoded, through a URL parser or sent raw by a sloppy encoder, no route answers 200', async () => {
    // A client that concatenates ids into the URL: the URL parser makes '?' a query, '#' a fragment, '/' a segment.
    for (const [name, p] of Object.entries(paths((id) => id))) {
      const res = await fetch(`${ref.baseUrl}${p}`, { headers: full() });
      expect(res.status, `${name}: ${p}`).not.toBe(200);
    }
    // Sent exactly as written: an encoder that leaves '#' or '%' alone. The raw segment must name nothing.
    const list = await call(ref.baseUrl, '/external/v1/encounters?limit=100', full());
    const ids: string[] = list.json.items.map((i: any) => i.encounter_id);
    const sloppy: [string, string][] = [];
    for (const id of ids) {
      if (id.includes('#')) sloppy.push([id, e(id).replaceAll('%23', '#')]);
      sloppy.push([id, e(id).replaceAll('%25', '%')]);
    }
    expect(sloppy.filter(([id]) => id.includes('#')).length, 'ids with a raw #').toBeGreaterThan(5);
    expect(ids.filter((id) => /%(?![0-9A-Fa-f]{2})/.test(id)).length, 'ids whose raw % is not an escape').toBeGreaterThan(5);
    expect(ids.filter((id) => /%[0-9A-Fa-f]{2}/.test(id)).length, 'ids whose raw % reads as an escape').toBeGreaterThan(5);
    for (const [id, segment] of sloppy) {
      const ok = await call(ref.baseUrl, `/external/v1/encounters/${e(id)}`, full());
      expect(ok.status, JSON.stringify(id)).toBe(200);
      const res = await call(ref.baseUrl, `/external/v1/encounters/${segment}`, full());
      expect([res.status, res.json?.reason_code], `${JSON.stringify(id)} sent as ${segment}`).toEqual([404, 'encounter_not_found']);
    }
  });

  test('every reason code of the guide table is produced with the opaque ids, as the guide prints it', async () => {
    const rows = guideRows(mapped.seed);
    expect(rows.length).toBe(27);
    for (const row of rows) {
      const headers: Record<string, string> = row.role === null ? {} : { authorization: `Bearer ${profile.credentials[row.role].key}` };
      if (row.fault !== null) Object.assign(headers, { 'x-switchboard-token': ref.switchboardToken, 'x-switchboard-fault': row.fault });
      const res = await call(ref.baseUrl, row.path, headers);
      expect(res.json?.reason_code, `${row.code}: GET ${row.path} → ${res.status}`).toBe(row.code);
    }
  });

  test('the audio URL gives the audio bytes at once and is refused after expires_at (2 s)', async () => {
    const issued = Date.now();
    const audio = await call(ref.baseUrl, paths(e).audio, full());
    const answered = Date.now();
    expect(audio.status, audio.text).toBe(200);
    const expiresAt = Date.parse(audio.json.expires_at);
    // Issued at the whole second: expires_at is 2 s after it, so between 1 and 2 s after the request.
    expect(expiresAt).toBeGreaterThan(issued + 1000);
    expect(expiresAt).toBeLessThanOrEqual(answered + 2000);
    const rec = original.recordings.find((x) => x.document_id === original.roles.ambient_transcript_with_audio.document_id)!;
    const bytes = Buffer.from(original.audio_objects.find((o) => o.storage_key === rec.storage_key)!.bytes_base64, 'base64');
    const first = await fetch(audio.json.audio_url);
    expect(first.status).toBe(200);
    expect(Buffer.from(await first.arrayBuffer())).toEqual(bytes);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 100));
    const again = await fetch(audio.json.audio_url);
    expect(again.status).toBe(403);
    expect(await again.json()).toMatchObject({ error: 'audio_url_refused' });
  });
});
