// api_golden.mjs - records what tiktoken and HF tokenizers answer to the calls
// a script written for them makes, for simdbpe's Python tests
// (tests/python/test_tiktoken_api.py, test_hf_api.py).
//
// Everything this writes comes from the REAL references, never from
// simdbpe: npm `tiktoken` 1.0.22 (tiktoken's Rust core compiled to WASM:
// tiktoken's Python package cannot be installed here, no PyPI; its Python
// layer is thin and read from the source of tiktoken 0.14.0 where the
// tests need it) and npm `tokenizers` 0.23.2 (HF tokenizers' Rust core,
// native). Both are pinned in package.json / package-lock.json.
//
// Outputs, in tests/data/api/ (or the directory given as the second
// argument), gzip'd JSON:
//   tiktoken.json.gz   per built-in encoding: ids of texts with every
//                      special-token policy (or "error"), token bytes of
//                      sample ids (or "error"), ids of sample byte strings
//                      (encode_single_token), the sorted token byte values'
//                      count and sha256; a cl100k_base extended with chat
//                      tokens (new Tiktoken(ranks, specials, pat_str)) on
//                      texts with them.
//   hf_small.tokenizer.json.gz  a tokenizer.json written here (the trained
//                      taylorswift model of tests/data/train with an NFC
//                      normalizer, special and plain added tokens and a
//                      TemplateProcessing, saved by HF itself), and
//   hf_small.json.gz   what HF answers for it (below).
//   hf_MODEL.json.gz   the same answers for MODELS_DIR/MODEL/tokenizer.json.zst
//                      (llama3_1, qwen3, deepseek_v3; kimi is synthetic/kimi.tokenizer.json.zst),
//                      which the tests use when
//                      the models are there.
// The answers: encode (ids, tokens, offsets, masks) with and without
// add_special_tokens; decode with and without skip_special_tokens;
// get_vocab_size, the sha256 of get_vocab, id_to_token and token_to_id of
// samples; add_tokens / add_special_tokens counts and ids; encodings under
// truncation (with stride, both directions) and padding (fixed, multiple,
// batch longest, both directions), overflowing parts included.
//
// Run:  cd tests/gen && npm ci && node api_golden.mjs MODELS_DIR [OUT_DIR]
// Deterministic: the same versions give the same files.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const modelsDir = process.argv[2];
const outDir = process.argv[3] || path.join(root, 'tests', 'data', 'api');
mkdirSync(outDir, { recursive: true });

const { Tokenizer } = require('tokenizers');
const { get_encoding, Tiktoken } = require('tiktoken');

function version(name) {
  return JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8'))
    .version;
}
const HEADER = {
  generator: 'tests/gen/api_golden.mjs',
  references: { tokenizers: version('tokenizers'), tiktoken: version('tiktoken') },
};

function write(name, obj) {
  const data = gzipSync(Buffer.from(JSON.stringify({ header: HEADER, ...obj })), { level: 9 });
  // a fixed mtime in the gzip header keeps the file the same from run to run
  data.writeUInt32LE(0, 4);
  writeFileSync(path.join(outDir, name), data);
  console.log(`${name}: ${data.length} bytes`);
}

const hex = (u8) => Buffer.from(u8).toString('hex');
const sha256 = (s) => createHash('sha256').update(s).digest('hex');

// ---- texts
const edge = readFileSync(path.join(root, 'tests', 'data', 'golden', 'edge.jsonl'), 'utf8')
  .split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((r) => !r.header);
