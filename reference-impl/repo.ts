// All SQL of the request path. Ordering, limits, bounds and total are computed by PostgreSQL. The list statement is
// built from its pieces (records.ts ListSql), which the caller asks for at the named point listSql.
import crypto from 'node:crypto';
import type pg from 'pg';
import { LIST_SQL, type DocumentRow, type DocumentSummaryRow, type EncounterRow, type KeyRow, type ListQuery, type ListSql, type RecordingRow, type TranscriptRow } from './records.ts';

export type { DocumentRow, DocumentSummaryRow, EncounterRow, KeyRow, RecordingRow, TranscriptRow } from './records.ts';

const ENCOUNTER_COLUMNS = `e.encounter_id, e.organization_id, e.created_at, e.updated_at, e.date_of_service, e.encounter_type, e.status, e.is_demo,
  e.patient_id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth`;

// The summaries of an encounter's documents as one JSON array, in position order (the same statement as the
// encounter: no second round trip, no query per encounter). JSON carries text and float8 unchanged.
const DOCUMENTS_JSON = `LEFT JOIN LATERAL (
    SELECT coalesce(json_agg(json_build_object('document_id', d.document_id, 'schema_type', d.schema_type, 'title', d.title, 'status', d.status,
             'workflow_variant', d.workflow_variant, 'audio_duration_seconds', d.audio_duration_seconds) ORDER BY d.position, d.document_id), '[]') AS documents
      FROM documents d WHERE d.encounter_id = e.encounter_id) ds ON TRUE`;

const DOCUMENT_COLUMNS = ['document_id', 'encounter_id', 'organization_id', 'schema_type', 'title', 'status', 'workflow_variant', 'audio_duration_seconds', 'content_text', 'created_at', 'updated_at'] as const;

/**
 * A named prepared statement (parsed and planned once per connection). The name is derived from the text, so each
 * other text of a query (other list pieces) is its own statement and a name never meets two texts.
 */
