// contract-non-get-methods-change-nothing-*: a GET before and after POST, PUT, PATCH and DELETE must agree. A change
// the requests make fails; an update someone else makes meanwhile (live traffic, the webhook sender's trigger that
// the harness itself runs beside this check) must not: such a change, by encounters whose updated_at moved later,
// is judged again, and fails only when it recurs in every round. A fake list route stands in for the target.
import { test, expect } from '@playwright/test';
import http from 'node:http';
import type net from 'node:net';
import { Target, CheckApi } from '../observe/target.ts';
import { evaluateCheck } from '../engine/evaluate.ts';
import { MemoryBreaker } from '../observe/breaker.ts';
import { registered } from '../engine/declare.ts';
import type { CheckDef, CheckScope } from '../record/record.ts';
import '../checks/service/contract.ts';

const KEY = 'sk_non_get_rounds_0123456789';
const ID = 'contract-non-get-methods-change-nothing-list';

type Mode = 'still' | 'updated-once' | 'updated-each-round' | 'gone' | 'changed-same-time';

/** A list of two encounters; what a non-GET (the POST of each round) does to it depends on `mode`. */
async function listTarget(mode: Mode): Promise<{ baseUrl: string; posts: () => number; close: () => Promise<void> }> {
  const enc = (id: string, updated: string, type = 'ambient') => ({ encounter_id: id, organization_id: 'o', created_at: '2025-01-01T00:00:00Z', updated_at: updated, encounter_type: type });
  let items = [enc('e1', '2025-01-01T00:00:00Z'), enc('e2', '2025-01-02T00:00:00Z')];
  let posts = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET') {
      if (req.method === 'POST') {
        posts++;
        if (mode === 'updated-each-round' || (mode === 'updated-once' && posts === 1)) items = [items[0], enc('e2', `2026-0${posts}-01T00:00:00Z`, 'phone_call')];
        if (mode === 'gone') items = [items[0]];
        if (mode === 'changed-same-time') items = [items[0], { ...items[1], encounter_type: 'phone_call' }];
      }
      res.writeHead(405, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ items, total: items.length, limit: 50, offset: 0 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, posts: () => posts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Runs the declared check against `baseUrl` as its suite would (fresh reads), and returns its record. */
async function judge(baseUrl: string): Promise<{ outcome: string; detail?: string }> {
  const target = new Target({ name: 'rounds', baseUrl, credentials: { full: { key: KEY } } }, new MemoryBreaker());
  const entry = registered.find((r) => r.title === ID)!;
  let rec: { outcome: string; detail?: string } | undefined;
  const fx = {
    check: async (def: CheckDef, fn: (api: CheckApi, scope: CheckScope) => Promise<void>) => {
      rec = (await evaluateCheck(def, (scope) => fn(new CheckApi(target, scope, { fresh: true }), scope))).rec;
    },
  };
  await entry.body(fx as never, {} as never);
  return rec!;
}

for (const [mode, outcome, rounds, detail] of [
  ['still', 'pass', 1, undefined],
  ['updated-once', 'pass', 2, /round 1: .* only by encounters whose updated_at moved later/],
  ['updated-each-round', 'fail', 3, /in each of 3 rounds/],
  ['gone', 'fail', 1, /another body than before$/],
  ['changed-same-time', 'fail', 1, /another body than before$/],
] as const) {
  test(`${mode}: ${outcome} after ${rounds} round(s)`, async () => {
    const t = await listTarget(mode);
    try {
      const rec = await judge(t.baseUrl);
      expect([rec.outcome, t.posts()], rec.detail).toEqual([outcome, rounds]);
      if (detail) expect(rec.detail).toMatch(detail);
    } finally {
      await t.close();
    }
  });
}