const TEXTS = [
  '', 'Hello', 'hello world', ' hello world\n', 'Hello world 😀', '😀 héllo 日本',
  "DON'T stop $hello, 12345 日本語", 'today\n ', 'today\n \n', '  leading and trailing  ',
  'tabs\tand\nnewlines\r\n', '我非常渴望与人工智能一起工作', 'நடிகர் சூர்யா', ' Ġ除',
  'a\u0301b', 'e\u0301\u0301x', '\u1e69\u0323', 'a\u0323\u0307b', '\u0344x', '\ud55c\u1161\u11a8',
  '\u1100\u1161\u11a8 x', 'Ω\u212b\u0041\u030a', 'x\u00a0y\u3000z', 'long ' + 'word '.repeat(40),
  '<|endoftext|>', 'hello <|endoftext|> world', '<|begin_of_text|>Hi<|end_of_text|>',
  '<|im_start|>user\nhi<|im_end|>', '<tool_call>{}</tool_call>', '<｜User｜>hi<｜Assistant｜>',
  '<s>hello</s> <tool> x', 'Å ÅX', 'x\ufeffy', '1234567 89',
  ...edge.filter((r, i) => i % 97 === 0).map((r) => r.text),
];

// ---- tiktoken
function tiktokenAnswers() {
  const out = {};
  const ID_SAMPLES = [0, 1, 15, 220, 995, 31373, 50255, 50256, 50257, 50280, 50281, 50283, 100256,
    100257, 100260, 100261, 100276, 100277, 199997, 199998, 199999, 200018, 200019, 300000];
  const BYTE_SAMPLES = ['e6', '20', '68656c6c6f', '2068656c6c6f', '3c7c656e646f66746578747c3e',
    '3c7c66696d5f7072656669787c3e', 'ff', 'e697a5', '7a7a7a7a7a7a7a7a', ''];
  for (const name of ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base']) {
    // A failed call (a WASM panic) leaves the instance unusable: take a new one.
    let enc = get_encoding(name);
    const specials = name === 'p50k_edit'
      ? ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>']
      : name === 'cl100k_base'
        ? ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>']
        : name === 'o200k_base' ? ['<|endoftext|>', '<|endofprompt|>'] : ['<|endoftext|>'];
    const texts = [...TEXTS, specials.join(' x '), `a${specials[specials.length - 1]}b`];
    const call = (f) => {
      try { return Array.from(f()); } catch { enc = get_encoding(name); return 'error'; }
    };
    const records = texts.map((text) => ({
      text,
      ordinary: Array.from(enc.encode_ordinary(text)),
      default: call(() => enc.encode(text)),
      all: Array.from(enc.encode(text, 'all')),
      none: Array.from(enc.encode(text, [], [])),
      first: call(() => enc.encode(text, [specials[0]])),
      first_only: Array.from(enc.encode(text, [specials[0]], [])),
    }));
    const tokenBytes = {};
    for (const id of ID_SAMPLES) {
      try { tokenBytes[id] = hex(enc.decode_single_token_bytes(id)); } catch {
        tokenBytes[id] = null;
        enc = get_encoding(name);
      }
    }
    const single = {};
    for (const h of BYTE_SAMPLES) {
      try { single[h] = enc.encode_single_token(Buffer.from(h, 'hex')); } catch {
        single[h] = null;
        enc = get_encoding(name);
      }
    }
    const values = enc.token_byte_values().map((b) => Buffer.from(b));
    const joined = Buffer.concat(values.map((b) => Buffer.concat([Buffer.from(`${b.length}:`), b])));
    out[name] = {
      specials, records, token_bytes: tokenBytes, single,
      token_byte_values: { count: values.length, sha256: sha256(joined),
        first: values.slice(0, 5).map(hex), last: values.slice(-3).map(hex) },
    };
  }
  // An encoding extended with chat tokens, the way tiktoken's README shows.
  const ranks = readFileSync(path.join(root, 'src', 'model', 'tiktoken', 'cl100k_base.tiktoken'),
    'utf8');
  const CL100K_OLD = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const chatSpecials = { '<|endoftext|>': 100257, '<|fim_prefix|>': 100258,
    '<|fim_middle|>': 100259, '<|fim_suffix|>': 100260, '<|endofprompt|>': 100276,
    '<|im_start|>': 100264, '<|im_end|>': 100265 };
  const chat = new Tiktoken(ranks, chatSpecials, CL100K_OLD);
  const chatTexts = ['<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>',
    'plain text', 'a<|im_end|>b<|endoftext|>', 'today\n  '];
  out.chat = { pat_str: CL100K_OLD, special_tokens: chatSpecials, records: chatTexts.map((text) => ({
    text, all: Array.from(chat.encode(text, 'all')), ordinary: Array.from(chat.encode_ordinary(text)),
  })) };
  return out;
}

