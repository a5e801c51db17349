// The bench's bulk insert: encounters (one clinical note each) a minute apart from 2020-01-01, numbered from..to,
// in one organization, straight into the reference's tables (generate_series), then VACUUM ANALYZE.
import pg from 'pg';

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Adds encounters (and one clinical note each) numbered from..to for the organization, then VACUUM ANALYZE. */
export async function bulkInsert(db: pg.Client, organizationId: string, from: number, to: number): Promise<number> {
  const t0 = performance.now();
  await db.query('BEGIN');
  await db.query(
    `INSERT INTO encounters (encounter_id, organization_id, patient_id, created_at, updated_at, date_of_service, encounter_type, status, is_demo)
     SELECT 'enc_bench_' || lpad(g::text, 6, '0'), $1, NULL, ts, ts + interval '15 minutes', ts - interval '30 minutes', 'clinical_documentation', 'completed', false
       FROM generate_series($2::int, $3::int) g, LATERAL (SELECT timestamptz '2020-01-01T00:00:00Z' + g * interval '1 minute' AS ts) t`,
    [organizationId, from, to],
  );
  await db.query(
    `INSERT INTO documents (document_id, encounter_id, position, schema_type, title, status, workflow_variant, audio_duration_seconds, content_text, created_at, updated_at)
     SELECT 'doc_bench_' || lpad(g::text, 6, '0'), 'enc_bench_' || lpad(g::text, 6, '0'), 0, 'document', 'Clinical note', NULL, NULL, NULL, 'Bench note.', ts, ts
       FROM generate_series($1::int, $2::int) g, LATERAL (SELECT timestamptz '2020-01-01T00:00:00Z' + g * interval '1 minute' AS ts) t`,
    [from, to],
  );
  await db.query('COMMIT');
  // The steady state autovacuum reaches: analysed, and the visibility map set (index-only scans depend on it). A
  // VACUUM that overlaps a short transaction of the reference (its webhook poller) cannot mark the new rows
  // all-visible yet, so it is repeated a few times until nearly every page is.
  for (let attempt = 0; attempt < 5; attempt++) {
    await db.query('VACUUM ANALYZE encounters');
    await db.query('VACUUM ANALYZE documents');
    const r = await db.query<{ visible: number }>(`SELECT relallvisible::float / greatest(relpages, 1) AS visible FROM pg_class WHERE relname = 'encounters'`);
    if (r.rows[0].visible >= 0.95) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return round((performance.now() - t0) / 1000);
}

