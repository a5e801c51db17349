// A deployment's webhook sender, judged as it is: its subscription is configured once, outside the harness, to deliver
// to the URL the harness listens at (profile webhook.sender.listen), and deliveries are caused by the team's trigger
// command (run once per scenario) or by the team itself (trigger "none": the harness waits a bounded time). Every event
// that arrives is bound, in order, to the scenario that caused it, and the n-th delivery of that event is answered with
// step n of the scenario's script, so the §6.4 table is judged on the deployment's real retries. Scenarios run one at a
// time: two events in flight at once could not be told apart by the order they arrive in.
import path from 'node:path';
import { NotVerified } from '../record/record.ts';
import type { CheckScope, Exchange } from '../record/record.ts';
import { settingName } from '../engine/config.ts';
import { commandEnv, describeEnd, runCommand } from './command.ts';
import { deliveryExchange } from './capture.ts';
import { Capture, redirectPath } from './capture.ts';
import type { CapturedDelivery, Deployment as DeploymentSource, ScenarioResultOf, ScriptStep } from './capture.ts';
import type { SenderSettings } from '../profile/profile.ts';

export interface DeploymentOptions {
  settings: SenderSettings;
  /** The folder the trigger command runs in (the profile's); it is told it too (CONFORMANCE_PROFILE_DIR). */
  cwd: string;
  /** The target's base URL, told to the trigger (CONFORMANCE_BASE_URL): the deployment it must act on. */
  baseUrl: string;
  headerWord?: string;
  /** The document the trigger is asked to finalize (profile resources.ambient_transcript_with_audio), if any. */
  document?: { encounter_id: string; document_id: string };
  /** Told when the harness waits for the team (trigger none), or a trigger ends badly. */
  log?: (line: string) => void;
  /** The environment the trigger command inherits (the engine hands it the process's). */
  env: NodeJS.ProcessEnv;
}

export type ScenarioResult = ScenarioResultOf;

export class Deployment implements DeploymentSource {
  readonly capture: Capture;
  readonly opts: DeploymentOptions;
  private queue: Promise<unknown> = Promise.resolve();
  private events = 0;

  constructor(opts: DeploymentOptions) {
    this.opts = opts;
    const l = opts.settings.listen ?? {};
    this.capture = new Capture({ host: l.host, port: l.port, advertiseUrl: l.url, holdMs: opts.settings.holdMs ?? 30_000, headerWord: opts.headerWord });
  }

  async listen(): Promise<string> {
    return this.capture.listen();
  }

  async close(): Promise<void> {
    await this.capture.close();
  }

  get trigger(): SenderSettings['trigger'] {
    return this.opts.settings.trigger;
  }

  /** How long to wait for a scenario's first delivery, and for each retry. */
  get waitMs(): number {
    return this.opts.settings.waitMs ?? (this.trigger === 'none' ? 300_000 : 30_000);
  }

  get observeMs(): number {
    return this.opts.settings.observeMs ?? 5_000;
  }

  private readonly memo = new Map<string, Promise<ScenarioResult>>();

  /** One scenario shared by every check that asks for `key` (each event costs the team's trigger a finalized transcript). */
  shared(key: string, make: () => Promise<ScenarioResult>): Promise<ScenarioResult> {
    let run = this.memo.get(key);
    if (!run) {
      run = make();
      this.memo.set(key, run);
    }
    return run;
  }

