// unseen_documents.mjs - simdbpe gives the references' ids on documents
// that no golden file holds: text found on this machine (licences, package
// documentation, this project's own sources) and random strings over all of
// Unicode, for every model simdbpe claims.
//
//   node unseen_documents.mjs SIMDBPE_BINARY PROJECT_DIR MODELS_DIR WORKDIR
//
// References: tiktoken 1.0.22 (`get_encoding(NAME).encode_ordinary`) for
// r50k_base, p50k_base, cl100k_base and o200k_base (simdbpe with specials
// as text); HF tokenizers 0.23.2 (`encode(text, null, {addSpecialTokens:
// false})`, which cuts out every added token) for each
// MODELS_DIR/NAME/tokenizer.json.zst that is there (shared/models; a model
// that is not there is reported as skipped) and MODELS_DIR/synthetic's,
// simdbpe with --special allow; and the files of the byte-level families
// with their Split patterns wrapped, which simdbpe runs through its generic
// regex path. Decoding each document's ids must give HF's decode
// (skip_special_tokens false) of them. Prints per model the documents
// compared and the first differences, then "N passed, N failed".
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { machineTexts, randomSource, randomStrings, decodeMatches } from './documents.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const { get_encoding } = require('tiktoken');

const [, , bin, project, modelsDir, work] = process.argv;

