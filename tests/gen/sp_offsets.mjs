// sp_offsets.mjs - what HF tokenizers answers for the offsets of
// SentencePiece-style models: each token's ids, character offsets into the
// original text and word ids, for the C test of simdbpe_encode_offsets
// (tests/encode/test_offsets_sp.c) and Python's Tokenizer.encode
// (tests/python/test_hf_api.py).
//
// Everything the answers hold comes from the REAL reference, never from
// simdbpe: npm `tokenizers` 0.23.2 (HF tokenizers' Rust core, native),
// pinned in package.json / package-lock.json.
//
// Models: tests/data/hf/sp_small.tokenizer.json (sp_small.mjs: Prepend and
// Replace, byte fallback, normalized and raw added tokens) and variants of
// it written here, each kept whole in the output: under NFKC and under
// NFD; with a Metaspace pre-tokenizer instead of the normalizer
// (prepend_scheme "first" with split, "always" without); without byte
// fallback (unk_token, fuse_unk on and off); with ignore_merges and two
// tokens BPE cannot build; under normalizer chains
// (Lowercase, Strip, Replace by string and by regex, Prepend, the forms).
// Also tests/data/api's small byte-level model under two chains. Then,
// when MODELS_DIR has
// them, mistral_v1 and gemma3 (their tokenizer.json.zst, named, not
// copied).
//
// Texts per model (seeded, reproducible): random strings over all of
// Unicode, runs of whitespace, characters the vocabulary lacks (byte
// fallback), the model's added tokens among text.
//
// Output: tests/data/hf/sp_offsets.json.gz (or OUT_DIR/...), gzip'd JSON
//   {"header", "models": [{"name", "file" (MODELS_DIR-relative, shared
//    models) | "tokenizer" (the tokenizer.json text) | "base" (a file of
//    tests/data) and "normalizer" (what replaces its own), "records":
//    [{"text", "ids", "tokens", "offsets", "word_ids", "decode"}] (no
//    post-processor; decode keeps special tokens), "truncated" (sp_small,
//    mistral_v1, gemma3: the first 40 texts with the post-processor under
//    truncation [{"max_length", "stride", "direction", "encodings": [{"ids",
//    "offsets", "word_ids", "special_tokens_mask", "overflowing"}]}]),
//    "added" (the same models: {"tokens", "special_tokens" added at run
//    time, "encodings": [{"text", "ids", "offsets", "word_ids"}] with the
//    post-processor})}]}
//
// Run:  cd tests/gen && npm ci && node sp_offsets.mjs MODELS_DIR [OUT_DIR]
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rng } from './rng.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));
const modelsDir = process.argv[2];
const out = process.argv[3] ?? path.join(here, '..', 'data', 'hf');
const M = '\u2581';

const base = JSON.parse(readFileSync(path.join(here, '..', 'data', 'hf',
  'sp_small.tokenizer.json'), 'utf8'));
