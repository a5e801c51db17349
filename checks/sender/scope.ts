// Which catalog requirements are the webhook sender's: the part of the service a profile declares out of scope with
// `webhook.delivery: "not_activated"`, and the scope of `conformance webhook sender`'s report. Derived from the
// declarations, never from check ids: the requirements the sender checks name, the service's rows of the area
// webhook and of §6 (the sender side of Events, including what no run can observe), and the rows of §8/§9 about the
// webhook, named (tests/subjects.spec.ts holds the list to the catalog).
import { SENDER_CASES } from './cases.ts';

interface Row { id: string; section: string; area: string; statement: string; subjects?: readonly string[] }

/** The rows of §8 (limits) and §9 (versioning) about the webhook: the sender's, though outside §6. */
export const SENDER_ROWS_OUTSIDE_6: readonly string[] = ['LIMIT-WEBHOOK-TOLERANCE', 'VERSION-WEBHOOK-DATE', 'VERSION-WEBHOOK-RUNTIME-STATUS'];

const bindsService = (r: Row) => !r.subjects || r.subjects.length === 0 || r.subjects.includes('service');

/** The service's sender requirements of a catalog, in catalog order. */
export function senderRequirementIds(catalog: { requirements: readonly Row[] }): string[] {
  const named = new Set(SENDER_CASES.flatMap((c) => c.requirements));
  return catalog.requirements
    .filter(bindsService)
    .filter((r) => named.has(r.id) || r.area === 'webhook' || r.section === '6' || r.section.startsWith('6.') || SENDER_ROWS_OUTSIDE_6.includes(r.id))
    .map((r) => r.id);
}
