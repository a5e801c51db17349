// §6.3, §6.4 (receiver side): the harness plays the service against a webhook receiver. The receiver
// is the profile's `webhook.receiverUrl` with its signing secret; without one, the harness's own
// reference receiver (harness/webhook/reference-receiver.ts) is started in this worker on an embedded
// PostgreSQL with a counting fake REST API, whose request count is the follow-up probe.
// One test per case; the title is the check id. These checks are proven able to fail by the broken
// receivers of tests/webhook-receiver-suite.spec.ts (the service mutants cannot reach a receiver).
import { test as base } from '@playwright/test';
import { runCheck, NotVerified } from '../harness/checks.ts';
import { loadProfile, signingSecret } from '../harness/profile.ts';
import { ReceiverContext, RECEIVER_CASES } from '../harness/webhook/receiver-suite.ts';
import { startReceiverSandbox } from '../harness/webhook/receiver-sandbox.ts';

type ReceiverUnderTest = { ctx: ReceiverContext } | { notVerified: string };

const test = base.extend<{}, { receiver: ReceiverUnderTest }>({
  receiver: [
    async ({}, use) => {
      const file = process.env.CONFORMANCE_PROFILE;
      if (!file) throw new Error(process.env.CONFORMANCE_SETUP_ERROR ?? 'CONFORMANCE_PROFILE is not set: run through `conformance run` or `npm test`');
      const profile = loadProfile(file);
      const url = profile.webhook?.receiverUrl;
      if (url) {
        const secret = signingSecret(profile);
        if (!secret) {
          await use({ notVerified: 'profile lacks webhook.signingSecretEnv (set in the environment) or webhook.signingSecret for the receiver' });
          return;
        }
        const shared = profile.resources?.ambient_transcript_with_audio;
        await use({ ctx: new ReceiverContext({ url, secret, timeoutMs: profile.timeouts?.requestMs ?? 10_000, organizationId: undefined, resources: shared }) });
        return;
      }
      if (process.env.CONFORMANCE_SANDBOX !== '1') {
        // Against a real target the example receiver proves nothing about the partner's receiver.
        await use({ notVerified: 'profile lacks webhook.receiverUrl (the receiver under test)' });
        return;
      }
      const sandbox = await startReceiverSandbox();
      try {
        await use({ ctx: new ReceiverContext({ url: sandbox.url, secret: sandbox.secret, followUpProbe: () => sandbox.api.count(), followUpSettleMs: 40 }) });
      } finally {
        await sandbox.close();
      }
    },
    { scope: 'worker', timeout: 60_000 },
  ],
});

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
