// An API client that logs the patient data it syncs, as many sync jobs do: `node tests/clients/phi-client.ts`, run by
// `conformance client -- …` for tests/redaction-phi.spec.ts. It is the example client of reference-client/ (so every
// client check has its usual traffic), printing each name, date of birth, title, note text and transcript turn it
// receives on stdout. With PHI_CLIENT_PRINTED set, it appends every value it printed to that file (one JSON string a
// line), so the test can prove that the CLI echoed none of them.
import fs from 'node:fs';
import { ApiClient, Stopped } from '../../reference-client/client.ts';

const baseUrl = process.env.CONFORMANCE_BASE_URL;
const profileFile = process.env.CONFORMANCE_PROFILE;
if (!baseUrl || !profileFile) {
  process.stderr.write('phi-client: set CONFORMANCE_BASE_URL and CONFORMANCE_PROFILE\n');
  process.exit(2);
}
const key = (JSON.parse(fs.readFileSync(profileFile, 'utf8')) as { credentials: Record<string, { key?: string }> }).credentials.full?.key;
if (!key) process.exit(2);

function print(label: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') return;
  process.stdout.write(`phi-client: ${label}: ${value}\n`);
  if (process.env.PHI_CLIENT_PRINTED) fs.appendFileSync(process.env.PHI_CLIENT_PRINTED, `${JSON.stringify(value)}\n`);
}

function show(body: any): void {
  for (const enc of [...(body?.items ?? []), ...(body?.encounter ? [body.encounter] : [])]) {
    const p = enc?.patient;
    if (p) {
      print('patient', [p.first_name, p.last_name].filter(Boolean).join(' '));
      print('born', p.date_of_birth);
    }
    for (const d of enc?.documents ?? []) print('document', d?.title);
  }
  if (body?.document) {
    print('document', body.document.title);
    print('note', body.document.content?.text);
  }
  for (const t of body?.transcript?.turns ?? []) print('said', t?.text);
}

class LoggingClient extends ApiClient {
  override async get(segments: string[], query: Record<string, string> = {}): Promise<any | null> {
    const body = await super.get(segments, query);
    show(body);
    return body;
  }
}

const client = new LoggingClient({ baseUrl, key });
try {
  await client.sync();
  process.stdout.write(`phi-client: ${client.counts.encounters} encounters, ${client.counts.documents} documents, ${client.counts.transcripts} transcripts\n`);
} catch (e) {
  if (!(e instanceof Stopped)) throw e;
  process.stdout.write(`phi-client: ${e.message}\n`);
  process.exitCode = 1;
}
