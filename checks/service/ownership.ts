// §2.1/§2.8 and §4.3: an encounter's `documents` (detail) hold that encounter's documents. Judged on the
// encounters the profile names documents of and on listed encounters of the caller (among them one listed
// without documents, when the first page has one): the profile's documents of an encounter are in its detail;
// no document the profile or the list places under another encounter (or organization) ever is; every
// embedded document id resolves through the document route of that same encounter (200 echoing both ids, or
// 400 unsupported_document_type for a summary-only type). A detail without `documents` fails
// (ENC-DETAIL-DOCUMENTS-PRESENT, §2.8: the detail includes its documents, an empty array when there are none);
// a list item may leave `documents` out (§2.1).
import { suite } from '../../engine/declare.ts';
import { describe, expectDocumented, expectSuccess, fail, type ErrorBody } from '../../judge/assertions.ts';
import { NotVerified } from '../../record/record.ts';
import { listTarget, sample, type EncounterSummary, type ListBody } from '../../observe/list-walk.ts';
import type { DocumentRole } from '../../profile/profile.ts';
import { inPool, mapPool, READS_IN_FLIGHT } from '../../engine/pool.ts';
import type { CheckApi } from '../../observe/target.ts';

const check = suite(import.meta.filename);

const seg = encodeURIComponent;
const encounterPath = (e: string) => `/external/v1/encounters/${seg(e)}`;
/** How many listed encounters (besides the profile's) have their detail judged. */
const LISTED = 8;

/** Document roles of the profile, each with the encounter the profile places it under. */
function profileDocuments(api: CheckApi): { role: string; encounter_id: string; document_id: string }[] {
  const out: { role: string; encounter_id: string; document_id: string }[] = [];
  for (const [role, r] of Object.entries(api.target.profile.resources ?? {})) {
    if (r && typeof r === 'object' && 'document_id' in r) out.push({ role, ...api.target.document(role as DocumentRole)! });
  }
  return out;
}

/** The detail of an encounter, or undefined when the caller may not read it (another organization, demo data…). */
async function detailOrNothing(api: CheckApi, encounterId: string): Promise<EncounterSummary | undefined> {
  const ex = await api.get(encounterPath(encounterId), { shared: true });
  const body = expectDocumented(ex, 'getPublicEncounter') as { encounter?: EncounterSummary };
  return ex.response!.status === 200 ? body.encounter : undefined;
}

interface Scene {
  /** Details the caller can read: the profile's encounters, some listed ones and one listed without documents. */
  details: EncounterSummary[];
  /** Every document id whose encounter is known (profile roles, list items), with that encounter. */
  owner: Map<string, string>;
  profileDocs: { role: string; encounter_id: string; document_id: string }[];
}

async function scene(api: CheckApi): Promise<Scene> {
  api.key('full');
  const profileDocs = profileDocuments(api);
  const owner = new Map(profileDocs.map((d) => [d.document_id, d.encounter_id]));
  const page = expectSuccess<ListBody>(await api.get(listTarget({ limit: 100 }), { shared: true }), 'listPublicEncounters');
  for (const item of page.items) for (const d of item.documents ?? []) if (!owner.has(d.document_id)) owner.set(d.document_id, item.encounter_id);
  const ids = [...new Set([...profileDocs.map((d) => d.encounter_id), ...(api.target.encounter('own_encounter') ? [api.target.encounter('own_encounter')!] : [])])];
  const listed = page.items.filter((i) => !ids.includes(i.encounter_id) && (i.documents?.length ?? 1) > 0).slice(0, LISTED).map((i) => i.encounter_id);
  // One listed encounter whose item says it has no documents: its detail must still carry `documents: []` (§2.8).
  const bare = page.items.find((i) => !ids.includes(i.encounter_id) && i.documents?.length === 0);
  if (bare) listed.push(bare.encounter_id);
  const details = (await mapPool([...ids, ...listed], READS_IN_FLIGHT, (id) => detailOrNothing(api, id))).filter((d): d is EncounterSummary => Boolean(d));
  if (details.length === 0) throw new NotVerified('no encounter detail the full key can read (profile encounters and the first list page)');
  return { details, owner, profileDocs };
}

