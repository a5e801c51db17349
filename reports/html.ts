// Renders the conformance report as ONE self-contained HTML file for auditors: inline CSS and JS, a
// Content-Security-Policy that forbids every network fetch, no external fonts. Verdict first, then
// run metadata, must-coverage, mutation score, waivers, the requirement traceability matrix grouped by
// spec section (with outcome filters), every check, and each failing or waived check with its redacted
// request/response evidence. Every interpolated string is HTML-escaped. Pure: string out.
import type { ConformanceReport, ReportCheck, ReportRequirement } from './model.ts';
import { REQUIREMENT_STATUSES } from './model.ts';

export function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const e = (v: unknown): string => htmlEscape(v === null || v === undefined ? '' : String(v));

const LABEL: Record<string, string> = {
  pass: 'pass', fail: 'fail', not_verified: 'not verified', informational: 'informational', not_covered: 'not covered', waived: 'waived',
};

const CSS = `
:root{--pass:#1b7f3b;--fail:#b3261e;--nv:#8a6d00;--info:#2b5fab;--nc:#6b6b6b;--waived:#7b3fa0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#fafafa}
body{margin:0 auto;max-width:1200px;padding:1rem 1.5rem 4rem;line-height:1.4}
h1{font-size:1.4rem;margin:.5rem 0}h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid #ddd;padding-bottom:.25rem}
#verdict{padding:1rem 1.25rem;border-radius:8px;color:#fff;font-size:1.1rem}
#verdict.conformant{background:var(--pass)}#verdict.not_conformant{background:var(--fail)}
#verdict strong{font-size:1.6rem;display:block;letter-spacing:.04em}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #e2e2e2;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#f0f0f0}tr.section-row th{background:#e8eef7}
.badge{display:inline-block;padding:0 .45rem;border-radius:9px;color:#fff;font-size:.8rem;white-space:nowrap}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-not_verified{background:var(--nv)}.b-informational{background:var(--info)}.b-not_covered{background:var(--nc)}.b-waived{background:var(--waived)}
.filters{margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.4rem}
.filters button{border:1px solid #bbb;background:#fff;border-radius:4px;padding:.25rem .6rem;cursor:pointer;font:inherit;font-size:.85rem}
.filters button[aria-pressed=true]{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
pre.evidence{background:#1e1e1e;color:#e6e6e6;padding:.6rem;border-radius:6px;overflow:auto;max-height:28rem;font-size:.8rem;white-space:pre-wrap;word-break:break-all}
.failure{background:#fff;border:1px solid #e2e2e2;border-left:4px solid var(--fail);padding:.5rem .8rem;margin:.8rem 0;border-radius:4px}
.failure[data-outcome=waived]{border-left-color:var(--waived)}
ul.problems li{color:var(--fail)}ul.warnings li{color:#7a5b00}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dl.meta dt{font-weight:600}dl.meta dd{margin:0;word-break:break-all}
`;

// Filters hide every row and block whose data-outcome differs; section headers hide when empty.
const JS = `
(function(){
  var buttons=document.querySelectorAll('button[data-filter]');
  function apply(f){
    buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.getAttribute('data-filter')===f));});
    document.querySelectorAll('#matrix [data-outcome], #checks [data-outcome]').forEach(function(el){
      el.hidden = f!=='all' && el.getAttribute('data-outcome')!==f;
    });
    document.querySelectorAll('#matrix tbody').forEach(function(tb){
      var any = tb.querySelector('tr[data-outcome]:not([hidden])');
      var head = tb.querySelector('tr.section-row'); if(head) head.hidden = !any;
    });
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){apply(b.getAttribute('data-filter'));});});
  apply('all');
})();
`;

function badge(status: string): string {
  return `<span class="badge b-${e(status)}">${e(LABEL[status] ?? status)}</span>`;
}

interface ExchangeLike {
  request?: { method?: string; target?: string; headers?: Record<string, string> };
  response?: { status?: number; headers?: Record<string, string>; body?: string; durationMs?: number };
  error?: { kind?: string; message?: string };
}

function isExchangeList(v: unknown): v is ExchangeLike[] {
  return Array.isArray(v) && v.every((x) => x && typeof x === 'object' && 'request' in x);
}

function headerLines(h: Record<string, string> | undefined): string {
  return Object.entries(h ?? {}).map(([k, v]) => `${k}: ${v}\n`).join('');
}