// ---- documents (documents.mjs): text found on this machine, random strings
const random = randomSource();
const docs = [...machineTexts(project), ...randomStrings(random)];
const { rnd, pieces } = random;
fs.mkdirSync(work, { recursive: true });
const input = path.join(work, 'unseen.jsonl');
fs.writeFileSync(input, docs.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
const bytes = docs.reduce((a, t) => a + Buffer.byteLength(t), 0);
console.error(`${docs.length} documents, ${bytes} bytes`);

// ---- models
function ours(model, special) {
  return execFileSync(bin, ['encode', '-q', '-m', model, '--special', special, '--input-format',
    'jsonl', input], { maxBuffer: 1 << 30 }).toString().split('\n');
}
let passed = 0, failed = 0;
function compare(name, refIds) {
  const got = ours(name.model, name.special);
  let bad = 0;
  for (let i = 0; i < docs.length; i++) {
    const want = refIds(docs[i]).join(' ');
    if (want !== got[i]) {
      if (bad++ < 3)
        console.error(`${name.label}: document ${i} ${JSON.stringify(docs[i].slice(0, 50))}: ` +
          `reference ${want.slice(0, 60)} | simdbpe ${String(got[i]).slice(0, 60)}`);
    }
  }
  if (bad) failed++; else passed++;
  console.error(`${name.label}: ${docs.length - bad} of ${docs.length} documents identical`);
}
for (const enc of ['r50k_base', 'p50k_base', 'cl100k_base', 'o200k_base']) {
  const e = get_encoding(enc);
  compare({ label: enc, model: enc, special: 'text' }, (t) => Array.from(e.encode_ordinary(t)));
  e.free();
}
// A tokenizer.json with each Split's pattern wrapped in a non-capturing
// group: the same pieces in HF, but no family's pattern, so simdbpe runs
// its generic regex path (Oniguruma) on it.
function wrapped(json) {
  const t = JSON.parse(json);
  for (const step of t.pre_tokenizer?.pretokenizers ?? [])
    if (step.pattern?.Regex !== undefined) step.pattern.Regex = `(?:${step.pattern.Regex})`;
  return JSON.stringify(t);
}
// The synthetic models: llama3's vocabulary under Kimi K2's, Qwen3.5's and
// Nemotron's (= Tekken's) Split regexes. qwen35 runs the generic path as it
// is; kimi and nemotron run their scanners, and wrapped the generic path.
const splitModels = ['gpt4o', 'llama3', 'qwen3', 'deepseek_v3', 'kimi', 'nemotron'];
const fileModels = ['gpt4o', 'gpt_oss', 'llama3', 'llama3_1', 'qwen3', 'deepseek_v3', 'claude',
  'mistral_v1', 'gemma3'];
for (const m of [...fileModels, 'kimi', 'qwen35', 'nemotron']) {
  const zst = fileModels.includes(m) ? path.join(modelsDir, m, 'tokenizer.json.zst')
    : path.join(modelsDir, 'synthetic', `${m}.tokenizer.json.zst`);
  if (!fs.existsSync(zst)) {
    console.error(`${m}: SKIPPED, ${zst} not found`);
    continue;
  }
  const file = path.join(work, `${m}.json`);
  execFileSync('zstd', ['-dqf', zst, '-o', file]);
  const tok = Tokenizer.fromString(fs.readFileSync(file, 'utf8'));
  // HF's encode is asynchronous: collect first, then compare.
  const all = [];
  for (const t of docs) all.push((await tok.encode(t, null, { addSpecialTokens: false })).getIds());
  let k = 0;
  compare({ label: m, model: file, special: 'allow' }, () => all[k++]);
  const texts = [];
  for (const ids of all) texts.push(await tok.decode(ids, false));
  if (decodeMatches(bin, work, m, file, all, texts)) passed++; else failed++;
  if (!splitModels.includes(m)) continue;
  const generic = path.join(work, `${m}.generic.json`);
  fs.writeFileSync(generic, wrapped(fs.readFileSync(file, 'utf8')));
  k = 0;
  compare({ label: `${m} (generic regex path)`, model: generic, special: 'allow' }, () => all[k++]);
}
// A variant of a model file: t = the parsed file, changed by `change`,
// against HF on `vdocs`, through the file and its compiled .sbpe, ids and
// decoding.
async function variant(label, base, change, vdocs, vinput) {
  const t = JSON.parse(base);
  change(t);
  const file = path.join(work, `${label.replace(/[^A-Za-z0-9_-]+/g, '_')}.json`);
  fs.writeFileSync(file, JSON.stringify(t));
  const tok = Tokenizer.fromString(JSON.stringify(t));
  const all = [];
  for (const d of vdocs)
    all.push((await tok.encode(d, null, { addSpecialTokens: false })).getIds());
  // The file, and its settings as a compiled model keeps them.
  const sbpe = file.replace(/\.json$/, '.sbpe');
  execFileSync(bin, ['compile', '-q', '-m', file, '-o', sbpe]);
  for (const [how, m] of [['', file], [' (compiled)', sbpe]]) {
    const got = execFileSync(bin, ['encode', '-q', '-m', m, '--special', 'allow',
      '--input-format', 'jsonl', vinput], { maxBuffer: 1 << 30 }).toString().split('\n');
    let bad = 0;
    for (let i = 0; i < vdocs.length; i++) {
      const want = all[i].join(' ');
      if (want !== got[i] && bad++ < 3)
        console.error(`${label}${how}: document ${i} ${JSON.stringify(vdocs[i].slice(0, 50))}: ` +
          `HF ${want.slice(0, 60)} | simdbpe ${String(got[i]).slice(0, 60)}`);
    }
    if (bad) failed++; else passed++;
    console.error(`${label}${how}: ${vdocs.length - bad} of ${vdocs.length} documents identical`);
  }
  const texts = [];
  for (const ids of all) texts.push(await tok.decode(ids, false));
  if (decodeMatches(bin, work, label, file, all, texts)) passed++; else failed++;
}
function writeDocs(name, list) {
  const f = path.join(work, name);
  fs.writeFileSync(f, list.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  return f;
}
// A Metaspace pre-tokenizer in place of mistral_v1's Prepend + Replace
// normalizer, as HF's conversions of SentencePiece models write it (Llama-2
// with legacy false: "first", split false), with each prepend_scheme,
// split, the scheme-less form of older files, and the Metaspace decoder.
const metaspaceVariants = [
  ['first', { prepend_scheme: 'first', split: false }, null],
  ['always-split', { prepend_scheme: 'always', split: true }, { prepend_scheme: 'always' }],
  ['never-split', { prepend_scheme: 'never', split: true }, { prepend_scheme: 'never' }],
  ['first-split', { prepend_scheme: 'first', split: true }, { prepend_scheme: 'first' }],
  ['add_prefix_space', { add_prefix_space: true }, { add_prefix_space: true }],
];
const mistral = path.join(work, 'mistral_v1.json');
if (fs.existsSync(mistral)) {
  const base = fs.readFileSync(mistral, 'utf8');
  const more = ['<s> Hello world', '</s>Hello', 'Hello<s> world', ' leading space', '  two',
    '\u2581marker first', 'a\u2581\u2581b', 'x </s> y', '<s>', ''];
  const mdocs = [...more, ...docs];
  const input2 = writeDocs('metaspace.jsonl', mdocs);
  for (const [label, pre, dec] of metaspaceVariants) {
    await variant(`mistral_v1 Metaspace ${label}`, base, (t) => {
      t.normalizer = null;
      t.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', ...pre };
      if (dec) t.decoder = { type: 'Metaspace', replacement: '\u2581', ...dec };
    }, mdocs, input2);
  }
}
// ignore_merges on a SentencePiece-style model: a pre-token that is a
// token of the vocabulary is that token, merges or not. mistral_v1's tokens
// all come out of BPE on their own text, so three that do not are added
// (one a word, one with a marker inside); the pre-tokens are the whole
// stretch (normalizer Prepend + Replace; Replace alone; Metaspace without
// split) or each marker's word (Metaspace split).
if (fs.existsSync(mistral)) {
  const base = fs.readFileSync(mistral, 'utf8');
  const more = ['zzqx', ' zzqx', 'a zzqx b', 'zzqx zzqx', '\u2581zzqx', 'ab cd', 'ab\u2581cd',
    'xab cd', '<0x41>', '<s>', '<unk>', '\u2581', ' ', '', 'the', 'Hello world', '  two  spaces'];
  const idocs = [...more, ...docs.filter((_, i) => i % 4 === 0)]; // every kind, a quarter
  const input3 = writeDocs('ignore_merges.jsonl', idocs);
  const M = '\u2581';
  for (const [label, normalizer, pre] of [
    ['Prepend Replace', undefined, undefined],
    ['Replace', { type: 'Replace', pattern: { String: ' ' }, content: M }, undefined],
    ['Metaspace split', null, { type: 'Metaspace', replacement: M, prepend_scheme: 'always',
      split: true }],
    ['Metaspace first', null, { type: 'Metaspace', replacement: M, prepend_scheme: 'first',
      split: false }]]) {
    await variant(`mistral_v1 ignore_merges ${label}`, base, (t) => {
      const n = Object.keys(t.model.vocab).length;
      Object.assign(t.model.vocab, { [`${M}zzqx`]: n, zzqx: n + 1, [`ab${M}cd`]: n + 2 });
      t.model.ignore_merges = true;
      if (normalizer !== undefined) t.normalizer = normalizer;
      if (pre !== undefined) t.pre_tokenizer = pre;
    }, idocs, input3);
  }
}
// Normalizers beyond the Unicode forms (Lowercase, Strip, Replace with a
// string or a regex, Prepend, Sequences of them with NFKC) on a byte-level
// model (llama3) and a SentencePiece-style one (mistral_v1), each with an
// added token matched after the normalizer ("normalized": true), on the
// documents and texts made for them: characters whose lowercase is special
// (U+0130, final sigma, Cherokee, Georgian Mtavruli, title-case digraphs,
// letters new in Unicode 17), whitespace of every kind at both ends.
const white = ['\t', '\n', '\u000B', '\f', '\r', ' ', '\u0085', '\u00A0', '\u1680',
  '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008',
  '\u2009', '\u200A', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000'];
const notWhite = ['\u200B', '\uFEFF', '\u180E', '\u00AD'];
const casing = ['\u0130', 'İSTANBUL', 'ΟΔΟΣ Σ', 'ΣΑΣ. Σ', 'ὈΔΥΣΣΕΎΣ', 'Ꭰ Ꮿ ᏸ ꭰ', 'ᲐᲑᲒ ა',
  'ǅ ǈ ǋ ǲ ǄǇǊǱ', 'ẞ ß', 'Å K Ω', '\uA7CE\uA7D2\uA7D4', '\u{16EA0}\u{16EB8}', '\u{10D50}',
  'ﬁ ① Ｈｅｌｌｏ', 'Hello World', 'hello world', 'ab abab', '<|begin_of_text|>Hi'];
const ndocs = [...casing];
for (let i = 0; i < 600; i++) {
  let s = '';
  const ends = () => {
    let w = '';
    for (let k = rnd(4); k > 0; k--)
      w += rnd(5) ? white[rnd(white.length)] : notWhite[rnd(notWhite.length)];
    return w;
  };
  s += ends();
  for (let k = 1 + rnd(8); k > 0; k--) {
    const r = rnd(5);
    s += r === 0 ? casing[rnd(casing.length)] : r === 1 ? white[rnd(white.length)]
      : r === 2 ? pieces[rnd(pieces.length)] : [...docs[rnd(docs.length)]].slice(0, 12).join('');
  }
  s += ends();
  ndocs.push(s);
}
for (let i = 0; i < docs.length; i += 3) ndocs.push(docs[i]);
const ninput = writeDocs('normalizers.jsonl', ndocs);
const added = (content) => ({ id: 0, content, single_word: false, lstrip: false, rstrip: false,
  normalized: true, special: false });
const M = '\u2581';
const spMarks = [{ type: 'Prepend', prepend: M },
  { type: 'Replace', pattern: { String: ' ' }, content: M }];
const normalizerVariants = [
  ['llama3', 'Lowercase', { type: 'Lowercase' }],
  ['llama3', 'Strip', { type: 'Strip', strip_left: true, strip_right: true }],
  ['llama3', 'Strip left', { type: 'Strip', strip_left: true, strip_right: false }],
  ['llama3', 'Strip right', { type: 'Strip', strip_left: false, strip_right: true }],
  ['llama3', 'Replace string', { type: 'Replace', pattern: { String: 'ab' }, content: 'XYZ' }],
  // (A Replace whose regex matches the empty text, which inserts where
  // nothing matched, makes HF tokenizers 0.23.2's encode panic on some
  // texts (normalizer.rs:373, an index one past the end); its normalizer
  // alone gives the strings tests/encode/test_normalizer.c checks.)
  ['llama3', 'Replace regex', { type: 'Sequence', normalizers: [
    { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
    { type: 'Replace', pattern: { Regex: '[0-9]+|\\p{Lu}' }, content: '#' }] }],
  ['llama3', 'Replace regex deleting', { type: 'Replace', pattern: { Regex: '[0-9]+|\\p{Lu}' },
    content: '' }],
  ['llama3', 'Prepend', { type: 'Prepend', prepend: '>> ' }],
  ['llama3', 'NFKC Lowercase Strip Replace Prepend', { type: 'Sequence', normalizers: [
    { type: 'NFKC' }, { type: 'Lowercase' },
    { type: 'Strip', strip_left: true, strip_right: true },
    { type: 'Replace', pattern: { Regex: '\\p{Zs}+' }, content: ' ' },
    { type: 'Prepend', prepend: '§' }] }],
  ['llama3', 'Lowercase NFKC', { type: 'Sequence', normalizers: [
    { type: 'Lowercase' }, { type: 'NFKC' }] }],
  ['mistral_v1', 'Lowercase', { type: 'Sequence', normalizers: [{ type: 'Lowercase' },
    ...spMarks] }],
  ['mistral_v1', 'Strip', { type: 'Sequence', normalizers: [
    { type: 'Strip', strip_left: true, strip_right: true }, ...spMarks] }],
  ['mistral_v1', 'NFKC Replace regex', { type: 'Sequence', normalizers: [{ type: 'NFKC' },
    { type: 'Replace', pattern: { Regex: '\\s+' }, content: M }, { type: 'Prepend', prepend: M }] }],
  ['mistral_v1', 'Replace markers', { type: 'Sequence', normalizers: [...spMarks,
    { type: 'Replace', pattern: { String: M + M }, content: M },
    { type: 'Replace', pattern: { String: M + 'a' }, content: 'A' }] }],
  ['mistral_v1', 'Prepend twice', { type: 'Sequence', normalizers: [
    { type: 'Replace', pattern: { String: ' ' }, content: M }, { type: 'Prepend', prepend: M + M },
    { type: 'Lowercase' }] }],
];
for (const [model, label, normalizer] of normalizerVariants) {
  const file = path.join(work, `${model}.json`);
  if (!fs.existsSync(file)) {
    console.error(`${model} ${label}: SKIPPED, no ${model} file`);
    continue;
  }
  await variant(`${model} normalizer ${label}`, fs.readFileSync(file, 'utf8'), (t) => {
    t.normalizer = normalizer;
    t.added_tokens.push(added('Hello World'), added(' ab '));
    let id = Object.keys(t.model.vocab).length;
    for (const a of t.added_tokens) if (a.id >= id) id = a.id + 1;
    t.added_tokens.at(-2).id = id;
    t.added_tokens.at(-1).id = id + 1;
  }, ndocs, ninput);
}
// Metaspace after a normalizer chain (mistral_v1).
if (fs.existsSync(mistral)) {
  const base = fs.readFileSync(mistral, 'utf8');
  for (const [label, normalizer, pre] of [
    ['Lowercase Strip left, Metaspace always', { type: 'Sequence', normalizers: [
      { type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: false }] },
    { prepend_scheme: 'always', split: true }],
    ['NFKC Lowercase, Metaspace first', { type: 'Sequence', normalizers: [{ type: 'NFKC' },
      { type: 'Lowercase' }] }, { prepend_scheme: 'first', split: false }],
    ['Prepend Replace, Metaspace never', { type: 'Sequence', normalizers: spMarks },
      { prepend_scheme: 'never', split: true }]]) {
    await variant(`mistral_v1 normalizer ${label}`, base, (t) => {
      t.normalizer = normalizer;
      t.pre_tokenizer = { type: 'Metaspace', replacement: M, ...pre };
      t.decoder = { type: 'Metaspace', replacement: M, prepend_scheme: pre.prepend_scheme };
    }, ndocs, ninput);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
