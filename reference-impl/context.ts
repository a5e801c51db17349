// What one /external/v1 request carries through the stages (Ctx), what the stages use of the server (Services),
// and the named points: each place of the service whose rule a caller outside may replace, with the type of the
// rule (or value) found there. The service asks `ctx.rule(point, correct)` at the place of the rule and runs what
// it gets; the default hook returns the correct rule. Types only (and the default hook), below every module of
// the request path, so none of them needs another in a circle.
import type http from 'node:http';
import type stream from 'node:stream';
import type { AudioSigner } from './audio.ts';
import type { DisclosureLog } from './disclosure.ts';
import type { ApiError, ReasonCode } from './errors.ts';
import type { FaultName, Refusal } from './faults.ts';
import type { DocumentRow, DocumentSummaryRow, EncounterRow, KeyRow, ListQuery, ListSql, QueryPair } from './records.ts';
import type { Repo } from './repo.ts';

export type Scope = 'encounters:read' | 'patients:read' | 'documents:read' | 'recordings:read';
export type RouteGroup = 'encounters' | 'documents';

type Json = Record<string, any>;
export type Body = Record<string, unknown>;
export type ListBody = Body & { items: Body[] };
export type DetailBody = { encounter: Body };
export interface TranscriptBody { document_id: string; encounter_id: string; transcript: unknown }
export type Turn = { speaker: string; text: string; start: number; end: number };

