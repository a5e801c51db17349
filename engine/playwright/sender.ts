// §6 (service side): outbound `recording.transcript_ready` deliveries. The harness listens as a receiver
// and makes the service produce events through the profile's `webhook.sandboxControlUrl`; without one
// (a target whose webhook delivery is not generally available, §6) every check is not_verified, naming the
// setting (webhook.delivery, webhook.sender) that would decide it. A profile that declares webhook delivery
// not activated (`webhook.delivery: "not_activated"`) declares no case at all: the sender is out of scope
// (reports/context.ts), and nothing of it is counted, verified or not.
// Its cases mostly wait for deliveries: they start first, all at once, in a test of their own. Mutant runs reach the delivery worker through the
// subscription: the switchboard headers of the activating request stick to it.
import { SENDER_TIMEOUT_MS } from './fixtures.ts';
import { suite } from '../declare.ts';
import { setting } from '../config.ts';
import { registerSecret } from '../../record/redact.ts';
import fs from 'node:fs';
import path from 'node:path';
import { deliveryNotActivated, headerWordOf, missingSenderSetting, signingSecret, type CredentialRole, type Profile } from '../../profile/profile.ts';
import { DEPLOYMENT_CASES, SenderContext, SENDER_CASES } from '../../checks/sender/cases.ts';
import { SandboxControl } from '../../observe/capture.ts';
import { Deployment } from '../../observe/deployment.ts';

// The sender's cases are declared in checks/sender/cases.ts: their records name that file (and --grep 'checks/sender' selects them).
const check = suite(path.join(import.meta.dirname, '..', '..', 'checks', 'sender', `cases${path.extname(import.meta.filename)}`), { capture: true, inFlight: 64, waits: true });

/** Headers for the control routes: the profile's request headers, plus the switchboard token if they lack it. */
function controlHeaders(profile: { requestHeaders?: Record<string, string>; faults?: Record<string, { headers?: Record<string, string> } | undefined> }): Record<string, string> {
  const headers = { ...profile.requestHeaders };
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'x-switchboard-token')) {
    const fromFault = Object.values(profile.faults ?? {}).map((f) => f?.headers?.['x-switchboard-token']).find(Boolean);
    // The profile's own token wins: the environment may carry another sandbox's (a nested run).
    const token = fromFault ?? setting('switchboardToken');
    if (token) headers['x-switchboard-token'] = token;
  }
  for (const [k, v] of Object.entries(headers)) if (/token/i.test(k)) registerSecret(v);
  return headers;
}

// The subscription asks the sender for a 100 ms backoff, so an unwanted retry (or an unwanted delivery) would
// arrive within a few hundred milliseconds of the answer that should have ended it; watching six times the
// backoff keeps a wide margin and the suite fast. A partner's service with its own schedule is judged by
// `conformance webhook sender --observe-ms` (default 5 s) instead.
const BACKOFF_MS = 100;
const OBSERVE_MS = 6 * BACKOFF_MS;

/**
 * The profile's declaration, read as the cases are declared (every process of the run reads the same file, so all
 * plan the same tests). A profile that is not there yet (the reference's own, written once it starts) or not
 * readable declares nothing here; its loader says what is wrong.
 */
function declared(): Profile | undefined {
  const file = setting('profile');
  if (!file) return undefined;
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  } catch {
    return undefined;
  }
}

/**
 * The cases of this run: none when delivery is declared not activated; for a deployment judged through webhook.sender,
 * all but the one only the sandbox's own schedule of attempts decides (a refused connection leaves no trace the harness
 * could see; docs/webhook-sender.md); all of them otherwise.
 */
function casesOfRun(): readonly (typeof SENDER_CASES)[number][] {
  const p = declared();
  if (deliveryNotActivated(p)) return [];
  if (p?.webhook?.sender && !p.webhook.sandboxControlUrl) return DEPLOYMENT_CASES();
  return SENDER_CASES;
}

/**
 * A deployment judged as it is (webhook.sender): one listener for the run's sender checks, at the profile's address,
 * its scenarios one at a time. Made when the first check needs it; its server does not keep the worker alive.
 */
