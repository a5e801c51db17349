// Mutants of the reference's outbound webhook delivery that the sender suite (engine/playwright/sender.ts)
// must catch. The receiver checks (`webhook-receiver-*`) cannot be reached by a service mutant: they are
// proven by the broken receivers of tests/webhook-receiver-suite.spec.ts instead.
import type { Matrix } from '../matrix.ts';

const RETRYABLE = ['webhook-sender-retries-503-with-same-ids', 'webhook-sender-retries-429-with-same-ids', 'webhook-sender-retries-408-with-same-ids', 'webhook-sender-retries-timeout-with-same-ids'];

export const MATRIX: Matrix = {
  'webhook-never-retries': RETRYABLE,
  'webhook-new-delivery-id-on-retry': RETRYABLE,
  'webhook-missing-delivery-id-header': ['webhook-sender-required-headers-present', ...RETRYABLE],
  'webhook-signature-over-reserialised-body': ['webhook-sender-signature-valid'],
  'webhook-version-header-mismatch': ['webhook-sender-version-header-matches'],
  'webhook-event-id-header-mismatch': ['webhook-sender-event-id-header-matches'],
  'webhook-extra-payload-field': ['webhook-sender-payload-schema'],
  'webhook-payload-audio-url': ['webhook-sender-payload-schema', 'webhook-sender-payload-thin'],
  'webhook-content-type-text-plain': ['webhook-sender-post-json'],
  'webhook-timestamp-stale': ['webhook-sender-timestamp-current'],
  'webhook-retries-terminal-400': ['webhook-sender-no-retry-after-400'],
  'webhook-retries-all-4xx': ['webhook-sender-no-retry-after-400', 'webhook-sender-no-retry-after-401', 'webhook-sender-no-retry-after-404'],
  'webhook-sends-api-key': ['webhook-sender-no-api-key'],
  'webhook-subscription-active-by-default': ['webhook-sender-no-delivery-without-activation'],
  // One header with another word (Ceapi-Signature beside Service-Event-Id …): with the word Service, the signature is missing.
  'webhook-header-word-mixed': ['webhook-sender-required-headers-present', 'webhook-sender-signature-valid', 'webhook-sender-every-attempt-signed-and-fresh'],
};
