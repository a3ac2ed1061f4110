// pretok_families.mjs - records the pre-tokens HF tokenizers makes with the
// pre-tokenizers of the byte-level BPE families simdbpe scans itself
// (src/pretok/families.c), as the oracle of tests/pretok/test_pretok_hf.c.
//
// Every piece written comes from HF tokenizers (the native binding, pinned in
// package.json / package-lock.json), never from simdbpe. For each family the
// `pre_tokenizer` object is taken unchanged from a real tokenizer.json in
// ../shared/models/ (the regex text is checked against the one simdbpe
// implements) and put into a tokenizer of its own with no normalizer;
// `preTokenizeString` then gives the pieces, in the byte-level alphabet (one
// char per byte, so a piece's length is its length in bytes):
//
//   family       tokenizer.json          pre_tokenizer
//   cl100k       llama3                  Split(R-CL100K, Isolated) + ByteLevel
//   qwen2        qwen3                   Split(R-QWEN, Isolated) + ByteLevel
//   o200k        gpt4o                   Split(R-O200K, Removed, invert) + ByteLevel
//   deepseek_v3  deepseek_v3             three Split(Isolated) + ByteLevel
//   tekken       synthetic/nemotron      Split(R-TEKKEN, Isolated) + ByteLevel
//   kimi         synthetic/kimi          Split(R-KIMI, Isolated) + ByteLevel
//
// (the synthetic files are llama3's tokenizer.json with Mistral's Tekken
// regex, which NVIDIA's Nemotron 3 uses too, or Kimi K2's as its Split; the
// pieces depend on the pre_tokenizer alone.)
//
// Texts: hand-picked edge cases, seeded random strings over representative
// code points of every class the six regexes tell apart, every text of
// ../shared/golden/edge.jsonl, and seeded texts of 100-2,500 bytes in many
// scripts (the block scanners' 64-byte blocks and their edges). Output: tests/data/pretok/families.jsonl.zst,
// a header line {"header": {...}} (generator, reference version, seed, the
// regexes, the sha256 of each tokenizer.json.zst and of edge.jsonl), then one
// line per text: {"text": T, "cl100k": [...], "qwen2": [...], "o200k": [...],
// "deepseek_v3": [...], "tekken": [...], "kimi": [...]} with each family's
// piece lengths in bytes.
//
// Run:  cd tests/gen && npm ci && node pretok_families.mjs [shared-dir]
//       node pretok_families.mjs --show 'some text'   (prints the pieces)
// Deterministic: the same package versions, inputs and seed give the same file.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rng } from './rng.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const { Tokenizer } = require('tokenizers');

const SEED = 20261127;
const N_RANDOM = 16000;
const args = process.argv.slice(2);
const show = args[0] === '--show' ? args.slice(1) : null;
const shared = (!show && args[0]) || process.env.SIMDBPE_SHARED_DIR || path.join(root, '..', 'shared');

// The regexes simdbpe implements (shared/models/README.md); the JSON must hold exactly these.
const R_CL100K = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const R_QWEN = R_CL100K.replace('\\p{N}{1,3}', '\\p{N}');
const R_O200K = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const R_DEEPSEEK = [
  '\\p{N}{1,3}',
  '[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+',
  "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];
// o200k's without the contraction suffix and with \p{N} for \p{N}{1,3}.
const R_TEKKEN = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// o200k's with a Han run first, Han taken out of the letter classes, no / in the tail.
const R_KIMI = "[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const FAMILIES = [
  { name: 'cl100k', model: 'llama3', splits: [[R_CL100K, 'Isolated', false]] },
  { name: 'qwen2', model: 'qwen3', splits: [[R_QWEN, 'Isolated', false]] },
  { name: 'o200k', model: 'gpt4o', splits: [[R_O200K, 'Removed', true]] },
  { name: 'deepseek_v3', model: 'deepseek_v3', splits: R_DEEPSEEK.map((r) => [r, 'Isolated', false]) },
  { name: 'tekken', model: 'synthetic/nemotron', file: 'synthetic/nemotron.tokenizer.json.zst',
    splits: [[R_TEKKEN, 'Isolated', false]] },
  { name: 'kimi', model: 'synthetic/kimi', file: 'synthetic/kimi.tokenizer.json.zst',
    splits: [[R_KIMI, 'Isolated', false]] },
];