// ---- HF tokenizers
function encodingOf(e) {
  return {
    ids: e.getIds(), tokens: e.getTokens(), offsets: e.getOffsets(),
    attention_mask: e.getAttentionMask(), special_tokens_mask: e.getSpecialTokensMask(),
    type_ids: e.getTypeIds(), word_ids: e.getWordIds(),
    overflowing: e.getOverflowing().map(encodingOf),
  };
}

async function hfAnswers(json) {
  const load = () => Tokenizer.fromString(json);
  const tok = load();
  const out = { vocab_size: tok.getVocabSize(true), vocab_size_plain: tok.getVocabSize(false) };
  for (const [key, withAdded] of [['vocab', true], ['vocab_plain', false]]) {
    const v = Object.entries(tok.getVocab(withAdded)).sort((a, b) => a[1] - b[1] ||
      (a[0] < b[0] ? -1 : 1));
    out[`${key}_sha256`] = sha256(JSON.stringify(v));
  }
  const n = out.vocab_size;
  const idSamples = [0, 1, 32, 220, 255, 256, 1000, n - 30, n - 2, n - 1, n, n + 5];
  out.id_to_token = idSamples.map((id) => [id, tok.idToToken(id)]);
  const tokenSamples = ['Ġworld', 'hello', 'Hello', '<|endoftext|>', '<|begin_of_text|>',
    '<|im_start|>', '<s>', '</s>', '<tool>', 'no such token ever', 'Ġ', 'Ċ', ' '];
  out.token_to_id = tokenSamples.map((t) => [t, tok.tokenToId(t)]);
  out.encode = [];
  for (const text of TEXTS) {
    const withSp = await tok.encode(text, null, { addSpecialTokens: true });
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = withSp.getIds();
    out.encode.push({
      text, with_special: encodingOf(withSp), plain: encodingOf(plain),
      decode_skip: await tok.decode(ids, true), decode_keep: await tok.decode(ids, false),
    });
  }
  // decode of odd id lists: ids that are no token, partial UTF-8, specials
  const odd = [[n + 7, 1000, 99999999], [0, n - 1, n - 2], [ids0(out), 1].flat()];
  out.decode_odd = [];
  for (const ids of odd) {
    const good = ids.filter((id) => Number.isInteger(id) && id >= 0);
    out.decode_odd.push({ ids: good, skip: await tok.decode(good, true),
      keep: await tok.decode(good, false) });
  }
  // added tokens at run time
  {
    const t = load();
    const added = t.addTokens(['<tool>', 'hello', 'Hello', '<tool>', 'ÅX', 'two words']);
    const special = t.addSpecialTokens(['<x>', '<tool>']);
    const texts = ['a<tool>b <x>Hello', 'say hello two words', 'ÅX and \u212bX', '<x><x>'];
    const encs = [];
    for (const text of texts) {
      const e = await t.encode(text, null, { addSpecialTokens: true });
      encs.push({ text, enc: encodingOf(e), decode_skip: await t.decode(e.getIds(), true),
        decode_keep: await t.decode(e.getIds(), false) });
    }
    out.added = { add_tokens: ['<tool>', 'hello', 'Hello', '<tool>', 'ÅX', 'two words'],
      count: added, add_special_tokens: ['<x>', '<tool>'], special_count: special,
      vocab_size: t.getVocabSize(true), vocab_size_plain: t.getVocabSize(false),
      ids: ['<tool>', 'hello', '<x>', 'ÅX', 'two words'].map((s) => [s, t.tokenToId(s)]),
      encodings: encs };
  }
  // truncation and padding
  const settings = [
    { truncation: [8, { stride: 0 }] },
    { truncation: [8, { stride: 3 }] },
    { truncation: [6, { stride: 2, direction: 'left' }] },
    { padding: { maxLength: 24, padId: 0, padToken: '<pad>' } },
    { padding: { direction: 'left', padId: 3, padTypeId: 1, padToken: 'P' } },
    { padding: { padToMultipleOf: 8 } },
    { truncation: [10, { stride: 4 }], padding: { maxLength: 12, padToken: '[PAD]' } },
  ];
  const batch = ['Hello world, this is a somewhat longer sentence to cut into parts.',
    'short', '', '😀 héllo 日本 and more words here', 'a\u0301b c\u0301d'];
  out.settings = [];
  for (const s of settings) {
    const t = load();
    if (s.truncation) t.setTruncation(s.truncation[0], s.truncation[1]);
    if (s.padding) t.setPadding(s.padding);
    const single = [];
    for (const text of batch)
      single.push(encodingOf(await t.encode(text, null, { addSpecialTokens: true })));
    const many = (await t.encodeBatch(batch, { addSpecialTokens: true })).map(encodingOf);
    out.settings.push({ ...s, texts: batch, single, batch: many });
  }
  return out;
}

