// Plain-SQL migrations (migrations/NNN_name.sql) applied in order, each once, recorded in schema_migrations.
// An advisory lock serialises concurrent starts on the same database.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

const DIR = path.join(import.meta.dirname, 'migrations');
const LOCK = 7_140_001;

export async function migrate(pool: pg.Pool): Promise<string[]> {
  const files = fs.readdirSync(DIR).filter((f) => /^[0-9]{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const file of files) {
      const version = file.slice(0, -4);
      if (done.has(version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(fs.readFileSync(path.join(DIR, file), 'utf8'));
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      applied.push(version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK]).catch(() => {});
    client.release();
  }
  return applied;
}
