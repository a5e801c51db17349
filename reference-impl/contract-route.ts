// GET /openapi/v1/openapi.json: fixtures/contract/openapi.json as read at startup, 503 while the file is absent
// (re-read on each request until present). The document served, its media type and the JSON writer are named
// points (context.ts): another document of the same meaning (or another writer) may take their place.
import fs from 'node:fs';
import type http from 'node:http';
import type { Rule } from './context.ts';
import { sendJson } from './send.ts';

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

  serve(method: string, res: http.ServerResponse, rule: Rule): void {
    if (method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' }, { allow: 'GET' });
    if (!this.#doc) this.#load();
    if (!this.#doc) return sendJson(res, 503, { error: 'contract_unavailable', message: 'fixtures/contract/openapi.json is not available yet' });
    const docType = rule('successContentType', rule('contractContentType', undefined));
    rule('writeJson', sendJson)(res, 200, rule('servedContract', (doc: Json): unknown => doc)(this.#doc), docType ? { 'content-type': docType } : {});
  }
}
