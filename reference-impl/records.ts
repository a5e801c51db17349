// The records the request path reads and hands on: database rows, the parsed query, the list statement's pieces.
// Types and one table of correct SQL pieces only; below repo.ts, query.ts and context.ts, it imports nothing.

export interface KeyRow {
  key_id: string; key_digest: Buffer; organization_id: string | null; scopes: string[]; is_test: boolean;
  revoked: boolean; disabled: boolean; expired: boolean;
  allowlisted: boolean | null; encounter_routes_enabled: boolean | null; document_routes_enabled: boolean | null;
}
export interface EncounterRow {
  encounter_id: string; organization_id: string; created_at: Date; updated_at: Date; date_of_service: Date | null;
  encounter_type: string | null; status: string | null; is_demo: boolean;
  patient_id: string | null; first_name: string | null; last_name: string | null; date_of_birth: string | null;
}
export interface DocumentRow {
  document_id: string; encounter_id: string; organization_id: string; schema_type: string; title: string | null; status: string | null;
  workflow_variant: string | null; audio_duration_seconds: number | null; content_text: string | null; created_at: Date; updated_at: Date;
}
/** The columns of a document summary (list items and encounter detail). */
export type DocumentSummaryRow = Pick<DocumentRow, 'document_id' | 'schema_type' | 'title' | 'status' | 'workflow_variant' | 'audio_duration_seconds'>;
export interface TranscriptRow { provider: string; audio_duration_seconds: number | null; finalized: boolean; turns: { speaker: string; text: string; start: number; end: number }[] }
export interface RecordingRow { has_audio: boolean; storage_key: string | null }

/** One key=value pair of the raw query, decoded (keyOk/valueOk: false when an escape was not UTF-8). */
export interface QueryPair { key: string; value: string; keyOk: boolean; valueOk: boolean }
export interface ListQuery { limit: number; offset: number; sortOrder: 'asc' | 'desc'; startAt: string | null; endAt: string | null }

export type Direction = 'ASC' | 'DESC';

/**
 * The pieces of the list statement (repo.ts listEncounters), a named point like the pipeline's stages. Bounds use
 * $1 organization, $2 start_at, $3 end_at; `limit` and `offset` map the values bound as $4 and $5.
 */
export interface ListSql {
  direction: (sortOrder: 'asc' | 'desc') => Direction;
  /** The direction of the encounter_id tie-breaker, given the created_at direction. */
  tieDirection: (dir: Direction) => Direction;
  /** The tie-breaker term, given the table prefix ('' or 'e.') and its direction. */
  tieBreaker: (prefix: string, dir: Direction) => string;
  organization: string;
  listable: string;
  startBound: (dir: Direction, q: ListQuery) => string;
  endBound: (dir: Direction, q: ListQuery) => string;
  /** The condition `total` counts under, given the page's condition. */
  totalWhere: (where: string) => string;
  limit: (limit: number) => number;
  offset: (offset: number) => number;
  /** An empty date window answers the list without the window (with the correct pieces). */
  emptyWindowUnfiltered: boolean;
}

export const LIST_SQL: ListSql = {
  direction: (sortOrder) => (sortOrder === 'asc' ? 'ASC' : 'DESC'),
  tieDirection: (dir) => dir,
  tieBreaker: (prefix, dir) => `${prefix}encounter_id ${dir}`,
  organization: 'organization_id = $1',
  listable: 'NOT is_demo',
  startBound: () => '($2::timestamptz IS NULL OR created_at >= $2)',
  endBound: () => '($3::timestamptz IS NULL OR created_at < $3)',
  totalWhere: (where) => where,
  limit: (limit) => limit,
  offset: (offset) => offset,
  emptyWindowUnfiltered: false,
};
