// reference_props.mjs - record, for every Unicode code point, the properties
// the cl100k/Llama-3, Qwen2, o200k and DeepSeek-V3 pre-tokenizer regexes ask
// about, as the reference implementations see them, and which code points
// their case-insensitive contractions (?i:'s|'t|'re|'ve|'m|'ll|'d) accept.
//
// This is the oracle for tests/pretok/test_ucd_props.c. Like reference_classes.mjs
// it reads no Unicode data: every answer comes from how the real regex
// engines split probe strings.
//
// Property probes. For a character class X, written as the family regexes
// write it, the pattern
//
//     !X|[\s\S]
//
// makes "!" + c one piece exactly when c is in X, and two pieces otherwise.
// Many such two-code-point probes are concatenated into one text, so one
// call answers thousands of code points. The eight property bits of
// src/pretok/ucd.h are probed with
//
//     L  \p{L}     N  \p{N}     WS  \s     M  \p{M}     P  \p{P}     S  \p{S}
//     UP [\p{Lu}\p{Lt}\p{Lm}\p{Lo}]         LO [\p{Ll}\p{Lm}\p{Lo}]
//
// and every composite class that occurs in the family regexes is probed too
// and must equal the same combination of the bits (see COMPOSITES), e.g.
// o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] = UP | M, cl100k's
// [^\r\n\p{L}\p{N}] = not (L | N) and not CR/LF.
//
// Contraction probes. Each letter of each contraction is replaced by every
// code point c ("'" + c + "e" for the r of 're, "'l" + c for the second l of
// 'll, c + "s" for the apostrophe of 's, "'" + c for a whole contraction
// body such as "re" folded into one code point, ...). A probe is accepted
// when the contraction matches the whole probe. HF runs each probe against
// the exact family group (?i:'s|'t|'re|'ve|'m|'ll|'d)|[\s\S] (it returns
// the pieces, so a shorter match such as 's inside "'se" is told apart)
// and against the single contraction, e.g. (?i:'re)|[\s\S]; tiktoken, which
// only returns token ids, runs the single contraction, where a probe is
// either one piece or all single characters; it also runs the exact group
// and cl100k's own spelling '(?i:[sdmt]|ll|ve|re) on the probe shapes
// where a shorter contraction cannot be a prefix ('X, 'rX, 'vX, 'lX).
// All must agree.
//
// References (pinned in package.json):
//   - HF `tokenizers` (native Rust binding, Oniguruma): a Tokenizer made
//     from a tokenizer.json whose pre_tokenizer is Split(Regex pattern,
//     Isolated); the pre-tokenizer's preTokenizeString() returns the pieces
//     with code-point offsets.
//   - `tiktoken` (Rust compiled to WASM, fancy-regex over the regex crate):
//     new Tiktoken(ranks, {}, pattern) with a vocabulary of the 256 single
//     bytes plus, for the probe's first character q ("!" or "'"), the 256
//     two-byte tokens q·b. BPE merges q with the next byte exactly when both
//     are in one piece, so a token q·b starting at a probe shows a match
//     (for c + "s", the tokens b·"s" and the last byte of c instead).
// The file is written from the HF results; tiktoken must agree everywhere.
//
// Surrogates U+D800..U+DFFF cannot be passed as valid UTF-8, so they are not
// probed; they have no properties and are accepted by no contraction.
//
// Run (a few minutes):
//     cd tools/ucd-gen && npm ci && node reference_props.mjs
// Writes tests/data/ucd_props_reference.txt (or the path given as first argument).

import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { MAX_CP, isSurrogate, packageVersion, hex, runLines } from './common.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const defaultOutput = path.join(here, '..', '..', 'tests', 'data', 'ucd_props_reference.txt');

const CHUNK = 8192;
const ALL_CPS = [];
for (let cp = 0; cp <= MAX_CP; cp++) if (!isSurrogate(cp)) ALL_CPS.push(cp);

