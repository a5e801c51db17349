// The HTML report for the auditor's minute. Markup tests (no browser): self-contained, escaped, spec
// statements rendered from markdown, anchors per requirement and check, curl lines whose secrets are
// shell variables and that survive the writer's redaction pass. Browser tests open a report from
// fabricated data in Chromium (Debian's /usr/bin/chromium through Playwright's executablePath; browser
// downloads fail here): the top (four verdict colours, scope, "verified N of M", a partial run's filter,
// scores), a matrix row with its reasons, the search box, failing evidence with curl, and print page 1
// with the verdict's colours kept. Screenshots land in reports/out/screenshots/. Without Chromium the
// browser tests skip locally and FAIL under CI (CI installs it).
import { test, expect, chromium, type Browser, type Page } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeReports } from '../reports/write.ts';
import { curlFor, htmlEscape, renderStatement, toHtml } from '../reports/html.ts';
import { buildReport, type CollectedCheck, type ConformanceReport } from '../reports/model.ts';
import { redact } from '../harness/redact.ts';
import { CATALOG, check, context, defaultChecks, outcomes, waiver } from './helpers/report-data.ts';
import { loadCatalog } from '../reports/context.ts';
import { COVERAGE_PATH } from '../fixtures/paths.ts';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '..');
const SHOTS = path.join(ROOT, 'reports/out/screenshots');

/** A report with every kind of row: a table-row statement, a warning, a not-verified reason, scores, a filter. */
function richReport(over: Record<string, unknown> = {}): ConformanceReport {
  const catalog = {
    ...CATALOG,
    requirements: [
      ...CATALOG.requirements,
      { id: 'LIST-FIELD-ITEMS', section: '2.7', area: 'fields', statement: '| items | array of `PublicEncounterSummary` | yes | the *page* |', level: 'must' as const },
      { id: 'LIST-SHOULD-CACHE', section: '4.1', area: 'list', statement: 'A list response **should** carry `cache-control`.', level: 'must' as const },
    ],
  };
  const checks: CollectedCheck[] = [
    ...defaultChecks(),
    check('auth-invalid-key-detail', 'not_verified', ['AUTH-401-INVALID-KEY'], { detail: 'profile lacks credential invalid_key' }),
    check('list-items-field', 'pass', ['LIST-FIELD-ITEMS'], {
      evidence: [{ request: { method: 'GET', target: '/external/v1/encounters', headers: { authorization: 'Bearer [REDACTED]' } }, response: { status: 200, headers: {}, body: '{"items":[]}', bodyBytes: 12, durationMs: 2 } }],
    }),
    { ...check('list-cache-control', 'pass', ['LIST-SHOULD-CACHE'], { detail: 'no cache-control header' }), outcome: 'warning' as CollectedCheck['outcome'] },
  ];
  const base = buildReport(outcomes(checks), context({ catalog, mutation: { total: 126, caught: 126, survivors: [], unproven: [] } }));
  const summary = { pass: 0, fail: 0, warning: 0, not_verified: 0, informational: 0, waived: 0 } as Record<string, number>;
  for (const c of base.checks) summary[c.outcome] = (summary[c.outcome] ?? 0) + 1;
  return {
    ...base,
    summary,
    verdict: 'not_conformant',
    verdictReason: '1 failing check (list-limit-rejects-plus-sign)',
    variants: { total: 30, passed: 30, failing: {} },
    missingRoles: [{ role: 'invalid_key', kind: 'credential', checks: 2, requirements: 1 }],
    scope: { outOfScope: [{ part: 'webhooks', reason: 'delivery not generally available', requirements: ['WEBHOOK-THIN-POINTER'] }] },
    ...over,
  } as unknown as ConformanceReport;
}

