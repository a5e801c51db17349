// Renders the conformance report as ONE self-contained HTML file for the auditor's minute: inline CSS
// and JS, a Content-Security-Policy that forbids every network fetch, no external fonts. The top answers
// "what, how sure, why": the verdict (four colours), its reason, the scope and "verified N of M must
// requirements", the filter of a partial run, the mutation and variant scores; then the failures with
// their evidence and a curl line to replay each exchange (secrets as shell variables, never values);
// then a table of contents by spec section, a search box, the traceability matrix (one anchor per
// requirement, outcome counts and the reasons of not-verified, informational and warning checks), and
// every check (one anchor each) with its redacted evidence collapsed. Spec statements are rendered from
// their small markdown (inline code, emphasis, table rows), never shown raw. Evidence bodies are shown
// re-indented and cut to a readable length (the JSON report keeps them as recorded). A print stylesheet keeps the
// verdict's colours and prints verdict, scope, the failures with their evidence, then the matrix in fixed
// columns that never overprint (statements and reasons printed whole, wrapping; passing checks counted, not named); the
// list of every check stays on screen. Every interpolated string is HTML-escaped. Pure: report in, string out
// (no fs, no network).
import { checkAnchors, VERDICT_LABEL, type ConformanceReport, type ReportCheck, type ReportRequirement, type Verdict } from './model.ts';
import type { RecordedExchange } from '../record/record.ts';

export function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const e = (v: unknown): string => htmlEscape(v === null || v === undefined ? '' : String(v));

/**
 * Escapes text content only (`&`, `<`, `>`), leaving quotes as they are. Used for the curl lines: the
 * writer runs the text redaction over the finished HTML, and its header patterns stop at a quote
 * character; an escaped `&quot;` would let them run on to the end of the line.
 */
const t = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// ---------------------------------------------------------------------------------------------------
// The report as reports/model.ts types it (ConformanceReport and its parts, the verdict labels): read here, never
// re-declared. Fields later added to the model are still read with fallbacks, so an older report renders.

const SUBJECT_TEXT: Record<string, string> = {
  service: 'the service (its REST API and its webhook sender)',
  receiver: "a partner's webhook receiver (§6.3, §6.4 receiver side)",
  client: "a partner's API client, judged from its own traffic against the sandbox",
};

type LCheck = ReportCheck;
type LReq = ReportRequirement;

const LABEL: Record<string, string> = {
  pass: 'pass', fail: 'fail', warning: 'warning', not_verified: 'not verified', informational: 'informational',
  not_covered: 'not covered', waived: 'waived', out_of_scope: 'out of scope', not_observable: 'not observable',
};
/** Order in which outcomes are counted and filtered. */
const STATUS_ORDER = ['fail', 'warning', 'waived', 'not_verified', 'not_covered', 'informational', 'out_of_scope', 'not_observable', 'pass'];
/** Outcomes whose reason is shown in the matrix row (a pass and a fail carry their story elsewhere). */
const REASONED = new Set(['not_verified', 'informational', 'warning']);