// The bits of SIMDBPE__UCD_* in src/pretok/ucd.h.
const BITS = [
  { name: 'L', bit: 1 << 0, cls: '\\p{L}' },
  { name: 'N', bit: 1 << 1, cls: '\\p{N}' },
  { name: 'WS', bit: 1 << 2, cls: '\\s' },
  { name: 'M', bit: 1 << 3, cls: '\\p{M}' },
  { name: 'P', bit: 1 << 4, cls: '\\p{P}' },
  { name: 'S', bit: 1 << 5, cls: '\\p{S}' },
  { name: 'UP', bit: 1 << 6, cls: '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}]' },
  { name: 'LO', bit: 1 << 7, cls: '[\\p{Ll}\\p{Lm}\\p{Lo}]' },
];
const B = Object.fromEntries(BITS.map(({ name, bit }) => [name, bit]));
const isCrLf = (cp) => cp === 0x0a || cp === 0x0d;

// The character classes of the family regexes, and what they must equal in
// terms of the bits (p) and the code point (cp).
const COMPOSITES = [
  { cls: '[^\\s\\p{L}\\p{N}]', where: 'cl100k qwen o200k', want: (p) => !(p & (B.WS | B.L | B.N)) },
  { cls: '[^\\r\\n\\p{L}\\p{N}]', where: 'cl100k qwen o200k', want: (p, cp) => !(p & (B.L | B.N)) && !isCrLf(cp) },
  { cls: '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', where: 'o200k', want: (p) => !!(p & (B.UP | B.M)) },
  { cls: '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]', where: 'o200k', want: (p) => !!(p & (B.LO | B.M)) },
  { cls: '[^\\r\\n\\p{L}\\p{P}\\p{S}]', where: 'deepseek', want: (p, cp) => !(p & (B.L | B.P | B.S)) && !isCrLf(cp) },
  { cls: '[\\p{L}\\p{M}]', where: 'deepseek', want: (p) => !!(p & (B.L | B.M)) },
  { cls: '[\\p{P}\\p{S}]', where: 'deepseek', want: (p) => !!(p & (B.P | B.S)) },
  {
    cls: '[一-龥぀-ゟ゠-ヿ]', where: 'deepseek',
    want: (p, cp) => (cp >= 0x4e00 && cp <= 0x9fa5) || (cp >= 0x3040 && cp <= 0x30ff),
  },
];

// Contraction probes: `text(c)` is the probe for code point c, `single` the
// one contraction it tests, `slot` the name of the replaced part.
const GROUP = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const SLOTS = [
  { slot: "s of 's", single: "'s", text: (c) => "'" + c },
  { slot: "t of 't", single: "'t", text: (c) => "'" + c },
  { slot: "m of 'm", single: "'m", text: (c) => "'" + c },
  { slot: "d of 'd", single: "'d", text: (c) => "'" + c },
  { slot: "r of 're", single: "'re", text: (c) => "'" + c + 'e' },
  { slot: "e of 're", single: "'re", text: (c) => "'r" + c },
  { slot: "v of 've", single: "'ve", text: (c) => "'" + c + 'e' },
  { slot: "e of 've", single: "'ve", text: (c) => "'v" + c },
  { slot: "first l of 'll", single: "'ll", text: (c) => "'" + c + 'l' },
  { slot: "second l of 'll", single: "'ll", text: (c) => "'l" + c },
  { slot: "re of 're as one code point", single: "'re", text: (c) => "'" + c },
  { slot: "ve of 've as one code point", single: "'ve", text: (c) => "'" + c },
  { slot: "ll of 'll as one code point", single: "'ll", text: (c) => "'" + c },
  { slot: "apostrophe of 's", single: "'s", text: (c) => c + 's' },
];
// What the exact family group accepts for each probe text shape: the union
// of the slots sharing that shape.
const GROUP_SHAPES = [
  { name: "'X", text: (c) => "'" + c, slots: ["s of 's", "t of 't", "m of 'm", "d of 'd", "re of 're as one code point", "ve of 've as one code point", "ll of 'll as one code point"] },
  { name: "'Xe", text: (c) => "'" + c + 'e', slots: ["r of 're", "v of 've"] },
  { name: "'rX", text: (c) => "'r" + c, slots: ["e of 're"] },
  { name: "'vX", text: (c) => "'v" + c, slots: ["e of 've"] },
  { name: "'Xl", text: (c) => "'" + c + 'l', slots: ["first l of 'll"] },
  { name: "'lX", text: (c) => "'l" + c, slots: ["second l of 'll"] },
  { name: 'Xs', text: (c) => c + 's', slots: ["apostrophe of 's"] },
];

