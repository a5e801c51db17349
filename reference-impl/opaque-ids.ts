// Opaque identifiers for judging partners' API clients (main.ts --opaque-ids): every identifier of the seeded
// dataset a client sees (organization_id, patient_id, encounter_id, document_id, and the storage key inside an audio
// URL) is replaced, in the seed itself before anything reads it, by an id a client MUST percent-encode in a path
// segment. Spec §2: identifiers are opaque strings; no prefix or format may be inferred. A client that builds ids,
// trims them, or puts them in a path unencoded asks for another request target and is seen. API keys are untouched.
import crypto from 'node:crypto';
import { expandGenerated, type Seed } from './seed.ts';

const PLAIN = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
// Outside RFC 3986 unreserved, but neither a quote nor a backslash (the --guide text pastes ids into a shell).
const OTHER_ASCII = '!$&()*+,;=:@[]^|{}';
// Unencoded in a path, each changes the request target: one more segment, the start of the query, of the fragment.
const TARGET_CHANGERS = '/?#';
// One of them per id; '𝄞' is outside the BMP (two UTF-16 units, four UTF-8 bytes).
const NON_ASCII = ['é', 'ü', 'ø', 'ß', 'ñ', 'ç', 'å', 'λ', 'ж', 'あ', '€', 'ł', '中', '𝄞'];
const HEX = '0123456789ABCDEF';

/** A deterministic byte stream drawn from SHA-256 of the original id (and a salt, for the rare redraw). */
function draws(id: string, salt: number): { byte(): number; pick(from: string | readonly string[]): string } {
  let block = 0;
  let buf = Buffer.alloc(0);
  let at = 0;
  const byte = () => {
    if (at === buf.length) {
      buf = crypto.createHash('sha256').update(`opaque-ids/v1\u0000${salt}\u0000${block++}\u0000${id}`).digest();
      at = 0;
    }
    return buf[at++];
  };
  const pick = (from: string | readonly string[]) => {
    const all = [...from];
    return all[byte() % all.length];
  };
  return { byte, pick };
}

function draw(id: string, salt: number): string {
  const r = draws(id, salt);
  // 6..20 drawn characters, then four more at places drawn from the hash: lengths vary from 10 to 26 characters.
  const chars: string[] = [];
  const length = 6 + (r.byte() % 15);
  for (let i = 0; i < length; i++) {
    const b = r.byte();
    chars.push(b < 150 ? r.pick(PLAIN) : b < 205 ? r.pick(OTHER_ASCII) : b < 230 ? r.pick(`${TARGET_CHANGERS}%`) : r.pick(NON_ASCII));
  }
  const insert = (text: string, from: number, to: number) => chars.splice(from + (r.byte() % (to - from + 1)), 0, text);
  // A space inside the id, never at either end (a trimming client is still seen: the id is not found).
  insert(' ', 1, chars.length - 1);
  insert(r.pick(TARGET_CHANGERS), 0, chars.length);
  // '%' half the time before two hex digits: sent unencoded, the id decodes to another one; otherwise a bad escape.
  insert(r.byte() % 2 === 0 ? `%${r.pick(HEX)}${r.pick(HEX)}` : '%', 0, chars.length);
  insert(r.pick(NON_ASCII), 0, chars.length);
  return chars.join('');
}

/**
 * The opaque id of an original id: deterministic (SHA-256 of the original), 10 to 26 characters, and each one
 * contains a space (not at either end), a '%', one of '/', '?', '#', and a non-ASCII character, at places and with
 * neighbours drawn from the hash, so no two share a prefix or a visible pattern. No '/'-separated piece is '.' or
 * '..' (a URL parser would remove such a piece from the storage URL an opaque storage key is signed into).
 */
export function opaqueId(id: string): string {
  for (let salt = 0; ; salt++) {
    const out = draw(id, salt);
    if (!out.split('/').some((piece) => piece === '.' || piece === '..')) return out;
  }
}

/** The fields of the seed's rows that hold a client-visible identifier (or a storage key, seen inside audio URLs). */
const ID_FIELDS = ['organization_id', 'patient_id', 'encounter_id', 'document_id', 'storage_key'] as const;

/**
 * The seed with every client-visible identifier replaced by `idOf(original)`, consistently: rows, foreign keys, the
 * keys' organizations, the profile roles (the unknown encounter too), the storage keys of recordings and audio
 * objects. The generated encounters and documents are expanded into the explicit rows (after the seed's own, so
 * document positions are unchanged) and `generated.count` becomes 0. Throws when two ids would map to one.
 */
export function opaqueSeed(seed: Seed, idOf: (id: string) => string = opaqueId): { seed: Seed; ids: ReadonlyMap<string, string> } {
  const ids = new Map<string, string>();
  const map = <T>(id: T): T => {
    if (typeof id !== 'string') return id; // null: no patient, not organization scoped, no storage key
    let out = ids.get(id);
    if (out === undefined) {
      out = idOf(id);
      ids.set(id, out);
    }
    return out as T;
  };
  const rows = <R extends object>(list: readonly R[]): R[] => list.map((row) => {
    const copy = { ...row } as Record<string, unknown>;
    for (const f of ID_FIELDS) if (f in copy) copy[f] = map(copy[f]);
    return copy as unknown as R;
  });
  const generated = expandGenerated(seed.generated);
  const out: Seed = {
    ...seed,
    organizations: rows(seed.organizations),
    api_keys: rows(seed.api_keys),
    patients: rows(seed.patients),
    encounters: rows([...seed.encounters, ...generated.encounters]),
    documents: rows([...seed.documents, ...generated.documents]),
    transcripts: rows(seed.transcripts),
    recordings: rows(seed.recordings),
    audio_objects: rows(seed.audio_objects),
    generated: { ...seed.generated, count: 0, organization_id: map(seed.generated.organization_id), patient_ids: seed.generated.patient_ids.map(map) },
    roles: Object.fromEntries(Object.entries(seed.roles).map(([role, ref]) => [role, rows([ref])[0]])),
  };
  const seen = new Map<string, string>();
  for (const [original, opaque] of ids) {
    const other = seen.get(opaque);
    if (other !== undefined) throw new Error(`opaque ids: ${other} and ${original} map to the same id`);
    seen.set(opaque, original);
  }
  return { seed: out, ids };
}