function renderEvidence(evidence: unknown): string {
  if (evidence === null || evidence === undefined) return '<p><em>No evidence was recorded for this check.</em></p>';
  if (!isExchangeList(evidence)) return `<pre class="evidence">${e(typeof evidence === 'string' ? evidence : JSON.stringify(evidence, null, 2))}</pre>`;
  return evidence.map((ex, i) => {
    const req = `${ex.request?.method ?? 'GET'} ${ex.request?.target ?? ''}\n${headerLines(ex.request?.headers)}`;
    const res = ex.response
      ? `HTTP ${ex.response.status ?? '?'}${ex.response.durationMs !== undefined ? `  (${Math.round(ex.response.durationMs)} ms)` : ''}\n${headerLines(ex.response.headers)}\n${ex.response.body ?? ''}`
      : ex.error ? `transport error: ${ex.error.kind ?? ''} ${ex.error.message ?? ''}` : '(no response)';
    return `<p>Exchange ${i + 1} of ${evidence.length}</p><pre class="evidence" data-part="request">${e(req)}</pre><pre class="evidence" data-part="response">${e(res)}</pre>`;
  }).join('\n');
}

function sectionKey(s: string): number[] {
  return s.split('.').map((p) => Number.parseInt(p, 10)).map((n) => (Number.isNaN(n) ? 1e9 : n));
}

function compareSections(a: string, b: string): number {
  const x = sectionKey(a);
  const y = sectionKey(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? -1) - (y[i] ?? -1);
    if (d !== 0) return d;
  }
  return a.localeCompare(b);
}

function matrix(report: ConformanceReport, anchors: Map<string, string>): string {
  if (report.requirements.length === 0) return '<p id="matrix"><em>No requirement catalog was available for this run.</em></p>';
  const bySection = new Map<string, ReportRequirement[]>();
  for (const r of report.requirements) bySection.set(r.section, [...(bySection.get(r.section) ?? []), r]);
  const bodies = [...bySection].sort(([a], [b]) => compareSections(a, b)).map(([section, reqs]) => {
    const rows = reqs.map((r) => {
      const checks = r.checks.length ? r.checks.map((id) => (anchors.has(id) ? `<a href="#${e(anchors.get(id))}"><code>${e(id)}</code></a>` : `<code>${e(id)}</code>`)).join('<br>') : '<em>none</em>';
      return `<tr data-outcome="${e(r.status)}" data-requirement="${e(r.id)}"><td><code>${e(r.id)}</code></td><td>${e(r.level)}</td><td>${e(r.statement)}${r.note ? `<br><small>${e(r.note)}</small>` : ''}</td><td>${badge(r.status)}</td><td>${checks}</td></tr>`;
    }).join('\n');
    return `<tbody data-section="${e(section)}"><tr class="section-row"><th colspan="5">§${e(section)} · ${e(reqs[0].area)}</th></tr>\n${rows}\n</tbody>`;
  }).join('\n');
  return `<table id="matrix"><thead><tr><th>Requirement</th><th>Level</th><th>Statement</th><th>Status</th><th>Checks</th></tr></thead>\n${bodies}\n</table>`;
}