let deployment: Promise<Deployment> | undefined;
function deploymentFor(profile: Profile, headerWord: string, document: { encounter_id: string; document_id: string } | undefined): Promise<Deployment> {
  deployment ??= (async () => {
    const file = setting('profile');
    const d = new Deployment({ settings: profile.webhook!.sender!, env: process.env, baseUrl: profile.baseUrl, cwd: file ? path.dirname(path.resolve(file)) : process.cwd(), headerWord, document, log: (l) => process.stderr.write(`conformance: webhook sender: ${l}\n`) });
    await d.listen();
    d.capture.unref();
    return d;
  })();
  return deployment;
}

/** How long a deployment's scenarios may take in all: each waits for its deliveries and watches for redeliveries. */
function deploymentBudgetMs(profile: Profile): number {
  const s = profile.webhook!.sender!;
  const trigger = s.trigger === 'none' ? 0 : (s.trigger.timeoutMs ?? 60_000);
  const wait = s.waitMs ?? (s.trigger === 'none' ? 300_000 : 30_000);
  return SENDER_CASES.length * (trigger + 3 * wait + (s.observeMs ?? 5_000)) + 60_000;
}

for (const c of casesOfRun()) {
  check.declared(c, async (api, scope, { capture, testInfo }) => {
    const profile = api.target.profile;
    const missing = missingSenderSetting(profile);
    if (missing) scope.need(undefined, missing.text, missing.setting);
    const apiKeys = (Object.keys(profile.credentials ?? {}) as CredentialRole[]).map((r) => api.target.key(r)).filter((k): k is string => Boolean(k));
    const rest = api.target.key('full') ? (target: string) => api.get(target) : undefined;
    if (!profile.webhook?.sandboxControlUrl && profile.webhook?.sender) {
      // A deployment: its subscription delivers to the harness's listener; its trigger (or its team) causes events.
      const secret = scope.need(signingSecret(profile, process.env), 'webhook.signingSecretEnv (the secret the deployment signs its deliveries with)', 'webhook.signingSecretEnv');
      const document = profile.resources?.ambient_transcript_with_audio;
      testInfo.setTimeout(Math.max(testInfo.timeout, deploymentBudgetMs(profile)));
      const d = await deploymentFor(profile, headerWordOf(profile), document);
      const ctx = new SenderContext({
        capture: d.capture, deployment: d, secret, document: document ?? { encounter_id: '', document_id: '' },
        // A deployment's trigger may finalize any transcript of the organization (docs/webhook-sender.md, "The trigger's
        // contract"): the event is bound by its arrival, and the document it names is judged, not matched to ours.
        documentKnown: false,
        waitMs: d.waitMs, observeMs: d.observeMs, apiKeys, rest, headerWord: headerWordOf(profile),
      });
      await c.run(ctx, scope);
      return;
    }
    const controlUrl = scope.need(profile.webhook?.sandboxControlUrl, 'webhook.sandboxControlUrl (a way to make the service produce events; outbound delivery is planned_not_generally_available)', 'webhook.sandboxControlUrl');
    const document = scope.need(profile.resources?.ambient_transcript_with_audio, 'resources.ambient_transcript_with_audio (a document with a finalized transcript)', 'resources.ambient_transcript_with_audio');
    const ctx = new SenderContext({
      capture,
      control: new SandboxControl({ baseUrl: controlUrl, headers: controlHeaders(profile), timeoutMs: profile.timeouts?.requestMs }),
      document,
      backoffMs: BACKOFF_MS,
      senderTimeoutMs: SENDER_TIMEOUT_MS,
      maxAttempts: 3,
      waitMs: 5_000,
      observeMs: OBSERVE_MS,
      // The word of the deployment's §6.2 header names (webhook.headerWord, default Service).
      headerWord: headerWordOf(profile),
      // Every API key of the profile: a delivery must carry none (webhook-sender-no-api-key).
      apiKeys,
      // Follow-up fetches with the receiver's key: the profile's full key (absent → those checks are not_verified).
      rest,
    });
    await c.run(ctx, scope);
  });
}
