// Which catalog requirements are the webhook sender's: the part of the service a profile declares out of scope with
// `webhook.delivery: "not_activated"`, and the scope of `conformance webhook sender`'s report. Derived from the
// declarations, never from check ids: the requirements the sender checks name, and the service's rows of the area
// webhook and of §6 (the sender side of Events, including what no run can observe) and of §8/§9 about the webhook.
import { SENDER_CASES } from './cases.ts';

interface Row { id: string; section: string; area: string; statement: string; subjects?: readonly string[] }

const bindsService = (r: Row) => !r.subjects || r.subjects.length === 0 || r.subjects.includes('service');

/** The service's sender requirements of a catalog, in catalog order. */
export function senderRequirementIds(catalog: { requirements: readonly Row[] }): string[] {
  const named = new Set(SENDER_CASES.flatMap((c) => c.requirements));
  return catalog.requirements
    .filter(bindsService)
    .filter((r) => named.has(r.id) || r.area === 'webhook' || r.section === '6' || r.section.startsWith('6.') || ((r.section === '8' || r.section === '9') && /webhook/i.test(r.statement)))
    .map((r) => r.id);
}