function checksTable(checks: ReportCheck[], anchors: Map<string, string>): string {
  const rows = checks.map((c) => `<tr data-outcome="${e(c.outcome)}" data-check="${e(c.id)}"><td>${anchors.has(c.id) ? `<a href="#${e(anchors.get(c.id))}"><code>${e(c.id)}</code></a>` : `<code>${e(c.id)}</code>`}</td><td>${e(c.title)}</td><td>${badge(c.outcome)}</td><td>${c.requirements.map((r) => `<code>${e(r)}</code>`).join(' ')}</td><td>${e(c.detail ?? '')}</td></tr>`).join('\n');
  return `<table id="checks"><thead><tr><th>Check</th><th>Rule</th><th>Outcome</th><th>Requirements</th><th>Detail</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function failures(checks: ReportCheck[], anchors: Map<string, string>): string {
  const failed = checks.filter((c) => c.outcome === 'fail' || c.outcome === 'waived');
  if (failed.length === 0) return '<p id="failures"><em>No check failed.</em></p>';
  return `<div id="failures">${failed.map((c) => {
    const waiver = c.waiver ? `<p>Waived by <code>${e(c.waiver.id)}</code> (owner ${e(c.waiver.owner)}, until ${e(c.waiver.expires)}): ${e(c.waiver.reason)}</p>` : '';
    return `<section class="failure" id="${e(anchors.get(c.id))}" data-outcome="${e(c.outcome)}" data-check="${e(c.id)}"><h3><code>${e(c.id)}</code> ${badge(c.outcome)}</h3><p>${e(c.title)}</p><p><strong>Detail:</strong> ${e(c.detail ?? '')}</p><p>Requirements: ${c.requirements.map((r) => `<code>${e(r)}</code>`).join(' ')} · ${e(c.project)} · <code>${e(c.file)}</code>${c.seed ? ` · seed ${e(c.seed)}` : ''}</p>${waiver}${renderEvidence(c.evidence)}</section>`;
  }).join('\n')}</div>`;
}

export function toHtml(report: ConformanceReport): string {
  const s = report.summary;
  const anchors = new Map<string, string>();
  report.checks.forEach((c, i) => {
    if ((c.outcome === 'fail' || c.outcome === 'waived') && !anchors.has(c.id)) anchors.set(c.id, `check-${i}`);
  });
  const counts = new Map<string, number>(REQUIREMENT_STATUSES.map((st) => [st, report.requirements.filter((r) => r.status === st).length]));
  const filters = ['all', ...REQUIREMENT_STATUSES].map((f) => `<button type="button" data-filter="${f}" aria-pressed="${f === 'all'}">${e(f === 'all' ? 'all' : LABEL[f])}${f === 'all' ? '' : ` (${counts.get(f)})`}</button>`).join('');
  const run = report.run;
  const meta: [string, string][] = [
    ['Target', run.target ? `${run.target.name} — ${run.target.baseUrl}` : 'unknown'],
    ['Specification', run.spec ?? 'unknown'],
    ['Harness version', run.harnessVersion],
    ['Started', run.startedAt], ['Finished', run.finishedAt], ['Runner status', run.runStatus],
    ['Seeds', run.seeds.join(', ') || 'none recorded'],
    ['Shards', run.shards.join(', ') || 'single run'],
    ['Contract SHA-256', run.contractSha256 ?? 'unavailable'],
    ['Catalog SHA-256', run.catalogSha256 ?? 'unavailable'],
  ];
  const cov = report.coverage;
  const mut = report.mutation;
  const w = report.waivers;
  const list = (cls: string, items: string[]) => (items.length ? `<ul class="${cls}">${items.map((x) => `<li>${e(x)}</li>`).join('')}</ul>` : '');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>Conformance report — ${e(run.target?.name ?? 'target')}</title>
<style>${CSS}</style>
</head>
<body>
<h1>Clinical Encounter Public API — conformance report</h1>
<div id="verdict" class="${report.verdict}" data-verdict="${report.verdict}"><strong>${report.verdict === 'conformant' ? 'CONFORMANT' : 'NOT CONFORMANT'}</strong>
<span id="counts">${s.pass} passed · ${s.fail} failed · ${s.not_verified} not verified · ${s.informational} informational · ${s.waived} waived</span>
<span id="verdict-coverage" style="display:block">${report.coverage.mustCovered} of ${report.coverage.mustTotal} must requirements covered by a check${report.problems.length ? ` · ${report.problems.length} problem(s)` : ''}</span></div>
<section id="problems-section">${report.problems.length ? `<h2>Problems</h2>${list('problems', report.problems)}` : ''}${report.warnings.length ? `<h2>Warnings</h2>${list('warnings', report.warnings)}` : ''}</section>
<h2>Run</h2>
<dl class="meta" id="run">${meta.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join('')}</dl>
<h2>Coverage of must requirements</h2>
<div id="coverage"><p>${cov.mustCovered} of ${cov.mustTotal} must requirements have at least one check in this run.</p>${cov.uncovered.length ? `<details${cov.uncovered.length <= 20 ? " open" : ""}><summary>Not covered (${cov.uncovered.length})</summary><ul>${cov.uncovered.map((id) => `<li><code>${e(id)}</code>${cov.notTested?.[id] ? ` (not tested: ${e(cov.notTested[id])})` : ''}</li>`).join('')}</ul></details>` : ''}</div>
<h2>Mutation score</h2>
<div id="mutation">${mut ? `<p>${mut.score === null ? 'no mutants' : `${Math.round(mut.score * 1000) / 10}%`} (${mut.caught} of ${mut.total} mutants caught)</p>${mut.survivors.length ? `<p>Surviving mutants:</p><ul>${mut.survivors.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}${mut.unproven.length ? `<p>Checks not yet shown able to fail:</p><ul>${mut.unproven.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}` : '<p>Not known for this run (no mutation.json).</p>'}</div>
<h2>Waivers</h2>
<div id="waivers">${w.applied.length + w.expired.length + w.unmatched.length === 0 ? '<p>None.</p>' : `<ul>${w.applied.map((x) => `<li>applied: <code>${e(x.id)}</code> (owner ${e(x.owner)}, until ${e(x.expires)}) to ${x.checks.map((c) => `<code>${e(c)}</code>`).join(', ')}: ${e(x.reason)}</li>`).join('')}${w.expired.map((x) => `<li class="expired">EXPIRED: <code>${e(x.id)}</code> (owner ${e(x.owner)}, expired ${e(x.expires)}): ${e(x.reason)}</li>`).join('')}${w.unmatched.map((x) => `<li class="unmatched">matches nothing: <code>${e(x.id)}</code> (owner ${e(x.owner)}): ${e(x.why)}</li>`).join('')}</ul>`}</div>
<h2>Requirement traceability</h2>
<div class="filters" role="toolbar" aria-label="Filter by outcome">${filters}</div>
${matrix(report, anchors)}
<h2>Checks</h2>
${checksTable(report.checks, anchors)}
<h2>Failing checks and evidence</h2>
${failures(report.checks, anchors)}
<script>${JS}</script>
</body>
</html>
`;
}