const CSS = `
:root{--pass:#1b7f3b;--fail:#b3261e;--warning:#b45309;--nv:#8a6d00;--info:#2b5fab;--nc:#6b6b6b;--waived:#7b3fa0;--oos:#5b6770;
--v-conformant:#1b7f3b;--v-not_conformant:#b3261e;--v-incomplete:#a15c00;--v-partial:#3949ab;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#fafafa}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0 auto;max-width:1200px;padding:1rem 1.5rem 4rem;line-height:1.4}
h1{font-size:1.4rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd;padding-bottom:.25rem}
h3{font-size:1rem;margin:.2rem 0}
#verdict{padding:1rem 1.25rem;border-radius:8px;color:#fff;font-size:1.05rem;background:var(--nc)}
#verdict.conformant{background:var(--v-conformant)}#verdict.not_conformant{background:var(--v-not_conformant)}
#verdict.incomplete{background:var(--v-incomplete)}#verdict.partial{background:var(--v-partial)}
#verdict .label{font-size:1.7rem;font-weight:700;display:block;letter-spacing:.04em}
#verdict .reason{display:block;font-weight:600;margin:.1rem 0 .4rem}
#verdict .line{display:block}#verdict code{background:rgba(255,255,255,.18);padding:0 .25rem;border-radius:3px}
#verified{font-size:1.15rem;font-weight:700}
.top-grid{display:grid;grid-template-columns:1fr 1fr;gap:.5rem 1.5rem;margin-top:.6rem}
.top-grid>div{background:#fff;border:1px solid #e2e2e2;border-radius:6px;padding:.4rem .8rem}
.top-grid h2{margin:.2rem 0 .3rem;font-size:1rem;border:0;padding:0}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #e2e2e2;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.88rem}
th{background:#f0f0f0}tr.section-row th{background:#e8eef7}
.badge{display:inline-block;padding:0 .45rem;border-radius:9px;color:#fff;font-size:.78rem;white-space:nowrap}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-warning{background:var(--warning)}.b-not_verified{background:var(--nv)}
.b-informational{background:var(--info)}.b-not_covered{background:var(--nc)}.b-waived{background:var(--waived)}.b-out_of_scope{background:var(--oos)}.b-not_observable{background:var(--oos)}
.o-pass{color:var(--pass)}.o-fail{color:var(--fail)}.o-warning{color:var(--warning)}.o-not_verified{color:var(--nv)}.o-informational{color:var(--info)}.o-waived{color:var(--waived)}.o-out_of_scope{color:var(--oos)}
.counts{font-size:.82rem}.counts span{white-space:nowrap}
#matrix{table-layout:fixed}#matrix col.c-id{width:16%}#matrix col.c-level{width:6%}#matrix col.c-st{width:13%}#matrix col.c-checks{width:25%}
#matrix>tbody>tr>td:first-child,#matrix>tbody>tr>td:last-child{overflow-wrap:anywhere}#matrix>tbody>tr>td{overflow-wrap:break-word}.counts span+span::before{content:" · ";color:#888}
ul.reasons{margin:.2rem 0 0;padding-left:1.1rem;font-size:.82rem}ul.reasons li{margin:0}
.tools{position:sticky;top:0;z-index:2;background:#fafafa;padding:.4rem 0;display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;border-bottom:1px solid #e2e2e2}
.tools input{font:inherit;font-size:.9rem;padding:.25rem .5rem;border:1px solid #bbb;border-radius:4px;min-width:18rem}
.tools button{border:1px solid #bbb;background:#fff;border-radius:4px;padding:.2rem .55rem;cursor:pointer;font:inherit;font-size:.82rem}
.tools button[aria-pressed=true]{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
#search-count{font-size:.82rem;color:#555}
nav#toc ol{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:.1rem 1rem;list-style:none;font-size:.88rem;padding:0;margin:.3rem 0}nav#toc li{break-inside:avoid}
pre.evidence,pre.curl{background:#1e1e1e;color:#e6e6e6;padding:.6rem;border-radius:6px;overflow:auto;max-height:28rem;font-size:.78rem;white-space:pre-wrap;word-break:break-all;margin:.3rem 0}
pre.curl{background:#10243e}
.check{background:#fff;border:1px solid #e2e2e2;border-left:4px solid var(--pass);padding:.35rem .7rem;margin:.35rem 0;border-radius:4px}
.check[data-outcome=fail]{border-left-color:var(--fail)}.check[data-outcome=waived]{border-left-color:var(--waived)}.check[data-outcome=warning]{border-left-color:var(--warning)}
.check[data-outcome=not_verified]{border-left-color:var(--nv)}.check[data-outcome=informational]{border-left-color:var(--info)}
.check p{margin:.15rem 0;font-size:.88rem}.check details summary{cursor:pointer;font-size:.85rem;color:#444}
ul.problems li{color:var(--fail)}ul.warnings li{color:#7a5b00}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
table.spec-table{width:100%;margin:.1rem 0;background:#f7f7f7}table.spec-table td{font-size:.85rem;padding:.1rem .4rem;overflow-wrap:anywhere}table.spec-table td.w{white-space:nowrap}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dl.meta dt{font-weight:600}dl.meta dd{margin:0;word-break:break-all}
a.anchor{color:#999;text-decoration:none;margin-left:.3rem;font-size:.8rem}
:target{outline:3px solid #f0b400;outline-offset:2px}
@page{size:A4;margin:12mm}
.print-only{display:none}
@media print{
  body{max-width:none;padding:0;font-size:9pt;background:#fff}
  .tools,a.anchor,#search-count,.no-print,#all-checks,#all-checks-heading,.counted,.screen-only{display:none!important}
  .print-only{display:inline}p.print-only,li.print-only{display:block}
  h2{font-size:11pt;margin:.8rem 0 .3rem;break-after:avoid}
  /* The verdict stays whole; scope and coverage may continue on page 2 rather than leave page 1 blank. */
  #verdict,.check>h3,.check>p{break-inside:avoid}
  #verdict{padding:.5rem .8rem;font-size:9.5pt}#verdict .label{font-size:14pt}
  .check{padding:.2rem .5rem;margin:.25rem 0}
  .check details>summary,#matrix details{display:none}
  pre.evidence,pre.curl{max-height:none;overflow:visible;font-size:7pt;line-height:1.25;padding:.35rem .45rem;margin:.2rem 0}
  table{table-layout:fixed}
  th,td{font-size:7.5pt;padding:.08rem .25rem;overflow-wrap:anywhere}
  table.spec-table td{font-size:7pt;padding:0 .2rem}
  #matrix tr{break-inside:auto}tr{break-inside:avoid}
  thead{display:table-header-group}
  /* In print the checks column holds only the reasons (the check lists are the screen's): width goes to the status
     and the statement, so rows are shorter and nothing is cut. */
  #matrix col.c-id{width:17%}#matrix col.c-level{width:8%}#matrix col.c-st{width:21%}#matrix col.c-checks{width:16%}
  #matrix th,#matrix td{font-size:6.5pt;line-height:1.12;padding:.03rem .2rem}
  #matrix .badge{font-size:6.5pt;padding:0 .3rem;line-height:1.3}
  #matrix .level,#matrix th.status,#matrix th.checks,#matrix .status .badge{overflow-wrap:normal;word-break:normal;white-space:nowrap}
  #matrix th.status,#matrix th.checks{white-space:normal}
  #matrix td.req code{overflow-wrap:anywhere}
  /* Never clipped: an auditor signs off on every word of a statement and a reason (they wrap, rows continue). */
  /* A statement's field table flows as text in print: it wraps within its cell, never wider than the column. */
  #matrix .stmt table.spec-table,#matrix .stmt table.spec-table>tbody,#matrix .stmt table.spec-table tr,#matrix .stmt table.spec-table td,#matrix .stmt small{display:inline}
  #matrix .stmt table.spec-table td+td::before{content:" · ";color:#888}
  #matrix .stmt table.spec-table td,#matrix .stmt{overflow-wrap:break-word}#matrix .stmt code{overflow-wrap:anywhere}
  #matrix .counts{font-size:6.5pt}
  #matrix .counts span{white-space:normal}
  #matrix ul.reasons{font-size:6.5pt;padding-left:.7rem}
  #matrix td.checks code{font-size:6.3pt}
  nav#toc ol{display:block;columns:3;column-gap:1.2rem;font-size:7.5pt}
  nav#toc li{break-inside:avoid;min-width:0;overflow-wrap:anywhere;margin:0 0 .1rem}
  nav#toc .counts{white-space:normal;display:block;padding-left:.8rem;font-size:7pt}
  nav#toc .counts span{white-space:normal}
  a{color:inherit;text-decoration:none}
}
`;