function version(name) {
  return JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8'))
    .version;
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

// The family's pre_tokenizer, unchanged from its tokenizer.json, in a tokenizer of its own.
function loadFamily(f) {
  const file = path.join(shared, 'models', f.file || path.join(f.model, 'tokenizer.json.zst'));
  const zst = readFileSync(file);
  const json = JSON.parse(execFileSync('zstd', ['-dc', file], { maxBuffer: 1 << 30 }).toString());
  const pre = json.pre_tokenizer;
  const splits = pre.pretokenizers.filter((p) => p.type === 'Split');
  const rest = pre.pretokenizers.filter((p) => p.type !== 'Split');
  const got = splits.map((s) => [s.pattern.Regex, s.behavior, s.invert]);
  if (pre.type !== 'Sequence' || JSON.stringify(got) !== JSON.stringify(f.splits) ||
      rest.length !== 1 || rest[0].type !== 'ByteLevel' || rest[0].use_regex !== false ||
      rest[0].add_prefix_space !== false)
    throw new Error(`${f.model}: pre_tokenizer is not the expected ${f.name} one: ${JSON.stringify(pre)}`);
  const tok = Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: pre, post_processor: null, decoder: null,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: {}, merges: [],
    },
  }));
  return { ...f, pre: tok.getPreTokenizer(), sha256: sha256(zst) };
}

// Piece lengths in bytes (HF returns each piece in the byte-level alphabet:
// one char per byte). They must cover the text exactly.
function pieces(fam, text) {
  const lens = fam.pre.preTokenizeString(text).map(([piece]) => piece.length);
  const total = lens.reduce((a, b) => a + b, 0);
  if (total !== Buffer.byteLength(text, 'utf8') || lens.some((l) => l === 0))
    throw new Error(`${fam.name}: pieces do not cover ${JSON.stringify(text)}: ${lens}`);
  return lens;
}