function ids0(out) {
  return out.encode[4].with_special.ids;
}

// ---- the small tokenizer.json: byte-level BPE from the trained taylorswift
// model, NFC, added tokens (special and not, normalized and not), a
// TemplateProcessing with BOS and EOS.
function smallTokenizerJson() {
  const dir = path.join(root, 'tests', 'data', 'train', 'golden', 'taylorswift');
  const vocab = JSON.parse(readFileSync(path.join(dir, 'vocab.json'), 'utf8'));
  const merges = readFileSync(path.join(dir, 'merges.txt'), 'utf8').split('\n')
    .filter((l) => l && !l.startsWith('#version'));
  const size = Object.keys(vocab).length;
  const added = (content, id, special, normalized) => ({ id, content, single_word: false,
    lstrip: false, rstrip: false, normalized, special });
  const tj = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [added('<s>', size, true, false), added('</s>', size + 1, true, false),
      added('<tool>', size + 2, false, false), added('tool', size + 3, false, true)],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true,
      use_regex: true },
    post_processor: { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [size], tokens: ['<s>'] },
        '</s>': { id: '</s>', ids: [size + 1], tokens: ['</s>'] } } },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges },
  };
  const tmp = path.join(outDir, '.hf_small.tmp.json');
  Tokenizer.fromString(JSON.stringify(tj)).save(tmp, false);
  const saved = readFileSync(tmp, 'utf8');
  execFileSync('rm', ['-f', tmp]);
  return saved;
}

write('tiktoken.json.gz', { answers: tiktokenAnswers() });
const small = smallTokenizerJson();
{
  const data = gzipSync(Buffer.from(small), { level: 9 });
  data.writeUInt32LE(0, 4);
  writeFileSync(path.join(outDir, 'hf_small.tokenizer.json.gz'), data);
}
write('hf_small.json.gz', { model: 'tests/data/api/hf_small.tokenizer.json.gz',
  answers: await hfAnswers(small) });
// kimi: llama3's vocabulary under Kimi K2's Split regex (shared/models/synthetic),
// which simdbpe runs through its generic regex path.
for (const name of ['llama3_1', 'qwen3', 'deepseek_v3', 'kimi']) {
  const rel = name === 'kimi' ? 'synthetic/kimi.tokenizer.json.zst' : `${name}/tokenizer.json.zst`;
  const file = path.join(modelsDir || '', rel);
  if (!modelsDir || !existsSync(file)) {
    console.log(`${name}: ${file} not found, skipped`);
    continue;
  }
  const json = execFileSync('zstd', ['-dc', file], { maxBuffer: 1 << 30 }).toString('utf8');
  const sha = sha256(readFileSync(file));
  write(`hf_${name}.json.gz`, { model: rel, model_sha256: sha,
    answers: await hfAnswers(json) });
}
