// reference_classes.mjs - record the GPT-2 pre-tokenizer's character class
// of every Unicode code point, as the reference implementations see it.
//
// This is the oracle for tests/pretok/test_ucd.c. It does NOT read any Unicode data
// itself: each class is inferred from how the real tokenizers split probe
// strings with the GPT-2 pattern
//
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// For a code point c, the two-code-point string  prefix + c  is ONE
// pre-token exactly when c is in the class of the prefix:
//
//     "a" + c   one piece  <=>  c in \p{L}               (LETTER)
//     "1" + c   one piece  <=>  c in \p{N}               (NUMBER)
//     "!" + c   one piece  <=>  c in [^\s\p{L}\p{N}]     (OTHER)
//     "\t" + c  one piece  <=>  c in \s                  (SPACE; a whitespace
//               run at the end of the text is a single piece)
//
// Exactly one of the four probes must give one piece; anything else aborts.
//
// References (pinned in package.json):
//   - HF `tokenizers` (native Rust binding, Oniguruma regex): the ByteLevel
//     pre-tokenizer's preTokenizeString() returns the pieces directly.
//   - `tiktoken` (the Rust tiktoken compiled to WASM, fancy-regex): it has no
//     pre-tokenizer API, so we build a Tiktoken with the real GPT-2 pattern
//     and a tiny vocabulary: the 256 single bytes plus, for each prefix p and
//     each byte b, the two-byte token p·b. BPE then merges the prefix with
//     the first byte of c only when both are in the same piece, so the token
//     count of p + c is len(c) for one piece and len(c) + 1 for two.
// The file is written from the HF results; tiktoken must agree everywhere.
//
// Surrogates U+D800..U+DFFF cannot be passed as valid UTF-8, so they are not
// probed; they are OTHER by definition (a lone surrogate is not a scalar value
// and a valid-UTF-8 tokenizer never sees one).
//
// Run (takes a minute or two):
//     cd tools/ucd-gen && npm ci && node reference_classes.mjs
// Writes tests/data/ucd_reference.txt (or the path given as first argument).

import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { MAX_CP, isSurrogate, packageVersion, hex, runLines } from './common.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const defaultOutput = path.join(here, '..', '..', 'tests', 'data', 'ucd_reference.txt');

const PROBES = [
  { prefix: 'a', cls: 'LETTER' },
  { prefix: '1', cls: 'NUMBER' },
  { prefix: '!', cls: 'OTHER' },
  { prefix: '\t', cls: 'SPACE' },
];

// Returns (text) => number of pre-tokens, using HF's ByteLevel pre-tokenizer
// (add_prefix_space = false, use_regex = true: the GPT-2 configuration).
function hfPieceCounter() {
  const { byteLevelPreTokenizer } = require('tokenizers');
  const pre = byteLevelPreTokenizer(false, true);
  return (text) => pre.preTokenizeString(text).length;
}

// The tiktoken vocabulary described above, in .tiktoken format.
function probeRanks() {
  const lines = [];
  let rank = 0;
  const add = (bytes) => lines.push(`${Buffer.from(bytes).toString('base64')} ${rank++}`);
  for (let b = 0; b < 256; b++) add([b]);
  for (const { prefix } of PROBES) {
    for (let b = 0; b < 256; b++) add([prefix.charCodeAt(0), b]);
  }
  return lines.join('\n');
}

// Returns (text) => number of pre-tokens of prefix + c, using tiktoken with
// the GPT-2 pattern as tiktoken ships it. Only valid for the probe strings.
function tiktokenPieceCounter() {
  const { Tiktoken } = require('tiktoken');
  const gpt2 = require('tiktoken/encoders/gpt2.json');
  const enc = new Tiktoken(probeRanks(), {}, gpt2.pat_str);
  return (text) => enc.encode_ordinary(text).length - Buffer.byteLength(text) + 2;
}

