// The partner sandbox guide (`--guide`, printed by `conformance serve`), run as a partner would: every credential
// role with its real key and the switchboard token are printed, each reason-code curl line produces its code, and the
// webhook shell sequence, run as printed, makes the sandbox send one signed delivery to a local receiver.
// Also the switchboard's refusal of a switch header without (or with a wrong) token. HTTP and the printed text only.
import { test as base, expect } from '@playwright/test';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readJson } from './helpers/reference-process.ts';
import { launchReference, type ReferenceProcess } from '../engine/reference/process.ts';

const run = promisify(execFile);
const TOKEN = 'sandbox-guide-spec-token';
const SEQUENCE_BEGIN = '----- webhook sequence: paste into bash or zsh -----';
const SEQUENCE_END = '----- end of webhook sequence -----';

interface Guided { ref: ReferenceProcess; profile: any; guide: string }

const test = base.extend<{ g: Guided }, { guided: Guided }>({
  guided: [async ({}, use) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guide-spec-'));
    const profileFile = path.join(dir, 'profile.json');
    const ref = await launchReference(['--switchboard-token', TOKEN, '--profile-out', profileFile, '--guide'], { keepStderr: 'all' });
    // The guide follows the ready line on stderr; its last line closes the webhook section.
    await expect.poll(() => ref.stderr(), { timeout: 10_000 }).toContain('activate another to try again');
    await use({ ref, profile: JSON.parse(fs.readFileSync(profileFile, 'utf8')), guide: ref.stderr() });
    expect(await ref.stop(), 'clean exit on SIGTERM').toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  }, { scope: 'worker', timeout: 120_000 }],
  g: async ({ guided }, use) => use(guided),
});

interface Res { status: number; contentType: string | undefined; json: any }

