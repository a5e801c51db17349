// Validates a parsed webhook body against the closed `RecordingTranscriptReadyWebhookEvent` schema of
// fixtures/contract/openapi.json, through the one contract compiler of judge/contract.ts (the document is
// read once per process, its validators compiled at most once, strict mode on, or loaded as the code a previous
// process kept). It never reads the reference implementation: the contract file is the only source of truth.
import type { ValidateFunction } from 'ajv';
import { schemaValidator } from './contract.ts';

/** The component schema of the event body. */
export const WEBHOOK_EVENT_SCHEMA = 'RecordingTranscriptReadyWebhookEvent';

/** The compiled validator for the webhook event (compiled on first use, then reused). */
export function webhookEventValidator(): ValidateFunction {
  return schemaValidator(WEBHOOK_EVENT_SCHEMA);
}

export type SchemaCheck = { ok: true } | { ok: false; errors: string };

/** Validates a parsed body; the error text names instance paths and keywords, never values. */
export function checkWebhookEvent(value: unknown): SchemaCheck {
  const validate = webhookEventValidator();
  if (validate(value)) return { ok: true };
  const errors = (validate.errors ?? [])
    .map(e => `${e.instancePath || '/'} ${e.keyword}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : ''}`)
    .join('; ');
  return { ok: false, errors };
}