const statements = new Map<string, string>();
function named(text: string, values: unknown[]): pg.QueryConfig {
  let name = statements.get(text);
  if (name === undefined) {
    name = `ref_${crypto.createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statements.set(text, name);
  }
  return { name, text, values };
}

export class Repo {
  readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async findKey(keyId: string): Promise<KeyRow | undefined> {
    const r = await this.pool.query<KeyRow>(named(
      `SELECT k.key_id, k.key_digest, k.organization_id, k.scopes, k.is_test,
              k.revoked_at IS NOT NULL AND k.revoked_at <= now() AS revoked,
              k.disabled_at IS NOT NULL AND k.disabled_at <= now() AS disabled,
              k.expires_at IS NOT NULL AND k.expires_at <= now() AS expired,
              o.allowlisted, o.encounter_routes_enabled, o.document_routes_enabled
         FROM api_keys k LEFT JOIN organizations o ON o.organization_id = k.organization_id
        WHERE k.key_id = $1`,
      [keyId],
    ));
    return r.rows[0];
  }

  /** One page, its total and the documents of its encounters, in ONE statement. An empty page (offset past the end) still has the total. */
  async listEncounters(organizationId: string, q: ListQuery, sql: ListSql = LIST_SQL): Promise<{ total: number; rows: (EncounterRow & { documents: DocumentSummaryRow[] })[] }> {
    const dir = sql.direction(q.sortOrder);
    const tieDir = sql.tieDirection(dir);
    const orderBy = `created_at ${dir}, ${sql.tieBreaker('', tieDir)}`;
    const outerOrderBy = `e.created_at ${dir}, ${sql.tieBreaker('e.', tieDir)}`;
    const where = [sql.organization, sql.listable, sql.startBound(dir, q), sql.endBound(dir, q)].join(' AND ');
    const text = `SELECT t.total, ${ENCOUNTER_COLUMNS}, ds.documents
         FROM (SELECT count(*)::int AS total FROM encounters WHERE ${sql.totalWhere(where)}) t
         LEFT JOIN LATERAL (SELECT * FROM encounters WHERE ${where} ORDER BY ${orderBy} LIMIT $4 OFFSET $5) e ON TRUE
         LEFT JOIN patients p ON p.patient_id = e.patient_id
         ${DOCUMENTS_JSON}
        ORDER BY ${outerOrderBy}`;
    const values = [organizationId, q.startAt, q.endAt, sql.limit(q.limit), sql.offset(q.offset)];
    // A volatile tie-breaker (random()) is drawn anew on every execution of the prepared plan.
    const r = await this.pool.query<EncounterRow & { total: number; documents: DocumentSummaryRow[] }>(named(text, values));
    const total = r.rows[0]?.total ?? 0;
    if (sql.emptyWindowUnfiltered && total === 0 && (q.startAt !== null || q.endAt !== null)) return this.listEncounters(organizationId, { ...q, startAt: null, endAt: null });
    return { total, rows: r.rows.filter((row) => row.encounter_id !== null) };
  }

  /** The encounter named by a path (with its document summaries when asked), or undefined. */
  async getEncounter(encounterId: string): Promise<EncounterRow | undefined>;
  async getEncounter(encounterId: string, withDocuments: true): Promise<(EncounterRow & { documents: DocumentSummaryRow[] }) | undefined>;
  async getEncounter(encounterId: string, withDocuments = false): Promise<(EncounterRow & { documents?: DocumentSummaryRow[] }) | undefined> {
    // PostgreSQL text cannot hold NUL, so an id with one names nothing (and must not reach the driver: 500).
    if (encounterId.includes('\u0000')) return undefined;
    const r = await this.pool.query<EncounterRow>(named(
      withDocuments
        ? `SELECT ${ENCOUNTER_COLUMNS}, ds.documents FROM encounters e LEFT JOIN patients p ON p.patient_id = e.patient_id ${DOCUMENTS_JSON} WHERE e.encounter_id = $1`
        : `SELECT ${ENCOUNTER_COLUMNS} FROM encounters e LEFT JOIN patients p ON p.patient_id = e.patient_id WHERE e.encounter_id = $1`,
      [encounterId],
    ));
    return r.rows[0];
  }

  /**
   * The encounter AND the document named by a document path, in one statement. The document is looked up by its
   * id alone (whatever encounter it belongs to): the caller decides, in the order of the pipeline, what to report.
   */
  async getEncounterAndDocument(encounterId: string, documentId: string): Promise<{ encounter: EncounterRow | undefined; document: DocumentRow | undefined }> {
    if (encounterId.includes('\u0000')) return { encounter: undefined, document: undefined };
    const docId = documentId.includes('\u0000') ? null : documentId;
    const r = await this.pool.query<EncounterRow & Record<string, unknown>>(named(
      `SELECT ${ENCOUNTER_COLUMNS}, ${DOCUMENT_COLUMNS.map((c) => `d.${c} AS doc_${c}`).join(', ')}
         FROM encounters e LEFT JOIN patients p ON p.patient_id = e.patient_id
         LEFT JOIN LATERAL (SELECT d.*, de.organization_id FROM documents d JOIN encounters de ON de.encounter_id = d.encounter_id WHERE d.document_id = $2) d ON TRUE
        WHERE e.encounter_id = $1`,
      [encounterId, docId],
    ));
    const row = r.rows[0];
    if (!row) return { encounter: undefined, document: undefined };
    const encounter = {} as Record<string, unknown>;
    const document = {} as Record<string, unknown>;
    for (const [k, v] of Object.entries(row)) {
      if (k.startsWith('doc_')) document[k.slice(4)] = v;
      else encounter[k] = v;
    }
    return { encounter: encounter as unknown as EncounterRow, document: document.document_id === null ? undefined : (document as unknown as DocumentRow) };
  }

  async getTranscript(documentId: string): Promise<TranscriptRow | undefined> {
    const r = await this.pool.query<TranscriptRow>('SELECT provider, audio_duration_seconds, finalized, turns FROM transcripts WHERE document_id = $1', [documentId]);
    return r.rows[0];
  }

  async getRecording(documentId: string): Promise<RecordingRow | undefined> {
    const r = await this.pool.query<RecordingRow>('SELECT has_audio, storage_key FROM recordings WHERE document_id = $1', [documentId]);
    return r.rows[0];
  }

  async audioObjectExists(storageKey: string): Promise<boolean> {
    const r = await this.pool.query('SELECT 1 FROM audio_objects WHERE storage_key = $1', [storageKey]);
    return r.rowCount === 1;
  }

  async getAudioObject(storageKey: string): Promise<{ content_type: string; bytes: Buffer } | undefined> {
    const r = await this.pool.query<{ content_type: string; bytes: Buffer }>('SELECT content_type, bytes FROM audio_objects WHERE storage_key = $1', [storageKey]);
    return r.rows[0];
  }

  async countListable(organizationId: string): Promise<number> {
    const r = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM encounters WHERE organization_id = $1 AND NOT is_demo', [organizationId]);
    return r.rows[0].n;
  }
}
