// Loads fixtures/seed/seed.json into the database. Idempotent: rows are inserted with ON CONFLICT DO NOTHING,
// so a restart keeps every row (including disclosure events) and adds none twice. Only key digests are stored.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { digestToken } from './auth.ts';

export const SEED_PATH = path.join(import.meta.dirname, '..', 'fixtures', 'seed', 'seed.json');

type Row = Record<string, unknown>;
export interface SeedKey { role: string; key_id: string; key: string; label: string; organization_id: string | null; scopes: string[]; is_test: boolean; disabled_at: string | null; revoked_at: string | null; expires_at: string | null }
export interface Seed {
  organizations: Row[];
  api_keys: SeedKey[];
  invalid_tokens: Record<string, string>;
  patients: Row[];
  encounters: Row[];
  documents: Row[];
  transcripts: (Row & { turns: unknown[] })[];
  recordings: Row[];
  audio_objects: { storage_key: string; content_type: string; bytes_base64: string }[];
  generated: {
    organization_id: string; count: number; id_prefix: string; id_seed: string; base: string; step_seconds: number;
    tie_groups: number[][]; demo_indexes: number[]; encounter_types: (string | null)[]; statuses: (string | null)[]; patient_ids: (string | null)[];
  };
  roles: Record<string, { encounter_id: string; document_id?: string }>;
}

export function loadSeed(): Seed {
  return JSON.parse(fs.readFileSync(SEED_PATH, 'utf8')) as Seed;
}

const DOC_FOR_TYPE: Record<string, { schema_type: string; workflow_variant: string | null; title: string } | undefined> = {
  ambient: { schema_type: 'ambient_transcript', workflow_variant: 'ambient', title: 'Ambient recording' },
  phone_call: { schema_type: 'ambient_transcript', workflow_variant: 'phone_call', title: 'Phone call' },
  clinical_documentation: { schema_type: 'document', workflow_variant: null, title: 'Clinical note' },
  billing: { schema_type: 'billing', workflow_variant: null, title: 'Billing summary' },
  checklist: { schema_type: 'encounter_checklist', workflow_variant: null, title: 'Checklist' },
};

/** Expands `generated` into encounter and document rows; pure and deterministic. */
export function expandGenerated(g: Seed['generated']): { encounters: Row[]; documents: Row[] } {
  const encounters: Row[] = [];
  const documents: Row[] = [];
  const base = Date.parse(g.base);
  const tieHead = new Map<number, number>();
  for (const group of g.tie_groups) for (const i of group) tieHead.set(i, group[0]);
  for (let i = 0; i < g.count; i++) {
    const hash = crypto.createHash('sha256').update(`${g.id_seed}${i}`).digest('hex').slice(0, 12);
    const encounterId = `${g.id_prefix}${hash}`;
    const created = new Date(base + (tieHead.get(i) ?? i) * g.step_seconds * 1000);
    const updated = new Date(created.getTime() + 15 * 60_000);
    const type = g.encounter_types[i % g.encounter_types.length];
    encounters.push({
      encounter_id: encounterId, organization_id: g.organization_id, patient_id: g.patient_ids[i % g.patient_ids.length],
      created_at: created.toISOString(), updated_at: updated.toISOString(),
      date_of_service: i % 4 === 3 ? null : new Date(created.getTime() - 30 * 60_000).toISOString(),
      encounter_type: type, status: g.statuses[i % g.statuses.length], is_demo: g.demo_indexes.includes(i),
    });
    const doc = type === null ? undefined : DOC_FOR_TYPE[type];
    if (doc) {
      documents.push({
        document_id: `doc_${hash}`, encounter_id: encounterId, schema_type: doc.schema_type, title: doc.title,
        status: doc.schema_type === 'document' ? null : 'finalized', workflow_variant: doc.workflow_variant,
        audio_duration_seconds: doc.schema_type === 'ambient_transcript' ? 30 + (i % 7) : null,
        content_text: doc.schema_type === 'document' ? `Generated note ${i}.` : null,
        created_at: created.toISOString(), updated_at: updated.toISOString(),
      });
    }
  }
  return { encounters, documents };
}

async function insertRows(client: pg.PoolClient, table: string, conflict: string, rows: Row[], columns: string[]): Promise<void> {
  for (const row of rows) {
    const values = columns.map((c) => row[c] ?? null);
    const params = columns.map((_, i) => `$${i + 1}`).join(', ');
    await client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${params}) ON CONFLICT (${conflict}) DO NOTHING`, values);
  }
}

export async function seedDatabase(pool: pg.Pool, seed: Seed, digestKey: Buffer): Promise<void> {
  const gen = expandGenerated(seed.generated);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(7140002)');
    await insertRows(client, 'organizations', 'organization_id', seed.organizations, ['organization_id', 'name', 'allowlisted', 'encounter_routes_enabled', 'document_routes_enabled']);
    for (const k of seed.api_keys) {
      // The digest is refreshed so that a changed REFERENCE_DIGEST_KEY still verifies the sandbox keys; the row is kept.
      // So is the organization: a kept data dir seeded without --opaque-ids and started with it (or the reverse)
      // holds both sets of rows, and the keys act for the organizations of the seed this run wrote in the profile.
      await client.query(
        `INSERT INTO api_keys (key_id, label, key_digest, organization_id, scopes, is_test, disabled_at, revoked_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (key_id) DO UPDATE SET key_digest = EXCLUDED.key_digest, organization_id = EXCLUDED.organization_id`,
        [k.key_id, k.label, digestToken(digestKey, k.key), k.organization_id, k.scopes, k.is_test, k.disabled_at, k.revoked_at, k.expires_at],
      );
    }
    await insertRows(client, 'patients', 'patient_id', seed.patients, ['patient_id', 'organization_id', 'first_name', 'last_name', 'date_of_birth']);
    const encCols = ['encounter_id', 'organization_id', 'patient_id', 'created_at', 'updated_at', 'date_of_service', 'encounter_type', 'status', 'is_demo'];
    await insertRows(client, 'encounters', 'encounter_id', [...seed.encounters, ...gen.encounters], encCols);
    const docs = [...seed.documents, ...gen.documents].map((d, i) => ({ ...d, position: i }));
    const docCols = ['document_id', 'encounter_id', 'position', 'schema_type', 'title', 'status', 'workflow_variant', 'audio_duration_seconds', 'content_text', 'created_at', 'updated_at'];
    await insertRows(client, 'documents', 'document_id', docs, docCols);
    const transcripts = seed.transcripts.map((t) => ({ ...t, turns: JSON.stringify(t.turns) }));
    await insertRows(client, 'transcripts', 'document_id', transcripts, ['document_id', 'provider', 'audio_duration_seconds', 'finalized', 'turns']);
    await insertRows(client, 'recordings', 'recording_id', seed.recordings, ['recording_id', 'document_id', 'has_audio', 'storage_key']);
    const objects = seed.audio_objects.map((o) => ({ ...o, bytes: Buffer.from(o.bytes_base64, 'base64') }));
    await insertRows(client, 'audio_objects', 'storage_key', objects, ['storage_key', 'content_type', 'bytes']);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