// tiktoken's cl100k_base pat_str begins with this (openai_public.py).
const TIKTOKEN_CL100K_GROUP = "'(?i:[sdmt]|ll|ve|re)";
const TIKTOKEN_GROUP_SHAPES = ["'X", "'rX", "'vX", "'lX"];

// HF: (pattern) => (texts) => for each text, whether it is exactly one piece
// of the concatenation of all texts.
function hfProber(pattern) {
  const { Tokenizer } = require('tokenizers');
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
    post_processor: null, decoder: null,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: { a: 0 }, merges: [],
    },
  };
  const pre = Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
  return (texts) => {
    const pieces = new Map(); // start -> end, code-point offsets
    for (const [, [start, end]] of pre.preTokenizeString(texts.join(''))) pieces.set(start, end);
    const out = [];
    let at = 0;
    for (const t of texts) {
      const len = [...t].length;
      out.push(pieces.get(at) === at + len);
      at += len;
    }
    return out;
  };
}

// tiktoken: (pattern, pair) => (texts) => for each text, whether the two
// characters of pair.at(text) are in one piece. pair = { first } or
// { second }: the vocabulary holds the 256 single bytes plus the 256 two-byte
// tokens first·b (or b·second), so BPE merges exactly the pairs that lie in
// one piece; pair.at(text) is the byte offset in the text where such a
// merged token must start.
function tiktokenProber(pattern, pair) {
  const { Tiktoken } = require('tiktoken');
  const lines = [];
  let rank = 0;
  const add = (bytes) => lines.push(`${Buffer.from(bytes).toString('base64')} ${rank++}`);
  for (let b = 0; b < 256; b++) add([b]);
  for (let b = 0; b < 256; b++) add(pair.first ? [pair.first.charCodeAt(0), b] : [b, pair.second.charCodeAt(0)]);
  const enc = new Tiktoken(lines.join('\n'), {}, pattern);
  return (texts) => {
    const ids = enc.encode_ordinary(texts.join(''));
    const merged = new Set(); // byte offsets where a two-byte token starts
    let at = 0;
    for (const id of ids) {
      if (id >= 256) merged.add(at);
      at += id >= 256 ? 2 : 1;
    }
    const out = [];
    at = 0;
    for (const t of texts) {
      out.push(merged.has(at + pair.at(t)));
      at += Buffer.byteLength(t);
    }
    if (merged.size !== out.filter(Boolean).length) throw new Error(`tiktoken ${pattern}: a merge outside the probed pairs`);
    return out;
  };
}

// Runs a prober over ALL_CPS with the probe text(c); returns a Uint8Array
// (0/1 per code point, surrogates 0).
function sweep(prober, text) {
  const result = new Uint8Array(MAX_CP + 1);
  for (let i = 0; i < ALL_CPS.length; i += CHUNK) {
    const cps = ALL_CPS.slice(i, i + CHUNK);
    const got = prober(cps.map((cp) => text(String.fromCodePoint(cp))));
    cps.forEach((cp, k) => { result[cp] = got[k] ? 1 : 0; });
  }
  return result;
}

function firstDifferences(a, b, labelA, labelB) {
  const out = [];
  for (let cp = 0; cp <= MAX_CP && out.length < 20; cp++) {
    if (a[cp] !== b[cp]) out.push(`U+${hex(cp)} ${labelA}=${a[cp]} ${labelB}=${b[cp]}`);
  }
  return out;
}

function countOf(a) {
  return a.reduce((n, v) => n + (v ? 1 : 0), 0);
}

// One class probe on both references; returns the HF answers, throws on disagreement.
function probeClass(cls) {
  const pattern = `!${cls}|[\\s\\S]`;
  const text = (c) => '!' + c;
  const hf = sweep(hfProber(pattern), text);
  const tt = sweep(tiktokenProber(pattern, { first: '!', at: () => 0 }), text);
  const diff = firstDifferences(hf, tt, 'HF', 'tiktoken');
  if (diff.length) throw new Error(`${cls}: HF and tiktoken disagree:\n${diff.join('\n')}`);
  console.log(`  ${cls}: ${countOf(hf)} code points, HF = tiktoken`);
  return hf;
}