function call(baseUrl: string, target: string, headers: Record<string, string> = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(target, baseUrl), { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode!, contentType: res.headers['content-type'], json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test.describe('sandbox guide', () => {
  test('lists every credential role of the profile with its key, the switchboard token and the not-secrets line', async ({ g }) => {
    const lines = g.guide.split('\n');
    const roles = Object.keys(g.profile.credentials);
    const schema = readJson('fixtures', 'profiles', 'profile.schema.json');
    expect(roles.sort()).toEqual(Object.keys(schema.properties.credentials.properties).sort());
    for (const role of roles) {
      const key: string = g.profile.credentials[role].key;
      expect(lines.some((l) => new RegExp(`^${role}\\s+(\\S+)$`).exec(l)?.[1] === key), `guide line "${role}  ${key}"`).toBe(true);
    }
    expect(lines).toContain(`Switchboard token: ${TOKEN}   (header x-switchboard-token; x-switchboard-fault/-mutant/-variant without it: 400 switchboard_token_required, with a wrong one: 403 switchboard_token_invalid)`);
    expect(lines.filter((l) => /sandbox values, not secrets: .*valid only for this sandbox\.$/.test(l))).toHaveLength(1);
    expect(g.guide).not.toContain('<token>');
    expect(g.guide).not.toContain('see the profile');
  });

  test('each reason-code curl line, pasted into a shell, answers its reason code and status', async ({ g }) => {
    const lines = g.guide.split('\n');
    const pairs: { code: string; status: number; line: string }[] = [];
    lines.forEach((l, i) => {
      const m = /^# ([a-z_]+) \((\d{3})\)$/.exec(l);
      if (m) pairs.push({ code: m[1], status: Number(m[2]), line: lines[i + 1] });
    });
    expect(new Set(pairs.map((p) => p.code)).size).toBe(27);
    for (const { code, status, line } of pairs) {
      expect(line, code).toMatch(/^curl -sS /);
      const { stdout } = await run('bash', ['-c', `${line} -w '\\n%{http_code}'`]);
      const [body, got] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
      expect({ code, status: Number(got), reason: JSON.parse(body).reason_code }).toEqual({ code, status, reason: code });
    }
  });

  test('the webhook sequence, run as printed, makes the sandbox send one signed delivery to a local receiver', async ({ g }) => {
    const lines = g.guide.split('\n');
    const script = lines.slice(lines.indexOf(SEQUENCE_BEGIN) + 1, lines.indexOf(SEQUENCE_END));
    expect(script.length, 'the sequence between its markers').toBeGreaterThan(4);
    for (const route of ['/__sandbox/webhooks/subscriptions"', '/__sandbox/transcripts/finalize"', '/deliveries"', '-X DELETE']) expect(script.join('\n')).toContain(route);
    const deliveries: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        deliveries.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as { port: number }).port;
    const secret = 'guide-spec-receiver-secret';
    try {
      const { stdout } = await run('bash', ['-c', script.join('\n')], { env: { ...process.env, RECEIVER_URL: `http://127.0.0.1:${port}/hook`, WEBHOOK_SECRET: secret }, timeout: 30_000 });
      const out = stdout.split('\n');
      expect(out[0]).toMatch(/^activate: \{"subscription_id":"whsub_[0-9a-f]+"/);
      const finalize = /^finalize: (\{.*\})$/.exec(out[1]);
      expect(finalize, stdout).not.toBeNull();
      const event = JSON.parse(finalize![1]);
      expect(event.deliveries).toBe(1);
      expect(out[2]).toContain('"status":"delivered"');
      expect(out[3]).toBe('deactivate: 204');
      await new Promise((r) => setTimeout(r, 500)); // a second delivery would show up by now
      expect(deliveries).toHaveLength(1);
      const d = deliveries[0];
      expect([d.method, d.url]).toEqual(['POST', '/hook']);
      const names = ['service-event-id', 'service-delivery-id', 'service-timestamp', 'service-signature', 'service-webhook-version'];
      for (const name of names) expect(d.headers[name], name).toEqual(expect.any(String));
      expect(d.headers['service-event-id']).toBe(event.event_id);
      const ts = d.headers['service-timestamp'] as string;
      const digest = crypto.createHmac('sha256', secret).update(`${ts}.`).update(d.body).digest('hex');
      expect(d.headers['service-signature']).toBe(`v1=${digest}`);
      const body = JSON.parse(d.body.toString('utf8'));
      expect([body.id, body.type, body.resources]).toEqual([event.event_id, 'recording.transcript_ready', g.profile.resources.ambient_transcript_with_audio]);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

test.describe('switchboard token', () => {
  test('a switch header without the token answers 400, with a wrong token 403; with the token it works as before', async ({ g }) => {
    const B = g.ref.baseUrl;
    const full = { authorization: `Bearer ${g.profile.credentials.full.key}` };
    const L = '/external/v1/encounters?limit=1';
    for (const [header, value] of [['x-switchboard-fault', 'api_keys_disabled'], ['x-switchboard-mutant', 'missing-required-total'], ['x-switchboard-variant', 'json-key-order-reversed']]) {
      const r = await call(B, L, { ...full, [header]: value });
      expect([r.status, r.contentType, r.json?.error], header).toEqual([400, 'application/json', 'switchboard_token_required']);
      expect(r.json.message).toContain(header);
      expect(r.json.message).not.toContain(TOKEN);
      const wrong = await call(B, L, { ...full, 'x-switchboard-token': 'not-the-token', [header]: value });
      expect([wrong.status, wrong.json?.error], header).toEqual([403, 'switchboard_token_invalid']);
    }
    // Outside /external/v1 too: the served contract and the sandbox control routes.
    expect((await call(B, '/openapi/v1/openapi.json', { 'x-switchboard-variant': 'json-key-order-reversed' })).json?.error).toBe('switchboard_token_required');
    expect((await call(B, '/__sandbox/webhooks/events/evt_x/deliveries')).json?.error).toBe('sandbox_forbidden');
    // With the token: as before.
    const disabled = await call(B, L, { ...full, 'x-switchboard-token': TOKEN, 'x-switchboard-fault': 'api_keys_disabled' });
    expect([disabled.status, disabled.json?.reason_code]).toEqual([401, 'api_keys_disabled']);
    expect((await call(B, L, { ...full, 'x-switchboard-token': TOKEN, 'x-switchboard-fault': 'no_such_fault' })).json?.error).toBe('switchboard_rejected');
    // No switch header: the public API as always, whatever token (or none) comes along.
    const extras: Record<string, string>[] = [{}, { 'x-switchboard-token': 'not-the-token' }, { 'x-switchboard-token': TOKEN }, { 'x-switchboard-fault': '  ' }];
    for (const extra of extras) {
      const r = await call(B, L, { ...full, ...extra });
      expect([r.status, typeof r.json?.total], JSON.stringify(extra)).toEqual([200, 'number']);
    }
  });
});
