// Entry point of the reference implementation: database provider → migrations → seed → HTTP server → one ready line.
//   node reference-impl/main.ts [--db embedded|container|url] [--port 0] [--host 127.0.0.1] [--profile-out FILE]
//        [--switchboard-token TOKEN] [--guide] [--data-dir DIR] [--exit-with-parent] [--public-url ORIGIN]
//        [--opaque-ids] [--audio-ttl-seconds N]
// stdout carries exactly one line, {"event":"ready",...}; everything else goes to stderr. Startup failure: exit 2.
// `startReference(startup)` is the same startup for a caller that creates the server with its own hook (and adds
// its own options to the command line); run directly, this module starts the service with the correct rules.
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import pg from 'pg';
import { loadDigestKey } from './auth.ts';
import { DisclosureLog } from './disclosure.ts';
import type { Hook } from './context.ts';
import { PROVIDER_KINDS, ProviderError, startProvider } from './db/provider.ts';
import type { DbProvider, ProviderKind } from './db/provider.ts';
import { migrate } from './migrate.ts';
import { AUDIO_URL_TTL_SECONDS } from './audio.ts';
import { opaqueSeed } from './opaque-ids.ts';
import { buildProfile, guideText } from './profile.ts';
import { Repo } from './repo.ts';
import { loadSeed, seedDatabase } from './seed.ts';
import { createServer } from './server.ts';
import { DeliveryWorker } from './webhooks.ts';

const OPENAPI_PATH = path.join(import.meta.dirname, '..', 'fixtures', 'contract', 'openapi.json');

/** A bad command line: one line `reference-impl: usage: …`, exit 2. */
export class UsageError extends Error {}

/** What a caller adds to the startup: options of its own, and the hook the server is created with. */
export interface Startup {
  options?: ParseArgsOptionsConfig;
  /** The hook, from the parsed command line (throw UsageError for a bad value of the caller's options). */
  hook?: (values: Record<string, string | boolean | undefined>, switchboardToken: string | null) => Hook;
  /** Added to the ready line on stderr (e.g. what the hook switches on for every request). */
  describe?: (values: Record<string, string | boolean | undefined>) => string;
}

