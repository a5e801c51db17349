// GET /openapi/v1/openapi.json: fixtures/contract/openapi.json as read at startup, 503 while the file is absent
// (re-read on each request until present). A contract mutant edits a copy (overrides.ts); the openapi variants
// rewrite it without changing its meaning (served-contract.ts).
import fs from 'node:fs';
import type http from 'node:http';
import { rule } from './overrides.ts';
import { sendJson } from './send.ts';
import { applyOpenapiVariants, openapiContentType, OPENAPI_VARIANTS } from './served-contract.ts';
import type { RequestSwitches } from './switchboard.ts';

export const CONTRACT_ROUTE = '/openapi/v1/openapi.json';

type Json = Record<string, any>;

export class ContractRoute {
  readonly #file: string;
  #doc: Json | null = null;
  constructor(file: string) {
    this.#file = file;
    this.#load();
  }

  #load(): void {
    try {
      this.#doc = JSON.parse(fs.readFileSync(this.#file, 'utf8'));
    } catch {
      this.#doc = null;
    }
  }

  serve(method: string, res: http.ServerResponse, sw: RequestSwitches): void {
    if (method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' }, { allow: 'GET' });
    if (!this.#doc) this.#load();
    if (!this.#doc) return sendJson(res, 503, { error: 'contract_unavailable', message: 'fixtures/contract/openapi.json is not available yet' });
    const docType = rule(sw, 'successContentType', openapiContentType(sw.variants));
    sendJson(res, 200, served(this.#doc, sw), docType ? { 'content-type': docType } : {}, sw.variants);
  }
}

/** The document as read, or a copy edited by a contract mutant and then rewritten by the openapi variants. */
function served(doc: Json, sw: RequestSwitches): unknown {
  const edit = rule(sw, 'contractEdit', null);
  if (!edit && !OPENAPI_VARIANTS.some((v) => sw.variants.has(v))) return doc;
  const copy = structuredClone(doc);
  edit?.(copy);
  return applyOpenapiVariants(copy, sw.variants);
}