  /** Runs `work` after every scenario before it (one event in flight at a time). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Causes one event (the trigger, or the team) whose deliveries are answered with `script`, and waits until
   * `until(deliveries)` holds (retries: one waitMs per delivery wanted), then `extraWaitMs` more.
   */
  scenario(scope: CheckScope, name: string, script: ScriptStep[], until: (ds: CapturedDelivery[]) => boolean, extraWaitMs = 0, wanted = 1): Promise<ScenarioResult> {
    return this.serial(async () => {
      const claim = this.capture.claimNextEvent(script);
      let eventId: string | undefined;
      try {
        await this.cause(scope, name, 'active');
        eventId = await Promise.race([claim.eventId, new Promise<undefined>((r) => setTimeout(() => r(undefined), this.waitMs).unref())]);
      } finally {
        claim.cancel();
      }
      if (eventId === undefined && this.trigger === 'none') throw new NotVerified(`no new event arrived within ${this.waitMs} ms for scenario ${name} (trigger "none": the team causes the deliveries)`);
      if (eventId === undefined) return { path: '', deliveries: [], followed: [] };
      const id = eventId;
      const first = this.capture.ofEvent(id)[0];
      const mine = () => this.capture.ofEvent(id).filter((d) => d.path === first.path);
      await this.capture.waitFor(() => until(mine()), this.waitMs * Math.max(1, wanted));
      if (extraWaitMs > 0) await new Promise((r) => setTimeout(r, extraWaitMs));
      const deliveries = mine();
      const followed = this.capture.ofEvent(id, redirectPath(first.path));
      for (const d of [...deliveries, ...followed]) scope.record(deliveryExchange(d));
      return { path: first.path, deliveries, followed };
    });
  }

  /**
   * §6: a transcript finalized while the harness's subscription is not active brings no delivery. Only a trigger
   * command can cause that (scenario `no-delivery-without-activation`, CONFORMANCE_WEBHOOK_SUBSCRIPTION=inactive);
   * every event that arrives within the observation window is returned.
   */
  inactive(scope: CheckScope, name: string, observeMs: number): Promise<CapturedDelivery[]> {
    if (this.trigger === 'none') throw new NotVerified('profile lacks webhook.sender.trigger (a command that finalizes a transcript while the subscription is not active: with trigger "none" the harness cannot ask for one)', 'webhook.sender.trigger');
    return this.serial(async () => {
      const before = this.capture.deliveries.length;
      await this.cause(scope, name, 'inactive');
      await this.capture.waitFor(() => this.capture.deliveries.length > before, observeMs);
      const arrived = this.capture.deliveries.slice(before);
      for (const d of arrived) scope.record(deliveryExchange(d));
      return arrived;
    });
  }

  /** Runs the trigger command (or tells the team what to cause), recording it as an exchange without its output. */
  private async cause(scope: CheckScope, scenario: string, subscription: 'active' | 'inactive'): Promise<void> {
    this.events += 1;
    const trigger = this.trigger;
    if (trigger === 'none') {
      this.opts.log?.(`waiting up to ${Math.round(this.waitMs / 1000)} s for event ${this.events} (scenario ${scenario}): make the deployment finalize a transcript now`);
      return;
    }
    const env = commandEnv(this.opts.env, this.opts.baseUrl, this.opts.cwd, {
      [settingName('webhookScenario')]: scenario,
      [settingName('webhookSubscription')]: subscription,
      [settingName('webhookReceiverUrl')]: this.capture.url,
      ...(this.opts.document ? { [settingName('webhookEncounterId')]: this.opts.document.encounter_id, [settingName('webhookDocumentId')]: this.opts.document.document_id } : {}),
    });
    const r = await runCommand(trigger.command, { cwd: this.opts.cwd, env, timeoutMs: trigger.timeoutMs });
    const ex: Exchange = { request: { method: 'RUN', target: `${path.basename(trigger.command[0])} (scenario ${scenario}, subscription ${subscription})`, headers: {} }, response: { status: typeof r.code === 'number' ? r.code : -1, headers: {}, body: '', bodyBytes: 0, durationMs: r.durationMs } };
    scope.record(ex);
    if (r.code !== 0) {
      this.opts.log?.(`trigger command for scenario ${scenario} ended ${describeEnd(r)}`);
      throw new NotVerified(`the trigger command (webhook.sender.trigger) did not cause the scenario ${scenario}: it ended ${describeEnd(r)}`);
    }
  }
}
