// §4.1 / §7.2 / §8 canonical integers as properties against the target: fast-check draws text that is NOT
// canonical decimal text in range (leading zeros, signs, whitespace, decimals, exponents, other radixes,
// non-ASCII digits, out-of-range values, junk, random unicode), percent-encodes it onto the wire in one of
// several equivalent ways, and requires 422 invalid_limit / invalid_offset naming the parameter; and draws
// canonical in-range values (bounds drawn often) and requires 200 with the value echoed. One check per
// property; runs go unrecorded and the shrunk counterexample is replayed once as evidence.
import fc from 'fast-check';
import type { CaseContext } from '../../../engine/planner.ts';
import { suite } from '../../../engine/declare.ts';
import { checkProperty } from '../../../engine/property-check.ts';
import { expectError } from '../../../judge/assertions.ts';
import type { Exchange } from '../../../record/record.ts';
import { ENCODINGS, expectPage, isCanonicalInRange, LIMIT_RANGE, LIST_PATH, OFFSET_RANGE, percentEncode, type Encoding } from '../../../judge/pagination.ts';
import { numRuns, anyCodePoint, startProperty } from '../../../engine/seed.ts';
import type { CheckApi } from '../../../observe/target.ts';

const check = suite(import.meta.filename);

type Param = 'limit' | 'offset';
const RANGE = { limit: LIMIT_RANGE, offset: OFFSET_RANGE } as const;
const REASON = { limit: 'invalid_limit', offset: 'invalid_offset' } as const;

// ---------------------------------------------------------------- arbitraries

const WHITESPACE = [' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u2003', '\u3000', '\ufeff'];
/** Code points of DIGIT ZERO in scripts other than ASCII (Unicode Nd): Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Thai, fullwidth, mathematical bold. */
const ZEROS = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50, 0xff10, 0x1d7ce];
const WORDS = ['', 'NaN', 'Infinity', '-Infinity', 'true', 'false', 'null', 'undefined', '1_0', '1,0', '1;0', '½', '0.', '.0', '00', '١', '--1', '+-1', '1-'];
const JUNK = ['a', 'abc', 'px', '%', '/', '#', '?', '&', '=', ';', ',', '\u0000', '\u200b'];

function inRange(param: Param): fc.Arbitrary<string> {
  const { min, max } = RANGE[param];
  return fc.oneof(fc.constantFrom(min, max), fc.integer({ min, max })).map(String);
}

