// The webhook receiver under test for the receiver suite (a worker fixture of harness/fixtures.ts):
// the profile's `webhook.receiverUrl` with its signing secret; without one, in the sandbox run only
// (CONFORMANCE_SANDBOX=1, set when the harness started the reference itself), the harness's own
// reference receiver on an embedded PostgreSQL with a counting fake REST API as the follow-up probe.
import { loadProfile, signingSecret } from '../profile.ts';
import { ReceiverContext } from './receiver-suite.ts';
import { startReceiverSandbox } from './receiver-sandbox.ts';

export type ReceiverUnderTest = { ctx: ReceiverContext } | { notVerified: string };

export async function provideReceiver(use: (r: ReceiverUnderTest) => Promise<void>): Promise<void> {
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
}
