// pretok_splits.mjs - records the pieces HF tokenizers makes with Split
// pre-tokenizers of every behavior, with and without invert, alone and in
// sequence, as the oracle of tests/pretok/test_regex.c (simdbpe's generic
// regex path, src/pretok/regex.c).
//
// Every piece written comes from HF tokenizers (the native binding, pinned in
// package.json / package-lock.json), never from simdbpe: each case's Splits
// go into a tokenizer.json of their own (no normalizer, no ByteLevel: the
// pieces are the text's own characters) and `preTokenizeString` gives them.
//
// Cases: patterns that match empty strings, look behind and ahead, anchor
// at a piece's ends, name Unicode properties (\p{L}, \p{Han}, class
// intersection), a case-insensitive ASCII group, and Kimi K2's and
// Nemotron's real patterns; each with the five behaviors (Isolated,
// Removed, MergedWithPrevious, MergedWithNext, Contiguous) and invert, and
// sequences of two Splits. Texts: hand-picked, and seeded random strings
// over the characters those patterns tell apart (including letters new in
// Unicode 15-16, which Debian's Oniguruma does not know).
//
// Output: tests/data/pretok/splits.jsonl.zst: a header line
// {"header": {...}}, one line per case {"case": N, "splits": [[pattern,
// behavior, invert], ...]}, then one line per case and text {"case": N,
// "text": T, "pieces": [piece, ...]}.
//
// Run:  cd tests/gen && npm ci && node pretok_splits.mjs
// Deterministic: the same package versions and seed give the same file.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rng } from './rng.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const { Tokenizer } = require('tokenizers');

const SEED = 20261206;
const N_RANDOM = 300;
const BEHAVIORS = ['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];

const R_KIMI = "[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const R_NEMOTRON = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Patterns tried with every behavior and invert.
const PATTERNS = [
  '-', '\\s+', 'x*', '(?<=a)', '(?=b)', 'a|', '^a|b$', '\\p{L}+', '\\P{L}+', '\\p{^N}',
  '[\\p{L}&&[^\\p{Han}]]+', '\\p{Han}+|\\p{Nd}+', "(?i:'s|ab)", '\\s+(?!\\S)|\\s+', R_KIMI,
  R_NEMOTRON,
];
// Sequences of two Splits.
const SEQUENCES = [
  [['\\p{N}{1,3}', 'Isolated', false], ['\\s+', 'MergedWithNext', false]],
  [['\\s+', 'Removed', true], ['a*', 'Contiguous', false]],
  [['\\p{Han}+', 'Isolated', false], ['$|b', 'MergedWithPrevious', true]],
  [[R_NEMOTRON, 'Isolated', false], ['\\p{Lu}', 'MergedWithNext', false]],
];

const TEXTS = ['', 'a', 'The-final--countdown', 'aab ba\n\n  b', "x'S can't AB ab",
  '  hello  world  ', 'abba-x-', '日本語テキスト and 中文', '\u{11F04}\u{11F05} \u{10D4A}12\u{1E4D0}',
  '\u{31350}\u{2EBF0}ab', 'e\u0301\u0301 x', '123456 7 89', '\r\n\t\u3000 x', 'a\u{1C89}\u{1C8A}b'];
const ALPHABET = ['a', 'b', 'x', 'A', 'B', '-', ' ', '  ', '\n', '\r\n', '\t', "'", "'s", 'S',
  '1', '23', '日', '本', 'ア', '\u0301', 'é', 'ß', '\u3000', '\u00A0', '/', '.', '!', '😀',
  '\u{11F04}', '\u{10D4A}', '\u{1E4D0}', '\u{31350}', '\u{2EBF0}', '\u{1C89}', '\u{16D40}',
  '\u{11F50}', '\u{10D40}'];

function version(name) {
  return JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function preTokenizer(splits) {
  const tok = Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: splits.map(([re, behavior, invert]) => ({
        type: 'Split', pattern: { Regex: re }, behavior, invert,
      })),
    },
    post_processor: null, decoder: null,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: {}, merges: [],
    },
  }));
  return tok.getPreTokenizer();
}

function main() {
  const cases = [];
  for (const re of PATTERNS)
    for (const behavior of BEHAVIORS)
      for (const invert of [false, true]) cases.push([[re, behavior, invert]]);
  cases.push(...SEQUENCES);
  const r = rng(SEED);
  const texts = [...TEXTS];
  for (let i = 0; i < N_RANDOM; i++) {
    let s = '';
    const len = r.int(1, 16);
    for (let k = 0; k < len; k++) s += r.pick(ALPHABET);
    texts.push(s);
  }
  const lines = [JSON.stringify({
    header: {
      generator: 'tests/gen/pretok_splits.mjs', tokenizers: version('tokenizers'), seed: SEED,
      cases: cases.length, texts: texts.length,
    },
  })];
  cases.forEach((splits, n) => lines.push(JSON.stringify({ case: n, splits })));
  cases.forEach((splits, n) => {
    const pre = preTokenizer(splits);
    for (const text of texts)
      lines.push(JSON.stringify({ case: n, text, pieces: pre.preTokenizeString(text).map(([p]) => p) }));
  });
  const out = path.join(root, 'tests', 'data', 'pretok', 'splits.jsonl');
  writeFileSync(out, lines.join('\n') + '\n');
  execFileSync('zstd', ['-19', '-qf', '--rm', out]);
  console.error(`${out}.zst: ${cases.length} cases x ${texts.length} texts`);
}

main();
