// gen.mjs - records reference token ids for simdbpe's golden tests.
//
// Everything this writes comes from the REAL reference tokenizers, never
// from simdbpe:
//   - HF `tokenizers` (native Rust binding) with the GPT-2 vocab.json +
//     merges.txt of src/model/gpt2/, ByteLevel pre-tokenizer without prefix
//     space (the GPT-2 tokenizer.json semantics);
//   - `tiktoken` (the Rust tiktoken compiled to WASM), get_encoding("gpt2").
// Both are pinned in package.json / package-lock.json. For GPT-2 every
// record is written only if the two agree; otherwise the script stops.
//
// Outputs (in tests/data/golden/ unless a directory is given as argument):
//   random.jsonl      documents never seen before: seeded random mixtures of
//                     code points of every class the GPT-2 regex tells apart
//                     (letters and digits of many scripts, all 25 White_Space
//                     code points, punctuation, symbols, emoji, combining
//                     marks, contractions, U+FEFF, controls, unassigned and
//                     private-use code points, long runs); encode_ordinary.
//   specials.jsonl    texts with "<|endoftext|>", encoded with the special
//                     token allowed (tiktoken encode(text, "all"); HF with
//                     it as an added special token).
//   pretok.jsonl      tricky strings and HF's ByteLevel pre-tokenizer pieces
//                     (as byte lengths).
//   utf8.jsonl        invalid UTF-8 (from utf8_cases.py, i.e. Python):
//                     the strict error offset and the ids of the text
//                     Python's errors="replace" makes of it.
//   small_model/      a RoBERTa-style byte-level model (ids are NOT 256 +
//                     rank, specials first, a gap in the ids, one token its
//                     own merges cannot reach) + small_model.jsonl with HF's
//                     ids for it, without and with the specials allowed.
// Every .jsonl starts with a header line {"header": {...}} naming the
// generator, the reference versions and the seed.
//
// Run:  cd tests/gen && npm ci && node gen.mjs
// Deterministic: the same versions and seed give the same files.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rng } from './rng.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const outDir = process.argv[2] || path.join(root, 'tests', 'data', 'golden');
const SEED = 20241122;
const N_RANDOM = 2600;

const { Tokenizer } = require('tokenizers');
const { get_encoding } = require('tiktoken');

function version(name) {
  return JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8'))
    .version;
}

function header(what, extra = {}) {
  return JSON.stringify({
    header: {
      what,
      generator: 'tests/gen/gen.mjs',
      references: { tokenizers: version('tokenizers'), tiktoken: version('tiktoken') },
      python: extra.python,
      seed: SEED,
      ...extra,
    },
  });
}

// ---- the byte-level alphabet (REFERENCE.md), for tokenizer.json and pieces
function byteLevel() {
  const prints = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
  const toCp = [];
  let n = 0;
  for (let b = 0; b < 256; b++) toCp[b] = prints(b) ? b : 0x100 + n++;
  return toCp.map((cp) => String.fromCodePoint(cp));
}
const BYTE_CHARS = byteLevel();
const bytesToBL = (buf) => Array.from(buf, (b) => BYTE_CHARS[b]).join('');

// ---- tokenizers
function hfTokenizer(vocab, merges, addedTokens) {
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens.map(([content, id]) => ({
      id, content, single_word: false, lstrip: false, rstrip: false, normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges,
    },
  };
  return Tokenizer.fromString(JSON.stringify(json));
}

async function hfIds(tok, texts) {
  const out = [];
  for (let i = 0; i < texts.length; i += 256) {
    const encs = await tok.encodeBatch(texts.slice(i, i + 256), { addSpecialTokens: false });
    for (const e of encs) out.push(e.getIds());
  }
  return out;
}

const gpt2Dir = path.join(root, 'src', 'model', 'gpt2');
const gpt2Vocab = JSON.parse(readFileSync(path.join(gpt2Dir, 'vocab.json'), 'utf8'));
const gpt2Merges = readFileSync(path.join(gpt2Dir, 'merges.txt'), 'utf8')
  .split('\n')
  .filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith('#version')));
