// Entry point of the example client: `node reference-client/main.ts`, with CONFORMANCE_BASE_URL and
// CONFORMANCE_API_KEY set (as `conformance client -- node reference-client/main.ts` sets them; in production
// they come from the partner's own configuration). The key is the sandbox's `full` key: every scope, the
// union the routes it calls need. It prints counts, never a key or an audio URL. Exit 0 after a full sync,
// 1 when the API told it to stop.
import { ApiClient, Stopped } from './client.ts';

const baseUrl = process.env.CONFORMANCE_BASE_URL;
const key = process.env.CONFORMANCE_API_KEY;
if (!baseUrl || !key) {
  process.stderr.write('reference-client: set CONFORMANCE_BASE_URL and CONFORMANCE_API_KEY (conformance client sets both)\n');
  process.exit(2);
}
const concurrency = Number(process.env.REFERENCE_CLIENT_CONCURRENCY ?? 1);
const client = new ApiClient({ baseUrl, key, concurrency });
try {
  await client.sync();
  const c = client.counts;
  process.stdout.write(`reference-client: ${c.encounters} encounters, ${c.documents} documents, ${c.transcripts} transcripts, ${c.audioBytes} audio bytes, ${c.skipped} skipped, ${c.requests} requests\n`);
} catch (e) {
  if (!(e instanceof Stopped)) throw e;
  process.stdout.write(`reference-client: ${e.message}\n`);
  process.exitCode = 1;
}