function options(startup: Startup) {
  const { values } = parseArgs({
    options: {
      ...startup.options,
      db: { type: 'string', default: 'embedded' },
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'profile-out': { type: 'string' },
      'switchboard-token': { type: 'string' },
      guide: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      'exit-with-parent': { type: 'boolean', default: false },
      'public-url': { type: 'string' },
      // For judging partners' clients: ids they must percent-encode (opaque-ids.ts); audio URLs that die sooner.
      'opaque-ids': { type: 'boolean', default: false },
      'audio-ttl-seconds': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!PROVIDER_KINDS.includes(values.db as ProviderKind)) throw new UsageError(`--db must be one of ${PROVIDER_KINDS.join(', ')}`);
  if (!/^[0-9]{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new UsageError('--port must be 0..65535');
  const token = values['switchboard-token'];
  if (token !== undefined && token.length < 8) throw new UsageError('--switchboard-token must have at least 8 characters');
  if (values['data-dir'] !== undefined && values.db !== 'embedded') throw new UsageError('--data-dir applies to --db embedded only');
  const publicUrl = values['public-url'];
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/?#]+$/.test(publicUrl)) throw new UsageError('--public-url must be an origin like http://127.0.0.1:8080 (no path)');
  const ttl = values['audio-ttl-seconds'];
  if (ttl !== undefined && (!/^[1-9][0-9]{0,3}$/.test(ttl) || Number(ttl) > 3600)) throw new UsageError('--audio-ttl-seconds must be a whole number of seconds, 1..3600');
  return {
    opaqueIds: values['opaque-ids'],
    audioTtlSeconds: ttl === undefined ? AUDIO_URL_TTL_SECONDS : Number(ttl),
    publicUrl,
    db: values.db as ProviderKind,
    port: Number(values.port),
    host: values.host,
    profileOut: values['profile-out'],
    switchboardToken: token ?? null,
    values: values as Record<string, string | boolean | undefined>,
    guide: values.guide,
    dataDir: values['data-dir'],
    exitWithParent: values['exit-with-parent'],
  };
}

let provider: DbProvider | undefined;
let pool: pg.Pool | undefined;
let server: http.Server | undefined;
let worker: DeliveryWorker | undefined;
let disclosures: DisclosureLog | undefined;
let providerStarting: Promise<DbProvider> | undefined;
let stopping = false;
let shuttingDown: Promise<never> | undefined;

// One shutdown, whatever asks for it and how often: Ctrl-C in a terminal signals the whole process group, so
// `conformance serve` forwards a SIGTERM while the SIGINT's shutdown is still writing disclosure rows and
// stopping PostgreSQL; a second signal must not cut that short (process.exit would leave the data folder).
function shutdown(code: number): Promise<never> {
  shuttingDown ??= (async () => {
    stopping = true;
    if (server) {
      const closed = new Promise((resolve) => server!.close(resolve));
      server.closeAllConnections();
      await closed;
    }
    // Every successful read has its row: the queue is written before the pool ends.
    await disclosures?.close().catch(() => {});
    await worker?.stop().catch(() => {});
    await pool?.end().catch(() => {});
    // A signal during start-up waits for the database being started, then stops it too.
    const started = provider ?? (await providerStarting?.catch(() => undefined));
    await started?.stop().catch(() => {});
    process.exit(code);
  })();
  return shuttingDown;
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message || e.name : String(e);
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

async function main(startup: Startup): Promise<void> {
  const started = performance.now();
  const opts = options(startup);
  const hook = startup.hook?.(opts.values, opts.switchboardToken);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(0));
  if (opts.exitWithParent) {
    // The parent holds the other end of our stdin and never writes to it: when the parent dies, however
    // (even SIGKILL), stdin ends and the sandbox shuts down in order instead of living on as an orphan.
    process.stdin.on('end', () => void shutdown(0));
    process.stdin.on('error', () => void shutdown(0));
    process.stdin.resume();
  }

  providerStarting = startProvider(opts.db, { dataDir: opts.dataDir, env: process.env });
  provider = await providerStarting;
  if (stopping) return;
  // Short timeouts: an unreachable database must turn into 503 digest_key_unavailable quickly, never a hang.
  pool = new pg.Pool({ connectionString: provider.connectionString, max: 16, connectionTimeoutMillis: 2000, query_timeout: 5000, idleTimeoutMillis: 10_000 });
  pool.on('error', () => {}); // an idle client losing its server must not crash the process
  // --opaque-ids: the seed itself is rewritten, so the database, the profile, the guide and webhook events agree.
  const seed = opts.opaqueIds ? opaqueSeed(loadSeed()).seed : loadSeed();
  const digestKey = loadDigestKey(process.env);
  await migrate(pool);
  await seedDatabase(pool, seed, digestKey);
  const mainOrg = seed.api_keys.find((k) => k.role === 'full')!.organization_id!;
  const listMinTotal = await new Repo(pool).countListable(mainOrg);

  const fallbackHost = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let fallbackOrigin = `http://${fallbackHost}:${opts.port}`;
  // Outbound webhooks: the worker delivers outbox rows of ACTIVE subscriptions only (none exist until activated).
  worker = new DeliveryWorker(pool, undefined, hook && ((key) => hook.fromKey(key)));
  worker.start();
  const deliveryWorker = worker;
  disclosures = new DisclosureLog(pool);
  server = createServer({
    disclosures,
    pool, digestKey, openapiPath: OPENAPI_PATH, switchboardToken: opts.switchboardToken, hook, get fallbackOrigin() { return fallbackOrigin; },
    sandboxOrganizationId: mainOrg, onWebhookEvent: () => deliveryWorker.kick(), audioTtlSeconds: opts.audioTtlSeconds,
  });
  await new Promise<void>((resolve, reject) => {
    server!.once('error', reject);
    server!.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  // --public-url: where clients reach this server when that is not where it listens (a published container port).
  fallbackOrigin = opts.publicUrl ?? `http://${fallbackHost}:${port}`;
  const baseUrl = fallbackOrigin;

  if (opts.profileOut) {
    const profile = buildProfile(seed, baseUrl, provider.kind, opts.switchboardToken, listMinTotal);
    fs.mkdirSync(path.dirname(path.resolve(opts.profileOut)), { recursive: true });
    fs.writeFileSync(opts.profileOut, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', baseUrl, db: provider.kind })}\n`);
  process.stderr.write(`reference-impl: ready in ${Math.round(performance.now() - started)} ms on ${baseUrl} (db ${provider.kind}${opts.switchboardToken ? ', switchboard on' : ''}${startup.describe?.(opts.values) ?? ''}${opts.opaqueIds ? ', opaque ids' : ''}${opts.audioTtlSeconds !== AUDIO_URL_TTL_SECONDS ? `, audio URLs live ${opts.audioTtlSeconds} s` : ''})${provider.dataDir ? `; data dir ${provider.dataDir.path} (${provider.dataDir.temporary ? 'temporary' : 'kept'})` : ''}\n`);
  if (opts.guide) process.stderr.write(guideText(seed, baseUrl, opts.switchboardToken));
}

/** Starts the reference (provider → migrations → seed → server → ready line) with what `startup` adds. */
export function startReference(startup: Startup = {}): void {
  main(startup).catch(async (e: unknown) => {
    const prefix = e instanceof UsageError ? 'usage' : e instanceof ProviderError ? 'database' : 'startup failed';
    process.stderr.write(`reference-impl: ${prefix}: ${oneLine(e)}\n`);
    await shutdown(2);
  });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === import.meta.filename) startReference();
