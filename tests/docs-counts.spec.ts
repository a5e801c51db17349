// Issue 38: the figures docs/ quotes about what a run judges are computed, here, from the declarations and the
// catalog, so a page never disagrees with the run it describes.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { DEPLOYMENT_CASES, SENDER_CASES } from '../checks/sender/cases.ts';
import { senderRequirementIds } from '../checks/sender/scope.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

test('docs/webhook-sender.md: the sender\'s requirement rows, its must rows, the catalog\'s must rows, what stays in scope, the checks declared and those a deployment runs', () => {
  const catalog = JSON.parse(read("fixtures/requirements/requirements.json")) as Parameters<typeof senderRequirementIds>[0] & { requirements: { level: string; subjects?: string[] }[] };
  const sender = new Set(senderRequirementIds(catalog));
  const rows = catalog.requirements as unknown as { id: string; level: string; subjects?: string[] }[];
  const must = rows.filter((r) => r.level === 'must' && (r.subjects ?? ['service']).includes('service'));
  const senderMust = must.filter((r) => sender.has(r.id)).length;
  const doc = read('docs/webhook-sender.md');
  expect(doc).toContain(`LIMIT-WEBHOOK-TOLERANCE: ${sender.size} rows`);
  expect(doc).toContain(`(${senderMust} declared out of scope)`);
  expect(doc).toContain(`${must.length} must requirements in the catalog, ${senderMust} of them the sender's, ${must.length - senderMust} in scope`);
  expect(doc).toContain(`its ${sender.size}\nrequirements`);
  expect(doc).toContain(`sender checks (${SENDER_CASES.length} declared;`);
  expect(doc).toContain(`a deployment's run holds ${DEPLOYMENT_CASES().length} sender checks`);
  expect(doc).toContain(`runs the same ${DEPLOYMENT_CASES().length} checks`);
});

test('docs/profile.md: the five 401 reasons a key carries are the credential roles whose key is refused with 401', async () => {
  const { KEY_401_ROLES } = await import('../profile/profile.ts');
  expect(KEY_401_ROLES.length).toBe(5);
  expect(read('docs/profile.md')).toContain(`the five 401 reasons a key itself carries: ${KEY_401_ROLES.map((r) => r.replace(/_(key|token)$/, '')).join(', ')}`);
});
