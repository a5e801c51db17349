// Each distinct read once per run (DESIGN principle 9, issue 32): a check's plain read of the API is answered from
// the read another check of the worker already made; a check declared `fresh`, a read marked fresh, the audio route,
// fault switches and anything outside the API are always sent. A counting server stands in for the target.
import { test, expect } from '@playwright/test';
import http from 'node:http';
import type net from 'node:net';
import { Target, CheckApi, sharable } from '../observe/target.ts';
import { evaluateCheck } from '../engine/evaluate.ts';
import { MemoryBreaker } from '../observe/breaker.ts';
import type { Profile } from '../profile/profile.ts';
import { declared } from './helpers/declared.ts';

const KEY = 'sk_read_sharing_test_0123456789';

async function counting(status = 200): Promise<{ baseUrl: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ items: [], total: seen.length, limit: 50, offset: 0 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const profile = (baseUrl: string): Profile => ({ name: 'sharing', baseUrl, credentials: { full: { key: KEY } }, faults: { api_keys_disabled: { headers: { 'x-fault': 'api-keys-disabled' } } } });

/** Runs `body` as one check (its own scope and CheckApi, fresh when declared so) and returns the totals it read. */
async function asCheck(target: Target, id: string, body: (api: CheckApi) => Promise<unknown>, fresh = false): Promise<number[]> {
  const totals: number[] = [];
  await evaluateCheck(declared(`read-sharing-${id}`, 't', ['R']), async (scope) => {
    const api = new CheckApi(target, scope, { fresh });
    const r = await body(api);
    for (const ex of [r].flat() as { response?: { body?: string } }[]) totals.push(JSON.parse(ex.response?.body ?? '{}').total);
  });
  return totals;
}

test('sharable: plain GETs of the API and its document; never the audio route, a fault switch, another method, a fresh read or a URL outside the API', () => {
  expect(sharable('/external/v1/encounters?limit=1', {})).toBe(true);
  expect(sharable('/external/v1/encounters/e1/documents/d1/transcript', { as: 'full' })).toBe(true);
  expect(sharable('/openapi/v1/openapi.json', { as: 'none' })).toBe(true);
  expect(sharable('/external/v1/encounters/e1/documents/d1/audio', {})).toBe(false);
  expect(sharable('/external/v1/encounters/e1/documents/d1/audio?x=1', {})).toBe(false);
  expect(sharable('/external/v1/encounters', { faults: ['api_keys_disabled'] })).toBe(false);
  expect(sharable('/external/v1/encounters', { method: 'POST' })).toBe(false);
  expect(sharable('/external/v1/encounters', { fresh: true })).toBe(false);
  expect(sharable('/storage/audio/org/rec.mp3?sig=x', {})).toBe(false);
});

test('two checks reading the same thing send it once; the second records the same answer as its evidence', async () => {
  const s = await counting();
  try {
    const target = new Target(profile(s.baseUrl), new MemoryBreaker());
    expect(await asCheck(target, 'a', (api) => api.get('/external/v1/encounters?limit=1'))).toEqual([1]);
    expect(await asCheck(target, 'b', (api) => api.get('/external/v1/encounters?limit=1'))).toEqual([1]);
    expect(s.seen).toEqual(['/external/v1/encounters?limit=1']);
    // Another credential or other headers are another read.
    await asCheck(target, 'c', (api) => api.get('/external/v1/encounters?limit=1', { as: 'none' }));
    await asCheck(target, 'd', (api) => api.get('/external/v1/encounters?limit=1', { headers: { accept: 'application/json' } }));
    expect(s.seen).toHaveLength(3);
  } finally {
    await s.close();
  }
});

test('a check declared fresh, a read marked fresh, the audio route and a fault switch are sent every time', async () => {
  const s = await counting();
  try {
    const target = new Target(profile(s.baseUrl), new MemoryBreaker());
    const list = '/external/v1/encounters?limit=1';
    await asCheck(target, 'first', (api) => api.get(list));
    // Fresh check: its before and after reads are its own (a shared answer would make them one and the same).
    expect(await asCheck(target, 'fresh-check', async (api) => [await api.get(list), await api.get(list)], true)).toEqual([2, 3]);
    expect(await asCheck(target, 'fresh-read', (api) => api.get(list, { fresh: true }))).toEqual([4]);
    const audio = '/external/v1/encounters/e1/documents/d1/audio';
    await asCheck(target, 'audio-1', (api) => api.get(audio));
    await asCheck(target, 'audio-2', (api) => api.get(audio));
    await asCheck(target, 'fault-1', (api) => api.get(list, { faults: ['api_keys_disabled'] }));
    await asCheck(target, 'fault-2', (api) => api.get(list, { faults: ['api_keys_disabled'] }));
    expect(s.seen).toEqual([list, list, list, list, audio, audio, list, list]);
    // A fresh read does not replace the shared answer: a later plain read still gets the first one.
    expect(await asCheck(target, 'later', (api) => api.get(list))).toEqual([1]);
    expect(s.seen).toHaveLength(8);
  } finally {
    await s.close();
  }
});

test('a 5xx answer is never shared: the next check asks for itself', async () => {
  const s = await counting(503);
  try {
    const target = new Target(profile(s.baseUrl), new MemoryBreaker());
    await asCheck(target, 'x', (api) => api.get('/external/v1/encounters'));
    await asCheck(target, 'y', (api) => api.get('/external/v1/encounters'));
    expect(s.seen).toHaveLength(2);
  } finally {
    await s.close();
  }
});
