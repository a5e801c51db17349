// `conformance client`, proven both ways. First the 15 client checks (checks/client/checks.ts) as pure functions
// over fabricated traffic: for every check a record that makes it fire, one that keeps it quiet, and what it says
// when there is nothing to judge. Then end to end, through the CLI as an async child process (each run starts its
// own sandbox): the example client declaring every reason is CONFORMANT with every reason judged and audio
// verified; a careful client that needs neither dates nor audio is CONFORMANT within its declared scope; every
// mode of tests/clients/broken-client.ts turns its own check red (the audio ones with every reason declared); the
// legitimate choices of a client stay CONFORMANT; a command that cannot start is a setup error; and no key or
// audio URL the client got shows in the CLI's output or in any written report.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLIENT_CHECKS, clientEvidence, MAX_REPEATS_AFTER_4XX, MIN_RETRY_PAUSE_MS, type ClientCheck } from '../checks/client/checks.ts';
import { judgeClientCheck } from '../engine/client-judge.ts';
import type { ClientExchange, ClientTraffic, ReasonAction, ReasonNote, ScopePart } from '../observe/client-traffic.ts';
import type { Outcome } from '../record/record.ts';
import { REDACTED } from '../record/redact.ts';
import { runCli, ROOT, type CliResult } from './helpers/cli-process.ts';

test.describe.configure({ mode: 'parallel' });

// ---------------------------------------------------------------------------------------------------------------
// Fabricated traffic

const KEY = 'k_live_fabricated_full_0123456789';
const OTHER_KEY = 'k_live_fabricated_read_9876543210';
const KEYS = new Map([[KEY, 'full'], [OTHER_KEY, 'read_only']]);
/** Ids shaped like the sandbox's opaque ones: each needs percent-encoding in a path segment. */
const ENC = 'enc/α ?#%1';
const DOC = 'doc 2/β';
const LISTED = 'enc/listed ü';
const SLASHED = 'a%2Fb';
/** An issued id whose text holds a percent sign followed by hex digits. */
const PCT = '50%25 off';
/** The listed id sent raw, as a client that concatenates strings does (the URL parser encodes the space and ü). */
const ENC_SLASH = 'enc/listed%20%C3%BC';
const T0 = Date.parse('2030-01-01T00:00:00Z');
const L = '/external/v1/encounters';
const e = encodeURIComponent;
const AUDIO_TARGET = '/storage/audio/aud_1?exp=1893456003&sig=5f3a9c0d7e11b2a4';
const AUDIO_URL = `http://127.0.0.1:4010${AUDIO_TARGET}`;
const AUDIO_SIG = '5f3a9c0d7e11b2a4';
const AUDIO_ROUTE = `${L}/${e(ENC)}/documents/${e(DOC)}/audio`;
const LIST_OK = `${L}?limit=25&offset=0&sort_order=asc&start_at=2000-01-01T00%3A00%3A00Z&end_at=2100-01-01T00%3A00%3A00Z`;

type Req = Partial<ClientExchange> & { target: string };

/** One exchange: a GET of an API route with the full key, answered 200 after 5 ms, unless told otherwise. */
const req = (target: string, over: Partial<ClientExchange> = {}): Req => ({ target, ...over });
const notFound = (target: string, over: Partial<ClientExchange> = {}): Req =>
  req(target, { status: 404, body: JSON.stringify({ error: 'public_api_not_found', reason_code: 'encounter_not_found', message: 'x', field: null }), ...over });
/** The audio route answering with an audio URL that expires at T0 + `expiresInMs`. */
const audioIssued = (expiresInMs = 3000, over: Partial<ClientExchange> = {}): Req =>
  req(AUDIO_ROUTE, { at: T0, body: JSON.stringify({ audio_url: AUDIO_URL, expires_at: new Date(T0 + expiresInMs).toISOString() }), ...over });
const storage = (at: number, target = AUDIO_TARGET): Req => req(target, { kind: 'storage', at, headers: {}, role: null });
const injected = (target: string, reason: string, status: number, over: Partial<ClientExchange> = {}): Req =>
  req(target, { status, injected: reason, body: JSON.stringify({ error: 'x', reason_code: reason, message: 'injected', field: null }), ...over });

interface TrafficOptions {
  stdout?: string;
  stderr?: string;
  /** The scenario's `reasons`. */
  scenario?: Record<string, ReasonAction> | null;
  /** The scenario's `uses` (a scenario with no `reasons` when only this is given). */
  uses?: ScopePart[];
  notInjected?: Record<string, ReasonNote>;
}

/** A record of the given exchanges: seq in order, one second apart unless `at` is given. */
function traffic(reqs: Req[], o: TrafficOptions = {}): ClientTraffic {
  const exchanges = reqs.map((r, i): ClientExchange => ({
    seq: i + 1, phase: 1, at: T0 + i * 1000, method: 'GET', headers: { authorization: `Bearer ${KEY}`, accept: 'application/json' },
    bodyBytes: 0, kind: r.target.startsWith('/external/v1') ? 'api' : 'storage', role: 'full', status: 200, body: '', durationMs: 5, ...r,
  }));
  return {
    exchanges, stdout: o.stdout ?? '', stderr: o.stderr ?? '', keys: KEYS, profileIds: new Set([ENC, DOC, SLASHED, PCT, 'x y?z#w']),
    scenario: o.scenario || o.uses ? { uses: o.uses ?? null, reasons: o.scenario ?? {} } : null, notInjected: o.notInjected ?? {},
  };
}

const EMPTY = traffic([]);
/** A list page holding `n` items. */
const page = (n: number) => JSON.stringify({ items: Array.from({ length: n }, (_, i) => ({ encounter_id: `p${i}` })), limit: n, offset: 0, total: 99 });

interface Case { name: string; t: ClientTraffic; detail?: RegExp }
interface CheckCases {
  /** Records that must make the check fail (`warning` for the one check that only warns). */
  fires: Case[];
  fireAs?: Outcome;
  passes: Case[];
  notVerified: Case[];
}

const listBody = JSON.stringify({ items: [{ encounter_id: LISTED }], total: 1, limit: 25, offset: 0 });
const detailBody = JSON.stringify({ encounter: { encounter_id: LISTED, documents: [{ document_id: 'doc/listed 1', schema_type: 'document' }] } });