// ---- representative code points of every class the regexes tell apart
const cps = (...list) => list.map((c) => (typeof c === 'number' ? String.fromCodePoint(c) : c));
const CLASSES = {
  // letters: Lu, Ll, Lt, Lm, Lo (o200k's two letter classes overlap on Lm Lo)
  lower: cps('a', 'e', 'z', 'l', 'r', 'v', 'é', 'ß', 'σ', 'ς', 'д', 0x10428, 0x1d41a, 'ſ'),
  upper: cps('A', 'S', 'T', 'Z', 'É', 'Σ', 'Д', 0x10400, 0x1d400, 0x212a, 0x130),
  title: cps(0x1c5, 0x1c8, 0x1f88),
  modifier: cps(0x2b0, 0x2c6, 0x3005, 0x30fc, 0xff70, 0x309d),
  other_letter: cps('ª', 'א', 'ا', 'ก', '中', '日', 'あ', 'カ', '한', 0x9fa6, 0x3400, 0x20000, 0x4e00, 0x9fa5),
  mark: cps(0x301, 0x308, 0x903, 0x20dd, 0x3099, 0xe31, 0x94d, 0xfe0f),
  // numbers: Nd Nl No, 1-4 bytes
  digit: cps('0', '1', '7', '9', 0x663, 0x966, 0xff11, 0x1d7d9),
  number_other: cps(0xb2, 0xbd, 0x2160, 0x3007, 0x2460, 0x10107),
  // White_Space (all 25) and look-alikes that are not
  space: cps(' ', ' ', ' ', '\t', '\n', '\r', '\u000b', '\u000c'),
  space_other: cps(0x85, 0xa0, 0x1680, 0x2000, 0x2005, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000),
  not_space: cps(0x200b, 0x200d, 0x200c, 0xfeff, 0x2060, 0x180e, 0xad, 0x1c, 0x1f),
  // punctuation and symbols, ASCII and not (DeepSeek tells P/S apart from the rest)
  ascii_punct: cps(...`!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`),
  punct: cps(0x3001, 0x3002, 0x30fb, 0x30a0, 0xff01, 0x2014, 0x2019, 0x201c, 0xb7, 0xa1, 0xbf, 0xab),
  symbol: cps(0x309b, 0x20ac, 0x2192, 0x1f600, 0x1f44d, 0x2764, 0xa9, 0xb0, 0xd7, 0x2122, 0x1f1fa),
  // neither letter, number, whitespace, mark, punctuation nor symbol
  control: cps('\u0000', '\u0001', '\u001b', '\u007f', 0x80, 0x9f),
  unassigned: cps(0x378, 0x3040, 0x3097, 0xe000, 0xffff, 0x10ffff, 0xe0001, 0xfdd0),
};
const CLASS_NAMES = Object.keys(CLASSES);
const SNIPPETS = [
  "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'Ve", "'m", "'M", "'ll", "'LL", "'lL", "'d",
  "'D", "'ſ", "'", "''", "n't", "N'T", '\r\n', '\n\n', ' \r\n', '\r\n ', '\t\n', ' / ', '//', '/\n',
  '\n/', '.\n/', '\u200d', '\ufeff', 'e\u0301', 'http://x.y/z', '...', ' - ', '1234567', '3.14',
  '日本語', 'カタカナ', 'ひらがな', '한국어', 'Ελλάδα', 'русский', 'العربية', 'हिन्दी', '🇺🇸', '👍🏽',
  '👨\u200d👩\u200d👧', 'ǅemal', 'CamelCase', 'HTTPServer', 'iPhone', 'x86_64', '$HOME', '#include',
];

function randomString(r) {
  const parts = [];
  const segments = r.int(1, 8);
  for (let k = 0; k < segments; k++) {
    if (r.next() < 0.25) {
      parts.push(r.pick(SNIPPETS));
      continue;
    }
    const cls = CLASSES[r.pick(CLASS_NAMES)];
    const run = r.next() < 0.5 ? 1 : r.int(2, 7);
    const mixed = r.next() < 0.3; // a run of one class, or of one code point
    const first = r.pick(cls);
    for (let j = 0; j < run; j++) parts.push(mixed ? r.pick(cls) : first);
  }
  return parts.join('');
}

// ---- texts of many 64-byte blocks, for the block scanners: words of other
// scripts (letters of each case class, marks, CJK and kana, numbers of
// several bytes, emoji with variation selectors), random strings and
// snippets, with spaces, line breaks and other whitespace between.
const N_LONG = 2000;
const WORDS = [
  'привет', 'Привет', 'ПРИВЕТ', 'мир', 'Ωμέγα', 'ΑΒΓ', 'ΣΊΣΥΦΟΣ', 'Straße', 'İstanbul', 'नमस्ते',
  'हिन्दी', 'कि', 'العربية', 'مرحبا', '١٢٣', '٤', '中文', '日本語の', '漢字', 'カタカナ', 'ひらがな',
  'ー', '・', '゠', 'か\u3099', '한국어', 'ǅungla', 'Aʰb', 'ʰA', 'e\u0301', '\u0301', '❤\ufe0f',
  '👍🏽', '1\ufe0f\u20e3', '😀', 'A中', '中A', 'a中B', 'AB中c', "é's", "É'S", "中'll", "x'ſ",
  '!\u0301', '!!\u0301', ' !\u0301a', '\n//\u0301', '!\n//\u0301', '—', '“x”', '«x»', '½',
  '²', 'Ⅻ', '𝟏𝟐', '𝐀𝐚', '𠀀', '\u200b', '\u00ad', '\ufeff', '\u2028', 'the', 'The', 'THE',
  'word', "don't", "DON'T", '2024', '12345', '3.14', 'x->y', '// c', '\t', '\r\n',
];
const SEPARATORS = [' ', ' ', ' ', '', '\n', ', ', '. ', '  ', '\t', '\u00a0', '\u3000', '、',
  '。', '\n\n', ' \n'];

