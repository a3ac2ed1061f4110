// peers.mjs - times one peer tokenizer on files, for bench/run.sh.
//
//   node peers.mjs PEER RUNS FILE...
//
// PEER is tiktoken-rs (npm tiktoken-rs-node-linux-x64-gnu, native Rust),
// tiktoken (npm tiktoken, WASM, encode_ordinary) or hf (npm tokenizers,
// native Rust, GPT-2 vocab.json + merges.txt from src/model/gpt2 with the
// GPT-2 tokenizer.json settings). Each FILE is one document, read and
// decoded before timing; the first documents (up to 1 MB) are encoded once
// untimed, as a warm-up (tiktoken's WASM, V8's JIT: run.sh starts a fresh
// process for every run); then every document is encoded on one thread,
// RUNS times, and the medians are printed as one JSON line:
//   {"peer", "bytes", "tokens", "seconds", "cpu_seconds"}
// (cpu_seconds: the process's user + system CPU time, all threads).
// A peer that throws or crashes on an input (tiktoken-rs panics on long
// pieces) makes this process fail; run.sh reports that as a crash.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const [peer, runsArg, ...files] = process.argv.slice(2);
const runs = Number(runsArg);

function hfTokenizer() {
  const { Tokenizer } = require('tokenizers');
  const dir = path.join(here, '..', 'src', 'model', 'gpt2');
  const vocab = JSON.parse(readFileSync(path.join(dir, 'vocab.json'), 'utf8'));
  const merges = readFileSync(path.join(dir, 'merges.txt'), 'utf8')
    .split('\n')
    .filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith('#version')));
  const bl = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: bl, post_processor: null, decoder: bl,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges,
    },
  }));
}

async function encoderFor(name) {
  if (name === 'tiktoken-rs') {
    const m = require('tiktoken-rs-node-linux-x64-gnu');
    const enc = m.getEncoding('gpt2');
    return async (t) => enc.encode(t).length;
  }
  if (name === 'tiktoken') {
    const { get_encoding } = require('tiktoken');
    const enc = get_encoding('gpt2');
    return async (t) => enc.encode_ordinary(t).length;
  }
  if (name === 'hf') {
    const tok = hfTokenizer();
    return async (t) => (await tok.encodeBatch([t], { addSpecialTokens: false }))[0].getIds().length;
  }
  throw new Error(`unknown peer ${name}`);
}

const docs = files.map((f) => readFileSync(f));
const texts = docs.map((b) => b.toString('utf8'));
const bytes = docs.reduce((s, b) => s + b.length, 0);
const encode = await encoderFor(peer);
// The warm-up: the first documents, up to 1 MB (at least one).
for (let i = 0, warm = 0; i < texts.length && (i === 0 || warm < 1e6); i++) {
  await encode(texts[i]);
  warm += docs[i].length;
}
const times = [];
const cpus = [];
let tokens = 0;
for (let r = 0; r < runs; r++) {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  let n = 0;
  for (const t of texts) n += await encode(t);
  const c = process.cpuUsage(c0);
  times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  cpus.push((c.user + c.system) / 1e6);
  tokens = n;
}
const median = (v) => {
  v.sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
};
console.log(JSON.stringify({ peer, bytes, tokens, seconds: median(times), cpu_seconds: median(cpus) }));