/**
 * The printed page's footer (CSS page margin boxes): the verdict and the specification's digest on every page, and
 * "page N of M", so a printed page is never separated from what it belongs to.
 */
function pageFooter(report: ConformanceReport): string {
  const css = (s: string) => s.replace(/[\\"]/g, '\\$&').replace(/[\n\r]/g, ' ');
  const label = VERDICT_LABEL[report.verdict] ?? String(report.verdict);
  const digest = report.run.specSha256 ? `specification SHA-256 ${report.run.specSha256}` : 'specification digest unknown';
  return `@page{@bottom-left{content:"${css(`${label} (${report.run.subject ?? 'service'}) · ${digest}`)}";font:7pt system-ui,sans-serif;color:#555}@bottom-right{content:"page " counter(page) " of " counter(pages);font:7pt system-ui,sans-serif;color:#555}}`;
}

// The outcome filter and the search box combine: an element shows when it matches both. Section
// headers of the matrix hide when all their rows are hidden. Nothing here fetches anything.
const JS = `
(function(){
  var filter='all', query='';
  var buttons=document.querySelectorAll('button[data-filter]');
  var box=document.getElementById('search');
  var count=document.getElementById('search-count');
  var items=document.querySelectorAll('#matrix tr[data-outcome], #all-checks .check[data-outcome]');
  function apply(){
    buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.getAttribute('data-filter')===filter));});
    var q=query.trim().toLowerCase(), shown=0;
    items.forEach(function(el){
      var okF = filter==='all' || el.getAttribute('data-outcome')===filter;
      var okQ = !q || (el.getAttribute('data-text')||el.textContent).toLowerCase().indexOf(q)>=0;
      el.hidden = !(okF && okQ); if(!el.hidden) shown++;
    });
    document.querySelectorAll('#matrix tbody').forEach(function(tb){
      var any = tb.querySelector('tr[data-outcome]:not([hidden])');
      var head = tb.querySelector('tr.section-row'); if(head) head.hidden = !any;
    });
    if(count) count.textContent = (filter==='all' && !q) ? '' : shown+' shown';
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){filter=b.getAttribute('data-filter');apply();});});
  if(box) box.addEventListener('input',function(){query=box.value;apply();});
  function openTarget(){
    var id=decodeURIComponent(location.hash.slice(1)); if(!id) return;
    var el=document.getElementById(id); if(!el) return;
    if(el.hidden){filter='all';query='';if(box)box.value='';apply();}
    var d=el.querySelector('details'); if(d) d.open=true;
  }
  window.addEventListener('hashchange',openTarget);
  apply(); openTarget();
})();
`;

function badge(status: string): string {
  return `<span class="badge b-${e(status)}">${e(LABEL[status] ?? status)}</span>`;
}

// ---------------------------------------------------------------------------------------------------
// Spec statements: a small, safe markdown renderer. Text is escaped first; only inline code, emphasis
// and table rows (`| a | b |`) become markup. Anything else stays literal text.

function inlineMarkdown(src: string): string {
  const parts = src.split(/(`[^`]*`)/g);
  return parts.map((p) => {
    if (p.length >= 2 && p.startsWith('`') && p.endsWith('`')) return `<code>${e(p.slice(1, -1))}</code>`;
    return e(p)
      .replace(/\*\*([^*\s](?:[^*]*[^*\s])?)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[\s(])\*([^*\s](?:[^*]*[^*\s])?)\*(?=$|[\s).,;:])/g, '$1<em>$2</em>')
      .replace(/(^|[\s(])_([^_\s](?:[^_]*[^_\s])?)_(?=$|[\s).,;:])/g, '$1<em>$2</em>');
  }).join('');
}

function tableCells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** A statement as plain text for the search box: no markdown punctuation. */
function plain(md: string): string {
  return md.replace(/[`*|]/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Renders a spec statement: table rows become a small table, other lines inline markdown. */
export function renderStatement(md: string): string {
  const lines = md.split('\n');
  const out: string[] = [];
  let rows: string[][] = [];
  const flush = () => {
    if (rows.length) out.push(`<table class="spec-table">${rows.map((r) => `<tr>${r.map((c) => `<td${/^\S{1,24}$/.test(c) ? ' class="w"' : ''}>${inlineMarkdown(c)}</td>`).join('')}</tr>`).join('')}</table>`);
    rows = [];
  };
  for (const line of lines) {
    const s = line.trim();
    if (s.startsWith('|') && s.endsWith('|') && s.length > 1) {
      const cells = tableCells(s);
      if (!cells.every((c) => /^:?-{2,}:?$/.test(c))) rows.push(cells);
      continue;
    }
    flush();
    if (s) out.push(inlineMarkdown(s));
  }
  flush();
  return out.join('<br>');
}

// ---------------------------------------------------------------------------------------------------
// Evidence and replay.

/** Evidence as recorded (record/record.ts owns the shape). */
type ExchangeLike = RecordedExchange;

function isExchangeList(v: unknown): v is ExchangeLike[] {
  return Array.isArray(v) && v.every((x) => x && typeof x === 'object' && 'request' in x);
}

function headerLines(h: Record<string, string> | undefined): string {
  return Object.entries(h ?? {}).map(([k, v]) => `${k}: ${v}\n`).join('');
}

const REDACTED_MARK = '[REDACTED]';

function shellSingle(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function envName(s: string): string {
  return s.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'VALUE';
}

/**
 * A curl line that replays one exchange. Redacted values become shell variables the reader sets: the
 * bearer key goes through `--oauth2-bearer "$ROLE_KEY"` (so no `Authorization:` text is followed by a
 * value), other redacted headers through `-H "$NAME_HEADER"`. `--path-as-is` and `-g` send the
 * target exactly as recorded (percent-encodings, dot segments, brackets).
 */
export function curlFor(ex: ExchangeLike, baseUrl: string | null): { command: string; variables: string[] } {
  const req = ex.request ?? {};
  const target = req.target ?? '/';
  const absolute = /^https?:\/\//i.test(target);
  const urlArg = absolute || baseUrl
    ? shellSingle(absolute ? target : `${baseUrl!.replace(/\/+$/, '')}${target.startsWith('/') ? '' : '/'}${target}`)
    : `"$BASE_URL"${shellSingle(target)}`;
  const parts = ['curl -sS -i --path-as-is -g'];
  const variables: string[] = [];
  if (req.method && req.method !== 'GET') parts.push(`-X ${shellSingle(req.method)}`);
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    const v = String(value);
    if (!v.includes(REDACTED_MARK)) {
      parts.push(`-H ${shellSingle(`${name}: ${v}`)}`);
      continue;
    }
    const bearer = /^\s*bearer\s+\[REDACTED\]\s*$/i.exec(v);
    if (name.toLowerCase() === 'authorization' && bearer) {
      const role = req.credentialRole ?? req.role;
      const variable = role ? `${envName(role)}_KEY` : 'API_KEY';
      variables.push(`${variable}: the API key this check sent${role ? ` (credential role ${role})` : ''}`);
      parts.push(`--oauth2-bearer "$${variable}"`);
    } else {
      const variable = `${envName(name)}_HEADER`;
      variables.push(`${variable}: the ${name} header this check sent, name and value (redacted here)`);
      parts.push(`-H "$${variable}"`);
    }
  }
  if (req.body !== undefined) parts.push(`--data-binary ${shellSingle(req.body)}`);
  parts.push(urlArg);
  if (!absolute && !baseUrl) variables.push('BASE_URL: the target base URL');
  return { command: parts.join(' \\\n  '), variables };
}

// What the HTML shows of an evidence body: JSON re-indented, then cut to a readable length. The body as recorded
// (already trimmed to record/record.ts MAX_EVIDENCE_BODY) stays whole in conformance.json.
export const BODY_LINES_SHOWN = 30;
export const BODY_CHARS_SHOWN = 3000;
const TRUNCATED_MARK = /…\[truncated, [^\]\n]*\]$/;

/**
 * Re-indents JSON text token by token: only the white space between tokens changes, never a string, a number or
 * a member order (JSON.parse would drop a duplicate member and rewrite `1.0`). A body cut for evidence is indented
 * as far as it goes, its truncation mark on a line of its own. Text that is neither JSON nor cut JSON is returned
 * as it is: a body that does not parse is shown as the target sent it.
 */
export function prettyBody(text: string): string {
  const mark = TRUNCATED_MARK.exec(text)?.[0];
  const core = mark ? text.slice(0, text.length - mark.length) : text;
  if (!/^\s*[[{]/.test(core)) return text;
  if (!mark) {
    try {
      JSON.parse(core);
    } catch {
      return text;
    }
  }
  let out = '';
  let depth = 0;
  const nl = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < core.length;) {
    const ch = core[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < core.length && core[j] !== '"') j += core[j] === '\\' ? 2 : 1;
      out += core.slice(i, j + 1);
      i = j + 1;
    } else if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') {
      i++;
    } else if (ch === '{' || ch === '[') {
      let k = i + 1;
      while (k < core.length && /\s/.test(core[k])) k++;
      if (core[k] === (ch === '{' ? '}' : ']')) {
        out += `${ch}${core[k]}`;
        i = k + 1;
      } else {
        depth++;
        out += `${ch}${nl()}`;
        i++;
      }
    } else if (ch === '}' || ch === ']') {
      depth = Math.max(0, depth - 1);
      out += `${nl()}${ch}`;
      i++;
    } else {
      out += ch === ',' ? `,${nl()}` : ch === ':' ? ': ' : ch;
      i++;
    }
  }
  return mark ? `${out}\n${mark}` : out;
}

/** A body as the HTML shows it: pretty, and cut after BODY_LINES_SHOWN lines or BODY_CHARS_SHOWN characters, saying so. */
export function shownBody(text: string): string {
  const pretty = prettyBody(text);
  const lines = pretty.split('\n');
  let shown = lines.slice(0, BODY_LINES_SHOWN).join('\n');
  if (shown.length > BODY_CHARS_SHOWN) shown = shown.slice(0, BODY_CHARS_SHOWN);
  if (shown.length === pretty.length) return pretty;
  const rest = lines.length > BODY_LINES_SHOWN ? `${lines.length - BODY_LINES_SHOWN}+ more lines` : `${pretty.length - shown.length} more characters`;
  return `${shown}\n… cut here for reading (${rest}): the recorded body is in conformance.json`;
}

function renderEvidence(evidence: unknown, replay: { baseUrl: string | null } | null): string {
  if (evidence === null || evidence === undefined) return '<p><em>No evidence was recorded for this check.</em></p>';
  if (!isExchangeList(evidence)) return `<pre class="evidence">${e(shownBody(typeof evidence === 'string' ? evidence : JSON.stringify(evidence, null, 2)))}</pre>`;
  return evidence.map((ex, i) => {
    const req = `${ex.request?.method ?? 'GET'} ${ex.request?.target ?? ''}\n${headerLines(ex.request?.headers)}${ex.request?.body !== undefined ? `\n${shownBody(ex.request.body)}` : ''}`;
    const res = ex.response
      ? `HTTP ${ex.response.status ?? '?'}${ex.response.durationMs !== undefined ? `  (${Math.round(ex.response.durationMs)} ms)` : ''}\n${headerLines(ex.response.headers)}\n${shownBody(ex.response.body ?? '')}`
      : ex.error ? `transport error: ${ex.error.kind ?? ''} ${ex.error.message ?? ''}` : '(no response)';
    let curl = '';
    if (replay) {
      const c = curlFor(ex, replay.baseUrl);
      const notes = c.variables.map((v) => `# ${v}\n`).join('');
      curl = `<pre class="curl" data-part="curl">${t(`${notes}${c.command}`)}</pre>`;
    }
    return `<p class="exchange">Exchange ${i + 1} of ${evidence.length}</p><pre class="evidence" data-part="request">${e(req)}</pre><pre class="evidence" data-part="response">${e(res)}</pre>${curl}`;
  }).join('\n');
}

// ---------------------------------------------------------------------------------------------------

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

const sectionAnchor = (s: string): string => `section-${s.replace(/[^A-Za-z0-9.-]/g, '_')}`;
const reqAnchor = (id: string): string => `req-${id}`;

function counts(outcomes: string[]): string {
  const n = new Map<string, number>();
  for (const o of outcomes) n.set(o, (n.get(o) ?? 0) + 1);
  const order = [...STATUS_ORDER, ...[...n.keys()].filter((k) => !STATUS_ORDER.includes(k))];
  return order.filter((o) => n.has(o)).map((o) => `<span class="o-${e(o)}">${n.get(o)} ${e(LABEL[o] ?? o)}</span>`).join('');
}

/**
 * Not-verified, informational and warning reasons of a requirement's checks, one line per distinct reason. A row that
 * passed prints no informational reason: it is an observation about an open point, printed in that point's own row
 * (one list per thing); the screen shows them all.
 */
function reasons(checks: LCheck[], rowStatus?: string): string {
  const byReason = new Map<string, { outcome: string; n: number }>();
  let elsewhere = 0;
  for (const c of checks) {
    if (!REASONED.has(c.outcome)) continue;
    if (rowStatus === 'pass' && c.outcome === 'informational') elsewhere++;
    const key = `${c.outcome}\u0000${c.detail ?? '(no reason recorded)'}`;
    byReason.set(key, { outcome: c.outcome, n: (byReason.get(key)?.n ?? 0) + 1 });
  }
  if (byReason.size === 0) return '';
  // Print keeps a row to a few lines: the first PRINTED_REASONS reasons, whole, then a count.
  let printedN = 0;
  const items = [...byReason].map(([key, v]) => {
    const printed = !(rowStatus === 'pass' && v.outcome === 'informational') && printedN++ < PRINTED_REASONS;
    return `<li${printed ? '' : ' class="screen-only"'}><span class="o-${e(v.outcome)}">${e(LABEL[v.outcome] ?? v.outcome)}${v.n > 1 ? ` ×${v.n}` : ''}</span>: ${e(key.split('\u0000')[1])}</li>`;
  });
  const hidden = byReason.size - Math.min(printedN, PRINTED_REASONS);
  const more = hidden > 0 ? `<li class="print-only">${elsewhere && hidden === byReason.size ? `${hidden} observation${hidden === 1 ? '' : 's'} of open points (printed in their own rows)` : `and ${hidden} more reasons (in the HTML report)`}</li>` : '';
  return `<ul class="reasons">${items.join('')}${more}</ul>`;
}

/** Reasons of a matrix row in print; PRINTED_CHECKS: checks named in a printed row (the others counted). */
const PRINTED_REASONS = 2;
const PRINTED_CHECKS = 3;
/** Outcomes whose checks a printed matrix row names (the others it counts). */
const NAMED_IN_PRINT = new Set(['fail', 'waived', 'warning']);

function checkLink(c: { id: string; outcome: string }, anchors: Map<string, string>): string {
  const a = anchors.get(c.id);
  const code = `<code class="o-${e(c.outcome)}">${e(c.id)}</code>`;
  // Print names only the checks a reader must find (NAMED_IN_PRINT); the status cell counts the rest.
  const cls = NAMED_IN_PRINT.has(c.outcome) ? '' : ' class="counted"';
  return a ? `<a href="#${e(a)}"${cls}>${code}</a>` : cls ? `<span${cls}>${code}</span>` : code;
}

function matrix(report: ConformanceReport, byReq: Map<string, LCheck[]>, anchors: Map<string, string>): string {
  if (report.requirements.length === 0) return '<p id="matrix"><em>No requirement catalog was available for this run.</em></p>';
  const bySection = groupBySection(report.requirements);
  const bodies = bySection.map(([section, reqs]) => {
    const rows = reqs.map((r) => {
      const mine = byReq.get(r.id) ?? [];
      const unique = [...new Map(mine.map((c) => [c.id, c])).values()];
      const links = unique.map((c) => checkLink(c, anchors)).join(' ');
      const checks = unique.length === 0 ? '<em>none</em>' : unique.length <= 6 ? links : `<details><summary>${unique.length} checks</summary>${links}</details>`;
      // Print names the checks that failed, were waived or warned; the others are counted, with their reasons.
      const others = unique.filter((c) => NAMED_IN_PRINT.has(c.outcome));
      // Print shows no <details>: the checks that did not pass are named there, the passing ones counted.
      const printed = unique.length > 6 && others.length
        ? `<span class="print-only">${others.slice(0, PRINTED_CHECKS).map((c) => checkLink(c, anchors)).join(' ')}${others.length > PRINTED_CHECKS ? ` and ${others.length - PRINTED_CHECKS} more` : ''}</span>`
        : '';
      const text = `${r.id} ${plain(r.statement)} ${plain(r.note ?? '')} ${unique.map((c) => c.id).join(' ')}`;
      return `<tr id="${e(reqAnchor(r.id))}" data-outcome="${e(r.status)}" data-requirement="${e(r.id)}" data-text="${e(text)}"><td class="req"><code>${e(r.id)}</code><a class="anchor" href="#${e(reqAnchor(r.id))}" title="link to this requirement">¶</a></td><td class="level">${e(r.level)}</td><td><div class="stmt">${renderStatement(r.statement)}${r.note ? `<br><small>${renderStatement(r.note)}</small>` : ''}</div></td><td class="status">${badge(r.status)}<div class="counts">${counts(mine.map((c) => c.outcome))}</div></td><td class="checks">${checks}${printed}${r.outOfScope ? `<ul class="reasons"><li><span class="o-out_of_scope">declared out of scope</span>: ${e(r.outOfScope)}</li></ul>` : ''}${r.notObservable ? `<ul class="reasons"><li><span class="o-out_of_scope">not observable by any run</span>: ${e(r.notObservable)}</li></ul>` : ''}${reasons(mine, r.status)}</td></tr>`;
    }).join('\n');
    return `<tbody data-section="${e(section)}"><tr class="section-row" id="${e(sectionAnchor(section))}"><th colspan="5">§${e(section)} · ${e(reqs[0].area)}</th></tr>\n${rows}\n</tbody>`;
  }).join('\n');
  return `<table id="matrix"><colgroup><col class="c-id"><col class="c-level"><col><col class="c-st"><col class="c-checks"></colgroup><thead><tr><th>Requirement</th><th class="level">Level</th><th>Statement</th><th class="status">Status · checks by outcome</th><th class="checks">Checks · reasons</th></tr></thead>\n${bodies}\n</table>`;
}

function groupBySection(reqs: LReq[]): [string, LReq[]][] {
  const m = new Map<string, LReq[]>();
  for (const r of reqs) m.set(r.section, [...(m.get(r.section) ?? []), r]);
  return [...m].sort(([a], [b]) => compareSections(a, b));
}

function toc(report: ConformanceReport): string {
  if (report.requirements.length === 0) return '';
  const items = groupBySection(report.requirements).map(([section, reqs]) =>
    `<li><a href="#${e(sectionAnchor(section))}">§${e(section)} ${e(reqs[0].area)}</a> <span class="counts">${counts(reqs.map((r) => r.status))}</span></li>`).join('');
  return `<nav id="toc" aria-label="Table of contents by specification section"><h2>Contents by specification section</h2><ol>${items}</ol></nav>`;
}

function checkEntry(c: LCheck, anchor: string, baseUrl: string | null): string {
  const failing = c.outcome === 'fail' || c.outcome === 'waived';
  const waiver = c.waiver ? `<p>Waived by <code>${e(c.waiver.id)}</code> (owner ${e(c.waiver.owner)}, until ${e(c.waiver.expires)}): ${e(c.waiver.reason)}</p>` : '';
  const reqs = c.requirements.map((r) => `<a href="#${e(reqAnchor(r))}"><code>${e(r)}</code></a>`).join(' ');
  const evidence = renderEvidence(c.evidence, failing ? { baseUrl } : null);
  const n = isExchangeList(c.evidence) ? c.evidence.length : c.evidence === null || c.evidence === undefined ? 0 : 1;
  const text = `${c.id} ${c.title} ${c.detail ?? ''} ${c.requirements.join(' ')}`;
  return `<section class="check" id="${e(anchor)}" data-outcome="${e(c.outcome)}" data-check="${e(c.id)}" data-text="${e(text)}">`
    + `<h3><code>${e(c.id)}</code> ${badge(c.outcome)}<a class="anchor" href="#${e(anchor)}" title="link to this check">¶</a></h3>`
    + `<p>${e(c.title)}</p>${c.detail ? `<p><strong>${failing ? 'Detail' : 'Reason'}:</strong> ${e(c.detail)}</p>` : ''}`
    + `<p>Requirements: ${reqs} · ${e(c.project)} · <code>${e(c.file)}</code>${c.seed ? ` · seed ${e(c.seed)}` : ''}</p>${waiver}`
    + `<details${c.outcome === 'fail' ? ' open' : ''}><summary>Evidence: ${n} exchange${n === 1 ? '' : 's'}${failing ? ' and replay' : ''}</summary>${evidence}</details></section>`;
}

/** `1 min 4 s` between two ISO times, or '' when either is unreadable. */
function duration(from: string, to: string): string {
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/**
 * The provenance block under the title: what was judged against (the specification's title and full SHA-256),
 * by what (harness version), how (the command line, secrets out; the profile's digest without its secret
 * values), which target, and when. An auditor reads these before the verdict.
 */
function provenance(run: ConformanceReport['run']): string {
  const took = duration(run.startedAt, run.finishedAt);
  const rows: [string, string, string][] = [
    ['Specification', 'prov-spec', `${run.specTitle ?? run.spec ?? 'unknown'}${run.specSha256 ? ` — SHA-256 ${run.specSha256}` : ' — SHA-256 unavailable'}`],
    ['Harness', 'prov-harness', `clinical-encounter-conformance ${run.harnessVersion}`],
    ['Target', 'prov-target', run.target ? `${run.target.name}${run.target.name !== run.target.baseUrl ? ` — ${run.target.baseUrl}` : ''}` : 'unknown'],
    ['Command', 'prov-command', run.command?.length ? run.command.join(' ') : 'not recorded (the report was not written by the conformance command)'],
    ['Profile digest', 'prov-profile', run.profileSha256 ? `SHA-256 ${run.profileSha256} (secret values left out)` : 'no profile file (the run made its own target)'],
    ['Run', 'prov-time', `${run.startedAt} → ${run.finishedAt}${took ? ` (${took})` : ''}`],
  ];
  return `<dl class="meta" id="provenance">${rows.map(([k, id, v]) => `<dt>${e(k)}</dt><dd id="${id}">${e(v)}</dd>`).join('')}</dl>`;
}

function pct(n: number, d: number): string {
  return d > 0 ? `${Math.round((n / d) * 1000) / 10}%` : '–';
}

export function toHtml(input: ConformanceReport): string {
  const report = input;
  const s = report.summary;
  const run = report.run;
  const baseUrl = run.target?.baseUrl ?? null;
  const verdict = (VERDICT_LABEL as Record<string, string>)[report.verdict] ? (report.verdict as Verdict) : null;
  const verdictLabel = verdict ? VERDICT_LABEL[verdict] : String(report.verdict).toUpperCase();

  const checkAnchor = checkAnchors(report.checks);
  const anchors = new Map<string, string>();
  report.checks.forEach((c, i) => {
    if (!anchors.has(c.id)) anchors.set(c.id, checkAnchor[i]);
  });
  const byReq = new Map<string, LCheck[]>();
  for (const c of report.checks) for (const r of c.requirements) byReq.set(r, [...(byReq.get(r) ?? []), c]);

  const cov = report.coverage;
  const must = report.requirements.filter((r) => r.level === 'must');
  const mustInScope = cov.mustInScope ?? cov.mustTotal;
  const mustVerified = cov.mustVerified ?? must.filter((r) => r.status === 'pass').length;
  const mustNotVerified = cov.mustNotVerified ?? must.filter((r) => r.status === 'not_verified').map((r) => r.id);
  const outOfScopeParts = report.scope?.outOfScope ?? [];
  const filter = run.filter ?? null;
  const filterText = filter ? Object.entries(filter).filter(([, v]) => v).map(([k, v]) => `--${k} ${v}`).join(' ') : '';
  const mut = report.mutation;
  const variants = report.variants ?? null;
  const scores = [
    mut ? `${mut.caught}/${mut.total} mutants caught` : 'mutation score not measured',
    variants ? `${variants.passed}/${variants.total} variants passed` : 'variants not measured',
  ].join(' · ');

  const countLine = [
    `${s.pass} passed`, `${s.fail} failed`, `${s.warning ?? 0} warning${(s.warning ?? 0) === 1 ? '' : 's'}`,
    `${s.not_verified} not verified`, `${s.informational} informational`, `${s.waived} waived`,
  ].join(' · ');

  // Reports written before subjects existed judged the service.
  const subject = run.subject ?? 'service';
  const reason = report.verdictReason
    ?? (report.verdict === 'conformant' ? 'every must requirement in scope was verified and passed'
      : report.verdict === 'not_conformant' ? `${s.fail} failing check${s.fail === 1 ? '' : 's'}${report.problems.length ? `, ${report.problems.length} problem(s)` : ''}` : '');

  const list = (cls: string, items: string[]) => (items.length ? `<ul class="${cls}">${items.map((x) => `<li>${e(x)}</li>`).join('')}</ul>` : '');

  const failing = report.checks.map((c, i) => ({ c, i })).filter(({ c }) => c.outcome === 'fail' || c.outcome === 'waived' || c.outcome === 'warning');
  const failuresHtml = failing.length === 0
    ? '<p><em>No check failed and no should requirement was missed.</em></p>'
    : failing.map(({ c, i }) => checkEntry(c, checkAnchor[i], baseUrl)).join('\n');
  const others = report.checks.map((c, i) => ({ c, i })).filter(({ c }) => !(c.outcome === 'fail' || c.outcome === 'waived' || c.outcome === 'warning'));

  const missing = report.missingRoles ?? [];
  const missingHtml = missing.length
    ? `<table id="missing-roles"><thead><tr><th>Missing role (or what the client would do)</th><th>Kind</th><th>Checks it would unlock</th><th>Requirements</th></tr></thead><tbody>${missing.map((m) => `<tr><td>${m.kind === 'client' ? e(m.role) : `<code>${e(m.role)}</code>`}</td><td>${e(m.kind)}</td><td>${m.checks}</td><td>${m.requirements}</td></tr>`).join('')}</tbody></table>`
    : `<p id="missing-roles">${s.not_verified ? 'Not known for this report.' : 'None: nothing was left unverified for lack of a role.'}</p>`;

  const scopeItems = [
    `Subject: ${SUBJECT_TEXT[subject] ?? subject}`,
    `Target: ${run.target ? `${run.target.name} — ${run.target.baseUrl}` : 'unknown'}`,
    `Specification: ${run.spec ?? 'unknown'}${run.specSha256 ? ` (SHA-256 ${run.specSha256.slice(0, 12)}…)` : ''}`,
    filter ? `Filter (partial run): ${filterText || 'yes'}` : 'Filter: none (full run)',
    ...(run.shards.length ? [`Shards: ${run.shards.join(', ')}`] : []),
    ...(run.strict !== undefined ? [`Strict: ${run.strict ? 'yes' : 'no'}`] : []),
  ];
  const oosHtml = outOfScopeParts.length
    ? `<ul id="out-of-scope">${outOfScopeParts.map((p) => `<li>out of scope: <strong>${e(p.part)}</strong>: ${e(p.reason)} (${p.requirements.length} requirement${p.requirements.length === 1 ? '' : 's'})</li>`).join('')}</ul>`
    : '<p id="out-of-scope">Out of scope: nothing declared.</p>';

  const statuses = STATUS_ORDER.filter((st) => report.requirements.some((r) => r.status === st) || report.checks.some((c) => c.outcome === st));
  const filters = ['all', ...statuses].map((f) => `<button type="button" data-filter="${e(f)}" aria-pressed="${f === 'all'}">${e(f === 'all' ? 'all' : LABEL[f] ?? f)}</button>`).join('');

  const meta: [string, string][] = [
    ['Harness version', run.harnessVersion],
    ['Started', run.startedAt], ['Finished', run.finishedAt],
    ['Seeds', run.seeds.join(', ') || 'none recorded'],
    ['Contract SHA-256', run.contractSha256 ?? 'unavailable'],
    ['Catalog SHA-256', run.catalogSha256 ?? 'unavailable'],
    ...(run.specSha256 ? [['Specification SHA-256', run.specSha256] as [string, string]] : []),
  ];
  const w = report.waivers;
  // One list per thing: a requirement listed as not observable (with its reason) is not listed again as without a check.
  const withoutCheck = cov.uncovered.filter((id) => !(cov.notObservable ?? []).some((n) => n.id === id));

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${e(verdictLabel)} — ${e(subject)} — conformance report — ${e(run.target?.name ?? 'target')}</title>
<style>${CSS}${pageFooter(report)}</style>
</head>
<body>
<h1>Clinical Encounter Public API — conformance report</h1>
${provenance(run)}
<div id="verdict" class="${e(report.verdict)}" data-verdict="${e(report.verdict)}" data-subject="${e(subject)}"><span class="label">${e(verdictLabel)}</span> <span class="subject" id="subject">— ${e(subject)}</span>
${reason && !reason.startsWith(`verified ${mustVerified} of ${mustInScope} `) ? `<span class="reason" id="verdict-reason">${e(reason)}</span>` : ''}<span class="line" id="verified">verified ${mustVerified} of ${mustInScope} must requirements${mustInScope !== cov.mustTotal ? ` in scope (${cov.mustTotal} in the catalog)` : ''}</span>
<span class="line" id="counts">${e(countLine)}</span>
${filter ? `<span class="line" id="filter">partial run, filter: <code>${e(filterText || 'yes')}</code></span>` : ''}<span class="line" id="scores">${e(scores)}</span></div>
<div class="top-grid">
<div id="scope"><h2>Scope</h2>${list('scope', scopeItems)}${oosHtml}</div>
<div id="coverage"><h2>Must requirements</h2><p>${mustVerified} verified and passed of ${mustInScope} in scope${pct(mustVerified, mustInScope) !== '–' ? ` (${pct(mustVerified, mustInScope)})` : ''}; ${cov.mustCovered ?? cov.mustTotal - cov.uncovered.length} of ${cov.mustTotal} have a check.</p>${mustNotVerified.length ? `<details${mustNotVerified.length <= 20 ? ' open' : ''}><summary>Not verified (${mustNotVerified.length})</summary><p>${mustNotVerified.map((id) => `<a href="#${e(reqAnchor(id))}"><code>${e(id)}</code></a>`).join(' ')}</p></details>` : ''}${cov.notObservable?.length ? `<details open id="not-observable"><summary>Not observable by any run (${cov.notObservable.length}): listed apart, never counted as verified</summary><ul>${cov.notObservable.map((n) => `<li><a href="#${e(reqAnchor(n.id))}"><code>${e(n.id)}</code></a>: ${e(n.reason)}</li>`).join('')}</ul></details>` : ''}${withoutCheck.length ? `<details${withoutCheck.length <= 12 ? ' open' : ''}><summary>Without a check (${withoutCheck.length})</summary><ul>${withoutCheck.map((id) => `<li><a href="#${e(reqAnchor(id))}"><code>${e(id)}</code></a>${cov.notTested?.[id] ? `: ${e(cov.notTested[id])}` : ''}</li>`).join('')}</ul></details>` : ''}</div>
</div>
${report.problems.length ? `<section id="problems-section"><h2>Problems</h2>${list('problems', report.problems)}</section>` : ''}
<section id="failures"><h2>Failures and warnings${failing.length ? ` (${failing.length})` : ''}</h2>${failuresHtml}</section>
${report.warnings.length ? `<section id="warnings-section"><h2>Warnings</h2>${list('warnings', report.warnings)}</section>` : ''}
<section id="missing"><h2>What would unlock the checks not verified</h2>${missingHtml}</section>
${toc(report)}
<div class="tools" role="toolbar" aria-label="Search and filter"><input id="search" type="search" placeholder="Search requirements and checks (id, text, reason)" aria-label="Search requirements and checks">${filters}<span id="search-count" aria-live="polite"></span></div>
<h2>Requirement traceability</h2>
${matrix(report, byReq, anchors)}
<h2 id="all-checks-heading">Checks (${report.checks.length}; failures above)</h2>
<p class="print-only">Every check of this run (${report.checks.length}), with its evidence, is in the HTML report and in conformance.json; the failures are printed above, the other checks are counted and their reasons given in the traceability matrix.</p>
<div id="all-checks">${others.map(({ c, i }) => checkEntry(c, checkAnchor[i], baseUrl)).join('\n')}</div>
<h2>Run</h2>
<dl class="meta" id="run">${meta.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join('')}</dl>
<h2>Mutation and variants</h2>
<div id="mutation">${mut ? `<p>${mut.score === null ? 'no mutants' : `${Math.round(mut.score * 1000) / 10}%`} (${mut.caught} of ${mut.total} mutants caught)</p>${mut.survivors.length ? `<p>Surviving mutants:</p><ul>${mut.survivors.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}${mut.unproven.length ? `<p>Checks not yet shown able to fail:</p><ul>${mut.unproven.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}` : `<p>${e(report.scoreNotes?.mutation ?? 'Not known for this report: it records no mutation score and no reason.')}</p>`}</div>
<div id="variants">${variants ? `<p>${variants.passed} of ${variants.total} variants passed</p>${Object.keys(variants.failing).length ? `<ul>${Object.entries(variants.failing).map(([v, ids]) => `<li><code>${e(v)}</code>: ${ids.map((id) => `<code>${e(id)}</code>`).join(', ')}</li>`).join('')}</ul>` : ''}` : `<p>Variants: ${e(report.scoreNotes?.variants ?? 'not known for this report: it records no variant result and no reason.')}</p>`}</div>
<h2>Waivers</h2>
<div id="waivers">${w.applied.length + w.expired.length + w.unmatched.length === 0 ? '<p>None.</p>' : `<ul>${w.applied.map((x) => `<li>applied: <code>${e(x.id)}</code> (owner ${e(x.owner)}, until ${e(x.expires)}) to ${x.checks.map((c) => `<code>${e(c)}</code>`).join(', ')}: ${e(x.reason)}</li>`).join('')}${w.expired.map((x) => `<li class="expired">EXPIRED: <code>${e(x.id)}</code> (owner ${e(x.owner)}, expired ${e(x.expires)}): ${e(x.reason)}</li>`).join('')}${w.unmatched.map((x) => `<li class="unmatched">matches nothing: <code>${e(x.id)}</code> (owner ${e(x.owner)}): ${e(x.why)}</li>`).join('')}</ul>`}</div>
<script>${JS}</script>
</body>
</html>
`;
}
