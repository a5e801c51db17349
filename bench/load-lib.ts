// The reference implementation under load and faults, seen from outside (HTTP and SQL only; the
// reference runs as a child process, never imported). One run:
//   1. starts an embedded PostgreSQL this module controls, and the reference on it (`--db url`);
//   2. learns which encounter ids belong to which organization (the two full keys list their own);
//   3. sends `requests` steady requests at `concurrency` (a promise pool over observe/http.ts sendRaw),
//      mixing every credential role of the written profile, the other organization's full key, no key,
//      and every route (own, other-org, demo, unknown and unsupported resources; valid and invalid
//      queries), and verifies EVERY response: a status documented for its route, a body valid against
//      its contract schema, a reason code listed for that status on that route, and on a 200 only data
//      of the caller's organization (every organization_id equals the caller's, every encounter_id is
//      one of the caller's);
//   4. stops the database mid-run: answers must become 503 digest_key_unavailable (401 for callers that
//      need no key lookup), then starts it again: the same reference must serve 200s again;
//   5. stops the reference (an orderly SIGTERM, which writes every queued disclosure row): each 200 of the
//      run must have left exactly one disclosure row; then restarts it on the same database: no row is lost
//      (SELECT count(*) of every table, and the list totals of both organizations, before and after).
// It only measures and reports; the caller decides what to assert.
import fs from 'node:fs';
import path from 'node:path';
import { sendRaw, type RawResponse } from '../observe/http.ts';
import { startCluster, type Cluster } from '../platform/embedded-cluster.ts';
import { startReference, type ReferenceHandle } from '../engine/reference/process.ts';
import { operation, responseSchemaName, validateAgainst, type OperationId } from '../judge/contract.ts';
import { redact, registerSecret } from '../record/redact.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SEED_PATH = path.join(ROOT, 'fixtures/seed/seed.json');

export interface LoadOptions {
  requests: number;
  concurrency: number;
  seed?: number;
  /** Steady requests completed before the database is stopped, as a fraction of `requests`. */
  outageAt?: number;
  /** Minimum outage length (ms) and minimum number of answers observed during it. */
  outageMinMs?: number;
  outageMinAnswers?: number;
  /** Longest acceptable time from the database being back to the first 200. */
  recoveryBudgetMs?: number;
  requestTimeoutMs?: number;
  /** Stop and restart the database mid-run (default true) and restart the reference at the end (default true). */
  outage?: boolean;
  restart?: boolean;
  /** Extra arguments for the reference (e.g. `--mutant NAME`, to show that the verification can fail). */
  referenceArgs?: string[];
  log?: (line: string) => void;
}

export interface Violation { kind: string; phase: Phase; caller: string; target: string; detail: string }

export interface LoadFigures {
  requests: { steady: number; outage: number; transition: number; total: number };
  concurrency: number;
  durationMs: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  statusHistogram: Record<string, number>;
  steadyUnavailable: number;
  violations: { total: number; byKind: Record<string, number>; samples: Violation[] };
  outage: { enabled: boolean; stopMs: number; durationMs: number; answers: number; histogram: Record<string, number>; startMs: number; recoveryMs: number | null; referencePidUnchanged: boolean };
  restart: { readsServed: number; disclosureRows: number; tablesBefore: Record<string, number>; tablesAfter: Record<string, number>; listTotalsBefore: Record<string, number>; listTotalsAfter: Record<string, number>; lostRows: string[] };
  referencePeakRssMb: number | null;
  seed: number;
}

type Phase = 'steady' | 'stopping' | 'outage' | 'starting' | 'recovering' | 'transition';

interface SeedKey { role: string; key: string; organization_id: string | null }
interface SeedFile {
  api_keys: SeedKey[];
  invalid_tokens: Record<string, string>;
  encounters: { encounter_id: string; organization_id: string }[];
}

interface Caller { role: string; org: string | null; authorization?: string }
interface Req { caller: Caller; target: string; op: OperationId }

/** Roles that must never see a 200: their key fails authentication or authorization on every route. */
const NEVER_200 = new Set(['none', 'malformed_token', 'invalid_key', 'disabled_key', 'revoked_key', 'expired_key', 'not_org_scoped', 'org_not_allowlisted', 'no_scopes_not_org_scoped', 'no_scopes_org_not_allowlisted']);
/** Roles answered without a key lookup, so a database outage does not concern them (401 as usual). */
const NO_LOOKUP = new Set(['none', 'malformed_token']);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

