// §2.5/§4.4 transcript turns: the route returns the finalized turns of an ambient transcript document, so a
// transcript none of whose turns is finalized (profile role ambient_transcript_unfinalized) never comes back
// as a 200 with turns; which error is answered instead is open (404 transcript_not_found is the closest
// reading; another documented error is recorded). Turns are in chronological order on every transcript the
// check meets: the profile's ambient transcript documents and those embedded in the first listed encounters.
import { suite } from '../../engine/declare.ts';
import { inPool, READS_IN_FLIGHT } from '../../engine/pool.ts';
import { expectDocumented, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { NotVerified } from '../../record/record.ts';
import { listTarget, sample, type ListBody } from '../../observe/list-walk.ts';
import type { DocumentRole } from '../../profile/profile.ts';

const check = suite(import.meta.filename);

const seg = encodeURIComponent;
const transcriptPath = (e: string, d: string) => `/external/v1/encounters/${seg(e)}/documents/${seg(d)}/transcript`;
/** How many listed ambient transcript documents are read besides the profile's. */
const LISTED = 10;

interface Turn { speaker: string; text: string; start: number; end: number }

check({ id: 'transcript-unfinalized-turns-not-returned', requirements: ['TRANSCRIPT-FINALIZED-TURNS', 'TRANSCRIPT-NOT-FINALIZED', 'FIELD-TRANSCRIPT-TRANSCRIPT'], title: 'a transcript none of whose turns is finalized is never returned with turns (200 with turns fails; the error answered instead is recorded)', needs: ['resources.ambient_transcript_unfinalized'], run: async (api, scope) => {
  const d = api.document('ambient_transcript_unfinalized');
  const ex = await api.get(transcriptPath(d.encounter_id, d.document_id), { shared: true });
  const body = expectDocumented(ex, 'getPublicEncounterDocumentTranscript');
  const status = ex.response!.status;
  if (status === 200) {
    const turns = (body as { transcript: { turns: Turn[] } }).transcript.turns;
    if (turns.length > 0) fail('unfinalized transcript turns were returned', `${turns.length} turn(s) of ${d.document_id}, which has no finalized turn`);
    scope.observe('answered 200 with no turns');
    return;
  }
  const reason = (body as ErrorBody).reason_code;
  if (reason !== 'transcript_not_found') scope.observe(`answered ${status} ${reason} (404 transcript_not_found is the closest reading)`);
} });

check({ id: 'transcript-turns-chronological-everywhere', requirements: ['TRANSCRIPT-CHRONOLOGICAL', 'FIELD-TRANSCRIPT-TRANSCRIPT-TURNS'], title: 'every transcript met (the profile\'s ambient documents and listed ones) has its turns in chronological order', run: async (api) => {
  api.key('full');
  const targets = new Map<string, { encounter_id: string; document_id: string }>();
  for (const role of ['ambient_transcript_with_audio', 'ambient_transcript_without_audio', 'ambient_transcript_audio_missing'] as DocumentRole[]) {
    const d = api.target.document(role);
    if (d) targets.set(d.document_id, d);
  }
  const page = expectSuccess<ListBody>(await api.get(listTarget({ limit: 100 }), { shared: true }), 'listPublicEncounters');
  let listed = 0;
  for (const item of page.items) {
    for (const doc of item.documents ?? []) {
      if (doc.schema_type !== 'ambient_transcript' || targets.has(doc.document_id) || listed >= LISTED) continue;
      targets.set(doc.document_id, { encounter_id: item.encounter_id, document_id: doc.document_id });
      listed++;
    }
  }
  const problems: string[] = [];
  let read = 0;
  await inPool([...targets.values()], READS_IN_FLIGHT, async (t) => {
    const ex = await api.get(transcriptPath(t.encounter_id, t.document_id), { shared: true });
    expectDocumented(ex, 'getPublicEncounterDocumentTranscript');
    if (ex.response!.status !== 200) return; // no finalized transcript: nothing to order
    read++;
    const turns = expectSuccess<{ transcript: { turns: Turn[] } }>(ex, 'getPublicEncounterDocumentTranscript').transcript.turns;
    turns.forEach((turn, i) => {
      if (i > 0 && turn.start < turns[i - 1].start) problems.push(`${t.document_id}: turn ${i} (start ${turn.start}) follows turn ${i - 1} (start ${turns[i - 1].start})`);
    });
  });
  if (read === 0) throw new NotVerified('no transcript could be read (profile ambient roles and the first list page)');
  if (problems.length > 0) fail('transcript turns are not in chronological order', sample(problems));
} });
