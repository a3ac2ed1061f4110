// sp_small.mjs - a small SentencePiece-style tokenizer.json and what HF
// tokenizers answers for it, for the C tests of those models
// (tests/encode/test_sentencepiece.c, tests/model/test_compiled.c).
//
// Everything the answers hold comes from the REAL reference, never from
// simdbpe: npm `tokenizers` 0.23.2 (HF tokenizers' Rust core, native),
// pinned in package.json / package-lock.json.
//
// Outputs, in tests/data/hf/ (or the directory given as argument):
//   sp_small.tokenizer.json  the model, saved by HF itself: Llama-2's and
//                     Mistral's shape (normalizer Prepend("\u2581") then
//                     Replace(" ", "\u2581"), no pre-tokenizer, byte_fallback
//                     with all 256 <0xNN> tokens, fuse_unk, unk_token <unk>,
//                     the decoder chain Replace, ByteFallback, Fuse, Strip,
//                     BOS from a TemplateProcessing) over a vocabulary of a
//                     few words; added tokens: <unk>, <s>, </s> (special),
//                     <tool> (not normalized) and two normalized ones, "zz"
//                     and "x y", which HF matches by their normal form
//                     ("\u2581zz", "\u2581x\u2581y").
//   sp_small.expected.json   for each text: HF's ids (addSpecialTokens
//                     false) and its decode of them (skipSpecialTokens
//                     false); then the same after addTokens(ADDED) and
//                     addSpecialTokens(ADDED_SPECIAL), with the count and the vocabulary size;
//                     and variants of the model with ignore_merges and two
//                     tokens BPE cannot build ("\u2581wat", "ll\u2581o"), under
//                     its normalizer, Replace alone, and a Metaspace split:
//                     each variant's file and HF's answers for IM_TEXTS.
//
// Run:  cd tests/gen && npm ci && node sp_small.mjs [OUT_DIR]
// Deterministic: the same version gives the same files.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? path.join(here, '..', 'data', 'hf');
mkdirSync(out, { recursive: true });

const M = '\u2581';
const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
for (let b = 0; b < 256; b++)
  vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
for (const c of [M, 'a', 'c', 'd', 'e', 'h', 'l', 'o', 'r', 't', 'w', 'x', 'y', 'z', '.', '\u00e9'])
  vocab[c] = Object.keys(vocab).length;
const merges = [[M, 't'], ['h', 'e'], [M + 't', 'he'], ['l', 'l'], ['he', 'll'], ['hell', 'o'],
  [M, 'hello'], ['o', 'r'], [M, 'w'], [M + 'w', 'or'], ['l', 'd'], [M + 'wor', 'ld'], [M, 'a'],
  ['c', 'a'], ['ca', 't'], [M, 'cat'], [M, M], ['d', '.']];
for (const [a, b] of merges)
  vocab[a + b] = Object.keys(vocab).length;
const n = Object.keys(vocab).length;
const added = (id, content, special, normalized) =>
  ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized, special });
const json = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [added(0, '<unk>', true, false), added(1, '<s>', true, false),
    added(2, '</s>', true, false), added(n, '<tool>', false, false),
    added(n + 1, 'zz', false, true), added(n + 2, 'x y', false, true)],
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: M },
    { type: 'Replace', pattern: { String: ' ' }, content: M }] },
  pre_tokenizer: null,
  post_processor: { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
  decoder: { type: 'Sequence', decoders: [
    { type: 'Replace', pattern: { String: M }, content: ' ' }, { type: 'ByteFallback' },
    { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false,
    vocab, merges: merges.map(([a, b]) => `${a} ${b}`) },
};
const file = path.join(out, 'sp_small.tokenizer.json');
Tokenizer.fromString(JSON.stringify(json)).save(file, true);

const texts = ['hello world', 'the cat', 'hello  world', ' leading space', 'trailing space ',
  'world.', 'd.d. hello', '\u00fcber \u00e9t\u00e9', '\u{1F4E6} box', 'zz', 'a zz b', 'azz zzz',
  'x y', 'ax y', 'x y z', '<tool>hello', 'hello<tool> world', '<s>the</s>', 'hello\nworld',
  'qq the cat', 'hello world cat', ''];
const ADDED = ['cat', 'qq', 'hello world', 'zz'];
const ADDED_SPECIAL = ['<end>'];
async function answers(tok) {
  const rows = [];
  for (const text of texts) {
    const ids = Array.from((await tok.encode(text, null, { addSpecialTokens: false })).getIds());
    rows.push({ text, ids, decode: await tok.decode(ids, false) });
  }
  return rows;
}
const tok = Tokenizer.fromFile(file);
const plain = await answers(tok);
const count = tok.addTokens(ADDED);
tok.addSpecialTokens(ADDED_SPECIAL);
const more = await answers(tok);
// ignore_merges: a pre-token that is a token is that token.
const IM_TEXTS = ['wat', ' wat', 'a wat b', 'wat wat', 'll o', 'll\u2581o', '<0x41>', 'hello world',
  'the cat', 'wat\u2581', ''];
const imVariants = [];
for (const [label, normalizer, pre] of [
  ['Prepend Replace', json.normalizer, null],
  ['Replace', { type: 'Replace', pattern: { String: ' ' }, content: M }, null],
  ['Metaspace split', null, { type: 'Metaspace', replacement: M, prepend_scheme: 'always',
    split: true }]]) {
  const v = JSON.parse(JSON.stringify(json));
  v.model.ignore_merges = true;
  // HF numbers the added tokens model.vocab lacks from its size on: the
  // two new tokens take the next ids, those added tokens the ones after.
  let next = Object.keys(v.model.vocab).length;
  v.model.vocab[`${M}wat`] = next++;
  v.model.vocab[`ll${M}o`] = next++;
  for (const a of v.added_tokens)
    if (!(a.content in v.model.vocab)) a.id = next++;
  v.normalizer = normalizer;
  v.pre_tokenizer = pre;
  const text = JSON.stringify(v);
  const t = Tokenizer.fromString(text);
  const rows = [];
  for (const s of IM_TEXTS) {
    const ids = Array.from((await t.encode(s, null, { addSpecialTokens: false })).getIds());
    rows.push({ text: s, ids, decode: await t.decode(ids, false) });
  }
  imVariants.push({ label, tokenizer: text, rows });
}
const result = {
  header: { generator: 'tests/gen/sp_small.mjs', reference: 'npm tokenizers 0.23.2' },
  plain,
  added: { tokens: ADDED, count, special_tokens: ADDED_SPECIAL,
    vocab_size: tok.getVocabSize(true), rows: more },
};
// One row a line, so that a change shows as the rows it changes.
const rowsJson = (rows) => `[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}]`;
const { rows, ...addedHead } = result.added;
writeFileSync(path.join(out, 'sp_small.expected.json'),
  `{"header": ${JSON.stringify(result.header)},\n"plain": ${rowsJson(plain)},\n` +
  `"added": ${JSON.stringify(addedHead).slice(0, -1)}, "rows": ${rowsJson(rows)}},\n` +
  `"ignore_merges": [\n${imVariants.map((v) => `{"label": ${JSON.stringify(v.label)}, ` +
    `"tokenizer": ${JSON.stringify(v.tokenizer)},\n"rows": ${rowsJson(v.rows)}}`).join(',\n')}]}\n`);
console.error(`wrote ${file} and sp_small.expected.json (${texts.length} texts)`);