const variant = (change) => {
  const j = structuredClone(base);
  change(j);
  return JSON.stringify(j);
};
const spNormalizers = base.normalizer.normalizers;
const small = [
  ['sp_small', JSON.stringify(base)],
  ['sp_small_nfkc', variant((j) => {
    j.normalizer.normalizers = [{ type: 'NFKC' }, ...spNormalizers];
  })],
  ['sp_small_nfd', variant((j) => {
    j.normalizer.normalizers = [{ type: 'NFD' }, ...spNormalizers];
  })],
  ['sp_small_metaspace_first_split', variant((j) => {
    j.normalizer = null;
    j.pre_tokenizer = { type: 'Metaspace', replacement: M, prepend_scheme: 'first', split: true };
  })],
  ['sp_small_metaspace_always', variant((j) => {
    j.normalizer = null;
    j.pre_tokenizer = { type: 'Metaspace', replacement: M, prepend_scheme: 'always',
      split: false };
  })],
  // normalizer chains (HF's alignment of each step)
  ['sp_small_chain_lowercase_strip', variant((j) => {
    j.normalizer.normalizers = [{ type: 'Lowercase' },
      { type: 'Strip', strip_left: true, strip_right: true }, ...spNormalizers];
  })],
  ['sp_small_chain_replace', variant((j) => {
    j.normalizer.normalizers = [{ type: 'NFKC' },
      { type: 'Replace', pattern: { String: 'ab' }, content: 'c' },
      { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
      { type: 'Replace', pattern: { Regex: 'x*' }, content: 'd' },
      { type: 'Replace', pattern: { String: 'e' }, content: 'hello' }, ...spNormalizers];
  })],
  ['sp_small_chain_nfd_strip_accents', variant((j) => {
    j.normalizer.normalizers = [{ type: 'NFD' },
      { type: 'Replace', pattern: { Regex: '\\p{Mn}' }, content: '' },
      { type: 'Prepend', prepend: 'tt' }, { type: 'Lowercase' }];
    j.pre_tokenizer = { type: 'Metaspace', replacement: M, prepend_scheme: 'always',
      split: true };
  })],
  // ignore_merges with two tokens BPE cannot build (as sp_small.mjs's)
  ['sp_small_ignore_merges', variant((j) => {
    j.model.ignore_merges = true;
    let next = Object.keys(j.model.vocab).length;
    j.model.vocab[`${M}wat`] = next++;
    j.model.vocab[`ll${M}o`] = next++;
    for (const a of j.added_tokens)
      if (!(a.content in j.model.vocab)) a.id = next++;
  })],
  ['sp_small_unk_fused', variant((j) => { j.model.byte_fallback = false; })],
  ['sp_small_unk', variant((j) => { j.model.byte_fallback = false; j.model.fuse_unk = false; })],
];

const r = rng(0x5b0ff);
const pieces = [' ', '  ', '   ', '\n', '\r\n', ' \n ', '\t', '\u3000', '\u00a0', 'hello',
  'world', 'the cat', ' the', 'd.', 'e\u0301', '\u00e9', '\u00fc', 'ﬁ', '①', 'Ａｂ', 'ｶﾞ',
  '½', '\u2002', 'ℌ', '\ufdfa', '\u1e9b\u0323', '\u0130', '日本語', '😀😀', '\u{1D518}',
  '\u200d', '\ufeff', '\ufffd', M, M + M, '<0x41>', '<unk>x'];
function texts(added) {
  const list = ['', ' ', '  ', 'hello world', ' hello', 'hello ', '  a  b ', M, M + 'x',
    '\u{1D518}x \u{1D518}', 'a\u0301', '\u00e9t\u00e9', 'ﬁ ½', 'wat', ' wat', 'a wat b',
    'wat wat', 'll o', 'll\u2581o', 'wat\u2581'];
  for (const a of added)
    list.push(a, ` ${a}`, `${a} `, `x${a}y`, ` ${a} ${a}  `, `hello${a}world`);
  for (let i = 0; i < 320; i++) {
    let s = '';
    const len = 1 + r.int(0, 24);
    for (let k = 0; k < len; k++) {
      const c = r.int(0, 5);
      if (c === 0) s += r.pick(pieces);
      else if (c === 1) s += String.fromCharCode(32 + r.int(0, 94));
      else if (c === 2) s += String.fromCodePoint(0x80 + r.int(0, 0x3000 - 0x81));
      else if (c === 3 && added.length) s += r.pick(added);
      else if (c === 4) s += ' '.repeat(r.int(1, 4));
      else {
        let cp = r.int(0, 0x10ffff);
        if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x4e00 + r.int(0, 0x5000);
        s += String.fromCodePoint(cp);
      }
    }
    list.push(s);
  }
  return list;
}

async function records(tok, added) {
  const rows = [];
  for (const text of texts(added)) {
    const e = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = Array.from(e.getIds());
    rows.push({ text, ids, tokens: e.getTokens(), offsets: e.getOffsets(),
      word_ids: e.getWordIds(), decode: await tok.decode(ids, false) });
  }
  return rows;
}

// Truncation (HF stops at whole pieces; the parts cut off, with their
// offsets) with the post-processor's tokens, on the first texts.
const encodingOf = (e) => ({ ids: Array.from(e.getIds()), offsets: e.getOffsets(),
  word_ids: e.getWordIds(), special_tokens_mask: e.getSpecialTokensMask(),
  overflowing: e.getOverflowing().map(encodingOf) });
async function truncated(json, rows) {
  const out = [];
  for (const [max, opts] of [[6, { stride: 2 }], [5, { stride: 1, direction: 'left' }]]) {
    const tok = Tokenizer.fromString(json);
    tok.setTruncation(max, opts);
    const encodings = [];
    for (const { text } of rows.slice(0, 40))
      encodings.push(encodingOf(await tok.encode(text, null, { addSpecialTokens: true })));
    out.push({ max_length: max, stride: opts.stride, direction: opts.direction ?? 'right',
      encodings });
  }
  return out;
}

// Byte-level BPE under normalizer chains: tests/data/api's small model
// (api_golden.mjs) with its NFC replaced.
const BYTE_LEVEL = 'api/hf_small.tokenizer.json.gz';
const byteLevel = JSON.parse(gunzipSync(readFileSync(path.join(here, '..', 'data',
  BYTE_LEVEL))).toString('utf8'));
const byteLevelVariant = (normalizers) => ({ type: 'Sequence', normalizers });
const byteLevelChains = [
  ['bytelevel_chain_lowercase_strip', byteLevelVariant([{ type: 'NFC' }, { type: 'Lowercase' },
    { type: 'Strip', strip_left: true, strip_right: true }])],
  ['bytelevel_chain_replace', byteLevelVariant([{ type: 'NFKD' },
    { type: 'Replace', pattern: { Regex: '\\p{Mn}' }, content: '' },
    { type: 'Replace', pattern: { String: 'the' }, content: 'THE THE' },
    { type: 'Replace', pattern: { Regex: ' +' }, content: ' ' },
    { type: 'Prepend', prepend: '\u00e9' }])],
];

// Tokens added at run time (normalized ones, as addTokens makes them, and
// a special one), with the post-processor, on the first texts and a few
// that hold them.
const ADDED = ['cat', 'qq', 'hello world', 'zz', ' x'];
const ADDED_SPECIAL = ['<end>'];
async function withAdded(json, rows) {
  const tok = Tokenizer.fromString(json);
  tok.addTokens(ADDED);
  tok.addSpecialTokens(ADDED_SPECIAL);
  const texts = ['the cat sat', 'qq hello world zz', ' x x  x', 'hello<end>cat', 'ccat',
    'hello  world', '\u00e9cat\u0301', '<s> x</s>', ...rows.slice(0, 40).map((r) => r.text)];
  const encodings = [];
  for (const text of texts) {
    const e = await tok.encode(text, null, { addSpecialTokens: true });
    encodings.push({ text, ids: Array.from(e.getIds()), offsets: e.getOffsets(),
      word_ids: e.getWordIds() });
  }
  return { tokens: ADDED, special_tokens: ADDED_SPECIAL, encodings };
}

const models = [];
for (const [name, normalizer] of byteLevelChains) {
  const tok = Tokenizer.fromString(JSON.stringify({ ...byteLevel, normalizer }));
  models.push({ name, base: BYTE_LEVEL, normalizer,
    records: await records(tok, ['<s>', '</s>', '<tool>', 'tool']) });
}
for (const [name, json] of small) {
  const tok = Tokenizer.fromString(json);
  const rows = await records(tok, ['<s>', '</s>', '<unk>', '<tool>', 'zz', 'x y']);
  models.push({ name, tokenizer: json, records: rows,
    truncated: name === 'sp_small' ? await truncated(json, rows) : undefined,
    added: name === 'sp_small' ? await withAdded(json, rows) : undefined });
}
for (const name of ['mistral_v1', 'gemma3']) {
  const file = path.join(name, 'tokenizer.json.zst');
  const p = modelsDir && path.join(modelsDir, file);
  if (!p || !existsSync(p)) {
    console.error(`sp_offsets: ${p ?? name}: not there, not recorded`);
    continue;
  }
  const json = execFileSync('zstd', ['-dc', p], { maxBuffer: 1 << 30 }).toString('utf8');
  const tok = Tokenizer.fromString(json);
  // the added tokens a text may hold: all of mistral's; gemma's first 40
  // and its whitespace runs
  const added = JSON.parse(json).added_tokens.map((a) => a.content)
    .filter((c, i) => i < 40 || /^\s+$/.test(c)).slice(0, 80);
  const rows = await records(tok, added);
  models.push({ name, file, records: rows, truncated: await truncated(json, rows),
    added: await withAdded(json, rows) });
}
const result = { header: { generator: 'tests/gen/sp_offsets.mjs',
  reference: 'npm tokenizers 0.23.2' }, models };
const file = path.join(out, 'sp_offsets.json.gz');
writeFileSync(file, gzipSync(JSON.stringify(result), { level: 9 }));
console.error(`wrote ${file}: ${models.map((m) => `${m.name} ${m.records.length}`).join(', ')}`);
