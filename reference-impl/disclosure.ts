// Disclosure events (one row per successful /external/v1 read), written off the response path: `record()` queues
// the row with the time of the read, and a batch INSERT flushes the queue every few milliseconds, so a 200 never
// waits for its audit row and many reads share one statement. `close()` (SIGINT/SIGTERM, after the HTTP server
// has stopped accepting requests) flushes whatever is queued before the pool ends. A batch that fails (database
// unreachable) goes back to the head of the queue and is retried with backoff; a row is only ever lost when the
// database is still unreachable at shutdown or the process dies without a signal (then stderr names the count).
import type pg from 'pg';

interface DisclosureRow { route: string; org: string; key: string; ids: string[]; at: string }

const FLUSH_MS = 5;
const MAX_BATCH = 1000;
const RETRY_MS = [50, 100, 250, 500, 1000];

// Ordinality keeps the event ids in the order of the reads.
const INSERT = {
  name: 'disclosure_insert_batch',
  text: `INSERT INTO disclosure_events (route, organization_id, key_id, resource_ids, at)
         SELECT r.route, r.org, r.key, ARRAY(SELECT jsonb_array_elements_text(r.ids)), r.at
           FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (route text, org text, key text, ids jsonb, at timestamptz))
                WITH ORDINALITY AS r(route, org, key, ids, at, n)
          ORDER BY r.n`,
};

export class DisclosureLog {
  private readonly pool: pg.Pool;
  private queue: DisclosureRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private failures = 0;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Queues the row of one successful read; never throws and never waits. */
  record(route: string, organizationId: string, keyId: string, resourceIds: string[]): void {
    this.queue.push({ route, org: organizationId, key: keyId, ids: resourceIds, at: new Date().toISOString() });
    this.schedule(FLUSH_MS);
  }

  /** Rows queued and not yet written. */
  get pending(): number {
    return this.queue.length;
  }

  private schedule(ms: number): void {
    if (this.timer !== null || this.flushing !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, ms);
  }

  /** Writes everything queued so far (in batches); resolves when the queue was empty once, or a batch failed. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.flushing = (async () => {
      try {
        while (this.queue.length > 0) {
          const batch = this.queue.splice(0, MAX_BATCH);
          try {
            await this.pool.query({ ...INSERT, values: [JSON.stringify(batch)] });
            this.failures = 0;
          } catch (e) {
            this.queue.unshift(...batch);
            this.failures++;
            if (this.failures === 1) process.stderr.write(`reference-impl: disclosure events not written yet, retrying: ${e instanceof Error ? e.message : String(e)}\n`);
            return;
          }
        }
      } finally {
        this.flushing = null;
        if (this.queue.length > 0) this.schedule(this.failures > 0 ? RETRY_MS[Math.min(this.failures, RETRY_MS.length) - 1] : FLUSH_MS);
      }
    })();
    return this.flushing;
  }

  /** Flushes the queue at shutdown, retrying for up to `budgetMs`; reports on stderr what could not be written. */
  async close(budgetMs = 5000): Promise<void> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      await this.flush();
      if (this.queue.length === 0) break;
      if (Date.now() >= deadline) {
        process.stderr.write(`reference-impl: ${this.queue.length} disclosure event(s) could not be written before shutdown (database unreachable)\n`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}