/** Text that is not canonical decimal text in range for `param` (the filter is the oracle's own rule). */
function nonCanonical(param: Param): fc.Arbitrary<{ kind: string; text: string }> {
  const { min, max } = RANGE[param];
  const n = inRange(param);
  const kind = (k: string) => (text: string) => ({ kind: k, text });
  return fc.oneof(
    fc.tuple(fc.integer({ min: 1, max: 5 }), n).map(([k, s]) => '0'.repeat(k) + s).map(kind('leading zeros')),
    fc.tuple(fc.constantFrom('+', '-'), n).map(([sign, s]) => sign + s).map(kind('sign')),
    fc.tuple(fc.constantFrom(...WHITESPACE), n, fc.constantFrom('before', 'after', 'both', 'inside')).map(([w, s, where]) =>
      where === 'before' ? w + s : where === 'after' ? s + w : where === 'both' ? w + s + w : s.length > 1 ? s[0] + w + s.slice(1) : w + s,
    ).map(kind('whitespace')),
    fc.tuple(n, fc.stringMatching(/^[0-9]{0,3}$/), fc.boolean()).map(([s, frac, lead]) => (lead ? `.${s}` : `${s}.${frac}`)).map(kind('decimal')),
    fc.tuple(fc.integer({ min: 0, max: 9 }), fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'), fc.integer({ min: 0, max: 4 })).map(([m, e, x]) => `${m}${e}${x}`).map(kind('exponent')),
    fc.tuple(n, fc.constantFrom('0x', '0X', '0o', '0b', '#', 'x', '&#x')).map(([s, p]) => p + Number(s).toString(/o/.test(p) ? 8 : /b/.test(p) ? 2 : 16)).map(kind('radix prefix')),
    fc.tuple(n, fc.constantFrom(...ZEROS), fc.boolean()).map(([s, zero, all]) =>
      [...s].map((d, i) => (all || i === 0 ? String.fromCodePoint(zero + Number(d)) : d)).join(''),
    ).map(kind('non-ASCII digits')),
    fc.oneof(
      fc.integer({ min: max + 1, max: 2 ** 31 }).map(String),
      fc.stringMatching(/^[1-9][0-9]{6,40}$/),
      fc.constant(String(min - 1)),
    ).map(kind('out of range')),
    fc.constantFrom(...WORDS).map(kind('word')),
    fc.tuple(n, fc.constantFrom(...JUNK)).map(([s, j]) => s + j).map(kind('trailing junk')),
    fc.string({ unit: anyCodePoint(), maxLength: 12 }).map(kind('random unicode')),
    fc.string({ unit: 'grapheme', maxLength: 6 }).map(kind('random graphemes')),
  ).filter((x) => !isCanonicalInRange(x.text, min, max));
}

// ---------------------------------------------------------------- running a property as one check

interface Case<T> {
  describe(x: T): string;
  send(api: CheckApi, x: T, record: boolean): Promise<Exchange>;
  judge(ex: Exchange, x: T): void;
}

async function runProperty<T>(api: CheckApi, testInfo: CaseContext['testInfo'], id: string, arb: fc.Arbitrary<T>, c: Case<T>, title: string): Promise<void> {
  // The four properties of this file run at once in one test (a batch): each prints its seed under its own id.
  const { seed, runs } = startProperty(testInfo, 100, id);
  api.key('full');
  await checkProperty({ arbitrary: arb, seed, runs, send: (x, record) => c.send(api, x, record), judge: c.judge, describe: c.describe, failure: title });
}

const send = (api: CheckApi, target: string, record: boolean) => (record ? api.get(target, { shared: true }) : api.target.send(target, { shared: true }));

// ---------------------------------------------------------------- properties

for (const param of ['limit', 'offset'] as const) {
  const rejected = `canonical-integers-${param}-non-canonical-rejected`;
  check({
    id: rejected,
    requirements: ['LIST-CANONICAL-INTEGERS', 'LIMIT-CANONICAL-INTEGERS', param === 'limit' ? 'COND-INVALID-LIMIT' : 'COND-INVALID-OFFSET', param === 'limit' ? 'LIST-LIMIT-RANGE' : 'LIST-OFFSET-RANGE', 'ERR-422-CATEGORY'],
    title: `any ${param} text that is not canonical decimal text in range, however percent-encoded, answers 422 ${REASON[param]} with field "${param}"`,
    run: async (api, _scope, { testInfo }) => {
      testInfo.setTimeout(180_000);
      const arb = fc.record({ value: nonCanonical(param), encoding: fc.constantFrom<Encoding>(...ENCODINGS) });
      const target = (x: { value: { text: string }; encoding: Encoding }) => `${LIST_PATH}?${param}=${percentEncode(x.value.text, x.encoding)}`;
      await runProperty(api, testInfo, rejected, arb, {
        describe: (x) => `${param} ${JSON.stringify(x.value.text)} (${x.value.kind}) sent as ${target(x)}`,
        send: (a, x, record) => send(a, target(x), record),
        judge: (ex) => void expectError(ex, { reason: REASON[param], field: param }),
      }, `Non-canonical ${param} not rejected with 422 ${REASON[param]}`);
    },
  });

  const accepted = `canonical-integers-${param}-canonical-accepted`;
  check({
    id: accepted,
    requirements: ['LIST-CANONICAL-INTEGERS', param === 'limit' ? 'LIST-LIMIT-RANGE' : 'LIST-OFFSET-RANGE', param === 'limit' ? 'LIMIT-LIMIT' : 'LIMIT-OFFSET', param === 'limit' ? 'FIELD-LIST-LIMIT' : 'FIELD-LIST-OFFSET'],
    title: `every canonical ${param} in range is accepted: 200 with ${param} echoed and a page that honours it`,
    run: async (api, _scope, { testInfo }) => {
      testInfo.setTimeout(180_000);
      // Offsets are sent with limit=2: small pages, and a limit that is not itself a bound.
      const target = (v: string) => (param === 'limit' ? `${LIST_PATH}?limit=${v}` : `${LIST_PATH}?offset=${v}&limit=2`);
      await runProperty(api, testInfo, accepted, inRange(param), {
        describe: (v) => `${param}=${v}`,
        send: (a, v, record) => send(a, target(v), record),
        judge: (ex, v) => void expectPage(ex, param === 'limit' ? { limit: Number(v), offset: 0 } : { limit: 2, offset: Number(v) }),
      }, `Canonical ${param} not accepted`);
    },
  });
}