const ENC = '/external/v1/encounters';
function opFor(target: string): OperationId {
  const p = target.split('?')[0];
  if (p === ENC) return 'listPublicEncounters';
  if (/\/transcript$/.test(p)) return 'getPublicEncounterDocumentTranscript';
  if (/\/audio$/.test(p)) return 'getPublicEncounterDocumentAudio';
  if (/\/documents\//.test(p)) return 'getPublicEncounterDocument';
  return 'getPublicEncounter';
}

/** Every value of the given property names anywhere in a JSON value. */
function collect(value: unknown, names: Set<string>, out: Map<string, unknown[]>): void {
  if (Array.isArray(value)) for (const v of value) collect(v, names, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (names.has(k)) out.set(k, [...(out.get(k) ?? []), v]);
      collect(v, names, out);
    }
  }
}

// ---------------------------------------------------------------- the database this module controls

async function tableCounts(db: Cluster): Promise<Record<string, number>> {
  const tables = await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name");
  const out: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${table_name.replace(/"/g, '""')}"`);
    out[table_name] = Number(row.n);
  }
  return out;
}

function peakRssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- the run

export async function runLoad(o: LoadOptions): Promise<LoadFigures> {
  const log = o.log ?? (() => {});
  const seed = o.seed ?? 1;
  const rnd = mulberry32(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const timeoutMs = o.requestTimeoutMs ?? 15_000;
  const seedFile = JSON.parse(fs.readFileSync(SEED_PATH, 'utf8')) as SeedFile;

  log('starting embedded PostgreSQL');
  // A durable cluster (fsync on): the restart below is about rows surviving a stop.
  const db = await startCluster({ name: 'cec-load-pg' });
  let ref: ReferenceHandle | undefined;
  const startRef = async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = db.url;
    try {
      return await startReference({ db: 'url', timeoutMs: 120_000, args: o.referenceArgs });
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  };
  try {
    ref = await startRef();
    log(`reference ready at ${ref.baseUrl} (pid ${ref.child.pid})`);
    const profile = JSON.parse(fs.readFileSync(ref.profilePath, 'utf8')) as {
      credentials: Record<string, { key: string }>;
      resources: Record<string, { encounter_id: string; document_id?: string }>;
    };

    // Callers: every credential role of the profile, the other organization's full key, and no key.
    const orgOfRole = new Map(seedFile.api_keys.map((k) => [k.role, k.organization_id]));
    const callers: Caller[] = Object.entries(profile.credentials).map(([role, c]) => {
      registerSecret(c.key);
      return { role, org: orgOfRole.get(role) ?? null, authorization: `Bearer ${c.key}` };
    });
    const otherKey = seedFile.api_keys.find((k) => k.role === 'other_org_full');
    if (otherKey) {
      registerSecret(otherKey.key);
      callers.push({ role: 'other_org_full', org: otherKey.organization_id, authorization: `Bearer ${otherKey.key}` });
    }
    callers.push({ role: 'none', org: null });
    const full = callers.find((c) => c.role === 'full')!;
    const fullCallers = callers.filter((c) => c.role === 'full' || c.role === 'other_org_full');

    // Every 200 of /external/v1 is a successful read, and each must leave exactly one disclosure row.
    let readsServed = 0;
    const send = async (caller: Caller, target: string): Promise<RawResponse> => {
      const res = await sendRaw({ baseUrl: ref!.baseUrl, timeoutMs, maxBodyBytes: 4 * 1024 * 1024 }, { target, headers: caller.authorization ? { authorization: caller.authorization } : {} });
      if (res.status === 200 && target.startsWith('/external/v1/')) readsServed++;
      return res;
    };

    // Which encounters belong to whom: seeded ones from the fixture, listable ones from each organization's own list.
    const idsOf = new Map<string, Set<string>>();
    const own = (org: string) => idsOf.get(org) ?? idsOf.set(org, new Set()).get(org)!;
    for (const e of seedFile.encounters) own(e.organization_id).add(e.encounter_id);
    const listTotals = async (): Promise<Record<string, number>> => {
      const totals: Record<string, number> = {};
      for (const c of fullCallers) {
        const res = await send(c, `${ENC}?limit=1`);
        if (res.status !== 200) throw new Error(`list with ${c.role} answered ${res.status}`);
        totals[c.org!] = (JSON.parse(res.body.toString('utf8')) as { total: number }).total;
      }
      return totals;
    };
    for (const c of fullCallers) {
      for (let offset = 0; offset <= 10_000; offset += 100) {
        const res = await send(c, `${ENC}?limit=100&offset=${offset}`);
        if (res.status !== 200) throw new Error(`discovery list with ${c.role} answered ${res.status}`);
        const page = JSON.parse(res.body.toString('utf8')) as { items: { encounter_id: string }[] };
        for (const i of page.items) own(c.org!).add(i.encounter_id);
        if (page.items.length < 100) break;
      }
    }
    log(`organizations: ${[...idsOf].map(([org, ids]) => `${org} ${ids.size}`).join(', ')}`);

    // Targets: every route on own, other-org, demo, unknown and unsupported resources; valid and invalid queries.
    const targets: string[] = [
      ENC, `${ENC}?limit=100`, `${ENC}?limit=100&offset=100`, `${ENC}?sort_order=asc&limit=7&offset=3`,
      `${ENC}?start_at=2025-01-01T00:00:00Z&end_at=2025-06-01T00:00:00Z`, `${ENC}?limit=0`, `${ENC}?limit=01`, `${ENC}?offset=10001`,
      `${ENC}?sort_order=up`, `${ENC}?start_at=yesterday`, `${ENC}?patient_id=pat_a1`,
    ];
    const seg = encodeURIComponent;
    const encounters = new Set<string>();
    for (const [role, r] of Object.entries(profile.resources)) {
      if (typeof r !== 'object' || !r) continue;
      const doc = r.document_id;
      if (doc === undefined) {
        encounters.add(r.encounter_id);
        continue;
      }
      for (const suffix of ['', '/transcript', '/audio']) targets.push(`${ENC}/${seg(r.encounter_id)}/documents/${seg(doc)}${suffix}`);
      if (role === 'clinical_document') targets.push(`${ENC}/${seg(r.encounter_id)}/documents/${seg(doc)}?x=1`);
    }
    for (const ids of idsOf.values()) for (const id of [...ids].slice(0, 12)) encounters.add(id);
    for (const id of encounters) targets.push(`${ENC}/${seg(id)}`);
    targets.push(`${ENC}/${seg(profile.resources.own_encounter.encounter_id)}?limit=1`);
    // A full key asks for its own organization's resources half of the time, so that most of its answers
    // are 200s with data (what isolation is about); the rest of the time anything, as every other role does.
    const orgOfTarget = (t: string) => {
      const id = /^\/external\/v1\/encounters\/([^/?]+)/.exec(t)?.[1];
      if (id === undefined) return undefined;
      for (const [org, ids] of idsOf) if (ids.has(decodeURIComponent(id))) return org;
      return undefined;
    };
    const ownTargets = new Map(fullCallers.map((c) => [c.role, targets.filter((t) => { const org = orgOfTarget(t); return org === undefined || org === c.org; })]));
    const nextRequest = (): Req => {
      const caller = rnd() < 0.6 ? pick(fullCallers) : pick(callers);
      const target = ownTargets.has(caller.role) && rnd() < 0.5 ? pick(ownTargets.get(caller.role)!) : pick(targets);
      return { caller, target, op: opFor(target) };
    };

    // ---------------------------------------------------------------- verification of one answer
    const histogram: Record<string, number> = {};
    const outageHistogram: Record<string, number> = {};
    const byKind: Record<string, number> = {};
    const samples: Violation[] = [];
    let violations = 0;
    let steadyUnavailable = 0;
    const violate = (kind: string, phase: Phase, r: Req, detail: string) => {
      violations++;
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      if (samples.length < 20) samples.push({ kind, phase, caller: r.caller.role, target: r.target, detail: redact(detail).slice(0, 400) });
    };
    const bump = (h: Record<string, number>, k: string) => (h[k] = (h[k] ?? 0) + 1);

    const verify = (r: Req, res: RawResponse | Error, phase: Phase) => {
      if (res instanceof Error) {
        bump(histogram, 'transport');
        return violate('transport', phase, r, res.message);
      }
      const text = res.body.toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(text);
      } catch {
        /* judged below */
      }
      const reason = res.status !== 200 && body && typeof body.reason_code === 'string' ? body.reason_code : '';
      const key = reason ? `${res.status} ${reason}` : String(res.status);
      bump(histogram, key);
      if (phase === 'outage') bump(outageHistogram, key);
      if (phase === 'steady' && res.status === 503) steadyUnavailable++;
      const schema = responseSchemaName(r.op, res.status);
      if (!schema) return violate('undocumented-status', phase, r, `${res.status} is not documented for ${r.op}: ${text.slice(0, 200)}`);
      if (!/^application\/json\s*(;|$)/i.test(res.headers['content-type'] ?? '')) return violate('content-type', phase, r, `content-type ${res.headers['content-type']}`);
      if (body === undefined) return violate('not-json', phase, r, text.slice(0, 200));
      const invalid = validateAgainst(schema, body);
      if (invalid) return violate('schema', phase, r, `${schema}: ${invalid}`);
      if (res.status !== 200) {
        const listed = operation(r.op).reasons[String(res.status)] ?? [];
        if (!listed.includes(reason)) violate('reason-not-documented-for-route', phase, r, `${res.status} ${reason} is not listed for ${r.op}`);
      } else {
        if (NEVER_200.has(r.caller.role) || r.caller.org === null) violate('auth-bypass', phase, r, `200 for ${r.caller.role}`);
        const found = new Map<string, unknown[]>();
        collect(body, new Set(['organization_id', 'encounter_id']), found);
        const mine = idsOf.get(r.caller.org ?? '') ?? new Set();
        for (const org of found.get('organization_id') ?? []) if (org !== r.caller.org) violate('cross-org-leak', phase, r, `organization_id ${JSON.stringify(org)} in a 200 for ${r.caller.org}`);
        for (const id of found.get('encounter_id') ?? []) if (!mine.has(id as string)) violate('cross-org-leak', phase, r, `encounter_id ${JSON.stringify(id)} is not one of ${r.caller.org}'s`);
      }
      if (phase === 'outage') {
        const want = NO_LOOKUP.has(r.caller.role) ? 401 : 503;
        if (res.status !== want || (want === 503 && reason !== 'digest_key_unavailable')) violate('outage-answer', phase, r, `${key} while the database is down (expected ${want === 503 ? '503 digest_key_unavailable' : '401'})`);
      }
    };

    // ---------------------------------------------------------------- the load, with the outage in the middle
    let phase: Phase = 'steady';
    let steadyIssued = 0;
    let steadyDone = 0;
    let outageAnswers = 0;
    let transition = 0;
    let outageCount = 0;
    let firstOkAfterStart: number | null = null;
    let dbBackAt = 0;
    const latencies = new Float64Array(o.requests * 2 + 100_000);
    let nLat = 0;
    const pidBefore = ref.child.pid;
    const outageAt = Math.floor(o.requests * (o.outageAt ?? 0.4));
    const outage = { enabled: o.outage !== false, stopMs: 0, durationMs: 0, answers: 0, histogram: outageHistogram, startMs: 0, recoveryMs: null as number | null, referencePidUnchanged: true };
    let controllerDone: Promise<void> = Promise.resolve();
    let controllerStarted = false;

    const controller = async () => {
      log(`stopping the database after ${steadyDone} steady requests`);
      phase = 'stopping';
      let t = performance.now();
      await db.stop();
      outage.stopMs = Math.round(performance.now() - t);
      phase = 'outage';
      const outageStart = performance.now();
      while (performance.now() - outageStart < (o.outageMinMs ?? 1500) || outageAnswers < (o.outageMinAnswers ?? 50)) await new Promise((r) => setTimeout(r, 50));
      outage.durationMs = Math.round(performance.now() - outageStart);
      outage.answers = outageAnswers;
      log(`database down for ${outage.durationMs} ms (${outageAnswers} answers); starting it again`);
      phase = 'starting';
      t = performance.now();
      await db.start();
      outage.startMs = Math.round(performance.now() - t);
      dbBackAt = performance.now();
      phase = 'recovering';
      const budget = o.recoveryBudgetMs ?? 30_000;
      while (firstOkAfterStart === null && performance.now() - dbBackAt < budget) await new Promise((r) => setTimeout(r, 20));
      outage.recoveryMs = firstOkAfterStart === null ? null : Math.round(firstOkAfterStart - dbBackAt);
      outage.referencePidUnchanged = ref!.child.pid === pidBefore && ref!.child.exitCode === null && ref!.child.signalCode === null;
      log(outage.recoveryMs === null ? `no 200 within ${budget} ms of the database being back` : `first 200 ${outage.recoveryMs} ms after the database was back`);
      phase = 'steady';
    };

    const started = performance.now();
    const worker = async () => {
      for (;;) {
        const issuedIn = phase;
        if (issuedIn === 'steady') {
          if (steadyIssued >= o.requests) return;
          steadyIssued++;
        }
        const r = nextRequest();
        const t0 = performance.now();
        let res: RawResponse | Error;
        try {
          res = await send(r.caller, r.target);
        } catch (e) {
          res = e as Error;
        }
        latencies[nLat++ % latencies.length] = performance.now() - t0;
        const endedIn = phase;
        const tag: Phase = issuedIn === endedIn ? issuedIn : 'transition';
        if (tag === 'steady') steadyDone++;
        else if (tag === 'outage') {
          outageAnswers++;
          outageCount++;
        } else transition++;
        if (!(res instanceof Error) && res.status === 200 && (issuedIn === 'recovering' || endedIn === 'recovering') && firstOkAfterStart === null) firstOkAfterStart = performance.now();
        verify(r, res, tag === 'transition' || tag === 'stopping' || tag === 'starting' || tag === 'recovering' ? 'transition' : tag);
        if (!controllerStarted && o.outage !== false && steadyDone >= outageAt) {
          controllerStarted = true;
          controllerDone = controller();
        }
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, worker));
    await controllerDone; // a small run may end before the controller does
    const durationMs = Math.round(performance.now() - started);
    const total = steadyDone + outageCount + transition;
    log(`${total} requests in ${durationMs} ms`);

    // ---------------------------------------------------------------- restart on the same database
    const referencePeakRssMb = peakRssMb(ref.child.pid);
    const restart = { readsServed: 0, disclosureRows: 0, tablesBefore: {} as Record<string, number>, tablesAfter: {} as Record<string, number>, listTotalsBefore: {} as Record<string, number>, listTotalsAfter: {} as Record<string, number>, lostRows: [] as string[] };
    if (o.restart !== false) {
      const listTotalsBefore = await listTotals();
      // An orderly stop (SIGTERM) writes every queued disclosure row before the process ends, including the
      // backlog retried after the outage; the counts are taken only then, so no write is still in flight.
      log('stopping the reference, then restarting it on the same database');
      await ref.stop();
      const tablesBefore = await tableCounts(db);
      ref = await startRef();
      const tablesAfter = await tableCounts(db); // before any request: startup (migrations, seeding) must keep every row
      const listTotalsAfter = await listTotals();
      const lostRows = Object.keys({ ...tablesBefore, ...tablesAfter }).filter((t) => (tablesAfter[t] ?? -1) !== tablesBefore[t]).map((t) => `${t}: ${tablesBefore[t]} → ${tablesAfter[t]}`);
      for (const org of Object.keys(listTotalsBefore)) if (listTotalsAfter[org] !== listTotalsBefore[org]) lostRows.push(`list total of ${org}: ${listTotalsBefore[org]} → ${listTotalsAfter[org]}`);
      // Counted before the totals after the restart were asked for (those are reads of the new process).
      Object.assign(restart, { readsServed: readsServed - Object.keys(listTotalsAfter).length, disclosureRows: tablesBefore.disclosure_events ?? 0, tablesBefore, tablesAfter, listTotalsBefore, listTotalsAfter, lostRows });
    }

    const sorted = latencies.slice(0, Math.min(nLat, latencies.length)).sort();
    return {
      requests: { steady: steadyDone, outage: outageCount, transition, total },
      concurrency: o.concurrency,
      durationMs,
      requestsPerSecond: Math.round((total / durationMs) * 1000),
      latencyMs: { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: percentile(sorted, 100) },
      statusHistogram: Object.fromEntries(Object.entries(histogram).sort(([a], [b]) => a.localeCompare(b))),
      steadyUnavailable,
      violations: { total: violations, byKind, samples },
      outage,
      restart,
      referencePeakRssMb,
      seed,
    };
  } finally {
    await ref?.stop();
    await db.remove().catch(() => {});
  }
}

/** What makes the run fail, in words; empty when it passed. */
export function problems(f: LoadFigures): string[] {
  const out: string[] = [];
  if (f.violations.total > 0) out.push(`${f.violations.total} violations (${Object.entries(f.violations.byKind).map(([k, n]) => `${k} ${n}`).join(', ')})`);
  if (f.outage.enabled && !('503 digest_key_unavailable' in f.outage.histogram)) out.push('no 503 digest_key_unavailable while the database was down');
  if (f.outage.enabled && f.outage.recoveryMs === null) out.push('no 200 after the database came back');
  if (!f.outage.referencePidUnchanged) out.push('the reference process did not survive the database outage');
  if (f.restart.readsServed !== f.restart.disclosureRows) out.push(`${f.restart.readsServed} successful reads but ${f.restart.disclosureRows} disclosure rows after an orderly stop`);
  if (f.restart.lostRows.length > 0) out.push(`rows lost across a restart: ${f.restart.lostRows.join('; ')}`);
  return out;
}