const CASES: Record<string, CheckCases> = {
  'client-key-only-in-authorization-header': {
    fires: [
      { name: 'the key in the list query', t: traffic([req(`${L}?api_key=${KEY}`)]), detail: /the request target/ },
      { name: 'the key percent-encoded in the query', t: traffic([req(`${L}?k=${e(KEY).replace(/_/g, '%5F')}`)]), detail: /the request target/ },
      { name: 'the key in a cookie as well', t: traffic([req(L, { headers: { authorization: `Bearer ${KEY}`, cookie: `session=${KEY}` } })]), detail: /the cookie header/ },
      { name: 'the key in an x-api-key header', t: traffic([req(L, { headers: { 'x-api-key': KEY } })]), detail: /the x-api-key header/ },
      { name: 'the key in the query of an audio fetch', t: traffic([req(L), storage(T0 + 2000, `${AUDIO_TARGET}&key=${KEY}`)]), detail: /the request target/ },
      { name: 'no Authorization header', t: traffic([req(L, { headers: {} })]), detail: /without `Authorization: Bearer <key>`/ },
      { name: 'the key under the Basic scheme', t: traffic([req(L, { headers: { authorization: `Basic ${KEY}` } })]) },
      { name: 'a bearer token that is no sandbox key', t: traffic([req(L, { headers: { authorization: 'Bearer k_live_made_up_by_the_client' } })]) },
      { name: 'one request of many without the header', t: traffic([req(L), req(`${L}/${e(ENC)}`, { headers: {} }), req(L)]), detail: /1 API request without/ },
    ],
    passes: [
      { name: '`Bearer <key>`', t: traffic([req(LIST_OK), req(`${L}/${e(ENC)}`)]) },
      { name: 'the scheme in lower case (`bearer`)', t: traffic([req(L, { headers: { authorization: `bearer ${KEY}` } })]) },
      { name: 'the scheme in upper case, the other key', t: traffic([req(L, { headers: { authorization: `BEARER ${OTHER_KEY}` } })]) },
      { name: 'an audio fetch without any header', t: traffic([req(L), storage(T0 + 2000)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'only storage fetches', t: traffic([storage(T0)]) },
    ],
  },
  'client-key-not-printed': {
    // §5.1 does not forbid printing a key: a should (issue 39).
    fireAs: 'warning',
    fires: [
      { name: 'the key on stdout', t: traffic([req(L)], { stdout: `using ${KEY}\n` }), detail: /full key appears in the command's stdout/ },
      { name: 'the other key on stderr', t: traffic([], { stderr: `debug: Authorization: Bearer ${OTHER_KEY}\n` }), detail: /read_only key appears in the command's stderr/ },
    ],
    passes: [
      { name: 'output without a key', t: traffic([req(L)], { stdout: 'synced 3 encounters\n', stderr: 'key k_live_…0123 (masked)\n' }) },
      // The output is what it judges, and no output is output with no key in it.
      { name: 'no output at all', t: EMPTY },
    ],
    notVerified: [],
  },
  'client-requests-are-get-without-body': {
    fires: [
      { name: 'a POST', t: traffic([req(L, { method: 'POST' })]), detail: /first: POST, 0 body bytes/ },
      { name: 'a GET with a body', t: traffic([req(L), req(L, { bodyBytes: 12 })]), detail: /first: GET, 12 body bytes/ },
      { name: 'a HEAD', t: traffic([req(`${L}/${e(ENC)}`, { method: 'HEAD' })]) },
    ],
    passes: [
      { name: 'GETs without a body', t: traffic([req(LIST_OK), req(`${L}/${e(ENC)}`)]) },
      { name: 'a storage POST is no API request', t: traffic([req(L), { ...storage(T0 + 10), method: 'POST', bodyBytes: 3 }]) },
    ],
    notVerified: [{ name: 'empty traffic', t: EMPTY }],
  },
  'client-queries-only-accepted-keys': {
    fires: [
      { name: 'owner=me on the list', t: traffic([req(`${LIST_OK}&owner=me`)]), detail: /list route, key `owner`/ },
      { name: 'api_key on the list', t: traffic([req(`${L}?api_key=x`)]), detail: /`api_key`/ },
      { name: 'expand on the encounter detail', t: traffic([req(`${L}/${e(ENC)}?expand=documents`)]), detail: /encounter route, key `expand`/ },
      { name: 'a list key (limit) on the encounter detail', t: traffic([req(`${L}/${e(ENC)}?limit=1`)]), detail: /encounter route, key `limit`/ },
      { name: 'a query on a document', t: traffic([req(`${L}/${e(ENC)}/documents/${e(DOC)}?format=pdf`)]), detail: /document route/ },
      { name: 'an empty key on the transcript', t: traffic([req(`${L}/${e(ENC)}/documents/${e(DOC)}/transcript?x`)]), detail: /transcript route/ },
      { name: 'a query on the audio route', t: traffic([req(`${AUDIO_ROUTE}?redirect=1`)]), detail: /audio route/ },
      { name: 'a key differing in case (LIMIT)', t: traffic([req(`${L}?LIMIT=5`)]) },
    ],
    passes: [
      { name: 'the five list keys, and no query elsewhere', t: traffic([req(LIST_OK), req(`${L}/${e(ENC)}`), req(AUDIO_ROUTE)]), detail: /routes used: audio, encounter, list/ },
      { name: 'a percent-encoded list key (sort%5Forder)', t: traffic([req(`${L}?sort%5Forder=desc`)]) },
      { name: 'an empty query (a bare ?) on the detail', t: traffic([req(`${L}/${e(ENC)}?`)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'no request to a route of the API', t: traffic([req('/external/v1'), storage(T0 + 5000)]) },
      // A route the scenario declares and the client never calls leaves its part of the scope unjudged.
      { name: 'a declared route never called', t: traffic([req(LIST_OK), req(`${L}/${e(ENC)}`)], { uses: ['list', 'paging', 'encounter', 'transcript'] }), detail: /the scenario declares the transcript route \(`uses`\), but the client never called it \(routes called: encounter, list\)/ },
    ],
  },
  'client-list-paging-canonical': {
    fires: [
      { name: 'limit=050', t: traffic([req(`${L}?limit=050`)]), detail: /limit="050"/ },
      { name: 'limit=0', t: traffic([req(`${L}?limit=0`)]) },
      { name: 'limit=101', t: traffic([req(`${L}?limit=101`)]) },
      { name: 'limit=+5', t: traffic([req(`${L}?limit=%2B5`)]) },
      { name: 'limit=1e2', t: traffic([req(`${L}?limit=1e2`)]) },
      { name: 'limit with no value', t: traffic([req(`${L}?limit`)]), detail: /limit=null/ },
      { name: 'an empty limit', t: traffic([req(`${L}?limit=`)]) },
      { name: 'offset=10001', t: traffic([req(`${L}?limit=25&offset=10001`)]), detail: /offset="10001"/ },
      { name: 'offset=-1', t: traffic([req(`${L}?offset=-1`)]) },
      { name: 'offset=01', t: traffic([req(`${L}?offset=01`)]) },
      { name: 'offset= 5 (a space)', t: traffic([req(`${L}?offset=%205`)]) },
      { name: 'one bad page among good ones', t: traffic([req(`${L}?limit=25&offset=0`), req(`${L}?limit=25&offset=25.0`), req(`${L}?limit=25&offset=50`)]), detail: /offset="25.0"/ },
    ],
    passes: [
      { name: 'the bounds: limit 1 and 100, offset 0 and 10000', t: traffic([req(`${L}?limit=1&offset=0`), req(`${L}?limit=100&offset=10000`)]), detail: /4 limit\/offset values/ },
      { name: 'the example client\'s pages', t: traffic([req(LIST_OK)]) },
      { name: 'limit=050 on a detail route is another check\'s business', t: traffic([req(`${L}/${e(ENC)}?limit=050`), req(`${L}?limit=50`)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'a list without limit or offset', t: traffic([req(`${L}?sort_order=asc`)]) },
    ],
  },
  'client-sort-order-valid': {
    fires: [
      { name: 'sort_order=ASC', t: traffic([req(`${L}?sort_order=ASC`)]), detail: /sort_order="ASC"/ },
      { name: 'sort_order=Desc', t: traffic([req(`${L}?sort_order=Desc`)]) },
      { name: 'sort_order=ascending', t: traffic([req(`${L}?sort_order=ascending`)]) },
      { name: 'an empty sort_order', t: traffic([req(`${L}?sort_order=`)]) },
      { name: 'sort_order without a value', t: traffic([req(`${L}?sort_order`)]) },
      { name: 'sort_order=asc%20 (a trailing space)', t: traffic([req(`${L}?sort_order=asc%20`)]) },
    ],
    passes: [
      { name: 'asc and desc', t: traffic([req(`${L}?sort_order=asc`), req(`${L}?sort_order=desc`)]), detail: /2 sort_order values/ },
      { name: 'percent-encoded asc (%61sc)', t: traffic([req(`${L}?sort_order=%61sc`)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'a list without sort_order', t: traffic([req(`${L}?limit=5`)]) },
      { name: 'sort_order on a detail route only', t: traffic([req(`${L}/${e(ENC)}?sort_order=ASC`)]) },
    ],
  },
  'client-list-dates-valid': {
    fires: [
      { name: 'start_at=2020-01-01T00:00:00 (no zone)', t: traffic([req(`${L}?start_at=2020-01-01T00:00:00`)]), detail: /start_at="2020-01-01T00:00:00" is not a timezone-aware/ },
      { name: 'a naive end_at after a good start_at', t: traffic([req(`${L}?start_at=2020-01-01T00:00:00Z&end_at=2021-01-01T00:00:00`)]), detail: /end_at=/ },
      { name: 'a date without a time', t: traffic([req(`${L}?start_at=2020-01-01`)]) },
      { name: 'a word', t: traffic([req(`${L}?end_at=yesterday`)]) },
      { name: 'epoch seconds', t: traffic([req(`${L}?start_at=1577836800`)]) },
      { name: 'an impossible month', t: traffic([req(`${L}?start_at=2020-13-01T00:00:00Z`)]) },
      { name: 'start_at without a value', t: traffic([req(`${L}?start_at`)]) },
      { name: 'start after end', t: traffic([req(`${L}?start_at=2021-01-01T00:00:00Z&end_at=2020-01-01T00:00:00Z`)]), detail: /is not earlier than end_at/ },
      { name: 'start equal to end', t: traffic([req(`${L}?start_at=2020-01-01T00:00:00Z&end_at=2020-01-01T00:00:00Z`)]) },
      { name: 'start after end once the offsets are applied', t: traffic([req(`${L}?start_at=2020-01-01T10:00:00-02:00&end_at=2020-01-01T11:00:00Z`)]) },
      { name: 'one bad list among good ones', t: traffic([req(LIST_OK), req(`${L}?start_at=2020-01-01T00:00:00`)]) },
    ],
    passes: [
      { name: 'Z and offsets, start before end', t: traffic([req(LIST_OK), req(`${L}?start_at=2020-01-01T00:00:00%2B02:00&end_at=2020-01-02T00:00:00-0500`)]), detail: /2 list requests with date bounds/ },
      { name: 'start before end only once the offsets are applied', t: traffic([req(`${L}?start_at=2020-01-01T10:00:00%2B02:00&end_at=2020-01-01T08:30:00Z`)]) },
      { name: 'an offset of hours only (+02)', t: traffic([req(`${L}?start_at=2020-01-01T00:00%2B02&end_at=2020-01-01T00:00:00Z`)]) },
      { name: 'fractional seconds, minutes only, lower-case z', t: traffic([req(`${L}?start_at=2020-01-01T00:00:00.123Z&end_at=2020-01-01T01:00z`)]) },
      { name: 'only an end_at', t: traffic([req(`${L}?end_at=2020-01-01T00:00:00Z`)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'lists without dates', t: traffic([req(`${L}?limit=5`), req(L)]) },
      { name: 'a naive date on a detail route only', t: traffic([req(`${L}/${e(ENC)}?start_at=2020-01-01T00:00:00`)]) },
    ],
  },
  'client-list-walk-sees-every-item': {
    fires: [
      { name: 'a walk from offset 1 (one-based)', t: traffic([req(`${L}?limit=2&offset=1`, { body: page(2) }), req(`${L}?limit=2&offset=3`, { body: page(1) })]), detail: /starts at offset 1: offset is zero-based \(§2\.7\), so the first 1 encounter of the list is never read/ },
      { name: 'a walk that skips every other page', t: traffic([req(`${L}?limit=2&offset=0`, { body: page(2) }), req(`${L}?limit=2&offset=4`, { body: page(2) })]), detail: /skips encounters: the page at offset 0 held 2, so the next starts at 2, but the client asked for offset 4/ },
      { name: 'a date-window walk that starts past 0, beside a good plain walk', t: traffic([req(`${L}?offset=0`, { body: page(3) }), req(`${L}?start_at=2020-01-01T00%3A00%3A00Z&offset=25`, { body: page(3) })]), detail: /start_at=2020-01-01T00:00:00Z\) starts at offset 25/ },
    ],
    passes: [
      { name: 'a walk from 0 (offset absent), each page where the last ended', t: traffic([req(`${L}?limit=2`, { body: page(2) }), req(`${L}?limit=2&offset=2`, { body: page(2) }), req(`${L}?limit=2&offset=4`, { body: page(1) })]), detail: /3 pages in 1 walk/ },
      { name: 'pages read out of order by a concurrent client', t: traffic([req(`${L}?limit=2&offset=2`, { body: page(2) }), req(`${L}?limit=2&offset=0`, { body: page(2) })]) },
      { name: 'one page only', t: traffic([req(LIST_OK, { body: page(3) })]) },
      { name: 'a retried page (the same offset again)', t: traffic([req(`${L}?offset=0`, { body: page(3) }), req(`${L}?offset=0`, { body: page(3) })]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'a list refused', t: traffic([req(L, { status: 401 })]) },
    ],
  },
  'client-ids-opaque-and-encoded': {
    fires: [
      { name: 'an id never handed out', t: traffic([req(`${L}/enc_main_0001`)]), detail: /"enc_main_0001", which the sandbox never handed out/ },
      { name: 'a path whose id was not encoded (its / splits the segment)', t: traffic([req(`${L}/${DOC}/documents/${e(DOC)}`)]), detail: /names no route of the API/ },
      { name: 'an id with a raw % (not encoded)', t: traffic([req(`${L}/${e(ENC).replace('%25', '%')}`)]), detail: /names no route|never handed out/ },
      { name: 'an issued id with %2F sent raw (decodes to another id)', t: traffic([req(`${L}/${SLASHED}`)]), detail: /"a\/b", which the sandbox never handed out/ },
      { name: 'an id altered by the client (a suffix)', t: traffic([req(`${L}/${e(`${ENC}x`)}`)]) },
      { name: 'an id used before the answer that hands it out', t: traffic([req(`${L}/${e(LISTED)}`), req(L, { body: listBody })]) },
      { name: 'an id from a 200 of a route, then a made-up document id', t: traffic([req(L, { body: listBody }), req(`${L}/${e(LISTED)}/documents/doc_guess`)]), detail: /"doc_guess"/ },
      { name: 'an empty segment', t: traffic([req(`${L}//documents/${e(DOC)}`)]), detail: /names no route/ },
      { name: 'a route the API does not have', t: traffic([req(`${L}/${e(ENC)}/notes`)]), detail: /names no route/ },
      // The cause named: encoding, not a guessed id.
      { name: 'an issued id left unencoded, its / splitting the path', t: traffic([req(L, { body: listBody }), req(`${L}/${ENC_SLASH}/documents/${e(DOC)}`)]), detail: /names no route of the API: it holds the handed-out id "enc\/listed ü" with its reserved characters .* not percent-encoded, so they changed the request target.*quote\(id, safe=''\)/ },
      { name: 'an issued id encoded but for its / (Python quote() default)', t: traffic([req(`${L}/${e(ENC).replaceAll('%2F', '/')}`)]), detail: /it holds the handed-out id "enc\/α \?#%1" with its reserved characters/ },
      { name: 'an issued id holding ? and # put in the path as is (the URL parser cuts it)', t: traffic([req(`${L}/enc/%CE%B1%20?`)]), detail: /it holds the handed-out id "enc\/α \?#%1" with its reserved characters/ },
      { name: 'an issued id whose ? cut it into a path that names a route', t: traffic([req(`${L}/x%20y?z`)]), detail: /the request names the id "x y", which the sandbox never handed out: the request target holds the handed-out id "x y\?z#w" with its reserved characters/ },
      { name: 'an issued id encoded as a form (+ for a space)', t: traffic([req(`${L}/${e(DOC).replace('%20', '+')}`)]), detail: /"doc\+2\/β", which the sandbox never handed out: it is the handed-out id "doc 2\/β" encoded as a form/ },
      { name: 'an issued id percent-encoded twice', t: traffic([req(`${L}/${e(e(DOC))}`)]), detail: /it is the handed-out id "doc 2\/β" percent-encoded twice/ },
      { name: 'an issued id holding % sent as is', t: traffic([req(`${L}/${SLASHED}`)]), detail: /it is the handed-out id "a%2Fb" sent without percent-encoding/ },
      { name: 'an issued id encoded but for its %', t: traffic([req(`${L}/${e(PCT).replace('%25', '%')}`)]), detail: /it is the handed-out id "50%25 off" percent-encoded but for its '%'/ },
    ],
    passes: [
      { name: 'profile ids, each encoded as one segment', t: traffic([req(`${L}/${e(ENC)}`), req(`${L}/${e(ENC)}/documents/${e(DOC)}/transcript`), req(AUDIO_ROUTE)]), detail: /3 requests named ids/ },
      { name: '%2F inside a segment of an issued id', t: traffic([req(L, { body: JSON.stringify({ items: [{ encounter_id: 'a/b' }] }) }), req(`${L}/a%2Fb`)]) },
      { name: 'an issued id holding the text %2F, encoded (%252F)', t: traffic([req(`${L}/${e(SLASHED)}`)]) },
      { name: 'ids learned from a list and a detail answer', t: traffic([req(LIST_OK, { body: listBody }), req(`${L}/${e(LISTED)}`, { body: detailBody }), req(`${L}/${e(LISTED)}/documents/${e('doc/listed 1')}`)]), detail: /2 requests named ids/ },
      { name: 'lower-case hex in the percent-encoding', t: traffic([req(`${L}/${e(ENC).replace('%2F', '%2f')}`)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'only list requests', t: traffic([req(LIST_OK), req(L)]) },
    ],
  },
  'client-no-repeat-after-terminal-answer': {
    // The spec calls no reason terminal: repeating a refused request is a should (issue 39).
    fireAs: 'warning',
    fires: [
      { name: `${MAX_REPEATS_AFTER_4XX + 1} identical repeats after a 404`, t: traffic([notFound(`${L}/${e(ENC)}`), ...Array.from({ length: MAX_REPEATS_AFTER_4XX + 1 }, () => notFound(`${L}/${e(ENC)}`))]), detail: /after 404 encounter_not_found the client sent the identical request 3 more times/ },
      { name: 'repeats after a 400, with other requests between', t: traffic([req(`${L}?limit=050`, { status: 400, body: '{"reason_code":"invalid_parameter"}' }), req(L), req(`${L}?limit=050`), req(L), req(`${L}?limit=050`), req(`${L}?limit=050`)]) },
      { name: 'repeats after a 401', t: traffic([req(L, { status: 401 }), req(L), req(L), req(L)]) },
      { name: 'repeats after an injected 403', t: traffic([injected(L, 'missing_scope', 403), req(L), req(L), req(L)]) },
    ],
    passes: [
      { name: `${MAX_REPEATS_AFTER_4XX} repeats after a 404`, t: traffic([notFound(`${L}/${e(ENC)}`), notFound(`${L}/${e(ENC)}`), notFound(`${L}/${e(ENC)}`)]), detail: /1 terminal 4xx answers|3 terminal 4xx answers/ },
      { name: 'the same path with another key', t: traffic([notFound(`${L}/${e(ENC)}`), ...Array.from({ length: 3 }, () => notFound(`${L}/${e(ENC)}`, { headers: { authorization: `Bearer ${OTHER_KEY}` } }))]) },
      { name: 'the same request in a later run of the command', t: traffic([notFound(`${L}/${e(ENC)}`), ...Array.from({ length: 3 }, () => notFound(`${L}/${e(ENC)}`, { phase: 2 }))]) },
      { name: 'other requests after a 404', t: traffic([notFound(`${L}/${e(ENC)}`), req(L), req(`${L}/${e(DOC)}`), req(LIST_OK)]) },
      { name: 'a 404 repeated only before it (the earlier 200s)', t: traffic([req(L), req(L), req(L), req(L, { status: 404 })]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'only 200s', t: traffic([req(L), req(L), req(L), req(L)]) },
      { name: 'a 429 repeated (not terminal)', t: traffic([req(L, { status: 429 }), req(L), req(L), req(L), req(L)]) },
      { name: 'a 503 repeated (not 4xx)', t: traffic([req(L, { status: 503 }), req(L), req(L), req(L)]) },
    ],
  },
  'client-pauses-before-retrying-503': {
    fireAs: 'warning',
    fires: [
      { name: 'a 503 retried after 10 ms', t: traffic([req(L, { at: T0, durationMs: 5, status: 503, body: '{"reason_code":"digest_key_unavailable"}' }), req(L, { at: T0 + 15 })]), detail: /after 503 digest_key_unavailable the client retried after 10 ms/ },
      { name: `a retry ${MIN_RETRY_PAUSE_MS - 1} ms after the answer ended`, t: traffic([req(L, { at: T0, durationMs: 50, status: 503 }), req(L, { at: T0 + 50 + MIN_RETRY_PAUSE_MS - 1 })]) },
      { name: 'an injected 503 retried at once', t: traffic([injected(AUDIO_ROUTE, 'audio_storage_unavailable', 503, { at: T0 }), req(AUDIO_ROUTE, { at: T0 + 5 })]) },
      { name: 'a retry sent before the 503 answer ended', t: traffic([req(L, { at: T0, durationMs: 500, status: 503 }), req(L, { at: T0 + 100 })]), detail: /retried after 0 ms/ },
    ],
    passes: [
      { name: `a retry ${MIN_RETRY_PAUSE_MS} ms after the answer ended`, t: traffic([req(L, { at: T0, durationMs: 50, status: 503 }), req(L, { at: T0 + 50 + MIN_RETRY_PAUSE_MS })]) },
      { name: 'a retry after a second', t: traffic([req(L, { at: T0, status: 503 }), req(L, { at: T0 + 1000 })]), detail: /1 503 answers/ },
      { name: 'a 503 never retried', t: traffic([req(L, { at: T0, status: 503 }), req(`${L}/${e(ENC)}`, { at: T0 + 10 })]) },
      { name: 'another request at once, the retry later', t: traffic([req(L, { at: T0, status: 503 }), req(`${L}/${e(ENC)}`, { at: T0 + 10 }), req(L, { at: T0 + 400 })]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'no 503', t: traffic([req(L, { status: 500 }), req(L, { status: 500 })]) },
    ],
  },
  'client-audio-url-not-used-after-expiry': {
    fires: [
      { name: 'an audio URL fetched after expires_at', t: traffic([audioIssued(3000), storage(T0 + 100), storage(T0 + 4000)]), detail: /fetched an audio URL 1000 ms after its expires_at/ },
      { name: 'an audio URL fetched 1 ms after expires_at', t: traffic([audioIssued(3000), storage(T0 + 3001)]) },
    ],
    passes: [
      { name: 'fetched at once', t: traffic([audioIssued(3000), storage(T0 + 50)]), detail: /1 audio URLs handed out, 1 fetches/ },
      { name: 'fetched right at expires_at', t: traffic([audioIssued(3000), storage(T0 + 3000)]) },
      { name: 'a fresh URL fetched, the expired one not', t: traffic([audioIssued(3000), storage(T0 + 10), audioIssued(3000, { at: T0 + 5000, body: JSON.stringify({ audio_url: `${AUDIO_URL}x`, expires_at: new Date(T0 + 8000).toISOString() }) }), storage(T0 + 5100, `${AUDIO_TARGET}x`)]) },
      { name: 'an audio URL handed out but never fetched', t: traffic([audioIssued(3000)]) },
    ],
    notVerified: [
      { name: 'empty traffic', t: EMPTY },
      { name: 'an audio answer that was injected', t: traffic([audioIssued(3000, { injected: 'audio_storage_unavailable' }), storage(T0 + 9000)]) },
      { name: 'an audio route refused', t: traffic([req(AUDIO_ROUTE, { status: 404, body: '{"reason_code":"audio_not_found"}' })]) },
    ],
  },
  'client-audio-url-not-sent-to-api': {
    fires: [
      { name: 'the audio URL as a query value', t: traffic([audioIssued(), req(`${L}?next=${e(AUDIO_URL)}`)]), detail: /sent an audio URL back to the API/ },
      { name: 'the signature in a header', t: traffic([audioIssued(), req(L, { headers: { authorization: `Bearer ${KEY}`, 'x-audio': AUDIO_SIG } })]) },
      { name: 'the audio path as a path', t: traffic([audioIssued(), req(`/external/v1${AUDIO_TARGET}`)]) },
    ],
    passes: [
      { name: 'the audio route asked again (not its URL)', t: traffic([audioIssued(), storage(T0 + 10), req(AUDIO_ROUTE)]) },
    ],
    notVerified: [{ name: 'empty traffic', t: EMPTY }, { name: 'no audio URL', t: traffic([req(L)]) }],
  },
  'client-audio-url-not-printed': {
    fires: [
      { name: 'the audio URL on stdout', t: traffic([audioIssued()], { stdout: `audio at ${AUDIO_URL}\n` }), detail: /an audio URL appears in the command's output/ },
      { name: 'the signature on stderr', t: traffic([audioIssued()], { stderr: `sig=${AUDIO_SIG}\n` }) },
      { name: 'the path and query without the origin', t: traffic([audioIssued()], { stdout: `GET ${AUDIO_TARGET} 200\n` }) },
    ],
    passes: [
      { name: 'output without the URL', t: traffic([audioIssued(), storage(T0 + 10)], { stdout: 'audio: 66 bytes\n' }) },
      { name: 'the audio route (not the URL) printed', t: traffic([audioIssued()], { stdout: `GET ${AUDIO_ROUTE}\n` }) },
    ],
    notVerified: [{ name: 'empty traffic', t: EMPTY }, { name: 'no audio URL (output judged only against issued URLs)', t: traffic([req(L)], { stdout: AUDIO_URL }) }],
  },
  'client-key-holds-route-scopes': {
    fires: [
      { name: 'a forwarded 403 missing_scope', t: traffic([req(L), req(AUDIO_ROUTE, { status: 403, body: '{"error":"public_api_forbidden","reason_code":"missing_scope"}' })]), detail: /1 request answered 403 missing_scope/ },
    ],
    passes: [
      { name: 'every request answered', t: traffic([req(L), req(`${L}/${e(ENC)}`)]), detail: /2 API requests/ },
      { name: 'an injected missing_scope (the scenario\'s, not the key\'s)', t: traffic([injected(L, 'missing_scope', 403)]) },
      { name: 'a 403 of another reason', t: traffic([req(`${L}/${e(ENC)}`, { status: 403, body: '{"reason_code":"cross_organization_denied"}' })]) },
    ],
    notVerified: [{ name: 'empty traffic', t: EMPTY }],
  },
  'client-follows-declared-reason-handling': {
    fires: [
      {
        name: 'declared stop but more requests with that key',
        t: traffic([req(L), injected(L, 'revoked_key', 401), req(`${L}/${e(ENC)}`)], { scenario: { revoked_key: 'stop' } }),
        detail: /declared `stop` for revoked_key, but the client sent 1 more request with that key/,
      },
      {
        name: 'declared retry-later but never retried',
        t: traffic([req(L), injected(`${L}/${e(ENC)}`, 'digest_key_unavailable', 503), req(`${L}/${e(DOC)}`)], { scenario: { digest_key_unavailable: 'retry-later' } }),
        detail: /declared `retry-later` for digest_key_unavailable, but the client never sent the request again/,
      },
      {
        name: 'declared skip-resource but ended its work there (its normal run reached more)',
        t: traffic([req(L), req(`${L}/${e(ENC)}`), req(`${L}/${e(DOC)}`), req(L, { phase: 2 }), injected(`${L}/${e(ENC)}`, 'cross_organization_denied', 403, { phase: 2 })], { scenario: { cross_organization_denied: 'skip-resource' } }),
        detail: /declared `skip-resource` for cross_organization_denied, but the client sent no request to any other resource afterwards/,
      },
      {
        name: 'one reason handled, the next not',
        t: traffic([req(L), injected(`${L}/${e(ENC)}`, 'encounter_not_found', 404), req(L), req(L), injected(`${L}/${e(DOC)}`, 'revoked_key', 401), req(`${L}/${e(ENC)}`)], { scenario: { encounter_not_found: 'skip-resource', revoked_key: 'stop' } }),
        detail: /revoked_key/,
      },
    ],
    passes: [
      {
        name: 'skip-resource as the last thing it had to do: nothing else was waiting',
        t: traffic([req(L), req(`${L}/${e(ENC)}`), req(L, { phase: 2 }), injected(`${L}/${e(ENC)}`, 'cross_organization_denied', 403, { phase: 2 })], { scenario: { cross_organization_denied: 'skip-resource' } }),
      },
      {
        name: 'skip-resource: goes on with the others',
        t: traffic([req(L), injected(`${L}/${e(ENC)}`, 'encounter_not_found', 404), req(`${L}/${e(DOC)}`)], { scenario: { encounter_not_found: 'skip-resource' } }),
        detail: /1 of 1 declared reason judged over 1 run, each handled as declared \(encounter_not_found: skip-resource\)/,
      },
      {
        name: 'stop: a concurrent client\'s other request already on its way (arriving 100 ms after the answer) is not "more"',
        // Two requests in flight at once earlier in the run: the client works two at a time.
        t: traffic([req(L, { at: T0, durationMs: 500 }), req(`${L}/${e(DOC)}`, { at: T0 + 10 }), injected(L, 'revoked_key', 401, { at: T0 + 1000, durationMs: 2 }), req(`${L}/${e(ENC)}`, { at: T0 + 1100 })], { scenario: { revoked_key: 'stop' } }),
      },
      {
        name: 'stop: nothing more with that key (the other key goes on, and a later run starts over)',
        t: traffic([req(L), injected(L, 'revoked_key', 401), req(L, { headers: { authorization: `Bearer ${OTHER_KEY}` } }), req(L, { phase: 2 })], { scenario: { revoked_key: 'stop' } }),
      },
      {
        name: 'retry-later: the same request after a pause',
        t: traffic([req(L, { at: T0 }), injected(AUDIO_ROUTE, 'audio_storage_unavailable', 503, { at: T0 + 10, durationMs: 1 }), req(`${L}/${e(ENC)}`, { at: T0 + 20 }), req(AUDIO_ROUTE, { at: T0 + 400 })], { scenario: { audio_storage_unavailable: 'retry-later' } }),
      },
      {
        name: 'reasons out of the client\'s scope or decided by its own request are named, and do not block',
        t: traffic([req(L), injected(`${L}/${e(ENC)}`, 'encounter_not_found', 404)], { scenario: { encounter_not_found: 'skip-resource', audio_not_found: 'skip-resource', invalid_limit: 'stop' }, notInjected: { audio_not_found: { why: 'the client does not use the audio route it belongs to', blocks: false }, invalid_limit: { why: "the client's own request decides it", blocks: false } } }),
        detail: /1 of 3 declared reasons judged .*; not applicable: audio_not_found \(the client does not use the audio route it belongs to\), invalid_limit/,
      },
      {
        name: 'every stop judged, one per run',
        t: traffic([req(L), req(L), req(L, { phase: 2 }), injected(L, 'revoked_key', 401, { phase: 2 }), req(L, { phase: 3 }), injected(L, 'expired_key', 401, { phase: 3 })], { scenario: { revoked_key: 'stop', expired_key: 'stop' } }),
        detail: /2 of 2 declared reasons judged over 3 runs/,
      },
    ],
    notVerified: [
      { name: 'no scenario file', t: traffic([req(L)]), detail: /no scenario `reasons`/ },
      { name: 'a scenario with `uses` only', t: traffic([req(L)], { uses: ['list'] }), detail: /no scenario `reasons`/ },
      { name: 'a scenario but nothing injected', t: traffic([req(L)], { scenario: { transcript_not_found: 'skip-resource' }, notInjected: { transcript_not_found: { why: 'the client made no eligible request for it in run 2', blocks: true } } }), detail: /not judged: transcript_not_found \(the client made no eligible request for it in run 2\)/ },
      {
        name: 'one declared reason judged, another in scope not (--reasons narrowed the run)',
        t: traffic([req(L), injected(`${L}/${e(ENC)}`, 'encounter_not_found', 404), req(`${L}/${e(DOC)}`)], { scenario: { encounter_not_found: 'skip-resource', revoked_key: 'stop' }, notInjected: { revoked_key: { why: 'not judged in this run: --reasons narrows it to encounter_not_found', blocks: true } } }),
        detail: /1 of 2 declared reasons judged .*; not judged: revoked_key \(not judged in this run: --reasons/,
      },
      { name: 'only reasons the client decides itself', t: traffic([req(L)], { scenario: { invalid_limit: 'stop' }, notInjected: { invalid_limit: { why: "the client's own request decides it", blocks: false } } }), detail: /no declared reason could be injected/ },
    ],
  },
};

const byId = new Map(CLIENT_CHECKS.map((c) => [c.id, c]));

/**
 * One check judged over a record as a run judges it (engine/client-judge.ts, through engine/evaluate.ts): its outcome,
 * its detail ('' when it has none), the exchanges it cites as evidence, and what would unlock it when not verified.
 */
function judgeOne(check: ClientCheck, t: ClientTraffic) {
  const { record, unlock } = judgeClientCheck(check, t);
  return { outcome: record.outcome, detail: record.detail ?? '', evidence: record.evidence, unlock };
}

test.describe('the client checks on fabricated traffic', () => {
  test('the table covers every client check, each with a record that fires and one that passes', () => {
    expect(Object.keys(CASES).sort()).toEqual(CLIENT_CHECKS.map((c) => c.id).sort());
    expect(CLIENT_CHECKS).toHaveLength(16);
    for (const [id, c] of Object.entries(CASES)) {
      expect(c.fires.length, id).toBeGreaterThan(0);
      expect(c.passes.length, id).toBeGreaterThan(0);
    }
  });

  test('every check is a pure function: judging the same record twice gives the same judgement and leaves the record as it was', () => {
    for (const [id, c] of Object.entries(CASES)) {
      for (const k of [...c.fires, ...c.passes, ...c.notVerified]) {
        const before = JSON.stringify({ ...k.t, keys: [...k.t.keys], profileIds: [...k.t.profileIds] });
        const a = judgeOne(byId.get(id)!, k.t);
        const b = judgeOne(byId.get(id)!, k.t);
        expect({ outcome: b.outcome, detail: b.detail }, `${id} › ${k.name}`).toEqual({ outcome: a.outcome, detail: a.detail });
        expect(JSON.stringify({ ...k.t, keys: [...k.t.keys], profileIds: [...k.t.profileIds] })).toBe(before);
      }
    }
  });

  for (const [id, c] of Object.entries(CASES)) {
    const expectOutcome = (k: Case, outcome: Outcome) => {
      const j = judgeOne(byId.get(id)!, k.t);
      expect(j.outcome, `${k.name}: ${j.detail}`).toBe(outcome);
      if (k.detail) expect(j.detail).toMatch(k.detail);
      expect(j.detail.length).toBeGreaterThan(0);
      return j;
    };
    test(`${id} › fires (${c.fireAs ?? 'fail'}) on a record that breaks it`, () => {
      for (const k of c.fires) {
        const j = expectOutcome(k, c.fireAs ?? 'fail');
        // Evidence is the exchanges that show it, at most a few (an output finding has none to show).
        expect(j.evidence.length, k.name).toBeLessThanOrEqual(5);
        for (const ex of j.evidence) expect(k.t.exchanges.map(clientEvidence), k.name).toContainEqual(ex);
      }
    });
    test(`${id} › stays quiet on a record that keeps it`, () => {
      for (const k of c.passes) expectOutcome(k, 'pass');
    });
    if (c.notVerified.length) {
      test(`${id} › says not_verified when there is nothing to judge`, () => {
        for (const k of c.notVerified) {
          const j = expectOutcome(k, 'not_verified');
          expect(j.evidence).toEqual([]);
        }
      });
    }
  }

  test('client-follows-declared-reason-handling › a retry-later retried at once is a warning (the spec writes no pause), a retry never sent still fails', () => {
    const handling = byId.get('client-follows-declared-reason-handling')!;
    const atOnce = judgeOne(handling, traffic([req(L, { at: T0 }), injected(AUDIO_ROUTE, 'audio_storage_unavailable', 503, { at: T0 + 10, durationMs: 1 }), req(AUDIO_ROUTE, { at: T0 + 21 })], { scenario: { audio_storage_unavailable: 'retry-later' } }));
    expect(atOnce.outcome).toBe('warning');
    expect(atOnce.detail).toMatch(/retried after 10 ms \(good practice: a pause/);
    const never = judgeOne(handling, traffic([req(L), injected(`${L}/${e(ENC)}`, 'digest_key_unavailable', 503), req(`${L}/${e(DOC)}`)], { scenario: { digest_key_unavailable: 'retry-later' } }));
    expect(never.outcome).toBe('fail');
  });

  test('client-follows-declared-reason-handling › declared skip-resource, the same request again before going on: a warning (the spec calls no reason terminal)', () => {
    const j = judgeOne(byId.get('client-follows-declared-reason-handling')!, traffic([req(L), injected(`${L}/${e(ENC)}`, 'encounter_not_found', 404), req(`${L}/${e(ENC)}`), req(`${L}/${e(DOC)}`)], { scenario: { encounter_not_found: 'skip-resource' } }));
    expect(j.outcome).toBe('warning');
    expect(j.detail).toMatch(/declared `skip-resource` for encounter_not_found; the client sent the same request again 1 time/);
  });

  test('client-follows-declared-reason-handling › a sequential client going on at once after a stop (its carried answers come back in milliseconds) fails: only a concurrent client\'s requests on their way are excused', () => {
    const handling = byId.get('client-follows-declared-reason-handling')!;
    const fast = judgeOne(handling, traffic([req(L), injected(`${L}/${e(ENC)}`, 'revoked_key', 401, { at: T0 + 1000, durationMs: 1 }), { ...injected(`${L}/${e(DOC)}`, 'revoked_key', 401, { at: T0 + 1005 }), carried: true }, { ...injected(`${L}/${e(PCT)}`, 'revoked_key', 401, { at: T0 + 1010 }), carried: true }], { scenario: { revoked_key: 'stop' } }));
    expect(fast.outcome).toBe('fail');
    expect(fast.detail).toMatch(/sent 2 more requests with that key/);
  });

  test('client-follows-declared-reason-handling › declared stop, the refused request asked once more (its key keeps its state) before stopping: a warning; other work after it fails', () => {
    const handling = byId.get('client-follows-declared-reason-handling')!;
    const again = judgeOne(handling, traffic([req(L), injected(`${L}/${e(ENC)}`, 'revoked_key', 401), { ...injected(`${L}/${e(ENC)}`, 'revoked_key', 401), carried: true }], { scenario: { revoked_key: 'stop' } }));
    expect(again.outcome).toBe('warning');
    expect(again.detail).toMatch(/declared `stop` for revoked_key; the client sent the refused request again 1 time before stopping/);
    const onwards = judgeOne(handling, traffic([req(L), injected(`${L}/${e(ENC)}`, 'revoked_key', 401), { ...injected(`${L}/${e(DOC)}`, 'revoked_key', 401), carried: true }], { scenario: { revoked_key: 'stop' } }));
    expect(onwards.outcome).toBe('fail');
    expect(onwards.detail).toMatch(/declared `stop` for revoked_key, but the client sent 1 more request with that key/);
  });

  test('client-list-walk-sees-every-item › pages that overlap read encounters twice: a warning, not a failure', () => {
    const j = judgeOne(byId.get('client-list-walk-sees-every-item')!, traffic([req(`${L}?limit=3&offset=0`, { body: page(3) }), req(`${L}?limit=3&offset=2`, { body: page(3) })]));
    expect(j.outcome).toBe('warning');
    expect(j.detail).toMatch(/pages overlap/);
  });

  test('client-ids-opaque-and-encoded › an id Java\'s URLEncoder encoded (! and ( escaped, + for a space) is named as form encoding, never as another id', () => {
    const id = 'enc (1)!';
    const urlEncoder = encodeURIComponent(id).replaceAll('%20', '+').replaceAll('(', '%28').replaceAll(')', '%29').replaceAll('!', '%21');
    const t = traffic([req(`${L}/${urlEncoder}`)]);
    t.profileIds.add(id);
    const j = judgeOne(byId.get('client-ids-opaque-and-encoded')!, t);
    expect(j.outcome).toBe('fail');
    expect(j.detail).toMatch(/it is the handed-out id "enc \(1\)!" encoded as a form .*URLEncoder.encode\(id, UTF_8\)\.replace/);
  });

  test('client-list-dates-valid › a raw + in a date value is a warning naming the hazard; %2B and a failure stay what they are', () => {
    const dates = byId.get('client-list-dates-valid')!;
    for (const target of [`${L}?start_at=2020-01-01T00:00:00+02:00`, `${L}?start_at=2020-01-01T00:00:00Z&end_at=2020-01-02T00:00:00+05:30`]) {
      const j = judgeOne(dates, traffic([req(LIST_OK), req(target)]));
      expect(j.outcome, j.detail).toBe('warning');
      expect(j.detail).toMatch(/carries a raw '\+': a server that decodes the query as a form .* reads a space there and answers 422 invalid_query; percent-encode it as %2B/);
      expect(j.evidence.map((x) => x.request.target)).toEqual([target]);
    }
    expect(judgeOne(dates, traffic([req(`${L}?start_at=2020-01-01T00:00:00%2B02:00`)])).outcome).toBe('pass');
    // A value that is wrong whichever way '+' is read is a failure, not a warning.
    expect(judgeOne(dates, traffic([req(`${L}?start_at=2020-01-01T00:00:00+02:00&end_at=2019-01-01T00:00:00Z`)])).outcome).toBe('fail');
    // The other list keys: a raw '+' makes their values invalid on either reading, which their own checks fail.
    expect(judgeOne(byId.get('client-list-paging-canonical')!, traffic([req(`${L}?limit=+5`)])).outcome).toBe('fail');
  });

  test('a not-verified check names what would let it judge', () => {
    for (const c of CLIENT_CHECKS) {
      const j = judgeOne(c, EMPTY);
      if (j.outcome === 'not_verified') expect(j.unlock, c.id).toMatch(/\w{3,}/);
    }
  });

  test('on empty traffic, every check but the output one says not_verified (never a pass on nothing)', () => {
    const outcomes = Object.fromEntries(CLIENT_CHECKS.map((c) => [c.id, judgeOne(c, EMPTY).outcome]));
    expect(Object.entries(outcomes).filter(([, o]) => o !== 'not_verified')).toEqual([['client-key-not-printed', 'pass']]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// End to end: `conformance client` on real clients against its own sandbox

/** Every part of the API and every reason the example client handles: 13 runs (normal, the non-stop reasons, 11 stops). */
const SCENARIO = path.join(ROOT, 'reference-client/scenario.json');
/** Every part of the API and a few reasons of each action: 3 runs. */
const QUICK = path.join(ROOT, 'tests/clients/quick.scenario.json');
const BROKEN = path.join(ROOT, 'tests/clients/broken-client.ts');
const CAREFUL = path.join(ROOT, 'tests/clients/careful-client.ts');
const REPORTS = ['conformance.json', 'junit.xml', 'conformance.html', 'outcomes.json'];

/**
 * Each broken mode, exactly the checks it turns red (its own first), and the scenario it runs with. Three break a
 * second check by the same act: a key in the query is also a key the list does not accept; the storm's repeats,
 * answered once with an injected skip-resource reason in the run that injects them, also break the declared
 * handling; an audio URL sent back as an id is also an id the sandbox never handed out. The audio defects run
 * with the example client's full scenario: they used to hide behind the injections, now they must not.
 */
const BROKEN_MODES: Record<string, { breaks: string[]; warns?: string[]; scenario: string }> = {
  'key-in-query': { breaks: ['client-key-only-in-authorization-header', 'client-queries-only-accepted-keys'], scenario: QUICK },
  'limit-050': { breaks: ['client-list-paging-canonical'], scenario: QUICK },
  'unsupported-key': { breaks: ['client-queries-only-accepted-keys'], scenario: QUICK },
  'query-on-detail': { breaks: ['client-queries-only-accepted-keys'], scenario: QUICK },
  'naive-start-at': { breaks: ['client-list-dates-valid'], scenario: QUICK },
  'ids-not-encoded': { breaks: ['client-ids-opaque-and-encoded'], scenario: QUICK },
  // Its repeats are a should (a warning). But when a stop reason lands inside its storm (each stop is judged on each
  // route group), the storm ignores it and the client then starts its sync, another request with the stopped key: a
  // declared stop broken, a must.
  'retry-storm': { breaks: ['client-follows-declared-reason-handling'], warns: ['client-no-repeat-after-terminal-answer'], scenario: QUICK },
  'audio-reused': { breaks: ['client-audio-url-not-used-after-expiry'], scenario: SCENARIO },
  'audio-printed': { breaks: ['client-audio-url-not-printed'], scenario: SCENARIO },
  'audio-sent-back': { breaks: ['client-audio-url-not-sent-to-api', 'client-ids-opaque-and-encoded'], scenario: SCENARIO },
};
/** Choices the specification leaves to the client. */
const ALLOWED_MODES = ['concurrent', 'no-keep-alive', 'lowercase-bearer', 'compression'];
/** Good practice the specification does not write (issue 39): a warning, CONFORMANT; NOT CONFORMANT under --strict. */
const SHOULD_MODES: Record<string, string[]> = {
  'key-printed': ['client-key-not-printed'],
};

interface Report { verdict: string; run: { subject: string }; checks: { id: string; outcome: Outcome; detail?: string }[] }
interface ClientRun { r: CliResult; report: Report; out: string; secrets: { kind: string; value: string }[] }

/** `conformance client --scenario … --out <tmp> -- <command>`, with the report and the secrets the broken client noted. */
async function runClient(command: string[], scenario = QUICK, timeoutMs = 230_000, extra: string[] = []): Promise<ClientRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-'));
  const out = path.join(dir, 'out');
  const secretsFile = path.join(dir, 'secrets.jsonl');
  const r = await runCli(['client', '--scenario', scenario, '--out', out, ...extra, '--', ...command], { timeoutMs, sampleMs: 0, env: { BROKEN_CLIENT_SECRETS: secretsFile } });
  const reportFile = path.join(out, 'conformance.json');
  expect(fs.existsSync(reportFile), `no report (exit ${r.code})\n${r.stderr.slice(-3000)}`).toBe(true);
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as Report;
  const secrets = fs.existsSync(secretsFile) ? fs.readFileSync(secretsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; value: string }) : [];
  return { r, report, out, secrets };
}

/** The client's own output, redacted, as `conformance client` keeps it beside the reports (never on the terminal). */
const clientLog = (run: ClientRun) => fs.readFileSync(path.join(run.out, 'client-output.log'), 'utf8');
const failing = (report: Report) => report.checks.filter((c) => c.outcome === 'fail').map((c) => c.id);
const summary = (run: ClientRun) => `exit ${run.r.code}\n${run.report.checks.map((c) => `${c.outcome} ${c.id}: ${c.detail ?? ''}`).join('\n')}\n${run.r.stderr.slice(-2000)}`;

/** Every form in which a noted secret could leak: the key; the audio URL, its path and query, its signature. */
function secretForms(secrets: ClientRun['secrets']): string[] {
  const out = new Set<string>();
  for (const s of secrets) {
    out.add(s.value);
    out.add(encodeURIComponent(s.value));
    if (s.kind === 'audio_url') {
      const u = new URL(s.value);
      out.add(`${u.pathname}${u.search}`);
      for (const v of u.searchParams.values()) if (v.length >= 12) out.add(v);
    }
  }
  return [...out];
}

/** No secret the client was given reaches the CLI's output or any report file. */
function expectNoSecretShown(run: ClientRun): void {
  const forms = secretForms(run.secrets);
  const places: [string, string][] = [['stdout', run.r.stdout], ['stderr', run.r.stderr], ['client-output.log', clientLog(run)], ...REPORTS.map((f): [string, string] => [f, fs.readFileSync(path.join(run.out, f), 'utf8')])];
  for (const [where, text] of places) for (const f of forms) expect(text.includes(f), `${where} shows a secret of the run (${f.slice(0, 6)}…)`).toBe(false);
}

test.describe('conformance client, end to end', () => {
  // Each test starts its own sandbox and runs the client several times, on a machine other engineers share.
  test.describe.configure({ timeout: 240_000 });

  test('the example client declaring every reason: CONFORMANT, every declared reason judged (each stop in a run of its own), audio verified', async () => {
    test.setTimeout(420_000);
    const run = await runClient([process.execPath, path.join(ROOT, 'reference-client/main.ts')], SCENARIO, 400_000);
    expect(run.r.code, summary(run)).toBe(0);
    expect(run.report.run.subject).toBe('client');
    expect(run.report.verdict).toBe('conformant');
    expect(failing(run.report)).toEqual([]);
    expect(run.report.checks).toHaveLength(CLIENT_CHECKS.length);
    expect(run.report.checks.filter((c) => c.outcome !== 'pass').map((c) => c.id), summary(run)).toEqual([]);
    const declared = Object.keys((JSON.parse(fs.readFileSync(SCENARIO, 'utf8')) as { reasons: Record<string, string> }).reasons);
    const stops = declared.filter((r) => (JSON.parse(fs.readFileSync(SCENARIO, 'utf8')) as { reasons: Record<string, string> }).reasons[r] === 'stop');
    const handling = run.report.checks.find((c) => c.id === 'client-follows-declared-reason-handling')!;
    // Each stop on each route group the example client uses: the list, an encounter's detail, the document routes.
    expect(handling.detail).toMatch(new RegExp(`^${declared.length} of ${declared.length} declared reasons judged over ${3 * stops.length + 2} runs, each handled as declared`));
    for (const r of declared) expect(handling.detail).toContain(`${r}: `);
    for (const id of ['client-audio-url-not-used-after-expiry', 'client-audio-url-not-sent-to-api', 'client-audio-url-not-printed']) expect(run.report.checks.find((c) => c.id === id)?.outcome, id).toBe('pass');
    expect(run.r.stderr).toMatch(new RegExp(`conformance: ${3 * stops.length + 2} runs of the client command in [0-9.]+ s \\(1 with normal answers only, 1 injecting the non-stop reasons, ${3 * stops.length} with one stop reason each, on each route group used\\)`));
    expect(run.r.stdout).toMatch(/CONFORMANT — client: verified 22 of 22 must requirements in its declared scope; reports in/);
    expectNoSecretShown(run);
  });

  test('a careful client that needs neither dates nor audio, its scenario declaring so: CONFORMANT, exit 0, those parts out of scope', async () => {
    const run = await runClient([process.execPath, CAREFUL], path.join(ROOT, 'tests/clients/careful-client.scenario.json'));
    expect(run.r.code, summary(run)).toBe(0);
    expect(run.report.verdict).toBe('conformant');
    expect(run.r.stdout).toMatch(/CONFORMANT — client: verified 17 of 17 must requirements in its declared scope; date window, audio not used; reports in/);
    const outOfScope = run.report.checks.filter((c) => c.outcome === 'not_verified');
    expect(outOfScope.map((c) => c.id).sort()).toEqual(['client-audio-url-not-printed', 'client-audio-url-not-sent-to-api', 'client-audio-url-not-used-after-expiry', 'client-list-dates-valid']);
    for (const c of outOfScope) expect(c.detail).toMatch(/^out of scope: /);
    expect(run.r.stdout).toMatch(/NOT VERIFIED client-list-dates-valid: out of scope: the date window \(start_at, end_at\) not used \(not in the scenario's `uses`\)/);
    expect(run.report.checks.find((c) => c.id === 'client-follows-declared-reason-handling')?.detail).toMatch(/^9 of 9 declared reasons judged over 8 runs/);
  });

  test('the same careful client without a scenario: INCOMPLETE, the scope inferred, every not-verified check listed with what would unlock it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-'));
    const r = await runCli(['client', '--out', path.join(dir, 'out'), '--', process.execPath, CAREFUL], { timeoutMs: 230_000, sampleMs: 0 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/INCOMPLETE — client: verified \d+ of 17 must requirements in the scope inferred from its traffic \(no `uses` declared\); nothing failed; date window, audio not used/);
    expect(r.stderr).toMatch(/conformance: 1 run of the client command/);
    expect(r.stdout).toMatch(/NOT VERIFIED client-follows-declared-reason-handling: no scenario `reasons`.* — would judge with: a scenario whose `reasons` declare/);
    const html = fs.readFileSync(path.join(dir, 'out', 'conformance.html'), 'utf8');
    expect(html).toContain('a scenario whose `reasons` declare what the client does per reason code (--scenario FILE)');
    expect(html).not.toContain('Not known for this report');
  });

  test('--reasons narrows what is injected: one stop in a run of its own, the rest named not judged (INCOMPLETE); a bad scenario or --reasons is a setup error', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-'));
    const careful = path.join(ROOT, 'tests/clients/careful-client.scenario.json');
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ uses: ['list'], reasons: { revoked_keys: 'stop' } }));
    const refused = await runCli(['client', '--scenario', bad, '--', process.execPath, CAREFUL], { timeoutMs: 60_000, sampleMs: 0 });
    expect([refused.code, refused.stderr.trim()]).toEqual([2, `conformance: scenario ${bad}: field /reasons names "revoked_keys", which is not a reason code of §7.1`]);
    const undeclared = await runCli(['client', '--scenario', careful, '--reasons', 'expired_key', '--', process.execPath, CAREFUL], { timeoutMs: 60_000, sampleMs: 0 });
    expect([undeclared.code, undeclared.stderr.trim()]).toEqual([2, 'conformance: --reasons names expired_key, which the scenario does not declare']);

    const r = await runCli(['client', '--scenario', careful, '--reasons', 'revoked_key', '--out', path.join(dir, 'out'), '--', process.execPath, CAREFUL], { timeoutMs: 230_000, sampleMs: 0 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/conformance: 4 runs of the client command in [0-9.]+ s \(1 with normal answers only, 3 with one stop reason each, on each route group used\)/);
    expect(r.stdout).toMatch(/INCOMPLETE — client: verified 16 of 17 must requirements in its declared scope; nothing failed; date window, audio not used/);
    expect(r.stdout).toMatch(/NOT VERIFIED client-follows-declared-reason-handling: 1 of 9 declared reasons judged over 4 runs, each handled as declared \(revoked_key: stop\); not judged: missing_scope \(not judged in this run: --reasons narrows it to revoked_key\)/);
  });

  for (const [mode, { breaks, warns = [], scenario }] of Object.entries(BROKEN_MODES)) {
    const check = breaks[0];
    test(`broken client ${mode}: NOT CONFORMANT, ${check} fails${scenario === SCENARIO ? ' (with every reason declared)' : ''}`, async () => {
      if (scenario === SCENARIO) test.setTimeout(420_000);
      const run = await runClient([process.execPath, BROKEN, mode], scenario, scenario === SCENARIO ? 400_000 : 230_000);
      expect(run.r.code, summary(run)).toBe(1);
      expect(run.report.run.subject).toBe('client');
      expect(run.report.verdict).toBe('not_conformant');
      expect(failing(run.report), summary(run)).toContain(check);
      // Exactly its own checks: the rest of its traffic is the example client's, and that is conformant.
      expect(failing(run.report).sort(), summary(run)).toEqual([...breaks].sort());
      expect(run.report.checks.filter((c) => c.outcome === 'warning' || c.outcome === 'not_verified').map((c) => c.id), summary(run)).toEqual(warns);
      for (const id of breaks) expect(run.r.stdout).toContain(`FAIL ${id}: `);
      expect(run.r.stdout).toMatch(/NOT CONFORMANT — client/);
      expect(run.secrets.filter((s) => s.kind === 'key').length).toBeGreaterThan(0);
      if (mode.startsWith('audio-')) expect(run.secrets.filter((s) => s.kind === 'audio_url').length).toBeGreaterThan(0);
      expectNoSecretShown(run);
      if (mode === 'audio-printed') expect(clientLog(run)).toMatch(new RegExp(`audio of .*: ${REDACTED.replace(/[[\]]/g, '\\$&')}`));
      // The sandbox answers the wrong path 404 (no route, or no such encounter), never as a refusal of the key.
      if (mode === 'ids-not-encoded') expect(clientLog(run)).toMatch(/ids-not-encoded: the wrong request got 404 /);
      if (mode === 'ids-not-encoded') expect(run.report.checks.find((c) => c.id === check)?.detail).toMatch(/handed-out id .* with its reserved characters \('\/', '\?', '#', '%'\) not percent-encoded/);
    });
  }

  for (const [mode, checks] of Object.entries(SHOULD_MODES)) {
    test(`a should not met, ${mode}: CONFORMANT with ${checks.join(' and ')} a warning; NOT CONFORMANT under --strict`, async () => {
      const run = await runClient([process.execPath, BROKEN, mode]);
      expect(run.r.code, summary(run)).toBe(0);
      expect(run.report.verdict).toBe('conformant');
      expect(run.report.checks.filter((c) => c.outcome === 'warning').map((c) => c.id).sort()).toEqual([...checks].sort());
      for (const check of checks) expect(run.r.stdout).toContain(`WARNING ${check}: `);
      // The client printed its key; the CLI keeps the client's output, the key replaced, beside the reports.
      if (mode === 'key-printed') expect(clientLog(run)).toContain(`broken-client: using key ${REDACTED}`);
      expectNoSecretShown(run);
      const strict = await runClient([process.execPath, BROKEN, mode], QUICK, 230_000, ['--strict']);
      expect(strict.r.code, summary(strict)).toBe(1);
      expect(strict.report.verdict).toBe('not_conformant');
    });
  }

  for (const mode of ALLOWED_MODES) {
    test(`allowed choice ${mode}: CONFORMANT`, async () => {
      const run = await runClient([process.execPath, BROKEN, mode]);
      expect(run.r.code, summary(run)).toBe(0);
      expect(run.report.run.subject).toBe('client');
      expect(run.report.verdict).toBe('conformant');
      expect(failing(run.report)).toEqual([]);
      expect(run.report.checks.filter((c) => c.outcome === 'warning' || c.outcome === 'not_verified').map((c) => c.id)).toEqual([]);
      expectNoSecretShown(run);
    });
  }

  test('a command that crashes before any request (a module error on every run) is a setup error: exit 2 naming its last lines, its output in a file, no verdict', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-'));
    const out = path.join(dir, 'out');
    const crash = 'console.log("starting sync"); console.error("SyntaxError: Cannot use import statement outside a module"); process.exit(1)';
    const r = await runCli(['client', '--out', out, '--', process.execPath, '-e', crash], { timeoutMs: 110_000, sampleMs: 0 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(/^conformance: the client command exited with code 1 without a request to the API in its normal run; its last lines: SyntaxError: Cannot use import statement outside a module \(its output: .*client-output\.log\)$/);
    expect(r.stderr).toMatch(/conformance: run 1: /);
    expect(r.stderr).not.toMatch(/run 2: /);
    expect(r.stdout).not.toContain('starting sync');
    expect(fs.readFileSync(path.join(out, 'client-output.log'), 'utf8')).toContain('starting sync');
    expect(fs.existsSync(path.join(out, 'conformance.json'))).toBe(false);
  });

  test('a bounded judgment: a client that hangs is stopped at its budget and the whole judgment at --max-duration, the runs cut named, the reasons not reached not judged', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-'));
    const out = path.join(dir, 'out');
    // One list request, then a pause no budget allows (a client retrying 4xx with long back-offs looks the same).
    const slow = 'fetch(process.env.CONFORMANCE_BASE_URL + "/external/v1/encounters?limit=1", { headers: { authorization: "Bearer " + process.env.CONFORMANCE_API_KEY } }).then(() => new Promise((r) => setTimeout(r, 600000)))';
    const started = Date.now();
    const r = await runCli(['client', '--scenario', path.join(ROOT, 'tests/clients/careful-client.scenario.json'), '--timeout', '3', '--max-duration', '12', '--out', out, '--', process.execPath, '-e', slow], { timeoutMs: 150_000, sampleMs: 0 });
    expect(Date.now() - started).toBeLessThan(100_000);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/conformance: run 1 stopped after 3 s after 1 API request/);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { verdict: string; warnings: string[]; checks: { id: string; detail?: string }[] };
    expect(report.verdict).toBe('incomplete');
    expect(report.warnings.some((w) => /^run 1 \(normal answers only\) was stopped after 3 s, its --timeout; it is judged as it stands$/.test(w))).toBe(true);
    expect(report.checks.find((c) => c.id === 'client-follows-declared-reason-handling')?.detail).toMatch(/not made: the judgment's bound of 12 s \(--max-duration\) was reached/);
  });

  test('a command that cannot start is a setup error: exit 2, one line, no report', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cec-client-spec-')), 'out');
    const r = await runCli(['client', '--out', out, '--', '/nonexistent/cmd'], { timeoutMs: 110_000, sampleMs: 0 });
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    // Progress lines (the sandbox starting, the command about to run) come first; the error is one line, last.
    expect(lines.at(-1)).toBe('conformance: the client command could not start: /nonexistent/cmd: not found');
    expect(lines.filter((l) => /could not start/.test(l))).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
    expect(fs.existsSync(path.join(out, 'conformance.json'))).toBe(false);
  });
});
