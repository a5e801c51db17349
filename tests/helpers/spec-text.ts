// Parses normative lists and tables out of the specification's Markdown text, so tests compare the contract
// with the spec itself instead of with a second hand-typed copy. Pure functions over the text; only
// readSpecText touches the file system. Every parser throws when it finds nothing, so a reworded spec fails
// loudly instead of making a comparison vacuous.
import fs from 'node:fs';
import path from 'node:path';

export { SPEC_PATH } from '../../fixtures/paths.ts';
import { SPEC_PATH } from '../../fixtures/paths.ts';

export function readSpecText(file: string = SPEC_PATH): string {
  return fs.readFileSync(file, 'utf8');
}

/** Body of the section numbered `number` ("4.1", "5", "7.1"), up to the next heading of the same or a higher level. */
export function section(text: string, number: string): string {
  const lines = text.split('\n');
  const heading = /^(#{2,6})\s+(\d+(?:\.\d+)*)\.?\s/;
  const start = lines.findIndex(line => heading.exec(line)?.[2] === number);
  if (start < 0) throw new Error(`spec: no section ${number}`);
  const level = heading.exec(lines[start])![1].length;
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^(#{1,6})\s/.exec(line);
    if (m && m[1].length <= level) break;
    body.push(line);
  }
  return body.join('\n');
}

/** Numbers of the subsections directly under `parent` ("4" gives "4.1" ... "4.6"). */
export function subsectionNumbers(text: string, parent: string): string[] {
  const re = new RegExp(`^#{2,6}\\s+(${parent.replace(/\./g, '\\.')}\\.\\d+)\\.?\\s`, 'gm');
  return [...text.matchAll(re)].map(m => m[1]);
}

/** All `backticked` tokens of a fragment, in order, without duplicates. */
export function backticked(fragment: string): string[] {
  return [...new Set([...fragment.matchAll(/`([^`]+)`/g)].map(m => m[1]))];
}

/** Rows of every Markdown table in `body`, as arrays of trimmed cells, with the caption line before each table. */
export function tables(body: string): Array<{ caption: string; header: string[]; rows: string[][] }> {
  const lines = body.split('\n');
  const out: Array<{ caption: string; header: string[]; rows: string[][] }> = [];
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(c => c.trim());
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim().startsWith('|') || !/^\|[\s|:-]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue;
    let caption = '';
    for (let j = i - 1; j >= 0; j--) {
      if (lines[j].trim()) { caption = lines[j].trim(); break; }
    }
    const header = cells(lines[i]);
    const rows: string[][] = [];
    let k = i + 2;
    for (; k < lines.length && lines[k].trim().startsWith('|'); k++) rows.push(cells(lines[k]));
    out.push({ caption, header, rows });
    i = k;
  }
  return out;
}

/** §7.1 "The full enumeration of `reason_code` is exactly: a, b, c." */
export function reasonCodeEnumeration(text: string): string[] {
  const m = /The full enumeration of `reason_code` is exactly:\s*([^\n]+?)\.?\s*$/m.exec(section(text, '7.1'));
  if (!m) throw new Error('spec §7.1: enumeration line not found');
  return m[1].split(',').map(s => s.trim()).filter(Boolean);
}

/** §5 item 5: the 401 reason codes of key authentication, in table order. */
export function authenticationReasons(text: string): string[] {
  const table = tables(section(text, '5')).find(t => t.header[0] === 'reason_code');
  if (!table) throw new Error('spec §5: 401 reason table not found');
  return table.rows.map(r => r[0]);
}

/** §7.1 table: HTTP status → error category (null when "not shown") and its reason codes. */
export function statusReasonTable(text: string): Map<number, { category: string | null; codes: string[] }> {
  const table = tables(section(text, '7.1')).find(t => t.header[0] === 'HTTP');
  if (!table) throw new Error('spec §7.1: status table not found');
  const out = new Map<number, { category: string | null; codes: string[] }>();
  for (const [status, category, codes] of table.rows) {
    const cat = backticked(category);
    out.set(Number(status), { category: cat.length === 1 ? cat[0] : null, codes: backticked(codes) });
  }
  return out;
}

export type SpecEndpoint = {
  section: string;
  method: string;
  path: string;
  /** "Operation name" line; absent in some sections of the spec. */
  operationName: string | null;
  scopes: string[];
  /** status → reason codes, merged over repeated statuses, "authentication reasons" expanded from §5. */
  errors: Map<number, string[]>;
};

/** Every §4 subsection that has a "Method and path" line (the REST routes, not the webhook receiver). */
export function endpoints(text: string): SpecEndpoint[] {
  const auth = authenticationReasons(text);
  const out: SpecEndpoint[] = [];
  for (const number of subsectionNumbers(text, '4')) {
    const body = section(text, number);
    const route = /^- Method and path: `(\w+) ([^`]+)`/m.exec(body);
    if (!route) continue;
    const scopesLine = /^- Required scopes: (.+)$/m.exec(body);
    const errorsLine = /^- Errors: (.+)$/m.exec(body);
    if (!scopesLine || !errorsLine) throw new Error(`spec §${number}: scopes or errors line missing`);
    out.push({
      section: number,
      method: route[1],
      path: route[2],
      operationName: backticked(/^- Operation name: (.+)$/m.exec(body)?.[1] ?? '')[0] ?? null,
      scopes: backticked(scopesLine[1]),
      errors: parseErrorsLine(errorsLine[1], auth, number),
    });
  }
  if (out.length === 0) throw new Error('spec §4: no routes found');
  return out;
}

/** "400 `a`; 400 `b` (why); 401 authentication reasons; 403 `c`, `d` (note)." → status → codes. */
export function parseErrorsLine(line: string, authReasons: string[], where = '?'): Map<number, string[]> {
  const errors = new Map<number, string[]>();
  // Parenthetical notes are explanations, not codes.
  const items = line.replace(/\([^)]*\)/g, '').replace(/\.\s*$/, '').split(';');
  for (const item of items) {
    const m = /^\s*(\d{3})\s+(.+?)\s*$/.exec(item);
    if (!m) throw new Error(`spec §${where}: cannot read error item "${item}"`);
    const codes = /authentication reasons/.test(m[2]) ? authReasons : backticked(m[2]);
    if (codes.length === 0) throw new Error(`spec §${where}: no codes in "${item}"`);
    const status = Number(m[1]);
    errors.set(status, [...new Set([...(errors.get(status) ?? []), ...codes])]);
  }
  return errors;
}

export type FieldRow = { field: string; type: string; required: boolean; notes: string };

/** Field tables (header "Field | Type | Required | Notes") of a section, with the caption line before each. */
export function fieldTables(text: string, number: string): Array<{ caption: string; rows: FieldRow[] }> {
  const found = tables(section(text, number)).filter(t => t.header[0] === 'Field' && t.header[2] === 'Required');
  if (found.length === 0) throw new Error(`spec §${number}: no field table`);
  return found.map(t => ({
    caption: t.caption,
    rows: t.rows.map(([field, type, required, notes]) => {
      if (required !== 'yes' && required !== 'no') throw new Error(`spec §${number}: Required "${required}" for ${field}`);
      return { field, type, required: required === 'yes', notes: notes ?? '' };
    }),
  }));
}
