// The webhook receiver under test for the receiver suite (a worker fixture of harness/fixtures.ts):
// the profile's `webhook.receiverUrl` with its signing secret; without one, in a sandbox run only
// (CONFORMANCE_SANDBOX=1), the example receiver (reference-receiver/) that global setup started once for
// the run (cli/global-setup.ts), named by the CONFORMANCE_SANDBOX_RECEIVER_* settings: its URL, its
// signing secret, and the count of its follow-up fetches served by the counting stand-in of the REST API,
// read over HTTP as the follow-up probe. The harness never imports the example receiver itself.
import { setting } from '../config.ts';
import { loadProfile, signingSecret } from '../profile.ts';
import { ReceiverContext } from './receiver-suite.ts';
import { readCount } from './counting-api.ts';

export type ReceiverUnderTest = { ctx: ReceiverContext } | { notVerified: string };

export async function provideReceiver(use: (r: ReceiverUnderTest) => Promise<void>): Promise<void> {
  const file = setting('profile');
  if (!file) throw new Error(setting('setupError') ?? 'CONFORMANCE_PROFILE is not set: run through `conformance run` or `npm test`');
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
  if (setting('sandbox') !== '1') {
    // Against a real target the example receiver proves nothing about the partner's receiver.
    await use({ notVerified: 'profile lacks webhook.receiverUrl (the receiver under test)' });
    return;
  }
  const sandboxUrl = setting('sandboxReceiverUrl');
  const secret = setting('sandboxReceiverSecret');
  const countUrl = setting('sandboxReceiverCountUrl');
  if (!sandboxUrl || !secret || !countUrl) {
    // A sandbox run without the example receiver would be judged on nothing: a setup error, never a pass.
    throw new Error(setting('sandboxReceiverError') ?? 'sandbox run without the example webhook receiver: global setup (cli/global-setup.ts) did not start it');
  }
  await use({ ctx: new ReceiverContext({ url: sandboxUrl, secret, followUpProbe: () => readCount(countUrl), followUpSettleMs: 40 }) });
}
