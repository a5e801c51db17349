// The response bodies of the five operations (closed schemas of spec §2): encounter summary, list, encounter
// detail, document detail, transcript and audio URL, built from the rows the lookup stage found (pipeline.ts).
// The rules read as the correct ones; each named point is asked of the request's hook (ctx.rule, context.ts).
import { correctRule, type Body, type Ctx, type DetailBody, type ListBody, type Rule, type Services, type TranscriptBody, type Turn } from './context.ts';
import { ApiError } from './errors.ts';
import { LIST_SQL, type DocumentRow, type DocumentSummaryRow, type EncounterRow } from './records.ts';

type Result = Promise<{ body: unknown; resourceIds: string[] }>;

/** An instant as RFC 3339 text: UTC with milliseconds and `Z`. */
export function iso(d: Date | null, rule: Rule = correctRule): string | null {
  if (d === null) return null;
  const offset = rule('timestampOffsetMinutes', 0);
  const shifted = new Date(d.getTime() + offset * 60_000).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const clock = shifted.slice(0, 19) + rule('timestampFraction', (ms: string) => `.${ms}`)(shifted.slice(20, 23));
  if (offset === 0) return `${clock}Z`;
  const abs = Math.abs(offset);
  return `${clock}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function documentSummary(d: DocumentSummaryRow) {
  const clinical = d.schema_type === 'document';
  return {
    document_id: d.document_id,
    schema_type: d.schema_type,
    title: d.title,
    status: clinical ? null : d.status,
    workflow_variant: clinical ? null : d.workflow_variant,
    audio_duration_seconds: clinical ? null : d.audio_duration_seconds,
  };
}

export function encounterSummary(e: EncounterRow, docs: DocumentSummaryRow[], rule: Rule): Body {
  const summary: Body = {
    encounter_id: e.encounter_id,
    organization_id: e.organization_id,
    created_at: iso(e.created_at, rule),
    updated_at: iso(e.updated_at, rule),
    date_of_service: iso(e.date_of_service, rule),
    encounter_type: e.encounter_type,
    status: e.status,
    patient: e.patient_id === null ? null : { patient_id: e.patient_id, first_name: e.first_name, last_name: e.last_name, date_of_birth: e.date_of_birth },
    documents: docs.map(documentSummary),
  };
  return rule('encounterSummary', (s: Body) => s)(summary, docs);
}

export async function respondList(ctx: Ctx, s: Services): Result {
  const q = ctx.list!;
  const { total, rows } = await s.repo.listEncounters(ctx.key!.organization_id!, q, ctx.rule('listSql', LIST_SQL));
  const body: ListBody = { items: rows.map((r) => encounterSummary(r, r.documents, ctx.rule)), limit: q.limit, offset: q.offset, total };
  return { body: ctx.rule('listBody', (b: ListBody) => b)(body, rows), resourceIds: rows.map((r) => r.encounter_id) };
}

export async function respondEncounter(ctx: Ctx, s: Services): Result {
  const e = ctx.encounter!;
  const own = await ctx.rule('detailDocuments', async (enc) => enc.documents ?? [])(e, ctx, s);
  // §2.8: the detail is the summary including its documents, an empty array when there are none.
  const body = { encounter: encounterSummary(e, own, ctx.rule) };
  return { body: ctx.rule('detailBody', (b: DetailBody) => b)(body, own), resourceIds: [e.encounter_id] };
}

/** Billing and checklist documents appear in summaries only. */
function unsupportedDocument(d: DocumentRow): Body {
  throw new ApiError('unsupported_document_type', null, `${d.schema_type} documents appear in summaries only`);
}

export async function respondDocument(ctx: Ctx): Result {
  const d = ctx.document!;
  const common = { document_id: d.document_id, encounter_id: ctx.encounter!.encounter_id };
  let document: Body;
  if (d.schema_type === 'document') {
    document = {
      ...common, schema_type: 'document', content: { format: ctx.rule('clinicalContentFormat', 'markdown'), text: d.content_text },
      created_at: iso(d.created_at, ctx.rule), updated_at: iso(d.updated_at, ctx.rule), title: d.title,
      status: ctx.rule('clinicalStatus', null), workflow_variant: null,
    };
  } else if (d.schema_type === 'ambient_transcript') {
    document = {
      ...common, schema_type: 'ambient_transcript', created_at: iso(d.created_at, ctx.rule), updated_at: iso(d.updated_at, ctx.rule),
      title: d.title, status: d.status, workflow_variant: d.workflow_variant, audio_duration_seconds: d.audio_duration_seconds,
    };
  } else {
    document = ctx.rule('unsupportedDocument', unsupportedDocument)(d, common);
  }
  return { body: { document: ctx.rule('documentBody', (b: Body) => b)(document, d) }, resourceIds: [ctx.encounter!.encounter_id, d.document_id] };
}

/** Transcripts and audio exist for ambient transcript documents only. */
function notAmbient(): Error {
  return new ApiError('unsupported_document_type', null, 'only ambient_transcript documents have transcripts and audio');
}

export async function respondTranscript(ctx: Ctx, s: Services): Result {
  const d = ctx.document!;
  if (d.schema_type !== 'ambient_transcript') throw ctx.rule('notAmbientError', notAmbient)();
  const t = await s.repo.getTranscript(d.document_id);
  if (!t || !ctx.rule('transcriptServed', (x: { finalized: boolean }) => x.finalized)(t)) throw ctx.rule('transcriptMissingError', (): Error => new ApiError('transcript_not_found'))();
  const turns: Turn[] = t.turns.map((x) => ({ speaker: x.speaker, text: x.text, start: x.start, end: x.end }));
  // Stored turns may be out of order; the contract promises chronological order.
  ctx.rule('sortTurns', (all: Turn[]) => void all.sort((a, b) => a.start - b.start || a.end - b.end))(turns, d);
  const body: TranscriptBody = { document_id: d.document_id, encounter_id: ctx.encounter!.encounter_id, transcript: { provider: t.provider, audio_duration_seconds: t.audio_duration_seconds, turns } };
  return { body: ctx.rule('transcriptBody', (b: TranscriptBody) => b)(body), resourceIds: [ctx.encounter!.encounter_id, d.document_id] };
}

export async function respondAudio(ctx: Ctx, s: Services): Result {
  const d = ctx.document!;
  if (d.schema_type !== 'ambient_transcript') throw ctx.rule('notAmbientError', notAmbient)();
  const rec = await s.repo.getRecording(d.document_id);
  if (!rec || !rec.has_audio || rec.storage_key === null) throw new ApiError(ctx.rule('noAudioReason', 'audio_not_available_for_document'));
  if (ctx.faults.has('audio_storage_unavailable')) throw new ApiError(ctx.rule('audioStorageUnavailableReason', 'audio_storage_unavailable'));
  if (!(await s.repo.audioObjectExists(rec.storage_key))) throw new ApiError(ctx.rule('audioMissingReason', 'audio_not_found'));
  // Fault audio_url_expires_soon (sandbox switch): the URL lives 2 s whatever lifetime the service otherwise gives
  // (a lifetime the switchboard shifts included), so a client can see it refused after expires_at.
  const shift = ctx.faults.has('audio_url_expires_soon') ? 2 - s.signer.ttlSeconds : ctx.rule('audioUrlShift', ctx.rule('audioUrlSkew', 0));
  const signed = s.signer.sign(ctx.origin, rec.storage_key, Date.now(), shift);
  return { body: { audio_url: ctx.rule('audioUrl', (url: string) => url)(signed.url), expires_at: iso(new Date(signed.expiresAt), ctx.rule) }, resourceIds: [ctx.encounter!.encounter_id, d.document_id] };
}
