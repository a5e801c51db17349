// A deliberately broken API client for tests/client.spec.ts: `node tests/clients/broken-client.ts <mode>`, run by
// `conformance client -- …` (CONFORMANCE_BASE_URL, CONFORMANCE_API_KEY and CONFORMANCE_PROFILE set; the profile
// gives it the resource ids its wrong requests name). It is the example client of
// reference-client/ with ONE behaviour changed per mode, by subclassing ApiClient here (the example client itself
// stays correct); everything else it does as the example does, so every other check still has traffic to judge.
// Request-shape modes send their one wrong request first (the first request of a run is never answered with an
// injected reason, so it reaches the sandbox as sent) and ignore its answer, then sync as the example does.
// Allowed-choice modes (concurrent, no-keep-alive, lowercase-bearer, compression) must stay CONFORMANT.
// With BROKEN_CLIENT_SECRETS set, it appends every key it uses and audio URL it gets to that file (JSON lines),
// so the test can prove none of them reaches the CLI's output or the reports.
import fs from 'node:fs';
import { ApiClient, Stopped, type ClientOptions } from '../../reference-client/client.ts';

const BROKEN_MODES = ['key-in-query', 'limit-050', 'unsupported-key', 'query-on-detail', 'naive-start-at', 'ids-not-encoded', 'retry-storm', 'audio-reused', 'audio-printed', 'audio-sent-back', 'key-printed'] as const;
const ALLOWED_MODES = ['concurrent', 'no-keep-alive', 'lowercase-bearer', 'compression'] as const;
type Mode = (typeof BROKEN_MODES)[number] | (typeof ALLOWED_MODES)[number];

/** Identical repeats of a request answered 404 in `retry-storm`. */
const STORM_REPEATS = 5;
/** How long after `expires_at` `audio-reused` fetches its audio URL again. */
const AFTER_EXPIRY_MS = 1000;
/** The list query of the example client's first page (reference-client/client.ts listAll). */
const LIST: Record<string, string> = { limit: '25', offset: '0', sort_order: 'asc', start_at: '2000-01-01T00:00:00Z', end_at: '2100-01-01T00:00:00Z' };

interface Profile {
  credentials: Record<string, { key?: string }>;
  resources: Record<string, { encounter_id?: string; document_id?: string }>;
}

