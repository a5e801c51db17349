// What a service check needs is data of its declaration (engine/registry.ts `needs`; docs/architecture.md), and
// the declarations are held to what the checks do: the reference is run twice, once with its complete profile and
// once with a profile that has the full key alone.
//   1. A check that ends not_verified on the full key alone lacks a setting it declares (`lacks` ∈ needs).
//   2. A check that needs nothing beyond the full key is verified with it alone (a declared need is a real one).
//   3. Every setting a check with needs asks for on the complete profile is declared (the declaration is whole).
//   4. Every declared need is asked for on the complete profile or is what the check lacked on the full key alone.
// The rules are one pure function, first shown to fire on fabricated records.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReference } from '../engine/reference/process.ts';
import { allDeclaredChecks } from '../engine/declared-checks.ts';
import type { CollectedCheck } from '../reports/model.ts';
import { runCli } from './helpers/cli-process.ts';

type Rec = Pick<CollectedCheck, 'id' | 'outcome' | 'lacks' | 'uses'>;

/** The full key: every service check's own, never named as a need. */
const OWN = 'credentials.full';

export function needsProblems(declared: { id: string; needs?: readonly string[] }[], complete: Rec[], fullKeyOnly: Rec[]): string[] {
  const full = new Map(complete.map((r) => [r.id, r]));
  const bare = new Map(fullKeyOnly.map((r) => [r.id, r]));
  const out: string[] = [];
  for (const d of declared) {
    const needs = new Set(d.needs ?? []);
    const f = full.get(d.id);
    const b = bare.get(d.id);
    if (!f || !b) continue;
    if (b.outcome === 'not_verified' && b.lacks && !needs.has(b.lacks)) out.push(`${d.id}: lacks ${b.lacks} on the full key alone, but does not declare it`);
    if (b.outcome !== 'not_verified' && needs.size > 0) out.push(`${d.id}: declares ${[...needs].join(', ')}, yet was verified on the full key alone`);
    if (needs.size > 0) {
      for (const u of f.uses ?? []) if (u !== OWN && !needs.has(u)) out.push(`${d.id}: asks for ${u} but does not declare it`);
      for (const n of needs) if (!(f.uses ?? []).includes(n) && b.lacks !== n) out.push(`${d.id}: declares ${n}, which it never asks for`);
    }
  }
  return out;
}

test('the needs rules fire on fabricated records: an undeclared lack, a need that is none, an undeclared ask, a need never asked', () => {
  const declared = [
    { id: 'a', needs: ['credentials.no_scopes'] },
    { id: 'b', needs: ['resources.own_encounter'] },
    { id: 'c', needs: ['resources.clinical_document'] },
    { id: 'd', needs: ['resources.clinical_document', 'faults.audio_url_expires_soon'] },
    { id: 'e' },
    { id: 'ok', needs: ['credentials.no_scopes'] },
  ];
  const complete: Rec[] = [
    { id: 'a', outcome: 'pass', uses: ['credentials.full', 'credentials.no_scopes'] },
    { id: 'b', outcome: 'pass', uses: ['resources.own_encounter'] },
    { id: 'c', outcome: 'pass', uses: ['resources.clinical_document', 'faults.digest_key_unavailable'] },
    { id: 'd', outcome: 'pass', uses: ['resources.clinical_document'] },
    { id: 'e', outcome: 'pass' },
    { id: 'ok', outcome: 'pass', uses: ['credentials.no_scopes'] },
  ];
  const bare: Rec[] = [
    { id: 'a', outcome: 'not_verified', lacks: 'credentials.invalid_key' },
    { id: 'b', outcome: 'pass' },
    { id: 'c', outcome: 'not_verified', lacks: 'resources.clinical_document' },
    { id: 'd', outcome: 'not_verified', lacks: 'resources.clinical_document' },
    { id: 'e', outcome: 'not_verified', lacks: 'resources.demo_encounter' },
    { id: 'ok', outcome: 'not_verified', lacks: 'credentials.no_scopes' },
  ];
  expect(needsProblems(declared, complete, bare)).toEqual([
    'a: lacks credentials.invalid_key on the full key alone, but does not declare it',
    'b: declares resources.own_encounter, yet was verified on the full key alone',
    'c: asks for faults.digest_key_unavailable but does not declare it',
    'd: declares faults.audio_url_expires_soon, which it never asks for',
    'e: lacks resources.demo_encounter on the full key alone, but does not declare it',
  ]);
});

test('every service check declares what it needs: held to the reference with its complete profile and with the full key alone', async () => {
  test.setTimeout(600_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-needs-'));
  const ref = await startReference();
  try {
    const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as { name: string; baseUrl: string; timeouts?: unknown; credentials: { full: unknown } };
    const bareProfile = path.join(work, 'full-key-only.profile.json');
    fs.writeFileSync(bareProfile, JSON.stringify({ name: 'full key only', baseUrl: profile.baseUrl, ...(profile.timeouts ? { timeouts: profile.timeouts } : {}), credentials: { full: profile.credentials.full } }));
    const records = async (profileFile: string, name: string): Promise<Rec[]> => {
      const out = path.join(work, name);
      const r = await runCli(['run', '--target', profile.baseUrl, '--profile', profileFile, '--out', out, '--allow-incomplete'], { sampleMs: 0, timeoutMs: 500_000 });
      expect([0, 1], `${name}: ${r.stderr.slice(-2000)}`).toContain(r.code);
      return (JSON.parse(fs.readFileSync(path.join(out, 'outcomes.json'), 'utf8')) as { checks: Rec[] }).checks;
    };
    const complete = await records(ref.profilePath, 'complete');
    const bare = await records(bareProfile, 'full-key-only');
    const declared = await allDeclaredChecks('service');
    expect(complete.length).toBe(declared.length);
    expect(bare.filter((r) => r.outcome === 'not_verified').length, 'the full key alone leaves many checks not verified').toBeGreaterThan(100);
    expect(needsProblems(declared, complete, bare)).toEqual([]);
  } finally {
    await ref.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
});