// The class of code point cp according to one piece counter.
function classify(countPieces, cp) {
  const c = String.fromCodePoint(cp);
  const hits = PROBES.filter(({ prefix }) => {
    const n = countPieces(prefix + c);
    if (n !== 1 && n !== 2) throw new Error(`U+${hex(cp)}: ${n} pieces for probe ${JSON.stringify(prefix)}`);
    return n === 1;
  });
  if (hits.length !== 1) throw new Error(`U+${hex(cp)}: ${hits.length} probes gave one piece`);
  return hits[0].cls;
}

// Checks the method on code points whose class is not in doubt.
function selfTest(countPieces, name) {
  const known = {
    LETTER: [0x41, 0x7a, 0xaa, 0xe9, 0x4e00, 0x10400, 0x2ebe0],
    NUMBER: [0x30, 0x39, 0xb2, 0xbc, 0x660, 0x2160, 0x1d7ce],
    SPACE: [0x09, 0x0a, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000],
    OTHER: [0x00, 0x21, 0x27, 0x5f, 0x300, 0x180e, 0x200b, 0xfeff, 0xe000, 0x1f600, 0xe0100, 0x10ffff],
  };
  for (const [cls, cps] of Object.entries(known)) {
    for (const cp of cps) {
      const got = classify(countPieces, cp);
      if (got !== cls) throw new Error(`${name} self-test: U+${hex(cp)} is ${got}, expected ${cls}`);
    }
  }
}

// Classes of all code points per HF, checked against tiktoken.
function allClasses(hf, tt) {
  const classes = new Array(MAX_CP + 1);
  const disagreements = [];
  for (let cp = 0; cp <= MAX_CP; cp++) {
    if (isSurrogate(cp)) {
      classes[cp] = 'OTHER';
      continue;
    }
    classes[cp] = classify(hf, cp);
    const other = classify(tt, cp);
    if (other !== classes[cp]) disagreements.push(`U+${hex(cp)} HF=${classes[cp]} tiktoken=${other}`);
  }
  if (disagreements.length) {
    throw new Error(`HF and tiktoken disagree on ${disagreements.length} code points:\n${disagreements.slice(0, 50).join('\n')}`);
  }
  return classes;
}

function countsLine(classes) {
  const counts = { LETTER: 0, NUMBER: 0, SPACE: 0, OTHER: 0 };
  for (const cls of classes) counts[cls]++;
  return Object.entries(counts).map(([k, v]) => `${k}=${v}`).join(' ');
}

function header(classes) {
  return [
    '# ucd_reference.txt - GPT-2 pre-tokenizer class of every code point U+0000..U+10FFFF,',
    `# as observed from HF tokenizers ${packageVersion('tokenizers')} (npm \`tokenizers\`, native Rust binding,`,
    '# ByteLevel pre-tokenizer add_prefix_space=false, preTokenizeString on probe strings),',
    `# cross-checked against tiktoken ${packageVersion('tiktoken')} (npm \`tiktoken\`, Rust compiled to WASM,`,
    '# gpt2 pat_str): they agree on every probed code point.',
    '# Produced by: cd tools/ucd-gen && npm ci && node reference_classes.mjs',
    `# with node ${process.version}. Not derived from any Unicode data file.`,
    '# Surrogates D800-DFFF are not probed (not valid UTF-8); they are OTHER by definition.',
    '# Format: one line per maximal run of one class: START END CLASS (hex, inclusive),',
    '# CLASS in LETTER (\\p{L}) NUMBER (\\p{N}) SPACE (\\s) OTHER.',
    `# Counts: ${countsLine(classes)}`,
  ];
}

function main() {
  const output = process.argv[2] ?? defaultOutput;
  const hf = hfPieceCounter();
  const tt = tiktokenPieceCounter();
  selfTest(hf, 'HF tokenizers');
  selfTest(tt, 'tiktoken');
  const classes = allClasses(hf, tt);
  const text = [...header(classes), ...runLines(classes)].join('\n') + '\n';
  writeFileSync(output, text);
  console.log(`wrote ${output}: ${countsLine(classes)}`);
}

main();
