// Variants of the example receiver: legitimate choices a webhook receiver may make that the example
// (receiver.ts) does not make by default, each switched on by name through its `variants` option. Each
// entry names the clause that allows it and a one-line justification. The meta-test
// tests/webhook-receiver-variants.spec.ts runs every receiver check against the example receiver with
// each variant on and requires zero `fail`; the `marker` names the check whose outcome or answered status
// proves the variant was really on. The dual of the broken receivers (tests/webhook-broken-receivers.ts),
// which must be caught. Imports nothing: the outcome names are the report's, spelled here as text.

/** A check outcome as the harness reports it (only the ones a marker can name). */
export type MarkerOutcome = 'pass' | 'warning' | 'informational';

export interface ReceiverVariantSpec {
  /** The clause (spec section or another standard the spec brings in) that allows the choice. */
  clause: string;
  justification: string;
  /** A check whose outcome, or one of whose answered statuses, shows the variant was on. */
  marker: { check: string; outcome?: MarkerOutcome; status?: number };
}

export const RECEIVER_VARIANTS = {
  'bom-tolerated': {
    clause: '§6.1 "The body is JSON"; RFC 8259 §8.1',
    justification: 'parsers MAY ignore a UTF-8 byte-order mark; the signature is verified over the raw bytes, mark included, before the mark is skipped',
    marker: { check: 'webhook-receiver-rejects-body-with-bom', outcome: 'informational' },
  },
  'identical-repeated-headers-merged': {
    clause: '§6.2 (one value per header); RFC 9110 §5.3',
    justification: 'a recipient may combine field lines; identical repeated lines of a required header read as one value change nothing that was signed (different values are still rejected)',
    marker: { check: 'webhook-receiver-rejects-service-timestamp-repeated', outcome: 'informational' },
  },
  'invalid-answered-500': {
    clause: '§6.3 "should answer non-2xx"',
    justification: '500 is non-2xx and the receiver does no follow-up work; that §6.4 makes it retryable is worth a warning, not a failure',
    marker: { check: 'webhook-receiver-rejects-signature-other-secret', outcome: 'warning' },
  },
  'invalid-answered-400': {
    clause: '§6.3 "should answer non-2xx"; §6.4 terminal failures',
    justification: 'the spec names no status for a rejection: 400 for a bad signature instead of 401 is as terminal and as non-2xx',
    marker: { check: 'webhook-receiver-rejects-signature-other-secret', status: 400 },
  },
  'success-200-with-body': {
    clause: '§6.4 "any 2xx status: delivery succeeded; no acknowledgement body required"',
    justification: 'any 2xx acknowledges; a body is not required and not forbidden, so 200 with a JSON body instead of 204',
    marker: { check: 'webhook-receiver-accepts-valid-delivery', status: 200 },
  },
  'duplicate-answered-200': {
    clause: '§6.4 "A duplicate event id: return success if earlier processing completed"',
    justification: 'success is any 2xx: a duplicate answered 200 with a body while a first delivery gets 204',
    marker: { check: 'webhook-receiver-accepts-exact-replay', status: 200 },
  },
  'uppercase-hex-accepted': {
    clause: '§6.2 "an HMAC-SHA256 digest (hexadecimal text)" (catalog WEBHOOK-SIG-UPPERCASE-HEX, unspecified)',
    justification: 'the case of the hex digits is not stated; uppercase hex decodes to the same 32 bytes',
    marker: { check: 'webhook-receiver-rejects-signature-uppercase-hex', outcome: 'informational' },
  },
  'several-signatures-accepted': {
    clause: '§6.3 step 6 "require the supported v1= form" (catalog WEBHOOK-SIG-MULTIPLE-SIGNATURES, unspecified)',
    justification: 'whether one header may carry several signatures (secret rotation) is open; accepting when one v1= digest matches is a common policy',
    marker: { check: 'webhook-receiver-rejects-signature-two-v1-comma', outcome: 'informational' },
  },
  'leading-zero-timestamp-accepted': {
    clause: '§6.3 step 2 "decimal Unix epoch seconds" (catalog WEBHOOK-SIG-TIMESTAMP-LEADING-ZEROS, unspecified)',
    justification: 'whether a leading zero is still decimal seconds is open; the digest is checked over the text as received, the value read as a number',
    marker: { check: 'webhook-receiver-rejects-timestamp-leading-zero', outcome: 'informational' },
  },
  'tolerant-reader-payload': {
    clause: '§6.1 "No additional properties are allowed" (a rule on what the service sends; what a receiver does with more is its policy)',
    justification: 'a validly signed event with undeclared fields is read for the fields §6.1 defines and the extras are ignored; missing or malformed fields still reject',
    marker: { check: 'webhook-receiver-rejects-payload-extra-field', outcome: 'informational' },
  },
  'unsupported-type-ignored': {
    clause: '§6.4 "An unsupported event type: ignore or reject per receiver policy"',
    justification: 'ignoring is allowed: a validly signed event of another type is acknowledged with 202 and nothing is fetched',
    marker: { check: 'webhook-receiver-rejects-payload-other-event-type', status: 202 },
  },
  'acknowledge-then-work': {
    clause: '§6.4 "any 2xx status: delivery succeeded"; "continue idempotent handling if it is still in progress"',
    justification: 'a receiver may acknowledge an authentic delivery with 202 at once and do the follow-up work afterwards, deduplicated by event id',
    marker: { check: 'webhook-receiver-accepts-valid-delivery', status: 202 },
  },
} as const satisfies Record<string, ReceiverVariantSpec>;

export type ReceiverVariant = keyof typeof RECEIVER_VARIANTS;

export const RECEIVER_VARIANT_NAMES = Object.keys(RECEIVER_VARIANTS) as ReceiverVariant[];