test.describe('markup (no browser needed)', () => {
  test('no external resource, inline style and script, data HTML-escaped', () => {
    const html = toHtml(buildReport(outcomes(), context()));
    expect(html).not.toMatch(/<(link|img|iframe)\b/i);
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|@font-face|url\(/i);
    expect(html).toContain("default-src 'none'");
    // The failing evidence carries a <script> in its body: it must arrive as text.
    expect(html).toContain(htmlEscape('"note":"<script>alert(1)</script>"'));
    expect(html.match(/<script>/g)).toHaveLength(1);
  });

  test('spec statements are rendered, not shown as raw markdown', () => {
    expect(renderStatement('| items | array of `PublicEncounterSummary` | yes | the *page* |'))
      .toBe('<table class="spec-table"><tr><td class="w">items</td><td>array of <code>PublicEncounterSummary</code></td><td class="w">yes</td><td>the <em>page</em></td></tr></table>');
    expect(renderStatement('limit **must** be `1..100`; see _limits_.')).toBe('limit <strong>must</strong> be <code>1..100</code>; see <em>limits</em>.');
    // Markup in a statement is text; code spans are not parsed for emphasis; snake_case stays.
    expect(renderStatement('`<b>*x*</b>` and <i>reason_code_x</i>')).toBe('<code>&lt;b&gt;*x*&lt;/b&gt;</code> and &lt;i&gt;reason_code_x&lt;/i&gt;');
    expect(renderStatement('| a | b |\n|---|---|\n| 1 | 2 \\| 3 |')).toBe('<table class="spec-table"><tr><td class="w">a</td><td class="w">b</td></tr><tr><td class="w">1</td><td>2 | 3</td></tr></table>');
    const html = toHtml(richReport());
    expect(html).not.toContain('| items |');
    expect(html).toContain('<td class="w">items</td>');
  });

  test('one anchor per requirement and per check, every id unique', () => {
    const report = richReport();
    const html = toHtml(report);
    for (const r of report.requirements) expect(html).toContain(`id="req-${r.id}"`);
    for (const c of report.checks) expect(html).toContain(`id="check-${c.id}"`);
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(report.requirements.length + report.checks.length);
    expect(new Set(ids).size).toBe(ids.length);
    // A check id recorded twice (two projects) gets a second, distinct anchor.
    const twice = buildReport(outcomes([check('same-id', 'pass', ['LIST-LIMIT-DEFAULT']), check('same-id', 'pass', ['LIST-LIMIT-DEFAULT'], { project: 'properties' })]), context());
    const h2 = toHtml(twice);
    expect(h2).toContain('id="check-same-id"');
    expect(h2).toContain('id="check-same-id-2"');
  });

  test('the curl line names secrets as shell variables and survives the written report', () => {
    const ex = { request: { method: 'GET', target: '/external/v1/encounters?limit=%2B1', headers: { authorization: 'Bearer [REDACTED]', 'x-switchboard-token': '[REDACTED]', accept: "it's" } } };
    const c = curlFor(ex, 'http://127.0.0.1:9/');
    expect(c.command).toContain('--oauth2-bearer "$API_KEY"');
    expect(c.command).toContain('-H "$X_SWITCHBOARD_TOKEN_HEADER"');
    expect(c.command).toContain(`-H 'accept: it'\\''s'`);
    expect(c.command).toContain("'http://127.0.0.1:9/external/v1/encounters?limit=%2B1'");
    expect(c.command).toContain('--path-as-is');
    expect(c.command).not.toContain('[REDACTED]');
    expect(curlFor({ request: { ...ex.request, credentialRole: 'expired_key' } }, null).command).toContain('--oauth2-bearer "$EXPIRED_KEY_KEY"');
    expect(curlFor({ request: { method: 'POST', target: '/hook', headers: {}, body: '{"a":1}' } }, null).command).toMatch(/-X 'POST'[\s\S]*--data-binary '\{"a":1\}'[\s\S]*"\$BASE_URL"'\/hook'/);

    // Through the writer (redaction runs over the finished HTML): the line must come out intact.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-html-'));
    writeReports(dir, outcomes(), context());
    const html = fs.readFileSync(path.join(dir, 'conformance.html'), 'utf8');
    const curl = /<pre class="curl" data-part="curl">([\s\S]*?)<\/pre>/.exec(html)?.[1] ?? '';
    expect(curl).toContain('--oauth2-bearer "$API_KEY"');
    expect(curl).toContain("'http://127.0.0.1:9/external/v1/encounters?limit=%2B1'");
    // Only failing checks get a replay line.
    expect(html.match(/<pre class="curl"/g)).toHaveLength(1);
  });

  test('a requirement declared out of scope shows why in its matrix row', () => {
    const report = richReport();
    const reqs = report.requirements.map((r) => (r.id === 'VERSION-HEADER' ? { ...r, status: 'out_of_scope', outOfScope: 'staging has no versioned gateway' } : r));
    const html = toHtml({ ...report, requirements: reqs } as ConformanceReport);
    const row = /<tr id="req-VERSION-HEADER"[\s\S]*?<\/tr>/.exec(html)?.[0] ?? '';
    expect(row).toContain('data-outcome="out_of_scope"');
    expect(row).toContain('<span class="badge b-out_of_scope">out of scope</span>');
    expect(row).toContain('declared out of scope</span>: staging has no versioned gateway');
  });

  test('every verdict has its label and class; a partial run shows its filter', () => {
    for (const [verdict, label] of [['conformant', 'CONFORMANT'], ['not_conformant', 'NOT CONFORMANT'], ['incomplete', 'INCOMPLETE'], ['partial', 'PARTIAL']]) {
      const html = toHtml(richReport({ verdict }));
      expect(html).toContain(`<div id="verdict" class="${verdict}" data-verdict="${verdict}" data-subject="service"><span class="label">${label}</span> <span class="subject" id="subject">— service</span>`);
    }
    const base = richReport();
    const partial = toHtml(richReport({ verdict: 'partial', run: { ...base.run, filter: { grep: 'limit' } } }));
    expect(partial).toContain('partial run, filter: <code>--grep limit</code>');
    expect(toHtml(base)).not.toContain('id="filter"');
  });
});