function selfTest(props) {
  const known = [
    [0x41, B.L | B.UP], [0x61, B.L | B.LO], [0x1c5, B.L | B.UP], [0x2b0, B.L | B.UP | B.LO],
    [0x4e00, B.L | B.UP | B.LO], [0x30, B.N], [0x2160, B.N], [0x20, B.WS], [0x3000, B.WS],
    [0x301, B.M], [0x903, B.M], [0x21, B.P], [0x5f, B.P], [0x2b, B.S], [0x24, B.S], [0x1f600, B.S],
    [0x00, 0], [0x378, 0], [0xe000, 0], [0x10ffff, 0], [0x200b, 0],
  ];
  for (const [cp, want] of known) {
    if (props[cp] !== want) throw new Error(`self-test: U+${hex(cp)} has ${props[cp].toString(16)}, expected ${want.toString(16)}`);
  }
}

function probeProps() {
  console.log('property bits:');
  const props = new Uint8Array(MAX_CP + 1);
  for (const { bit, cls } of BITS) {
    const hits = probeClass(cls);
    for (let cp = 0; cp <= MAX_CP; cp++) if (hits[cp]) props[cp] |= bit;
  }
  selfTest(props);
  console.log('family classes (each must equal its combination of the bits):');
  const composites = [];
  for (const { cls, where, want } of COMPOSITES) {
    const hits = probeClass(cls);
    const expect = new Uint8Array(MAX_CP + 1);
    for (let cp = 0; cp <= MAX_CP; cp++) expect[cp] = !isSurrogate(cp) && want(props[cp], cp) ? 1 : 0;
    const diff = firstDifferences(hits, expect, 'observed', 'from-bits');
    if (diff.length) throw new Error(`${cls}: not the combination of the bits:\n${diff.join('\n')}`);
    composites.push(`${cls} (${where}) ${countOf(hits)}`);
  }
  return { props, composites };
}

// For each slot, the list of code points accepted.
function probeContractions() {
  console.log('contractions:');
  const accepted = new Map();
  for (const { slot, single, text } of SLOTS) {
    const pattern = `(?i:${single})|[\\s\\S]`;
    // "'" + ... probes: "'" and the next byte; c + "s": the last byte of c and "s".
    const pair = text('x')[0] === "'"
      ? { first: "'", at: () => 0 }
      : { second: 's', at: (t) => Buffer.byteLength(t) - 2 };
    const hf = sweep(hfProber(pattern), text);
    const tt = sweep(tiktokenProber(pattern, pair), text);
    const diff = firstDifferences(hf, tt, 'HF', 'tiktoken');
    if (diff.length) throw new Error(`${slot}: HF and tiktoken disagree:\n${diff.join('\n')}`);
    const cps = [];
    for (let cp = 0; cp <= MAX_CP; cp++) if (hf[cp]) cps.push(cp);
    accepted.set(slot, cps);
    console.log(`  ${slot}: ${cps.map(hex).join(' ') || '(none)'}, HF = tiktoken`);
  }
  const group = hfProber(`${GROUP}|[\\s\\S]`);
  for (const { name, text, slots } of GROUP_SHAPES) {
    const hf = sweep(group, text);
    const expect = new Uint8Array(MAX_CP + 1);
    for (const slot of slots) for (const cp of accepted.get(slot)) expect[cp] = 1;
    const diff = firstDifferences(hf, expect, 'group', 'single');
    if (diff.length) throw new Error(`${GROUP} on ${name}: not the union of the single contractions:\n${diff.join('\n')}`);
    console.log(`  ${GROUP} on ${name}: ${countOf(hf)} accepted, = union of ${slots.length} single contraction(s)`);
  }
  // tiktoken with whole groups, on the shapes where "'" and the next
  // character share a piece only if the whole probe matched (no shorter
  // contraction is a prefix of 'X, 'rX, 'vX, 'lX): the family group, and
  // cl100k's spelling in tiktoken's own pat_str.
  for (const g of [GROUP, TIKTOKEN_CL100K_GROUP]) {
    const prober = tiktokenProber(`${g}|[\\s\\S]`, { first: "'", at: () => 0 });
    for (const { name, text, slots } of GROUP_SHAPES.filter((s) => TIKTOKEN_GROUP_SHAPES.includes(s.name))) {
      const tt = sweep(prober, text);
      const expect = new Uint8Array(MAX_CP + 1);
      for (const slot of slots) for (const cp of accepted.get(slot)) expect[cp] = 1;
      const diff = firstDifferences(tt, expect, 'group', 'single');
      if (diff.length) throw new Error(`tiktoken ${g} on ${name}: not the union of the single contractions:\n${diff.join('\n')}`);
      console.log(`  tiktoken ${g} on ${name}: ${countOf(tt)} accepted, = union of ${slots.length} single contraction(s)`);
    }
  }
  return accepted;
}

