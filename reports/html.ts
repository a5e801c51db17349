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
// verdict's colours and prints verdict, scope, the failures with their evidence (long bodies in two columns), then the
// matrix as a register (issue 40: a run of the whole catalog on about a dozen A4 pages): one paragraph per requirement,
// its status in a gutter, statement and note printed whole, the checks that did not pass named with their reasons (each
// reason printed once, where it decides the status; elsewhere a pointer), every check of the row by its number in an
// index of checks printed at the end. The list of every check with its evidence stays on screen; the screen's layout
// does not change (what print adds is print-only markup). Every interpolated string is HTML-escaped. Pure: report in,
// string out (no fs, no network).
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
#matrix>tbody>tr>td:first-child,#matrix>tbody>tr>td:last-child{overflow-wrap:anywhere}#matrix>tbody>tr>td{overflow-wrap:break-word}.counts span+span::before,.pcounts span+span::before{content:" · ";color:#888}
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
  .tools,a.anchor,#search-count,.no-print,#all-checks,#all-checks-heading,.screen-only{display:none!important}
  .print-only{display:inline}p.print-only,li.print-only{display:block}
  h2{font-size:11pt;margin:.8rem 0 .3rem;break-after:avoid}
  /* The verdict stays whole; scope and coverage may continue on page 2 rather than leave page 1 blank. */
  #verdict,.check>h3,.check>p{break-inside:avoid}
  #verdict{padding:.4rem .7rem;font-size:9pt}#verdict .label{font-size:14pt}#verified{font-size:10.5pt}
  h1{font-size:13pt;margin:0 0 .2rem}
  dl.meta{font-size:7.5pt;gap:0 .8rem}
  .top-grid{margin-top:.35rem;gap:.35rem .8rem}.top-grid>div{padding:.2rem .5rem;font-size:8pt}
  .top-grid h2{font-size:9pt;margin:.1rem 0}.top-grid ul,.top-grid p{margin:.15rem 0}.top-grid ul{padding-left:1rem}
  .check{padding:.2rem .5rem;margin:.25rem 0}
  .check>h3{font-size:8.5pt}.check p{font-size:8pt;margin:.1rem 0}p.exchange{margin:.15rem 0 0}
  .check details>summary,#matrix details{display:none}
  pre.evidence,pre.curl{max-height:none;overflow:visible;font-size:7pt;line-height:1.15;padding:.25rem .4rem;margin:.15rem 0;word-break:normal;overflow-wrap:anywhere}
  table{table-layout:fixed}
  th,td{font-size:7.5pt;padding:.08rem .25rem;overflow-wrap:anywhere}
  table.spec-table td{font-size:7pt;padding:0 .2rem}
  #matrix tr{break-inside:auto}tr{break-inside:avoid}
  thead{display:table-header-group}
  /* The printed matrix (issue 40): a register, one entry per requirement, in a narrow face at 7pt. The status badge
     stands in a gutter on the left (a column to run the eye down); the id, the level, the statement with its note and
     the checks (counted by outcome, their numbers in the index of checks, then the checks that did not pass, named,
     with their reasons) flow as one paragraph the width of the page. Every word is printed and nothing can be
     clipped: no box of an entry has a height, a width or an overflow of its own but the gutter's, which holds one
     badge. */
  #matrix,#matrix>thead,#matrix>tbody{display:block}
  #matrix>thead{display:none}
  #matrix tr[hidden]{display:none!important}
  #matrix tr.section-row{display:block;break-after:avoid}
  #matrix tr.section-row>th{display:block;font-size:7pt;line-height:1.15;padding:.02rem .25rem;border:0}
  #matrix tr[data-outcome]{display:block;position:relative;padding:0 .25rem 0 56px;break-inside:avoid;font:7pt/1.1 "Liberation Sans Narrow","Arial Narrow","Nimbus Sans Narrow","Roboto Condensed",Arial,Helvetica,sans-serif;overflow-wrap:break-word}
  #matrix tr[data-outcome]>td{display:inline;border:0;padding:0;font-size:7pt;line-height:1.1;background:none}
  #matrix tr[data-outcome]>td.status{display:block;position:absolute;left:.2rem;top:0;width:52px}
  #matrix tr[data-outcome]:nth-child(even){background:#eaedf2}
  #matrix td.status .counts{display:none}
  #matrix .badge{font-size:6pt;line-height:1.15;padding:0 .2rem}
  #matrix .status .badge{white-space:nowrap}
  #matrix td.req code{font-weight:700;font-size:6.5pt;overflow-wrap:anywhere}
  #matrix td.level{color:#555;white-space:nowrap}
  #matrix td.level::before,#matrix td.level::after{content:" "}
  #matrix td.req,#matrix td.level{overflow-wrap:normal}
  #matrix .stmt{display:inline}#matrix .stmt br{display:none}
  #matrix .stmt small{font-size:6.5pt;color:#444}#matrix .stmt small::before{content:" — "}
  /* A statement's field table flows as text: "name · type · required · meaning". */
  #matrix .stmt table.spec-table,#matrix .stmt table.spec-table>tbody,#matrix .stmt table.spec-table tr,#matrix .stmt table.spec-table td,#matrix .stmt small{display:inline}
  #matrix .stmt table.spec-table{background:none;width:auto;margin:0}
  #matrix .stmt table.spec-table td{font-size:inherit;padding:0;border:0;white-space:normal}
  #matrix .stmt table.spec-table tr+tr::before{content:" | "}
  #matrix .stmt table.spec-table td+td::before{content:" · ";color:#888}
  #matrix .stmt code{overflow-wrap:anywhere}
  #matrix td.checks{color:#444;font-size:6.5pt;overflow-wrap:normal}
  #matrix td.checks .pnums::before{content:" · "}
  #matrix td.checks .pcounts span{white-space:nowrap}
  #matrix ul.pchecks,#matrix ul.pchecks li{display:inline;margin:0;padding:0;font-size:6.5pt;color:#1d1d1f;overflow-wrap:anywhere}
  #matrix ul.pchecks::before{content:" ▸ ";color:#888}
  #matrix ul.pchecks li+li::before{content:" · "}
  #matrix ul.pchecks code,#check-index code{font-family:inherit;font-size:inherit}
  nav#toc ol{display:block;columns:4;column-gap:1rem;font-size:6.5pt;line-height:1.2}
  nav#toc li{break-inside:avoid;min-width:0;overflow-wrap:anywhere;margin:0}
  nav#toc .counts{white-space:normal;font-size:6.5pt}
  nav#toc .counts span{white-space:normal}
  pre.evidence[data-long]{columns:2;column-gap:1rem;column-rule:1px solid #555}
  a{color:inherit;text-decoration:none}
  ul.print-only,ol.print-only,section.print-only,div.print-only{display:block}
  .closing{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr) minmax(0,1fr);gap:0 1rem;font-size:7.5pt}
  .closing p,.closing ul{margin:.1rem 0}.closing dl.meta{font-size:7pt}.closing dd{overflow-wrap:anywhere}
  /* The index of checks: run-in, two columns, 6pt, the number in bold before each id. */
  #check-index{font-family:"Liberation Sans Narrow","Arial Narrow","Nimbus Sans Narrow","Roboto Condensed",Arial,Helvetica,sans-serif}
  #check-index ol{list-style:none;margin:0;padding:0;columns:2;column-gap:1rem;font-size:6pt;line-height:1.2;overflow-wrap:anywhere}
  #check-index li{display:inline}
  #check-index li+li::before{content:" · ";color:#888}
  #check-index .n{font-weight:700}
  #check-index p{font-size:7pt;margin:.1rem 0 .3rem}
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
    let value: unknown;
    try {
      value = JSON.parse(core);
    } catch {
      return text;
    }
    // A body exactly as JSON itself writes it (compact, its members in JSON's order, each string and number in JSON's
    // spelling): the walk below would indent it as JSON's own two-space indent does, which JSON does natively.
    if (JSON.stringify(value) === core) return JSON.stringify(value, null, 2);
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
  // The lines counted, and the first BODY_LINES_SHOWN found, by their breaks (not an array of every line).
  let lines = 1;
  let cut = pretty.length;
  for (let at = pretty.indexOf('\n'); at >= 0; at = pretty.indexOf('\n', at + 1)) {
    if (lines === BODY_LINES_SHOWN) cut = at;
    lines++;
  }
  let shown = pretty.slice(0, cut);
  if (shown.length > BODY_CHARS_SHOWN) shown = shown.slice(0, BODY_CHARS_SHOWN);
  if (shown.length === pretty.length) return pretty;
  const rest = lines > BODY_LINES_SHOWN ? `${lines - BODY_LINES_SHOWN}+ more lines` : `${pretty.length - shown.length} more characters`;
  return `${shown}\n… cut here for reading (${rest}): the recorded body is in conformance.json`;
}

