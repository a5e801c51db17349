// A deployment with no per-request fault switches, made from the sandbox: a proxy in front of the reference that
// produces each condition the way a real staging has it (issue 38), by adding the sandbox's own switch headers where
// the real thing would hold the condition:
//   - credential: a key of its own whose requests meet the condition (a key under a retired digest key; a
//     test-prefixed key on an environment that refuses test keys);
//   - resource: a document whose requests meet it (audio in an offline storage region);
//   - baseUrl: a second environment (another port) where it holds for every request (API keys disabled);
//   - command: a process-wide switch an operator turns on and off (POST /__double/switch/<name>/<on|off>).
// The tests judge the sandbox through each form and through its headers, and compare the outcomes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Headers = Record<string, string>;

export interface DoubleOptions {
  /** The reference sandbox's base URL. */
  base: string;
  /** The sandbox's switch headers, by condition (the reference profile's faults.<name>.headers). */
  switches: Record<string, Headers>;
  /** The keys the double's own keys stand for: the full key and the sandbox's test key. */
  fullKey: string;
  testKey: string;
  /** The sandbox document the offline-storage document stands for. */
  audioDocument: { encounter_id: string; document_id: string };
}

export interface DeploymentDouble {
  /** The staging environment. */
  staging: string;
  /** A second environment of the same service, API-key authentication disabled. */
  keysOff: string;
  /** A key issued under a retired digest key (503 digest_key_unavailable). */
  retiredDigestKey: string;
  /** A test-prefixed key: staging refuses test keys (401 test_prefix_not_allowed). */
  refusedTestKey: string;
  /** A document whose audio sits in an offline storage region (503 audio_storage_unavailable). */
  offlineDocument: { encounter_id: string; document_id: string };
  /** The conditions switched on process-wide right now. */
  switchedOn: Set<string>;
  close(): Promise<void>;
}

const RETIRED = 'ak_live_retireddigest0000000000000000';
const REFUSED_TEST = 'test_refusedprefix000000000000000000000';
const OFFLINE = 'doc-offline-region';

export async function startDeploymentDouble(o: DoubleOptions): Promise<DeploymentDouble> {
  const switchedOn = new Set<string>();
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, extra: Headers[]) => {
    let target = req.url ?? '/';
    const headers: Headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
    const auth = headers.authorization;
    if (auth === `Bearer ${RETIRED}`) {
      headers.authorization = `Bearer ${o.fullKey}`;
      extra.push(o.switches.digest_key_unavailable);
    } else if (auth === `Bearer ${REFUSED_TEST}`) {
      headers.authorization = `Bearer ${o.testKey}`;
      extra.push(o.switches.test_prefix_not_allowed);
    }
    if (target.includes(`/documents/${OFFLINE}`)) {
      target = target.replace(`/documents/${OFFLINE}`, `/documents/${encodeURIComponent(o.audioDocument.document_id)}`);
      extra.push(o.switches.audio_storage_unavailable);
    }
    for (const name of switchedOn) extra.push(o.switches[name]);
    // Several conditions at once: one x-switchboard-fault header naming each.
    const faults = extra.flatMap((h) => Object.entries(h).filter(([k]) => k === 'x-switchboard-fault').map(([, v]) => v));
    for (const h of extra) Object.assign(headers, h);
    if (faults.length) headers['x-switchboard-fault'] = [...new Set(faults)].join(',');
    const up = http.request(`${o.base}${target}`, { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  };
  const staging = http.createServer((req, res) => {
    const sw = /^\/__double\/switch\/([a-z_]+)\/(on|off)$/.exec(req.url ?? '');
    if (sw && req.method === 'POST') {
      if (sw[2] === 'on') switchedOn.add(sw[1]);
      else switchedOn.delete(sw[1]);
      res.writeHead(204).end();
      return;
    }
    forward(req, res, []);
  });
  const keysOff = http.createServer((req, res) => forward(req, res, [o.switches.api_keys_disabled]));
  const listen = (s: http.Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
  const [s, k] = [await listen(staging), await listen(keysOff)];
  return {
    staging: s, keysOff: k, retiredDigestKey: RETIRED, refusedTestKey: REFUSED_TEST,
    offlineDocument: { encounter_id: o.audioDocument.encounter_id, document_id: OFFLINE }, switchedOn,
    close: async () => {
      for (const srv of [staging, keysOff]) {
        srv.closeAllConnections();
        await new Promise((r) => srv.close(r));
      }
    },
  };
}
