// §6.3, §6.4 (receiver side): the harness plays the service against a webhook receiver, the worker
// fixture `receiver` of harness/fixtures.ts (see harness/webhook/receiver-fixture.ts for which one).
// One test per case; the title is the check id. These checks are proven able to fail by the broken
// receivers of tests/webhook-receiver-suite.spec.ts (the service mutants cannot reach a receiver).
import { test } from '../harness/fixtures.ts';
import { runCheck, NotVerified } from '../harness/checks.ts';
import { RECEIVER_CASES } from '../harness/webhook/receiver-suite.ts';

// One receiver per worker and the follow-up probe counts per receiver: run the cases in order.
test.describe.configure({ mode: 'default' });

for (const c of RECEIVER_CASES) {
  test(c.def.id, async ({ receiver }, testInfo) => {
    await runCheck(testInfo, c.def, async (scope) => {
      if ('notVerified' in receiver) throw new NotVerified(receiver.notVerified);
      await c.run(receiver.ctx, scope);
    });
  });
}
