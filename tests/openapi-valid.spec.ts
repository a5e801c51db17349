// judge/openapi-valid.ts does swagger-parser's JSON Schema step for an OpenAPI 3.1 document from kept code: it must
// say exactly what swagger-parser's own `validate` says (resolve, or the same message) for valid and broken documents
// alike, from freshly compiled code and from the code a previous process kept.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { fixedSchemas } from '../fixtures/schema-code.ts';
import { openapi31SchemaSet, validateDocument } from '../judge/openapi-valid.ts';
import { PARSER_OPTIONS, type Json } from '../judge/openapi-meaning.ts';

const contract = JSON.parse(fs.readFileSync(new URL('../fixtures/contract/openapi.json', import.meta.url), 'utf8')) as Json;

/** What swagger-parser's own validate says: 'valid', or its message. */
async function parserSays(doc: Json): Promise<string> {
  return (SwaggerParser.validate(structuredClone(doc) as never, PARSER_OPTIONS as never) as unknown as Promise<unknown>).then(() => 'valid', (e: Error) => e.message);
}
async function oursSays(doc: Json, schema?: Parameters<typeof validateDocument>[1]): Promise<string> {
  return validateDocument(doc, schema).then(() => 'valid', (e: Error) => e.message);
}

/** Documents each broken one way (the schema step, the spec step, the parse), and some that are valid. */
function documents(): [string, Json][] {
  const c = () => structuredClone(contract);
  const edit = (what: string, f: (d: Json) => void): [string, Json] => {
    const d = c();
    f(d);
    return [what, d];
  };
  const firstPath = Object.keys(contract.paths)[0];
  return [
    ['the contract', c()],
    edit('no info', (d) => delete d.info),
    edit('info.title a number', (d) => (d.info.title = 7)),
    edit('an unknown root member', (d) => (d.surprise = true)),
    edit('a response without description', (d) => { const op = d.paths[firstPath].get; delete op.responses[Object.keys(op.responses)[0]].description; }),
    edit('a parameter without in', (d) => { const op = d.paths[firstPath].get; (op.parameters ??= []).push({ name: 'x', schema: { type: 'string' } }); }),
    edit('a schema type that is not a type', (d) => { const name = Object.keys(d.components.schemas)[0]; d.components.schemas[name].type = 'nothing'; }),
    edit('a duplicate operationId', (d) => { const ps = Object.keys(d.paths); d.paths[ps[1]].get.operationId = d.paths[ps[0]].get.operationId; }),
    edit('a path parameter not declared', (d) => { d.paths['/external/v1/extra/{thing}'] = { get: { responses: { 200: { description: 'ok' } } } }; }),
    edit('a dangling $ref', (d) => { const name = Object.keys(d.components.schemas)[0]; d.components.schemas[name] = { $ref: '#/components/schemas/Nowhere' }; }),
    edit('a circular schema', (d) => { d.components.schemas.Loop = { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } }; }),
    edit('openapi 3.1.1', (d) => (d.openapi = '3.1.1')),
    edit('openapi 3.0.3 (the parser whole)', (d) => (d.openapi = '3.0.3')),
    edit('openapi 4.0.0', (d) => (d.openapi = '4.0.0')),
    edit('openapi a number', (d) => (d.openapi = 3.1)),
    edit('no paths and no webhooks', (d) => { delete d.paths; delete d.webhooks; }),
  ];
}

test('every document gets swagger-parser\'s own answer: valid, or its very message', async () => {
  const answers: string[] = [];
  for (const [what, doc] of documents()) {
    const theirs = await parserSays(doc);
    expect(await oursSays(doc), what).toBe(theirs);
    answers.push(theirs === 'valid' ? 'valid' : 'invalid');
  }
  // The set means something: both answers occur, and the schema step's own message among them.
  expect(answers).toContain('valid');
  expect(answers.filter((a) => a === 'invalid').length).toBeGreaterThan(8);
  expect(await oursSays(documents()[1][1])).toMatch(/^Swagger schema validation failed\.\n {2}#\/ must have required property 'info'/);
});

test('the kept code (written by one process, loaded by the next) answers as compiling does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-kept-oas-'));
  try {
    fixedSchemas(openapi31SchemaSet(), dir)('document'); // compiles and keeps
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('openapi-3-1-'))).toHaveLength(1);
    const loaded = fixedSchemas(openapi31SchemaSet(), dir); // loads the kept file
    for (const [what, doc] of documents()) expect(await oursSays(doc, loaded), what).toBe(await parserSays(doc));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
