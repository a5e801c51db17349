// A careful API client that needs neither the date window nor audio: a sync job that pages through the whole
// encounter list (limit, offset, sort_order), reads each encounter, its documents and the transcripts of its
// ambient transcript documents, and never asks for audio. It is the example client of reference-client/ with
// those two parts left out (subclassing ApiClient: every id encoded, the key in the Authorization header only,
// reason codes branched on exactly). Its scenario, careful-client.scenario.json, declares so (`uses`) and what
// it does for the reasons it handles; `conformance client` must find it CONFORMANT with the date window and
// audio out of scope. Run by tests/client.spec.ts: `node tests/clients/careful-client.ts` with
// CONFORMANCE_BASE_URL and CONFORMANCE_API_KEY set.
import { ApiClient, Stopped } from '../../reference-client/client.ts';

class CarefulClient extends ApiClient {
  /** Every encounter, page by page, oldest first: no date window. */
  async listAll(): Promise<any[]> {
    const items: any[] = [];
    for (let offset = 0; offset <= 10_000; offset += this.opts.pageSize) {
      const page = await this.get(['encounters'], { limit: String(this.opts.pageSize), offset: String(offset), sort_order: 'asc' });
      if (!page) break;
      items.push(...page.items);
      if (page.items.length === 0 || offset + page.items.length >= page.total) break;
    }
    return items;
  }

  /** This job needs no audio. */
  async audio(): Promise<void> {}
}

const baseUrl = process.env.CONFORMANCE_BASE_URL;
const key = process.env.CONFORMANCE_API_KEY;
if (!baseUrl || !key) {
  process.stderr.write('careful-client: set CONFORMANCE_BASE_URL and CONFORMANCE_API_KEY (conformance client sets both)\n');
  process.exit(2);
}
const client = new CarefulClient({ baseUrl, key, log: () => undefined });
try {
  await client.sync();
  const c = client.counts;
  process.stdout.write(`careful-client: ${c.encounters} encounters, ${c.documents} documents, ${c.transcripts} transcripts, ${c.skipped} skipped, ${c.requests} requests\n`);
} catch (e) {
  if (!(e instanceof Stopped)) throw e;
  process.stdout.write(`careful-client: ${e.message}\n`);
  process.exitCode = 1;
}