test.describe('in Chromium', () => {
  let browser: Browser;
  let dir: string;

  test.beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) {
      if (process.env.CI) throw new Error(`${CHROMIUM} is missing: CI must install it (apt-get install -y chromium)`);
      test.skip(true, `${CHROMIUM} is not installed (apt-get install -y chromium); this test fails under CI instead of skipping`);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-html-'));
    fs.mkdirSync(SHOTS, { recursive: true });
  });

  test.afterAll(async () => {
    await browser?.close();
  });

  /** Opens a report as the writer would write it (redaction over the finished HTML) and watches the network. */
  async function open(report: ConformanceReport, name: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    const file = path.join(dir, `${name}.html`);
    fs.writeFileSync(file, redact(toHtml(report)));
    const page = await browser.newPage({ viewport });
    const requests: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    return { page, requests, errors };
  }

  test('the top: verdict, reason, verified N of M, scope, scores; four distinct verdict colours', async () => {
    const { page, requests, errors } = await open(richReport(), 'top');
    const v = page.locator('#verdict');
    await expect(v).toContainText('NOT CONFORMANT');
    await expect(v).toContainText('1 failing check (list-limit-rejects-plus-sign)');
    await expect(page.locator('#verified')).toHaveText(/^verified \d+ of \d+ must requirements/);
    await expect(page.locator('#counts')).toHaveText('3 passed · 1 failed · 1 warning · 2 not verified · 1 informational · 0 waived');
    await expect(page.locator('#scores')).toHaveText('126/126 mutants caught · 30/30 variants passed');
    await expect(page.locator('#scope')).toContainText('out of scope: webhooks: delivery not generally available (1 requirement)');
    await expect(page.locator('#missing-roles')).toContainText('invalid_key');
    // The verdict and the scope fit in the first screen.
    const box = await page.locator('.top-grid').boundingBox();
    expect(box!.y + box!.height).toBeLessThan(900);
    await page.screenshot({ path: path.join(SHOTS, 'top.png') });

    const colours = new Set<string>();
    for (const verdict of ['conformant', 'not_conformant', 'incomplete', 'partial']) {
      await v.evaluate((el, vd) => { el.className = vd; }, verdict);
      colours.add(await v.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).backgroundColor));
    }
    expect(colours.size).toBe(4);
    const base = richReport();
    const partial = await open(richReport({ verdict: 'partial', verdictReason: 'narrowed by --grep limit', run: { ...base.run, filter: { grep: 'limit' } } }), 'partial');
    await expect(partial.page.locator('#verdict')).toContainText('PARTIAL');
    await expect(partial.page.locator('#filter')).toHaveText('partial run, filter: --grep limit');
    await partial.page.screenshot({ path: path.join(SHOTS, 'top-partial.png') });
    expect([...requests, ...partial.requests]).toEqual([]);
    expect([...errors, ...partial.errors]).toEqual([]);
  });

  test('a matrix row shows its outcome counts and reasons; search and filters narrow the matrix', async () => {
    const { page, requests, errors } = await open(richReport(), 'matrix');
    const row = page.locator('#req-AUTH-401-INVALID-KEY');
    await expect(row).toHaveAttribute('data-outcome', 'not_verified');
    await expect(row.locator('.counts')).toHaveText('2 not verified');
    await expect(row.locator('ul.reasons')).toHaveText('not verified ×2: profile lacks credential invalid_key');
    await expect(page.locator('#req-LIST-ORDER-TIES ul.reasons')).toHaveText('informational: ties ordered by id ascending');
    await expect(page.locator('#req-LIST-SHOULD-CACHE ul.reasons')).toHaveText('warning: no cache-control header');
    await expect(page.locator('#req-LIST-FIELD-ITEMS table.spec-table td').first()).toHaveText('items');
    await row.scrollIntoViewIfNeeded();
    await row.screenshot({ path: path.join(SHOTS, 'matrix-row.png') });

    await expect(page.locator('#toc a[href="#section-4.1"]')).toBeVisible();
    await page.locator('#toc a[href="#section-4.1"]').click();
    await expect(page.locator('#section-4\\.1')).toBeInViewport();

    await page.locator('#search').fill('invalid_key');
    await expect(page.locator('#matrix tr[data-outcome]:visible')).toHaveCount(1);
    await expect(page.locator('#all-checks .check:visible')).toHaveCount(2);
    await page.locator('#search').fill('');
    await page.locator('button[data-filter="fail"]').click();
    await expect(page.locator('#matrix tr[data-outcome]:visible')).toHaveCount(1);
    await expect(page.locator('#matrix tbody[data-section="5"] tr.section-row')).toBeHidden();
    await page.locator('button[data-filter="all"]').click();
    await expect(page.locator('#matrix tr[data-outcome]:visible')).toHaveCount(9);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('failing evidence is open with a curl line; passing evidence is collapsed and opens from its anchor', async () => {
    const { page, requests, errors } = await open(richReport(), 'evidence');
    const failing = page.locator('#check-list-limit-rejects-plus-sign');
    await expect(failing).toBeVisible();
    await expect(failing.locator('.evidence[data-part="request"]')).toContainText('GET /external/v1/encounters?limit=%2B1');
    await expect(failing.locator('.evidence[data-part="response"]')).toContainText('HTTP 200');
    await expect(failing.locator('.evidence[data-part="response"]')).toContainText('<script>alert(1)</script>'); // text, not run
    const curl = failing.locator('pre.curl');
    await expect(curl).toContainText('--oauth2-bearer "$API_KEY"');
    await expect(curl).toContainText("'http://127.0.0.1:9/external/v1/encounters?limit=%2B1'");
    await expect(curl).not.toContainText('REDACTED');
    await failing.screenshot({ path: path.join(SHOTS, 'failing-evidence.png') });

    const passing = page.locator('#check-list-items-field');
    await expect(passing.locator('.evidence[data-part="request"]')).toBeHidden();
    await expect(passing.locator('pre.curl')).toHaveCount(0);
    // A link from the matrix (as from JUnit or the terminal) opens the check's evidence.
    await page.locator('#req-LIST-FIELD-ITEMS a[href="#check-list-items-field"]').click();
    await expect(passing.locator('.evidence[data-part="request"]')).toBeVisible();
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('print: page 1 carries the verdict in colour, then scope and failures before the matrix', async () => {
    const { page } = await open(richReport(), 'print', { width: 794, height: 1123 });
    await page.emulateMedia({ media: 'print' });
    const v = page.locator('#verdict');
    expect(await v.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).backgroundColor)).toBe('rgb(179, 38, 30)');
    expect(await v.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).getPropertyValue('print-color-adjust'))).toBe('exact');
    await expect(page.locator('.tools')).toBeHidden();
    const top = async (sel: string) => (await page.locator(sel).boundingBox())!.y;
    expect(await top('#verdict')).toBeLessThan(await top('#scope'));
    expect(await top('#scope')).toBeLessThan(await top('#failures'));
    expect(await top('#failures')).toBeLessThan(await top('#matrix'));
    expect(await top('#failures')).toBeLessThan(1123);
    // Passing checks are traced in the matrix; in print their entries give way.
    await expect(page.locator('#all-checks .check[data-outcome="pass"]').first()).toBeHidden();
    await page.screenshot({ path: path.join(SHOTS, 'print-page-1.png') });
    const pdf = await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
    fs.writeFileSync(path.join(SHOTS, 'report.pdf'), pdf);
    const pages = Number(/\/Type\s*\/Pages[\s\S]*?\/Count (\d+)/.exec(pdf.toString('latin1'))?.[1] ?? /\/Count (\d+)/.exec(pdf.toString('latin1'))?.[1]);
    expect(pages).toBeGreaterThanOrEqual(2); // failures end page 1 (break-after), the matrix follows
    expect(pages).toBeLessThan(10);
  });

  test('a run of the real catalog prints on a bounded number of A4 pages (issue 13: it was 199)', async () => {
    // Every check of fixtures/requirements/coverage.json with one exchange of evidence, as a full run has.
    const coverage = JSON.parse(fs.readFileSync(COVERAGE_PATH, 'utf8')).requirements as Record<string, string[]>;
    const reqsOf = new Map<string, string[]>();
    for (const [req, ids] of Object.entries(coverage)) for (const id of ids) reqsOf.set(id, [...(reqsOf.get(id) ?? []), req]);
    const ev = [{ request: { method: 'GET', target: '/external/v1/encounters?limit=1', headers: { authorization: 'Bearer [REDACTED]' } }, response: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"items":[],"limit":1,"offset":0,"total":0}', bodyBytes: 44, durationMs: 3 } }];
    const checks = [...reqsOf].map(([id, reqs], i) => check(id, i % 40 === 0 ? 'informational' : 'pass', reqs, { evidence: ev, detail: i % 40 === 0 ? 'observed something the spec leaves open' : undefined }));
    expect(checks.length).toBeGreaterThan(400);
    const report = buildReport(outcomes(checks), context({ catalog: loadCatalog() }));
    const { page } = await open(report, 'full-catalog', { width: 794, height: 1123 });
    const pdf = (await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true })).toString('latin1');
    const pages = (pdf.match(/\/Type\s*\/Page\b(?!s)/g) ?? []).length;
    test.info().annotations.push({ type: 'pdf-pages', description: String(pages) });
    expect(pages).toBeGreaterThan(10);
    expect(pages).toBeLessThanOrEqual(60);
    // Nothing spills over the page width (a spilling table is shrunk to fit, and unreadable).
    await page.emulateMedia({ media: 'print' });
    // The elements that spill, named in the failure message (the tsconfig has no DOM types: typed by hand).
    type El = { getBoundingClientRect(): { right: number }; tagName: string; id: string; className: string; textContent: string | null };
    const wide = await page.evaluate(() => Array.from((globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El> } }).document.querySelectorAll('body *'))
      .filter((el) => el.getBoundingClientRect().right > 794).slice(0, 5).map((el) => `${el.tagName}#${el.id}.${el.className}: ${(el.textContent ?? '').slice(0, 80)}`));
    expect(await page.locator('html').evaluate((el) => el.scrollWidth), wide.join('\n')).toBeLessThanOrEqual(794);
  });

  test('the written report of a run (writeReports) opens without errors and keeps the waiver view', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cec-html-'));
    writeReports(out, outcomes(), context({ waivers: [waiver('NOPE-1')], mutation: { total: 4, caught: 3, survivors: ['omit-total'], unproven: [] } }));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(path.join(out, 'conformance.html')).href);
    await expect(page.locator('#verdict')).toContainText('NOT CONFORMANT');
    await expect(page.locator('#mutation')).toContainText('75% (3 of 4 mutants caught)');
    await expect(page.locator('#scores')).toHaveText('3/4 mutants caught · variants not measured');
    await expect(page.locator('#waivers')).toContainText('matches nothing: NOPE-1');
    await expect(page.locator('#matrix tr[data-outcome]')).toHaveCount(7);
    await page.screenshot({ path: path.join(ROOT, 'reports/out/html-report.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});