const gpt2Plain = gpt2Vocab; // <|endoftext|> is in vocab.json but not an added token here
const hfOrdinary = hfTokenizer(gpt2Plain, gpt2Merges, []);
const hfSpecial = hfTokenizer(gpt2Plain, gpt2Merges, [['<|endoftext|>', 50256]]);
const tk = get_encoding('gpt2');

function sameIds(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// Encodes with both references; throws if they disagree.
async function gpt2Ids(texts, allowSpecial) {
  const hf = await hfIds(allowSpecial ? hfSpecial : hfOrdinary, texts);
  return texts.map((t, i) => {
    const tt = Array.from(allowSpecial ? tk.encode(t, 'all') : tk.encode_ordinary(t));
    if (!sameIds(tt, hf[i])) {
      throw new Error(`references disagree on ${JSON.stringify(t)}:\n HF ${hf[i]}\n tiktoken ${tt}`);
    }
    return tt;
  });
}

// ---- code point pools
const range = (lo, hi) => {
  const r = [];
  for (let c = lo; c <= hi; c++) r.push(c);
  return r;
};
const cps = (s) => Array.from(s, (ch) => ch.codePointAt(0));

const LETTERS = [
  ...range(0x61, 0x7a), ...range(0x41, 0x5a), ...cps('éèêëçñøåæßœÿÀÉÖÜİıŁłĳǅ'),
  ...range(0x3b1, 0x3c9), ...range(0x410, 0x44f), ...range(0x531, 0x556), ...range(0x5d0, 0x5ea),
  ...range(0x627, 0x64a), ...range(0x915, 0x939), ...range(0x995, 0x9b9), ...range(0xe01, 0xe2e),
  ...range(0x10d0, 0x10fa), ...range(0x1200, 0x1248), ...range(0x13a0, 0x13f4),
  ...range(0x1820, 0x1842), ...range(0xf40, 0xf47), ...range(0x3041, 0x3096),
  ...range(0x30a1, 0x30fa), ...range(0x4e00, 0x4e80), ...range(0xac00, 0xac40),
  ...cps('ʰʲˤªºᴀᵃⁱₐ々〆ꜰ'), 0x10400, 0x10401, 0x1d400, 0x1d41a, 0x20000, 0x2a6d6, 0x1e900,
];
const DIGITS = [
  ...range(0x30, 0x39), ...range(0x660, 0x669), ...range(0x6f0, 0x6f9), ...range(0x966, 0x96f),
  ...range(0x9e6, 0x9ef), ...range(0xe50, 0xe59), ...range(0xff10, 0xff19),
  ...range(0x2160, 0x2169), ...cps('²³¹¼½¾①⑩⓪❶〇〡'), ...range(0x1d7ce, 0x1d7d7), 0x10107,
  0x10108, 0x1f100, 0x1f101, 0xf2a, 0x2070, 0x2080, 0x16ee,
];
const WHITE = [
  0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680, ...range(0x2000, 0x200a), 0x2028, 0x2029,
  0x202f, 0x205f, 0x3000,
];
const PUNCT = [
  ...cps('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'), ...cps('«»¿¡—–…“”‘’•€£¥©®°±×÷§¶、。「」！？‐‘'),
  ...cps('∑∞≠≤→⇒♠♥☃✓'), 0x2e80, 0x1f0a1, 0x1d11e,
];
const EMOJI = [
  '😀', '🎉', '👍', '❤️', '🤷🏽‍♀️', '👨‍👩‍👧', '🇫🇷', '🇯🇵', '1️⃣', '🏳️‍🌈', '🧑🏿', '✨', '🔥',
];
const MARKS = [0x300, 0x301, 0x308, 0x327, 0x64b, 0x650, 0x93f, 0x94d, 0x20dd, 0xe31, 0x302a, 0xfe0f];
const FORMAT = [
  0xfeff, 0x200b, 0x200c, 0x200d, 0x180e, 0xad, 0x2060, 0x0, 0x1, 0x1b, 0x7f, 0x8d, 0xfffe,
  0xffff, 0xe000, 0xf0000, 0x10ffff, 0x378, 0xfffd, 0x1f, 0xd7ff, 0xe0001,
];
const CONTRACTIONS = [
  "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'",
  "''", "'x", "’s", "n't", "'l", "'r", "'v",
];
const WORDS = [
  'the', 'and', 'of', 'hello', 'world', 'Hello', 'don', 'ABC', 'naïve', 'café', 'über', 'Москва',
  '東京', 'العربية', 'हिन्दी', 'ελληνικά', 'שלום', 'abc123', 'x_y', 'http', '://', '<|endoftext|>',
  '<|endoftext', 'endoftext|>', '<|', '|>', 'func()', '{}', '0x1F', '3.14', '1,000', '2024',
];

function randomScalar(r) {
  for (;;) {
    const c = r.next() < 0.5 ? r.int(0, 0x2fff) : r.int(0, 0x10ffff);
    if (c < 0xd800 || c > 0xdfff) return c;
  }
}

// One item: a string of a few code points from one pool.
function item(r) {
  const x = r.next();
  const fromPool = (pool, lo, hi) => {
    let s = '';
    const n = r.int(lo, hi);
    for (let i = 0; i < n; i++) s += String.fromCodePoint(r.pick(pool));
    return s;
  };
  if (x < 0.22) return (r.next() < 0.5 ? ' ' : '') + fromPool(LETTERS, 1, 8);
  if (x < 0.30) return (r.next() < 0.4 ? ' ' : '') + fromPool(DIGITS, 1, 6);
  if (x < 0.42) return fromPool(WHITE, 1, 4);
  if (x < 0.48) return ' ';
  if (x < 0.56) return (r.next() < 0.4 ? ' ' : '') + fromPool(PUNCT, 1, 4);
  if (x < 0.61) return r.pick(EMOJI);
  if (x < 0.66) return fromPool(MARKS, 1, 2);
  if (x < 0.72) return r.pick(CONTRACTIONS);
  if (x < 0.77) return String.fromCodePoint(r.pick(FORMAT));
  if (x < 0.87) return (r.next() < 0.6 ? ' ' : '') + r.pick(WORDS);
  if (x < 0.95) return String.fromCodePoint(randomScalar(r));
  // a long run of one code point, or of one short unit
  const unit = r.pick([
    ' ', '\n', '\t', 'a', 'z', '0', '9', '٣', '!', '-', '=', '中', '😀', '\u3000', '\u00a0',
    'ab', ' a', '\n ', ' \n', "'s", '1 ', 'é', '\u0301', '\ufeff',
  ]);
  return unit.repeat(r.int(8, 90));
}

function randomDocument(r) {
  const mode = r.next();
  let s = '';
  if (mode < 0.08) {
    // fully random scalar values
    const n = r.int(1, 40);
    for (let i = 0; i < n; i++) s += String.fromCodePoint(randomScalar(r));
  } else if (mode < 0.12) {
    // a single item, so short documents are common
    s = item(r);
  } else {
    const n = r.int(1, 14);
    for (let i = 0; i < n; i++) s += item(r);
  }
  if (r.next() < 0.03) s = '\ufeff' + s;
  return s;
}

// ---- the hand-made pre-tokenizer strings (pieces recorded from HF)
const PRETOK_TEXTS = [
  'a', ' ', '  ', 'a b', 'a  b', 'a   b', 'a \tb', 'a\t b', 'a\n\nb', 'a \n b', ' a', '  a',
  'a ', 'a  ', 'a \n', '\n', '\n\n', ' \n ', "don't", "I'LL", "we've", "'s", "'", "''s", "'sa",
  "a's", " 's", "  's", "'re'", "'ll've", 'x 1', 'x  12', '12ab', 'ab12', '1,000.5', ' !!', '  !!',
  '!! ', 'a\u00a0b', 'a \u00a0b', 'a\u00a0 b', 'a\u3000\u3000b', '\u2028x', 'x\u2029',
  'e\u0301', ' e\u0301', '\u0301', ' \u0301', '\ufeffa', 'a\ufeff b', '\u200bx', 'x\u180e y',
  '😀', ' 😀', 'a😀b', '١٢٣', ' ١٢٣', 'Ⅻ', '½x', '²2', 'x²', 'ß', 'İ', 'ǅa', '中文 字', 'ก ข',
  'हिन्दी', '<|endoftext|>', 'a<|endoftext|>b', '\r\n', 'a\r\nb', ' \r\n ', '\u0085x', 'x\u0085',
  '\u000b\u000c', 'a\u0000b', '\t\t', 'x\t\t', '\t\tx', ' \t x', 'end  ', 'end \n\n  ',
  // U+FEFF, U+200B and U+180E are not whitespace; these split differently
  // if they were.
  'x \ufeffy', '\ufeff\ufeffa', 'a \ufeff\ufeff b', 'x \u200by', '\u200b\u200ba',
  'x \u180ey', '\u180e\u180ea', 'x \u00a0y', '\u2028\u2029a', 'x \u3000y',
];

function pieceLengths(text) {
  // HF returns each piece in the byte-level alphabet: one char per byte.
  const pre = hfOrdinary.getPreTokenizer();
  return pre.preTokenizeString(text).map(([piece]) => piece.length);
}

// ---- the RoBERTa-style small model
function smallModel() {
  const r = rng(SEED + 1);
  // Tokens: the 256 bytes, the first 400 GPT-2 merges (closed: each uses
  // only bytes and earlier merges), and three more merges that make "xyz"
  // a token BPE never produces from its own bytes ("x y" outranks "y z").
  const merges = gpt2Merges.slice(0, 400).concat(['x y', 'y z', 'x yz']);
  const tokens = BYTE_CHARS.slice();
  for (const m of merges) {
    const t = m.replace(' ', '');
    if (!tokens.includes(t)) tokens.push(t);
  }
  // Ids: specials first (as RoBERTa does), then the tokens in a shuffled
  // order, with one unused id left as a gap.
  for (let i = tokens.length - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [tokens[i], tokens[j]] = [tokens[j], tokens[i]];
  }
  const specials = ['<s>', '<pad>', '</s>', '<unk>'];
  const vocab = {};
  specials.forEach((s, i) => (vocab[s] = i));
  let id = specials.length;
  tokens.forEach((t, i) => {
    if (i === 100) id++; // the gap
    vocab[t] = id++;
  });
  vocab['<mask>'] = id++;
  return { vocab, merges, specials: [...specials, '<mask>'] };
}

async function main() {
  mkdirSync(outDir, { recursive: true });
  const r = rng(SEED);

  // random.jsonl
  const docs = [];
  const seen = new Set();
  while (docs.length < N_RANDOM) {
    const d = randomDocument(r);
    if (!seen.has(d)) {
      seen.add(d);
      docs.push(d);
    }
  }
  const ids = await gpt2Ids(docs, false);
  const lines = [header('random documents never seen before, GPT-2 encode_ordinary ids')];
  docs.forEach((text, i) => lines.push(JSON.stringify({ doc: i, text, ids: ids[i] })));
  writeFileSync(path.join(outDir, 'random.jsonl'), lines.join('\n') + '\n');

  // specials.jsonl
  const sp = ['<|endoftext|>', 'a<|endoftext|>b', ' <|endoftext|> ', '<|endoftext|><|endoftext|>',
    'x <|endoftext|>\n\nnext doc', '<|endoftext|', '<|endoftext|>>', '<<|endoftext|>',
    '<|endoftext|>' + 'a'.repeat(3), 'héllo<|endoftext|>wörld', '\ufeff<|endoftext|>'];
  for (let i = 0; i < 200; i++) {
    const parts = [];
    const n = r.int(1, 5);
    for (let k = 0; k < n; k++) parts.push(Array.from(randomDocument(r)).slice(0, 40).join(""));
    sp.push(parts.join(r.pick(['<|endoftext|>', ' <|endoftext|>', '<|endoftext|>\n'])));
  }
  const spIds = await gpt2Ids(sp, true);
  const spOrd = await gpt2Ids(sp, false);
  writeFileSync(path.join(outDir, 'specials.jsonl'),
    [header('texts with <|endoftext|>: ids with the special allowed, and as ordinary text')]
      .concat(sp.map((text, i) => JSON.stringify({ text, ids_allow: spIds[i], ids_text: spOrd[i] })))
      .join('\n') + '\n');

  // pretok.jsonl
  writeFileSync(path.join(outDir, 'pretok.jsonl'),
    [header('GPT-2 pre-tokenizer pieces (byte lengths) from HF ByteLevel (use_regex)')]
      .concat(PRETOK_TEXTS.map((text) => JSON.stringify({ text, pieces: pieceLengths(text) })))
      .join('\n') + '\n');

  // utf8.jsonl
  const py = execFileSync('python3', [path.join(here, 'utf8_cases.py')], { encoding: 'utf8',
    maxBuffer: 1 << 28 });
  const pyVersion = execFileSync('python3', ['-c', 'import sys; print(sys.version.split()[0])'],
    { encoding: 'utf8' }).trim();
  const cases = py.trim().split('\n').map((l) => JSON.parse(l));
  const repIds = await gpt2Ids(cases.map((c) => c.replaced), false);
  writeFileSync(path.join(outDir, 'utf8.jsonl'),
    [header('invalid UTF-8: Python strict error offset; ids of Python errors="replace" text',
      { python: pyVersion, cases: 'tests/gen/utf8_cases.py' })]
      .concat(cases.map((c, i) => JSON.stringify({ hex: c.hex, strict_offset: c.strict_offset,
        ids: repIds[i] })))
      .join('\n') + '\n');

  // small_model/ + small_model.jsonl (HF only: tiktoken cannot hold ids
  // that differ from ranks)
  const sm = smallModel();
  const smDir = path.join(outDir, 'small_model');
  mkdirSync(smDir, { recursive: true });
  writeFileSync(path.join(smDir, 'vocab.json'), JSON.stringify(sm.vocab));
  writeFileSync(path.join(smDir, 'merges.txt'), '#version: 0.2\n' + sm.merges.join('\n') + '\n');
  writeFileSync(path.join(smDir, 'special_tokens'), sm.specials.join('\n') + '\n');
  const smPlain = hfTokenizer(sm.vocab, sm.merges, []);
  const smSpecial = hfTokenizer(sm.vocab, sm.merges, sm.specials.map((s) => [s, sm.vocab[s]]));
  const smTexts = ['xyz', ' xyz', 'xy', 'yz', 'xyzxyz', 'the', ' the', 'The quick brown fox',
    '<s>hello</s>', 'a<pad>b<unk><mask>', '<s', 's>', "don't stop", 'in the end',
    ...docs.slice(0, 200)];
  for (let i = 0; i < 40; i++) {
    smTexts.push([Array.from(randomDocument(r)).slice(0, 30).join(""), r.pick(sm.specials), 'xyz ',
      Array.from(randomDocument(r)).slice(0, 30).join("")].join(''));
  }
  const smIds = await hfIds(smPlain, smTexts);
  const smIdsAllow = await hfIds(smSpecial, smTexts);
  writeFileSync(path.join(outDir, 'small_model.jsonl'),
    [header('RoBERTa-style model in small_model/: HF ids (ids_text: specials as text; ' +
      'ids_allow: specials matched)', { references: { tokenizers: version('tokenizers') } })]
      .concat(smTexts.map((text, i) => JSON.stringify({ text, ids_text: smIds[i],
        ids_allow: smIdsAllow[i] })))
      .join('\n') + '\n');
  tk.free();
}

await main();
