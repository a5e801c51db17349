// The example API client partners can read: a small, plain client of the Clinical Encounter Public API that
// does what the specification asks of a caller. It pages through the encounter list, reads each encounter,
// its documents, the transcripts of ambient transcript documents and their audio (fetched at once, before
// `expires_at`, and never printed or stored), percent-encodes every id as a path segment, keeps its key in
// the Authorization header only, branches on the exact reason_code (HANDLING, declared to `conformance
// client` in scenario.json) and retries a 503 after a pause. It imports nothing of the harness.

/** What this client does per reason code (§7.1); `conformance client --scenario reference-client/scenario.json` holds it to this. */
export const HANDLING: Record<string, 'stop' | 'retry-later' | 'skip-resource'> = {
  // The key or the organization is refused: nothing this job can fix by itself.
  api_keys_disabled: 'stop', test_prefix_not_allowed: 'stop', malformed_token: 'stop', invalid_key: 'stop',
  disabled_key: 'stop', revoked_key: 'stop', expired_key: 'stop', org_scope_only_required: 'stop',
  route_not_allowed: 'stop', organization_not_allowlisted: 'stop', missing_scope: 'stop',
  // This resource is not available to us (now): go on with the others.
  cross_organization_denied: 'skip-resource', demo_training_denied: 'skip-resource', encounter_not_found: 'skip-resource',
  document_not_found: 'skip-resource', transcript_not_found: 'skip-resource', audio_not_found: 'skip-resource',
  unsupported_document_type: 'skip-resource', audio_not_available_for_document: 'skip-resource',
  // Temporary: try again after a pause.
  digest_key_unavailable: 'retry-later', audio_storage_unavailable: 'retry-later',
};

export interface ClientOptions {
  baseUrl: string;
  key: string;
  /** Requests in flight at once (default 1). */
  concurrency?: number;
  /** Reuse connections (default true). */
  keepAlive?: boolean;
  /** The auth scheme as written (the scheme is case-insensitive; default `Bearer`). */
  scheme?: string;
  /** Page size of the list (1..100). */
  pageSize?: number;
  log?: (line: string) => void;
}

export class Stopped extends Error {}

export interface Answer { status: number; body: any }

export class ApiClient {
  readonly opts: Required<ClientOptions>;
  readonly counts = { requests: 0, encounters: 0, documents: 0, transcripts: 0, audioBytes: 0, skipped: 0 };

  constructor(opts: ClientOptions) {
    this.opts = { concurrency: 1, keepAlive: true, scheme: 'Bearer', pageSize: 25, log: (l) => process.stdout.write(`${l}\n`), ...opts };
  }

  /** The URL of a route: every id percent-encoded as one path segment; query values encoded. */
  url(segments: string[], query: Record<string, string> = {}): string {
    const path = segments.map((s) => encodeURIComponent(s)).join('/');
    const q = new URLSearchParams(query).toString().replaceAll('+', '%20');
    return `${this.opts.baseUrl.replace(/\/$/, '')}/external/v1/${path}${q ? `?${q}` : ''}`;
  }

  headers(): Record<string, string> {
    return { authorization: `${this.opts.scheme} ${this.opts.key}`, accept: 'application/json', ...(this.opts.keepAlive ? {} : { connection: 'close' }) };
  }

  async send(url: string): Promise<Answer> {
    this.counts.requests++;
    const res = await fetch(url, { headers: this.headers() });
    const text = await res.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON: kept as null */ }
    return { status: res.status, body };
  }

  /** GET with the reason-code branching of HANDLING: the body on 200, null for a skipped resource. */
  async get(segments: string[], query: Record<string, string> = {}): Promise<any | null> {
    const url = this.url(segments, query);
    for (let attempt = 0; ; attempt++) {
      // Once a stop reason came back, no request goes out with this key, whichever worker asks (§5.7).
      if (this.stopped) throw new Stopped(this.stopped);
      const a = await this.send(url);
      if (a.status === 200) return a.body;
      const reason = typeof a.body?.reason_code === 'string' ? a.body.reason_code : undefined;
      const action = reason ? HANDLING[reason] : undefined;
      if (action === 'retry-later' && attempt < 4) {
        await new Promise((r) => setTimeout(r, 300 * 2 ** attempt));
        continue;
      }
      if (action === 'skip-resource') {
        this.counts.skipped++;
        this.opts.log(`skipped ${segments[0]}/…: ${reason}`);
        return null;
      }
      this.stopped = `stopped: ${a.status} ${reason ?? 'without a reason_code'}`;
      throw new Stopped(this.stopped);
    }
  }

  /** Set by the first stop reason: the work ends there. */
  private stopped: string | undefined;

  /** Runs `fn` over `items` with at most `concurrency` in flight. */
  async each<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    // A stop in one worker stops them all: no request is sent with that key after a stop reason (§5.7).
    let stopped = false;
    const worker = async () => {
      while (!stopped && next < items.length) {
        try {
          await fn(items[next++]);
        } catch (e) {
          stopped = true;
          throw e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
  }

  /** Every encounter of the list, page by page (offset pagination: limit and offset as canonical decimal text). */
  async listAll(): Promise<any[]> {
    const items: any[] = [];
    for (let offset = 0; offset <= 10_000; offset += this.opts.pageSize) {
      const page = await this.get(['encounters'], {
        limit: String(this.opts.pageSize), offset: String(offset), sort_order: 'asc',
        start_at: '2000-01-01T00:00:00Z', end_at: '2100-01-01T00:00:00Z',
      });
      if (!page) break;
      items.push(...page.items);
      if (page.items.length === 0 || offset + page.items.length >= page.total) break;
    }
    return items;
  }

  async audio(encounterId: string, documentId: string): Promise<void> {
    const a = await this.get(['encounters', encounterId, 'documents', documentId, 'audio']);
    if (!a) return;
    // The URL is a temporary access artifact: used at once, before expires_at, then forgotten.
    if (Date.now() >= Date.parse(a.expires_at)) return;
    const res = await fetch(a.audio_url);
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.ok) this.counts.audioBytes += bytes;
  }

  async sync(): Promise<void> {
    const list = await this.listAll();
    await this.each(list, async (item) => {
      const detail = await this.get(['encounters', item.encounter_id]);
      if (!detail) return;
      this.counts.encounters++;
      for (const doc of detail.encounter.documents ?? []) {
        if (doc.schema_type !== 'document' && doc.schema_type !== 'ambient_transcript') continue; // summaries only (§2.3)
        const d = await this.get(['encounters', item.encounter_id, 'documents', doc.document_id]);
        if (!d) continue;
        this.counts.documents++;
        if (doc.schema_type !== 'ambient_transcript') continue;
        const t = await this.get(['encounters', item.encounter_id, 'documents', doc.document_id, 'transcript']);
        if (t) this.counts.transcripts++;
        await this.audio(item.encounter_id, doc.document_id);
      }
    });
  }
}