check({ id: 'ownership-detail-lists-profile-documents', requirements: ['ENC-DOCUMENTS-OF-ENCOUNTER', 'FIELD-ENCOUNTER-DOCUMENTS', 'ENC-DETAIL-DOCUMENTS-PRESENT'], title: 'every encounter detail carries documents and lists every document the profile names under that encounter', run: async (api) => {
  const { details, profileDocs } = await scene(api);
  const problems: string[] = [];
  // Every detail read must carry documents (§2.8), whether or not the profile names documents of it.
  const absent = details.filter((d) => d.documents === undefined).map((d) => d.encounter_id);
  let judged = 0;
  for (const detail of details) {
    const mine = profileDocs.filter((d) => d.encounter_id === detail.encounter_id);
    if (mine.length === 0 || detail.documents === undefined) continue;
    judged++;
    const present = new Set(detail.documents.map((d) => d.document_id));
    for (const d of mine) if (!present.has(d.document_id)) problems.push(`${d.role} ${d.document_id} is not in the detail of ${detail.encounter_id}`);
  }
  if (absent.length > 0) fail('an encounter detail has no documents property', `the detail of ${sample(absent)} carries no documents (§2.8: the detail includes its documents, [] when there are none; ENC-DETAIL-DOCUMENTS-PRESENT)${problems.length > 0 ? `; also: ${problems.join('; ')}` : ''}`);
  if (problems.length > 0) fail('an encounter detail leaves out a document of that encounter', problems.join('; '));
  if (judged === 0) throw new NotVerified('no encounter the profile names documents of has a detail the full key can read');
} });

check({ id: 'ownership-detail-excludes-foreign-documents', requirements: ['ENC-DOCUMENTS-OF-ENCOUNTER', 'FIELD-ENCOUNTER-DOCUMENTS', 'DOC-BELONGS-TO-ENCOUNTER', 'CONTRACT-ORG-SCOPED-RESULTS'], title: 'no encounter detail embeds a document that the profile or the list places under another encounter or organization', run: async (api) => {
  const { details, owner } = await scene(api);
  const problems: string[] = [];
  for (const detail of details) {
    for (const d of detail.documents ?? []) {
      const home = owner.get(d.document_id);
      if (home !== undefined && home !== detail.encounter_id) problems.push(`${d.document_id} (of ${home}) in the detail of ${detail.encounter_id}`);
    }
  }
  if (problems.length > 0) fail('an encounter detail embeds a document of another encounter', sample(problems));
} });

check({ id: 'ownership-embedded-documents-resolve', requirements: ['ENC-DOCUMENTS-OF-ENCOUNTER', 'DOC-BELONGS-TO-ENCOUNTER', 'DOC-ERRORS'], title: 'every document embedded in an encounter detail resolves through the document route of that encounter (200 with both ids, or 400 unsupported_document_type)', run: async (api) => {
  const { details } = await scene(api);
  const problems: string[] = [];
  const embedded = details.flatMap((detail) => (detail.documents ?? []).map((d) => ({ detail, d })));
  const tried = embedded.length;
  await inPool(embedded, READS_IN_FLIGHT, async ({ detail, d }) => {
    const ex = await api.get(`${encounterPath(detail.encounter_id)}/documents/${seg(d.document_id)}`);
    const body = expectDocumented(ex, 'getPublicEncounterDocument');
    const status = ex.response!.status;
    if (status === 200) {
      const doc = (body as { document: { document_id?: unknown; encounter_id?: unknown } }).document;
      if (doc.document_id !== d.document_id || doc.encounter_id !== detail.encounter_id) problems.push(`${d.document_id} under ${detail.encounter_id} answered ids ${JSON.stringify(doc.document_id)} / ${JSON.stringify(doc.encounter_id)}`);
    } else if (!(status === 400 && (body as ErrorBody).reason_code === 'unsupported_document_type')) {
      problems.push(`${d.document_id} (${d.schema_type}) under ${detail.encounter_id}: ${describe(ex)}`);
    }
  });
  if (tried === 0) throw new NotVerified('no encounter detail the full key can read embeds a document');
  if (problems.length > 0) fail('an embedded document does not resolve through the document route of its encounter', sample(problems, 4));
} });
