// The sandbox dataset (fixtures/seed/seed.json) read as data, without the reference: every id is unique in
// its table (the loader inserts with ON CONFLICT DO NOTHING, so a repeated id would silently drop a row),
// every reference between rows resolves, and every profile role names rows that exist and fit the role.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
type Row = Record<string, unknown>;
const seed = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/seed/seed.json'), 'utf8')) as Record<string, Row[]> & { roles: Record<string, { encounter_id: string; document_id?: string }> };

function duplicates(rows: Row[], key: string): unknown[] {
  const seen = new Set<unknown>();
  return rows.map((r) => r[key]).filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
}

/** Problems of a dataset shaped like seed.json; empty when it is consistent. */
function seedProblems(s: typeof seed): string[] {
  const out: string[] = [];
  const keys: [string, string][] = [['organizations', 'organization_id'], ['api_keys', 'key_id'], ['patients', 'patient_id'], ['encounters', 'encounter_id'], ['documents', 'document_id'], ['transcripts', 'document_id'], ['recordings', 'recording_id'], ['audio_objects', 'storage_key']];
  for (const [table, key] of keys) for (const id of duplicates(s[table], key)) out.push(`${table}: ${key} ${String(id)} appears more than once`);
  const ids = (table: string, key: string) => new Set(s[table].map((r) => r[key]));
  const orgs = ids('organizations', 'organization_id');
  const encounters = new Map(s.encounters.map((e) => [e.encounter_id, e]));
  const documents = new Map(s.documents.map((d) => [d.document_id, d]));
  for (const e of s.encounters) if (!orgs.has(e.organization_id)) out.push(`encounter ${String(e.encounter_id)}: unknown organization ${String(e.organization_id)}`);
  for (const d of s.documents) if (!encounters.has(d.encounter_id)) out.push(`document ${String(d.document_id)}: unknown encounter ${String(d.encounter_id)}`);
  for (const t of [...s.transcripts, ...s.recordings]) if (!documents.has(t.document_id)) out.push(`${String(t.recording_id ?? 'transcript')} of unknown document ${String(t.document_id)}`);
  const objects = ids('audio_objects', 'storage_key');
  for (const r of s.recordings) if (r.has_audio && r.storage_key === null) out.push(`recording ${String(r.recording_id)} has audio but no storage key`);
  for (const [role, ref] of Object.entries(s.roles)) {
    if (role === 'unknown_encounter') {
      if (encounters.has(ref.encounter_id)) out.push(`role ${role}: ${ref.encounter_id} exists`);
      continue;
    }
    if (!encounters.has(ref.encounter_id)) out.push(`role ${role}: unknown encounter ${ref.encounter_id}`);
    if (ref.document_id === undefined) continue;
    const d = documents.get(ref.document_id);
    if (!d) out.push(`role ${role}: unknown document ${ref.document_id}`);
    else if (d.encounter_id !== ref.encounter_id) out.push(`role ${role}: document ${ref.document_id} belongs to ${String(d.encounter_id)}, not ${ref.encounter_id}`);
  }
  // Roles whose checks need the audio to be fetchable.
  for (const role of ['ambient_transcript_with_audio', 'encounter_routes_disabled_document']) {
    const ref = s.roles[role];
    const rec = ref && s.recordings.find((r) => r.document_id === ref.document_id);
    if (!rec || !rec.has_audio || !objects.has(rec.storage_key)) out.push(`role ${role}: no recording with stored audio`);
  }
  // The unfinalized role: a transcript exists, is not finalized and has turns (which must never be returned).
  const draft = s.roles.ambient_transcript_unfinalized;
  const draftTranscript = draft && s.transcripts.find((t) => t.document_id === draft.document_id);
  if (!draftTranscript || draftTranscript.finalized !== false || !Array.isArray(draftTranscript.turns) || draftTranscript.turns.length === 0) {
    out.push('role ambient_transcript_unfinalized: no unfinalized transcript with turns');
  }
  const delta = s.roles.encounter_routes_disabled_document;
  const deltaKey = s.api_keys.find((k) => k.role === 'encounter_routes_disabled');
  if (delta && deltaKey && encounters.get(delta.encounter_id)?.organization_id !== deltaKey.organization_id) out.push('role encounter_routes_disabled_document: not of the encounter_routes_disabled key\'s organization');
  return out;
}

test('the seed is consistent: unique ids, resolvable references, roles that fit', () => {
  expect(seedProblems(seed)).toEqual([]);
});

test('the seed check fires on a repeated document id and on a role pointing at another encounter\'s document', () => {
  const copy = structuredClone(seed);
  copy.documents.push({ ...copy.documents[0] });
  copy.roles.clinical_document = { ...copy.roles.clinical_document, encounter_id: copy.roles.other_org_encounter.encounter_id };
  const problems = seedProblems(copy);
  expect(problems).toContain(`documents: document_id ${String(copy.documents[0].document_id)} appears more than once`);
  expect(problems.some((p) => p.startsWith('role clinical_document: document'))).toBe(true);
});

test('the seed check fires when the unfinalized role points at a finalized transcript', () => {
  const copy = structuredClone(seed);
  copy.roles.ambient_transcript_unfinalized = { ...copy.roles.ambient_transcript_with_audio };
  expect(seedProblems(copy)).toContain('role ambient_transcript_unfinalized: no unfinalized transcript with turns');
});