function longString(r) {
  const target = r.int(100, 2500);
  const parts = [];
  let len = 0;
  while (len < target) {
    const p = r.next() < 0.3 ? randomString(r) : r.pick(WORDS);
    const sep = r.pick(SEPARATORS);
    parts.push(p, sep);
    len += Buffer.byteLength(p + sep, 'utf8');
  }
  return parts.join('');
}

// ---- hand-picked edge cases
const digits = (k) => '1234567'.slice(0, k);
const EDGE = [
  '', 'a', ' ', '  ', '   ', '\n', '\r', '\r\n', '\n\r', ' \n', '\n ', '  \n', '\n  ', ' \n ',
  'a b', 'a  b', 'a   b', 'a \tb', 'a\t b', 'a\tb', '\ta', '\t\ta', ' \ta', '\t a', 'a\n\nb',
  'a \n b', 'a\n \nb', 'a \n\n b', 'a \r\n b', 'a\r\n\r\nb', 'a \r \n b', 'a\r \nb', 'a\n \r\n  b',
  ' \n \n x', '\n\t\n\tx', 'x\n\n', 'x \n\n ', 'x  ', 'x \t', 'x\t\t', 'end  ', 'end\n', 'end \n',
  'end\r\n', 'end \r\n  ', 'a\u00a0b', 'a \u00a0b', 'a\u00a0 b', 'a\u3000\u3000b', '\u2028x',
  'x\u2029', '\u0085x', 'x\u0085', 'x\u0085\u0085y', '\u000b\u000c', 'x \u000b\u000cy',
  'x \u3000y', '\u2028\u2029a', ' \u2028a', '\u2028 a',
  // contractions in every case, the folds of s, and near misses
  "don't", "DON'T", "Don'T", "I'm", "I'M", "we've", "WE'VE", "We'Ve", "you're", "YOU'RE", "you'Re",
  "she'll", "SHE'LL", "she'lL", "he'd", "HE'D", "it's", "IT'S", "It'S", "its'", "'s", "'S", "'ſ",
  "x'ſ", "X'ſ", "x'ſs", "'st", "'sa", "'Sa", "'ſa", "''s", "'''", " 's", "  's", "\t's", "'re'",
  "'ll've", "'lL", "'Ll", "'LLama", "'rE", "'vE", "'M", "'D", "'T", "'x", "'ſ'", "é's", "É'S",
  "中's", "1's", "!'s", "x 's", "x\n's", "'\u0301s", "x'\u212a", "x'K", "x'ß", "x'ẞ", "x’s",
  "ǅ's", "ʰ's", "a\u0301's", "A\u0301'S",
  // letters and prefixes
  ' a', '  a', '\ta', '!a', '!!a', '.a', ' !a', "'a", '\u0301a', ' \u0301a', '\u0301', ' \u0301',
  '\u200da', '\ufeffa', '\u0000a', '1a', 'a1', '_a', '\n a', '\u00a0a', '\u2028a',
  // o200k's letter classes: upper/title/modifier/other/mark runs before lower
  'Hello', 'HELLO', 'HELLOworld', 'helloWORLD', 'hELLO', 'HTTPServer', 'ǅemal', 'ǅǅ', 'Aǅb',
  'ABCʰ', 'ABCʰdef', 'ABʰC', 'ABʰCd', 'ʰʰ', 'Aʰ1', 'A\u0301', 'A\u0301b', 'A\u0301B', 'a\u0301B',
  'AB\u0301', 'AB\u0301\u0301C', 'AB中', 'AB中c', 'AB中C', '中AB', '中ab', 'aBC', 'aBc', 'ΣΑς',
  '\u0301\u0301', ' ABC', ' ABCdef', '!ABC', '!ABCʰ', '!A', " ABC'S", "ABC'sdef", "abc'S", "ʰ's",
  '\u0301!', '!\u0301', ' \u0301\u0301', '\u0301 ', '\u0301\n',
  // numbers: runs of 1..7, of every kind, after letters, spaces, signs
  ...[1, 2, 3, 4, 5, 6, 7].map(digits),
  ...[1, 2, 3, 4, 5, 6, 7].map((k) => ' ' + digits(k)),
  ...[1, 2, 3, 4, 5, 6, 7].map((k) => 'x' + digits(k) + 'y'),
  '١٢٣٤', ' ١٢٣٤', 'Ⅻ', 'ⅫⅫⅫⅫ', '½x', '²2', 'x²', '1,000.5', '3.14159', '-42', '+1 (555)',
  '１２３４', '𝟙𝟚𝟛𝟜', '12a34', '12中34', '1\u0301', '12\u0301', '1 2', '1  2',
  // punctuation, symbols, newlines and / after them
  '!', '!!', ' !!', '  !!', '!! ', '!\n', '!\n\n', '!\r\n', '! \n', '!\n/', '!/', '!//\n/',
  '/', '//', '/\n', ' /', ' //', 'a/b', 'a//b', '.\n/x', ')\n/\n/', '?\r/\n', 'x.\n/', '.\n /',
  '...', '—', ' —', '“quote”', '«x»', '¿Qué?', '😀', ' 😀', 'a😀b', '😀😀', '👍🏽', '🇺🇸', ' 🇺🇸',
  '👨\u200d👩\u200d👧', '€5', '$5', '5$', '→x', '©2024', '#include <stdio.h>', 'x->y', 'a==b',
  // CJK, kana and other scripts; DeepSeek's ranges and their edges
  '中文 字', '中文字', '日本語のテキスト', 'カタカナ', 'ひらがな', 'カ・カ', 'か\u3099', '゛か',
  '゠カ', 'ー', 'ーカ', 'カー', '\u3040', '\u3040あ', 'あ\u3040', '\u3097\u3098', '\u4dff\u4e00',
  '\u9fa5\u9fa6', '\u309f\u30a0', '\u303f\u3040', '\u30ff\u3100', '中a', 'a中', '中1', '1中',
  '中 a', '中。a', '。中', '中\n中', '中  中', '中\u0301', 'x中\u0301', '한국어', 'ก ข', 'กข',
  'हिन्दी', 'Ελλάδα', 'русский', 'العربية', 'עברית', 'ﾊﾝｶｸ', '𠀀𠀁', 'ㄱㄴ',
  // Kimi K2's Han runs: Han of every category (Lo, Lm 々, Nl 〇 〡, So ⺀, Mc U+16FF0, 4-byte)
  // next to letters, numbers, punctuation, marks and contractions
  '々々', '〇〇123', '1〇23', '123〇', '〡2', '中〇1', 'a〇', '⺀', '⺀中', '!⺀', '!⺀中', ' ⺀',
  '中\u{16ff0}', '\u{16ff0}a', 'a\u{16ff0}', '\u{20000}a', 'A\u{20000}b', 'AB中c', 'ab中CD',
  "中's", "ab中's", '中\u0301', 'ʰ中', 'Aʰ中', '中 中', '中\n中', '中/\n', '!/\n中', '・中', '中・',
  '々A', 'A々', '中文English中文', 'Ｈ中', '中ー', 'ー中', '\u3006中', '\u3006\u3007',
  // controls, ZWJ, BOM, unassigned and private use (DeepSeek's gaps)
  '\u0000', '\u0000\u0000', '\u0000a', 'a\u0000', '\u0000\u0001a', '\u0001\u0000', ' \u0000',
  '\u0000 ', '\u001b[0m', '\u007f', '\u200d', '\u200d\u200d', 'a\u200db', '\u200dA', '\ufeff',
  '\ufeff\ufeff', '\ufeffa', '\ufeff a', 'a\ufeff', '\ufeff1', '1\ufeff', '\ufeff中', '中\ufeff',
  '\u0378', '\u0378a', '\ue000', '\ue000\ue000x', '\uffff', '\u{10ffff}', '\u{e0001}x',
  '\u200b\u200ba', 'x \u200by', 'x \ufeffy', '\u180e\u180ea', '\u00ad', 'a\u00adb', '\u0000!',
  '\u0000\n', '\u0000 a', '\u0085\u0000', '\u0000\u0301', '\u0001\u0301a', '\t\u0000', '\u0080',
  // whitespace before every kind of piece, and at the end
  ...[' ', '  ', '\t', ' \t', '\t ', '\n', ' \n', '\n ', '\r\n', '\u00a0', ' \u00a0', '\u3000',
    '\u2028', '\u0085'].flatMap((w) => ['x' + w, 'x' + w + 'y', 'x' + w + 'Y', 'x' + w + '1',
    'x' + w + '!', 'x' + w + "'s", 'x' + w + '中', 'x' + w + '\u0301', 'x' + w + '\u0000',
    'x' + w + '\u200d', 'x' + w + '/', w + 'x', w]),
];