/** Writes a JSON answer (send.ts sendJson is the plain one). */
export type Writer = (res: http.ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void;

/** A request head node:http could not parse, split into its request line and its headers. */
export interface RawHead { requestLine: string; headers: Record<string, string> }

/** The answer of one webhook delivery attempt. */
export type DeliveryResult = { kind: 'status'; status: number; location?: string } | { kind: 'transport'; error: string };
/** What the sender knows of a delivery while it writes its headers. */
export interface DeliveryInfo { event_id: string; delivery_id: string; attempts: number; api_version: string; timestamp: string }

/** The rule at a named point: the correct one unless the hook puts another in its place. */
export type Rule = <P extends keyof Points>(point: P, correct: Points[P]) => Points[P];
/** The default hook: every point keeps its correct rule. */
export const correctRule: Rule = (_point, correct) => correct;

/**
 * What the server is created with: per request, the rule hook it runs with (or a refusal, when the hook's own
 * request headers are misused), and a key naming that hook for what outlives the request (a webhook subscription
 * made under it); `fromKey` gives the hook back. The default hook (CORRECT_HOOK) has nothing to switch.
 */
export interface Hook {
  forRequest(req: http.IncomingMessage): { rule: Rule; key: string | null } | Refusal;
  /** A request head node:http refused: the hook it names, or null (the plain 400). */
  forRawHead(headers: Record<string, string>): Rule | null;
  fromKey(key: string | null): Rule;
}
export const CORRECT_HOOK: Hook = { forRequest: () => ({ rule: correctRule, key: null }), forRawHead: () => null, fromKey: () => correctRule };

/** What the stages and the bodies use of the server. */
export interface Services {
  repo: Repo;
  digestKey: Buffer;
  /** Compared against when the key id is unknown, so both failures cost the same. */
  dummyDigest: Buffer;
  signer: AudioSigner;
  disclosures: DisclosureLog;
}

/** One /external/v1 request on its way through the stages. */
export interface Ctx {
  rule: Rule;
  /** The sandbox faults the request switched on (faults.ts). */
  faults: ReadonlySet<FaultName>;
  req: http.IncomingMessage;
  method: string;
  op: Operation | undefined;
  params: string[];
  pairs: QueryPair[];
  origin: string;
  key?: KeyRow;
  list?: ListQuery;
  /** With its document summaries on the encounter detail route. */
  encounter?: EncounterRow & { documents?: DocumentSummaryRow[] };
  document?: DocumentRow;
}

export interface Operation {
  id: string;
  path: RegExp;
  group: RouteGroup;
  scopes: readonly Scope[];
  queryKeys: readonly string[];
  respond(ctx: Ctx, s: Services): Promise<{ body: unknown; resourceIds: string[] }>;
}

export interface Stage { name: string; run(ctx: Ctx, s: Services): Promise<void> | void }
export interface Reply { status: number; body?: unknown; headers: Record<string, string> }

/** What step (6) found for the path: the encounter, and the document when the path names one. */
export interface Found { encounter: EncounterRow; document: DocumentRow | undefined; documentId: string | undefined }
export type Judgment = (ctx: Ctx, found: Found) => void;

/** The named points, each with the type of the rule (or value) found there. */
export interface Points {
  // ---- query.ts
  decodeQueryPart: (raw: string) => { text: string; ok: boolean };
  rejectUnsupportedKeys: (pairs: QueryPair[], allowed: readonly string[], rule: Rule) => void;
  unsupportedKey: (key: string, allowed: readonly string[]) => boolean;
  offendingPair: (pairs: QueryPair[], bad: (p: QueryPair) => boolean) => QueryPair | undefined;
  unsupportedFilterField: (offending: QueryPair, pairs: QueryPair[]) => string;
  sanitizeField: (raw: string) => string | null;
  validateListQuery: (pairs: QueryPair[], rule: Rule) => ListQuery;
  duplicateQueryKey: (key: string, all: QueryPair[]) => QueryPair;
  listDefaults: ListQuery;
  limitMax: number;
  offsetMax: number;
  canonicalInt: (text: string, max: number, which: 'limit' | 'offset') => number | null;
  inRange: (n: number, min: number, max: number) => boolean;
  invalidValueField: (key: string) => string | null;
  invalidSortReason: ReasonCode;
  rejectInvalidDate: (field: string | null, message: string) => void;
  dateTimeText: (text: string) => string;
  matchDateTime: (text: string) => RegExpExecArray | null;
  dateOffsetMinutes: number;
  listCheckOrder: readonly (() => void)[];
  startBeforeEnd: (start: bigint, end: bigint) => boolean;
  startEndField: string;
  // ---- pipeline.ts
  pipeline: readonly Stage[];
  keysEnabledCheck: (ctx: Ctx) => void;
  digestKeyCheck: (ctx: Ctx) => void;
  presentedToken: (ctx: Ctx) => string | null;
  missingBearerReason: (ctx: Ctx) => ReasonCode;
  testKeysRefused: (ctx: Ctx) => boolean;
  revokedReason: ReasonCode;
  expiredReason: ReasonCode;
  methodAllowed: (method: string) => boolean;
  orgScopeOnly: boolean;
  notAllowlistedReason: ReasonCode;
  routeGroupEnabled: (key: KeyRow, group: RouteGroup) => boolean | null;
  requiredScopes: (op: Operation) => readonly Scope[];
  missingScopeError: (missing: readonly Scope[]) => ApiError;
  unknownEncounterReason: ReasonCode;
  lookupJudgments: readonly Judgment[];
  crossOrgReason: ReasonCode;
  demoReason: ReasonCode;
  documentBelongs: (document: DocumentRow, encounter: EncounterRow) => boolean;
  documentNotFoundReason: (document: DocumentRow | undefined, encounter: EncounterRow) => ReasonCode;
  reply: (ctx: Ctx, s: Services) => Promise<Reply>;
  successBody: (body: unknown) => unknown;
  successContentType: string | undefined;
  // ---- bodies.ts and the list statement of repo.ts
  listSql: ListSql;
  timestampOffsetMinutes: number;
  timestampFraction: (ms: string) => string;
  encounterSummary: (summary: Body, docs: DocumentSummaryRow[]) => Body;
  listBody: (body: ListBody, rows: readonly EncounterRow[]) => ListBody;
  detailDocuments: (encounter: EncounterRow & { documents?: DocumentSummaryRow[] }, ctx: Ctx, s: Services) => Promise<DocumentSummaryRow[]>;
  detailBody: (body: DetailBody, docs: readonly DocumentSummaryRow[]) => DetailBody;
  clinicalContentFormat: string;
  clinicalStatus: string | null;
  unsupportedDocument: (d: DocumentRow, common: { document_id: string; encounter_id: string }) => Body;
  documentBody: (document: Body, d: DocumentRow) => Body;
  notAmbientError: () => Error;
  transcriptServed: (t: { finalized: boolean }) => boolean;
  transcriptMissingError: () => Error;
  sortTurns: (turns: Turn[], d: DocumentRow) => void;
  transcriptBody: (body: TranscriptBody) => TranscriptBody;
  noAudioReason: ReasonCode;
  audioStorageUnavailableReason: ReasonCode;
  audioMissingReason: ReasonCode;
  audioUrlSkew: number;
  audioUrlShift: number;
  audioUrl: (url: string) => string;
  // ---- server.ts, errors and the routes beside the pipeline
  /** A front end before the service: true when it answered the request itself (with `write`, the JSON writer). */
  frontEnd: (method: string, path: string, res: http.ServerResponse, write: Writer, req: http.IncomingMessage) => boolean;
  /** The JSON writer of every answer of the API and the served contract. */
  writeJson: Writer;
  writeError: Writer;
  errorBody: (status: number, body: Body) => Body;
  errorMessage: (e: ApiError) => string;
  storageClock: () => number;
  /** The contract document as served (the document as read, never changed in place). */
  servedContract: (doc: Json) => unknown;
  contractContentType: string | undefined;
  /** A request line node:http refused: true when it was answered anyway. */
  repairRequestLine: (head: RawHead, socket: stream.Duplex, server: http.Server) => boolean;
  // ---- webhooks.ts: the sender
  /** Deliver to a subscription that is not active (the finalize route picks the subscriptions). */
  deliverToInactive: boolean;
  webhookEvent: (payload: Json, attempt: number) => Record<string, unknown>;
  /** The bytes sent, given the event and its compact serialisation (the bytes signed). */
  webhookBody: (event: Record<string, unknown>, compact: Buffer) => Buffer;
  webhookTimestamp: (nowSeconds: number) => number;
  /** §6.2: the word that stands where the spec writes Service in the five header names (the service's own name). */
  webhookHeaderWord: string;
  /** §6.2: the digest's hexadecimal text, given the lowercase hex (the case is open: WEBHOOK-SIG-UPPERCASE-HEX). */
  webhookDigestText: (lowercaseHex: string) => string;
  deliveryHeaders: (headers: Record<string, string>, d: DeliveryInfo) => Record<string, string>;
  followRedirect: (result: DeliveryResult) => boolean;
  deliverySucceeded: (result: DeliveryResult) => boolean;
  retryable: (result: DeliveryResult) => boolean;
}