function countsLine(props) {
  return BITS.map(({ name, bit }) => `${name}=${props.reduce((n, p) => n + ((p & bit) !== 0), 0)}`).join(' ');
}

function header(props, composites) {
  return [
    '# ucd_props_reference.txt - the Unicode properties the cl100k/Llama-3, Qwen2, o200k and',
    '# DeepSeek-V3 pre-tokenizer regexes ask about, for every code point U+0000..U+10FFFF,',
    `# as observed from HF tokenizers ${packageVersion('tokenizers')} (npm \`tokenizers\`, native Rust binding,`,
    '# Oniguruma; Split(Regex, Isolated) pre-tokenizer, preTokenizeString on probe strings),',
    `# cross-checked against tiktoken ${packageVersion('tiktoken')} (npm \`tiktoken\`, Rust compiled to WASM,`,
    '# fancy-regex; custom pattern): they agree on every probed code point.',
    '# Produced by: cd tools/ucd-gen && npm ci && node reference_props.mjs',
    `# with node ${process.version}. Not derived from any Unicode data file.`,
    '# Surrogates D800-DFFF are not probed (not valid UTF-8); they have no properties.',
    '# Format: one line per maximal run of equal properties: START END PROPS (hex, inclusive),',
    '# PROPS = the SIMDBPE__UCD_* bits of src/pretok/ucd.h:',
    '#   01 L \\p{L}   02 N \\p{N}   04 WS \\s   08 M \\p{M}   10 P \\p{P}   20 S \\p{S}',
    '#   40 UP [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}]   80 LO [\\p{Ll}\\p{Lm}\\p{Lo}]',
    `# Counts: ${countsLine(props)}`,
    '# The family classes, probed too, equal their combination of the bits (code points):',
    ...composites.map((c) => `#   ${c}`),
    `# After the runs, FOLD lines list the code points ${GROUP} accepts in place of`,
    '# one part of a contraction (every code point probed; HF with the exact group and with the',
    '# single contraction, tiktoken with the single contraction and, where its token ids tell,',
    `# with the exact group and with cl100k's pat_str spelling ${TIKTOKEN_CL100K_GROUP}: all agree):`,
    '#   FOLD <contraction> <part> CP...   (part "1"/"2": first/second letter, "12": both letters',
    '#   as one code point, "0": the apostrophe)',
  ];
}

const FOLD_NAMES = {
  "s of 's": "'s 1", "t of 't": "'t 1", "m of 'm": "'m 1", "d of 'd": "'d 1",
  "r of 're": "'re 1", "e of 're": "'re 2", "v of 've": "'ve 1", "e of 've": "'ve 2",
  "first l of 'll": "'ll 1", "second l of 'll": "'ll 2",
  "re of 're as one code point": "'re 12", "ve of 've as one code point": "'ve 12",
  "ll of 'll as one code point": "'ll 12", "apostrophe of 's": "'s 0",
};

function foldLines(accepted) {
  return SLOTS.map(({ slot }) => `FOLD ${FOLD_NAMES[slot]} ${accepted.get(slot).map(hex).join(' ')}`.trimEnd());
}

function main() {
  const output = process.argv[2] ?? defaultOutput;
  const { props, composites } = probeProps();
  const accepted = probeContractions();
  const propsHex = (p) => p.toString(16).toUpperCase().padStart(2, '0');
  const lines = [...header(props, composites), ...runLines(props, propsHex), ...foldLines(accepted)];
  const text = lines.join('\n') + '\n';
  writeFileSync(output, text);
  console.log(`wrote ${output}: ${countsLine(props)}`);
}

main();