function main() {
  const fams = FAMILIES.map(loadFamily);
  if (show) {
    for (const text of show)
      for (const f of fams) {
        const buf = Buffer.from(text, 'utf8');
        let off = 0;
        const out = pieces(f, text).map((l) => {
          const p = buf.subarray(off, off + l).toString('utf8');
          off += l;
          return p;
        });
        console.log(f.name.padEnd(12), JSON.stringify(out));
      }
    return;
  }
  const edgeFile = path.join(shared, 'golden', 'edge.jsonl');
  const edgeBuf = readFileSync(edgeFile);
  const edgeTexts = edgeBuf.toString('utf8').split('\n').filter((l) => l.length)
    .map((l) => JSON.parse(l).text);
  const r = rng(SEED);
  const randoms = [];
  for (let i = 0; i < N_RANDOM; i++) randoms.push(randomString(r));
  const longs = [];
  for (let i = 0; i < N_LONG; i++) longs.push(longString(r));

  const seen = new Set();
  const texts = [];
  for (const t of EDGE.concat(randoms, edgeTexts, longs)) {
    if (t.length === 0 || seen.has(t)) continue;
    seen.add(t);
    texts.push(t);
  }
  const header = {
    header: {
      what: 'pre-tokenizer pieces (byte lengths) of six byte-level BPE families, from HF tokenizers',
      generator: 'tests/gen/pretok_families.mjs',
      references: { tokenizers: version('tokenizers') },
      seed: SEED,
      families: Object.fromEntries(fams.map((f) => [f.name, {
        pre_tokenizer_from: `shared/models/${f.file || f.model + '/tokenizer.json.zst'}`,
        sha256: f.sha256,
        splits: f.splits,
      }])),
      texts: { hand_picked: EDGE.length, random: N_RANDOM,
        edge_jsonl: { count: edgeTexts.length, sha256: sha256(edgeBuf) }, long: N_LONG,
        unique: texts.length },
    },
  };
  const lines = [JSON.stringify(header)];
  for (const text of texts) {
    const rec = { text };
    for (const f of fams) rec[f.name] = pieces(f, text);
    lines.push(JSON.stringify(rec));
  }
  const outDir = path.join(root, 'tests', 'data', 'pretok');
  mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, 'families.jsonl.zst');
  writeFileSync(out, execFileSync('zstd', ['-19', '-q', '-c'], {
    input: lines.join('\n') + '\n', maxBuffer: 1 << 30 }));
  console.log(`${out}: ${texts.length} texts`);
}

main();