function note(kind: 'key' | 'audio_url', value: string): void {
  const file = process.env.BROKEN_CLIENT_SECRETS;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ kind, value })}\n`);
}

class BrokenClient extends ApiClient {
  readonly mode: Mode;
  readonly profile: Profile;
  #reused = false;

  constructor(opts: ClientOptions, mode: Mode, profile: Profile) {
    super(opts);
    this.mode = mode;
    this.profile = profile;
  }

  #id(role: string): string {
    const id = this.profile.resources[role]?.encounter_id;
    if (!id) throw new Error(`broken-client: the profile has no resources.${role}.encounter_id`);
    return id;
  }

  /** The one wrong request of a request-shape mode, or undefined. */
  misstep(): string | undefined {
    switch (this.mode) {
      case 'key-in-query': return this.url(['encounters'], { ...LIST, api_key: this.opts.key });
      case 'limit-050': return this.url(['encounters'], { ...LIST, limit: '050' });
      case 'unsupported-key': return this.url(['encounters'], { ...LIST, owner: 'me' });
      case 'naive-start-at': return this.url(['encounters'], { ...LIST, start_at: '2020-01-01T00:00:00' });
      case 'query-on-detail': return this.url(['encounters', this.#id('own_encounter')], { expand: 'documents' });
      // The opaque id straight into the path, as a client that builds URLs by concatenation does.
      case 'ids-not-encoded': return `${this.opts.baseUrl.replace(/\/$/, '')}/external/v1/encounters/${this.#id('own_encounter')}`;
      default: return undefined;
    }
  }

  headers(): Record<string, string> {
    const h = super.headers();
    // What the client accepts is its choice; undici decodes what it asked for.
    return this.mode === 'compression' ? { ...h, 'accept-encoding': 'gzip, deflate, br' } : h;
  }

  async get(segments: string[], query: Record<string, string> = {}): Promise<any | null> {
    const body = await super.get(segments, query);
    if (typeof body?.audio_url === 'string') note('audio_url', body.audio_url);
    return body;
  }

  async audio(encounterId: string, documentId: string): Promise<void> {
    if (this.mode !== 'audio-reused' && this.mode !== 'audio-printed' && this.mode !== 'audio-sent-back') return super.audio(encounterId, documentId);
    const a = await this.get(['encounters', encounterId, 'documents', documentId, 'audio']);
    if (!a) return;
    if (this.mode === 'audio-sent-back') {
      // The URL kept as if it were an identifier and sent back to the API (encoded as one segment, as ids are).
      const back = await this.send(this.url(['encounters', a.audio_url]));
      this.opts.log(`audio URL sent back as an id: ${back.status}`);
      return;
    }
    if (this.mode === 'audio-printed') this.opts.log(`audio of ${documentId}: ${a.audio_url}`);
    const res = await fetch(a.audio_url);
    this.counts.audioBytes += (await res.arrayBuffer()).byteLength;
    if (this.mode === 'audio-reused' && !this.#reused) {
      // Kept for later, as a cache would: fetched again once it has expired.
      this.#reused = true;
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(a.expires_at) - Date.now()) + AFTER_EXPIRY_MS));
      const again = await fetch(a.audio_url);
      await again.arrayBuffer();
      this.opts.log(`audio fetched again after expires_at: ${again.status}`);
    }
  }

  async sync(): Promise<void> {
    const wrong = this.misstep();
    if (wrong) {
      const a = await this.send(wrong).catch((e: Error) => ({ status: 0, body: { reason_code: e.message } }));
      this.opts.log(`${this.mode}: the wrong request got ${a.status} ${a.body?.reason_code ?? ''}`);
    }
    if (this.mode === 'retry-storm') {
      // A 404 encounter_not_found is terminal for this resource; the storm sends it again and again, at once.
      const url = this.url(['encounters', this.#id('unknown_encounter')]);
      for (let i = 0; i <= STORM_REPEATS; i++) await this.send(url);
    }
    await super.sync();
  }
}

const mode = process.argv[2] as Mode;
if (!([...BROKEN_MODES, ...ALLOWED_MODES] as readonly string[]).includes(mode)) {
  process.stderr.write(`broken-client: mode must be one of ${[...BROKEN_MODES, ...ALLOWED_MODES].join(', ')} (got ${mode})\n`);
  process.exit(2);
}
const baseUrl = process.env.CONFORMANCE_BASE_URL;
const profileFile = process.env.CONFORMANCE_PROFILE;
if (!baseUrl || !profileFile) {
  process.stderr.write('broken-client: set CONFORMANCE_BASE_URL and CONFORMANCE_PROFILE (conformance client sets both)\n');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8')) as Profile;
const key = process.env.CONFORMANCE_API_KEY;
if (!key) {
  process.stderr.write('broken-client: set CONFORMANCE_API_KEY (conformance client sets it)\n');
  process.exit(2);
}
note('key', key);
if (mode === 'key-printed') process.stdout.write(`broken-client: using key ${key}\n`);
const client = new BrokenClient({
  baseUrl, key,
  concurrency: mode === 'concurrent' ? 4 : 1,
  keepAlive: mode !== 'no-keep-alive',
  scheme: mode === 'lowercase-bearer' ? 'bearer' : 'Bearer',
}, mode, profile);
try {
  await client.sync();
  const c = client.counts;
  process.stdout.write(`broken-client ${mode}: ${c.encounters} encounters, ${c.documents} documents, ${c.transcripts} transcripts, ${c.audioBytes} audio bytes, ${c.skipped} skipped, ${c.requests} requests\n`);
} catch (e) {
  if (!(e instanceof Stopped)) throw e;
  process.stdout.write(`broken-client ${mode}: ${e.message}\n`);
  process.exitCode = 1;
}