/** A response shown in more lines than this prints in two columns. */
const PRINT_COLUMNS_FROM = 12;

/** Whether `text` has more than `n` lines (counted by their breaks, up to the one that decides). */
function lineCountOver(text: string, n: number): boolean {
  let lines = 1;
  for (let at = text.indexOf('\n'); at >= 0 && lines <= n; at = text.indexOf('\n', at + 1)) lines++;
  return lines > n;
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
    // A long body prints in two columns (data-long): JSON lines are short, half the page's width holds them.
    const long = lineCountOver(res, PRINT_COLUMNS_FROM) ? ' data-long' : '';
    return `<p class="exchange">Exchange ${i + 1} of ${evidence.length}</p><pre class="evidence" data-part="request">${e(req)}</pre><pre class="evidence" data-part="response"${long}>${e(res)}</pre>${curl}`;
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
 * Not-verified, informational and warning reasons of a requirement's checks, one line per distinct reason: the
 * screen's list (print has its own, `printedChecks`, where each reason is printed once).
 */
function reasons(checks: LCheck[]): string {
  const byReason = new Map<string, { outcome: string; n: number }>();
  for (const c of checks) {
    if (!REASONED.has(c.outcome)) continue;
    const key = `${c.outcome}\u0000${c.detail ?? '(no reason recorded)'}`;
    byReason.set(key, { outcome: c.outcome, n: (byReason.get(key)?.n ?? 0) + 1 });
  }
  if (byReason.size === 0) return '';
  const items = [...byReason].map(([key, v]) => `<li><span class="o-${e(v.outcome)}">${e(LABEL[v.outcome] ?? v.outcome)}${v.n > 1 ? ` ×${v.n}` : ''}</span>: ${e(key.split('\u0000')[1])}</li>`);
  return `<ul class="reasons screen-only">${items.join('')}</ul>`;
}

function checkLink(c: { id: string; outcome: string }, anchors: Map<string, string>): string {
  const a = anchors.get(c.id);
  const code = `<code class="o-${e(c.outcome)}">${e(c.id)}</code>`;
  return a ? `<a href="#${e(a)}">${code}</a>` : code;
}

// ---------------------------------------------------------------------------------------------------
// The printed matrix. Paper cannot open a <details>, and a full list of check ids in every row took two thirds of
// the printed report. So print numbers every check once, in the order of the matrix (a check under the first
// requirement it traces), and prints the numbers in an index at the end (every check of the run, id and outcome, in
// small type). A printed row names every check that did not pass (with its reason) and gives the numbers of all its
// checks, passing ones included, as ranges: "checks 140–152, 200". Nothing is left out, nothing is cut.

/** Outcomes whose reason (the check's detail) the matrix prints; fail, waived and warning are printed in full under "Failures and warnings". */
const REASON_IN_MATRIX = new Set(['not_verified', 'informational']);

interface PrintPlan {
  /** The number of every check id in the printed index, 1-based, in the order of the matrix. */
  number: Map<string, number>;
  /** Check ids in number order. */
  ordered: string[];
  /**
   * For a check whose reason the matrix prints: the one row that prints it. The first row (in the matrix's order)
   * whose status the check decides (the row's status is the check's outcome), else the first row it traces.
   */
  reasonRow: Map<LCheck, string>;
}

function printPlan(report: ConformanceReport): PrintPlan {
  const rows = groupBySection(report.requirements).flatMap(([, reqs]) => reqs);
  const position = new Map(rows.map((r, i) => [r.id, i]));
  const status = new Map(rows.map((r) => [r.id, r.status]));
  const first = new Map<string, number>();
  for (const c of report.checks) {
    const at = Math.min(Infinity, ...c.requirements.map((r) => position.get(r) ?? Infinity));
    first.set(c.id, Math.min(first.get(c.id) ?? Infinity, at));
  }
  const ordered = [...first.keys()].sort((a, b) => first.get(a)! - first.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  const reasonRow = new Map<LCheck, string>();
  for (const c of report.checks) {
    if (!REASON_IN_MATRIX.has(c.outcome)) continue;
    const mine = c.requirements.filter((r) => position.has(r)).sort((a, b) => position.get(a)! - position.get(b)!);
    const row = mine.find((r) => status.get(r) === c.outcome) ?? mine[0];
    if (row !== undefined) reasonRow.set(c, row);
  }
  return { number: new Map(ordered.map((id, i) => [id, i + 1])), ordered, reasonRow };
}

/** `140–152, 200, 311`: sorted numbers, runs of three or more as a range. */
function numberRanges(ns: number[]): string {
  const sorted = [...new Set(ns)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j >= i + 2 ? `${sorted[i]}–${sorted[j]}` : sorted.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}

/**
 * A row's checks as print shows them. In the row's last cell, the numbers of all its checks (passing ones included).
 * In a line under the row (a second table row, print only, aligned with the statement): the checks that did not pass,
 * named and grouped by outcome and reason, and the row's out-of-scope or not-observable reason. A check's reason is
 * printed once in the whole matrix (a later row refers to the row that prints it); fail, waived and warning are
 * printed in full under "Failures and warnings", so here they are only named.
 */
function printedChecks(r: LReq, mine: LCheck[], plan: PrintPlan, scopeParts: { part: string; reason: string }[] | undefined): string {
  const groups = new Map<string, { outcome: string; ids: string[]; tail: string }>();
  for (const c of mine) {
    if (c.outcome === 'pass') continue;
    let tail = '';
    if (REASON_IN_MATRIX.has(c.outcome)) {
      const at = plan.reasonRow.get(c);
      tail = at === r.id || at === undefined ? ` — ${e(c.detail ?? '(no reason recorded)')}` : ` — reason under <code>${e(at)}</code>`;
    } else if (!(c.outcome === 'fail' || c.outcome === 'waived' || c.outcome === 'warning') && c.detail) {
      tail = ` — ${e(c.detail)}`;
    }
    const key = `${c.outcome}\u0000${tail}`;
    const g = groups.get(key) ?? { outcome: c.outcome, ids: [], tail };
    if (!g.ids.includes(c.id)) g.ids.push(c.id);
    groups.set(key, g);
  }
  const order = (o: string) => (STATUS_ORDER.includes(o) ? STATUS_ORDER.indexOf(o) : STATUS_ORDER.length);
  const items = [...groups.values()].sort((x, y) => order(x.outcome) - order(y.outcome)).map((g) =>
    `<li><span class="o-${e(g.outcome)}">${e(LABEL[g.outcome] ?? g.outcome)}</span>: ${g.ids.map((id) => `<code>${e(id)}</code>`).join(', ')}${g.tail}</li>`);
  // A part declared out of scope has its reason printed once, under Scope on page 1.
  const part = (scopeParts ?? []).find((p) => p.reason === r.outOfScope);
  if (r.outOfScope) items.unshift(`<li><span class="o-out_of_scope">declared out of scope</span>${part ? ` (${e(part.part)}): reason under Scope` : `: ${e(r.outOfScope)}`}</li>`);
  if (r.notObservable) items.unshift(`<li><span class="o-out_of_scope">not observable by any run</span>: ${e(r.notObservable)}</li>`);
  const numbers = mine.map((c) => plan.number.get(c.id)).filter((n): n is number => n !== undefined);
  const nums = `<span class="pnums print-only">${mine.length ? `<span class="pcounts">${counts(mine.map((c) => c.outcome))}</span> · check${new Set(numbers).size === 1 ? '' : 's'} ${numberRanges(numbers)}` : 'no check'}</span>`;
  const named = items.length ? `<ul class="pchecks print-only">${items.join('')}</ul>` : '';
  return nums + named;
}

/** The printed index of every check: its number (as the matrix gives it), its id, and its outcome when it did not pass. */
function checkIndex(report: ConformanceReport, plan: PrintPlan): string {
  if (report.requirements.length === 0 || plan.ordered.length === 0) return '';
  const outcomes = new Map<string, Set<string>>();
  for (const c of report.checks) outcomes.set(c.id, (outcomes.get(c.id) ?? new Set()).add(c.outcome));
  const notPassed = (id: string) => [...outcomes.get(id)!].filter((o) => o !== 'pass');
  // Consecutive passing checks that differ only in their last word print as one entry: 3–7 prefix-{a, b, c, d, e}.
  const stem = (id: string) => (id.includes('-') ? id.slice(0, id.lastIndexOf('-')) : null);
  const items: string[] = [];
  const ids = plan.ordered;
  for (let i = 0; i < ids.length;) {
    const not = notPassed(ids[i]);
    let j = i;
    const st = stem(ids[i]);
    if (!not.length && st !== null) while (j + 1 < ids.length && stem(ids[j + 1]) === st && !notPassed(ids[j + 1]).length) j++;
    if (j > i) {
      items.push(`<li><span class="n">${i + 1}–${j + 1}</span> <code>${e(st)}-{${ids.slice(i, j + 1).map((id) => e(id.slice(st!.length + 1))).join(', ')}}</code></li>`);
    } else {
      // A check whose reason no entry of the matrix prints (it traces no requirement of the catalog) has it here.
      const unplaced = report.checks.filter((c) => c.id === ids[i] && REASON_IN_MATRIX.has(c.outcome) && !plan.reasonRow.has(c)).map((c) => c.detail ?? '(no reason recorded)');
      items.push(`<li><span class="n">${i + 1}</span> <code>${e(ids[i])}</code>${not.length ? ` ${not.map((o) => `<span class="o-${e(o)}">${e(LABEL[o] ?? o)}</span>`).join(', ')}` : ''}${[...new Set(unplaced)].map((d) => ` — ${e(d)}`).join('')}</li>`);
    }
    i = j + 1;
  }
  return `<section id="check-index" class="print-only"><h2>Index of checks (${ids.length})</h2>`
    + `<p>Every check of this run by the number the traceability matrix gives it (the failures are printed in full above; every check's title and evidence are in the HTML report and in conformance.json): numbered in the order of the matrix (a check comes under the first requirement it traces); a check that did not pass is marked with its outcome; checks next to each other that differ in their last word only share an entry (<code>3–5 a-b-{x, y, z}</code>: 3 is <code>a-b-x</code>, 4 <code>a-b-y</code>, 5 <code>a-b-z</code>).</p>`
    + `<ol class="check-index">${items.join('')}</ol></section>`;
}

function matrix(report: ConformanceReport, byReq: Map<string, LCheck[]>, anchors: Map<string, string>, plan: PrintPlan): string {
  if (report.requirements.length === 0) return '<p id="matrix"><em>No requirement catalog was available for this run.</em></p>';
  const bySection = groupBySection(report.requirements);
  const bodies = bySection.map(([section, reqs]) => {
    const rows = reqs.map((r) => {
      const mine = byReq.get(r.id) ?? [];
      const unique = [...new Map(mine.map((c) => [c.id, c])).values()];
      const links = unique.map((c) => checkLink(c, anchors)).join(' ');
      // The screen's list of checks (a <details> past six); print has its own (printedChecks).
      const checks = unique.length === 0 ? '<em class="screen-only">none</em>' : `<span class="screen-only">${unique.length <= 6 ? links : `<details><summary>${unique.length} checks</summary>${links}</details>`}</span>`;
      const text = `${r.id} ${plain(r.statement)} ${plain(r.note ?? '')} ${unique.map((c) => c.id).join(' ')}`;
      const printed = printedChecks(r, mine, plan, report.scope?.outOfScope);
      return `<tr id="${e(reqAnchor(r.id))}" data-outcome="${e(r.status)}" data-requirement="${e(r.id)}" data-text="${e(text)}"><td class="req"><code>${e(r.id)}</code><a class="anchor" href="#${e(reqAnchor(r.id))}" title="link to this requirement">¶</a></td><td class="level">${e(r.level)}</td><td><div class="stmt">${renderStatement(r.statement)}${r.note ? `<br><small>${renderStatement(r.note)}</small>` : ''}</div></td><td class="status">${badge(r.status)}<div class="counts">${counts(mine.map((c) => c.outcome))}</div></td><td class="checks">${checks}${printed}${r.outOfScope ? `<ul class="reasons screen-only"><li><span class="o-out_of_scope">declared out of scope</span>: ${e(r.outOfScope)}</li></ul>` : ''}${r.notObservable ? `<ul class="reasons screen-only"><li><span class="o-out_of_scope">not observable by any run</span>: ${e(r.notObservable)}</li></ul>` : ''}${reasons(mine)}</td></tr>`;
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
  const plan = printPlan(report);

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
<div id="coverage"><h2>Must requirements</h2><p>${mustVerified} verified and passed of ${mustInScope} in scope${pct(mustVerified, mustInScope) !== '–' ? ` (${pct(mustVerified, mustInScope)})` : ''}; ${cov.mustCovered ?? cov.mustTotal - cov.uncovered.length} of ${cov.mustTotal} have a check.</p>${mustNotVerified.length ? `<details${mustNotVerified.length <= 20 ? ' open' : ''}><summary>Not verified (${mustNotVerified.length})</summary><p>${mustNotVerified.map((id) => `<a href="#${e(reqAnchor(id))}"><code>${e(id)}</code></a>`).join(' ')}</p></details>` : ''}${cov.notObservable?.length ? `<details open id="not-observable"><summary>Not observable by any run (${cov.notObservable.length}): listed apart, never counted as verified</summary><ul>${cov.notObservable.map((n) => `<li><a href="#${e(reqAnchor(n.id))}"><code>${e(n.id)}</code></a><span class="screen-only">: ${e(n.reason)}</span></li>`).join('')}</ul></details>` : ''}${withoutCheck.length ? `<details${withoutCheck.length <= 12 ? ' open' : ''}><summary>Without a check (${withoutCheck.length})</summary><ul>${withoutCheck.map((id) => `<li><a href="#${e(reqAnchor(id))}"><code>${e(id)}</code></a>${cov.notTested?.[id] ? `: ${e(cov.notTested[id])}` : ''}</li>`).join('')}</ul></details>` : ''}</div>
</div>
${report.problems.length ? `<section id="problems-section"><h2>Problems</h2>${list('problems', report.problems)}</section>` : ''}
<section id="failures"><h2>Failures and warnings${failing.length ? ` (${failing.length})` : ''}</h2>${failuresHtml}</section>
${report.warnings.length ? `<section id="warnings-section"><h2>Warnings</h2>${list('warnings', report.warnings)}</section>` : ''}
<section id="missing"><h2>What would unlock the checks not verified</h2>${missingHtml}</section>
${toc(report)}
<div class="tools" role="toolbar" aria-label="Search and filter"><input id="search" type="search" placeholder="Search requirements and checks (id, text, reason)" aria-label="Search requirements and checks">${filters}<span id="search-count" aria-live="polite"></span></div>
<h2>Requirement traceability</h2>
${report.requirements.length ? `<p class="print-only" id="matrix-legend">One entry per requirement, by specification section: its status, its id and level, its statement (with the catalog's note after a dash), how many of its checks ended in each outcome and their numbers in the index of checks at the end; after ▸, the checks that did not pass, by name, with their reasons (a reason is printed once: another entry it concerns points to it; a failure's is under Failures and warnings).</p>` : ''}
${matrix(report, byReq, anchors, plan)}
<h2 id="all-checks-heading">Checks (${report.checks.length}; failures above)</h2>
<div id="all-checks">${others.map(({ c, i }) => checkEntry(c, checkAnchor[i], baseUrl)).join('\n')}</div>
<div class="closing">
<div><h2>Run</h2>
<dl class="meta" id="run">${meta.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join('')}</dl></div>
<div><h2>Mutation and variants</h2>
<div id="mutation">${mut ? `<p>${mut.score === null ? 'no mutants' : `${Math.round(mut.score * 1000) / 10}%`} (${mut.caught} of ${mut.total} mutants caught)</p>${mut.survivors.length ? `<p>Surviving mutants:</p><ul>${mut.survivors.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}${mut.unproven.length ? `<p>Checks not yet shown able to fail:</p><ul>${mut.unproven.map((x) => `<li><code>${e(x)}</code></li>`).join('')}</ul>` : ''}` : `<p>${e(report.scoreNotes?.mutation ?? 'Not known for this report: it records no mutation score and no reason.')}</p>`}</div>
<div id="variants">${variants ? `<p>${variants.passed} of ${variants.total} variants passed</p>${Object.keys(variants.failing).length ? `<ul>${Object.entries(variants.failing).map(([v, ids]) => `<li><code>${e(v)}</code>: ${ids.map((id) => `<code>${e(id)}</code>`).join(', ')}</li>`).join('')}</ul>` : ''}` : `<p>Variants: ${e(report.scoreNotes?.variants ?? 'not known for this report: it records no variant result and no reason.')}</p>`}</div>
</div>
<div><h2>Waivers</h2>
<div id="waivers">${w.applied.length + w.expired.length + w.unmatched.length === 0 ? '<p>None.</p>' : `<ul>${w.applied.map((x) => `<li>applied: <code>${e(x.id)}</code> (owner ${e(x.owner)}, until ${e(x.expires)}) to ${x.checks.map((c) => `<code>${e(c)}</code>`).join(', ')}: ${e(x.reason)}</li>`).join('')}${w.expired.map((x) => `<li class="expired">EXPIRED: <code>${e(x.id)}</code> (owner ${e(x.owner)}, expired ${e(x.expires)}): ${e(x.reason)}</li>`).join('')}${w.unmatched.map((x) => `<li class="unmatched">matches nothing: <code>${e(x.id)}</code> (owner ${e(x.owner)}): ${e(x.why)}</li>`).join('')}</ul>`}</div></div>
</div>
${checkIndex(report, plan)}
<script>${JS}</script>
</body>
</html>
`;
}
