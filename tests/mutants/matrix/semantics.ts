// Mutants of the semantic checks of issue 12: date windows (checks/service/date-windows.ts), documents that
// belong to their encounter (checks/service/ownership.ts), finalized and ordered transcript turns
// (checks/service/transcripts.ts), audio links that work (checks/service/audio-links.ts), where the key travels
// (checks/service/credentials.ts), unknown query keys under fuzzing (checks/service/properties/query-fuzz.ts) and the
// webhook sender's §6.4 behaviour and event pointer (engine/playwright/sender.ts).
import type { Matrix } from '../matrix.ts';
import { ELSEWHERE as ELSEWHERE_CASES } from '../../../checks/service/credentials.cases.ts';

/** Every where-the-key-travels check of checks/service/credentials.cases.ts. */
const ELSEWHERE = ELSEWHERE_CASES.map((c) => c.id);

export const MATRIX: Matrix = {
  'api-key-query-param-accepted': ['credentials-api-key-query-not-accepted'],
  'api-key-anywhere-accepted': ELSEWHERE,
  'bearer-scheme-case-sensitive': ['credentials-bearer-scheme-case-insensitive'],
  'date-window-total-unfiltered': ['date-window-total-equals-items-walked', 'date-window-empty-total-zero'],
  'date-offset-ignored': ['date-window-offset-forms-same-set'],
  'date-window-desc-ignores-start': ['date-window-both-bounds-exact-desc'],
  'date-window-asc-end-inclusive': ['date-window-both-bounds-exact-asc'],
  'date-window-empty-falls-back': ['date-window-empty-total-zero'],
  'detail-documents-by-patient': ['ownership-detail-excludes-foreign-documents', 'ownership-embedded-documents-resolve'],
  'detail-omits-summary-documents': ['ownership-detail-lists-profile-documents'],
  'transcript-unfinalized-returned': ['transcript-unfinalized-turns-not-returned'],
  'transcript-phone-call-unsorted': ['transcript-turns-chronological-everywhere'],
  'audio-url-expiry-mismatch': ['audio-url-gives-audio-before-expiry'],
  'audio-url-lifetime-year': ['audio-url-short-lived'],
  'audio-storage-ignores-expiry': ['audio-url-refused-after-expiry'],
  'unsupported-keys-denylist': ['query-fuzz-documented-responses'],
  // Webhook sender (checks/sender/cases.ts): the §6.4 table in full, every attempt judged, the event's pointer.
  'webhook-resources-swapped': ['webhook-sender-event-names-finalized-document'],
  'webhook-retry-timestamp-not-signed': ['webhook-sender-every-attempt-signed-and-fresh'],
  'webhook-202-not-success': ['webhook-sender-no-redelivery-after-2xx'],
  'webhook-conflict-too-early-terminal': ['webhook-sender-retries-409-with-same-ids', 'webhook-sender-retries-425-with-same-ids'],
  'webhook-only-503-retried': ['webhook-sender-retries-500-with-same-ids', 'webhook-sender-retries-502-with-same-ids'],
  'webhook-follows-redirects': ['webhook-sender-no-retry-after-302'],
  'webhook-retries-410-422': ['webhook-sender-no-retry-after-410', 'webhook-sender-no-retry-after-422'],
  'webhook-refused-not-retried': ['webhook-sender-retries-refused-connection'],
  'webhook-reset-not-retried': ['webhook-sender-retries-reset-with-same-ids'],
};
