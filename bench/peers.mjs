// peers.mjs - times one peer tokenizer on one pass over files, for bench/run.sh.
//
//   node peers.mjs PEER ENCODING FILE...
//
// PEER is tiktoken-rs (npm tiktoken-rs-node-linux-x64-gnu, native Rust, `encode`),
// tiktoken (npm tiktoken, WASM, `encode_ordinary`) or hf (npm tokenizers, native Rust;
// ENCODING gpt2 only: GPT-2's vocab.json + merges.txt from src/model/gpt2 with the GPT-2
// tokenizer.json settings). ENCODING is a tiktoken encoding name (gpt2, cl100k_base,
// o200k_base, ...), the same one simdbpe is timed with.
//
// Each FILE is one document, read and decoded to a string before timing. The peer is
// built and encodes one fixed sentence that is not in any corpus, untimed (it loads its
// tables, V8 compiles the calls, tiktoken's WASM starts), so that the timed part is the
// encoding and nothing in the peer has seen the documents: HF keeps a cache of the words
// it encoded, and a warm-up on the documents would fill it. Then every document is
// encoded once, in order, on one thread. run.sh starts a fresh process for each pass.
// Prints one JSON line: {"peer", "encoding", "bytes", "tokens", "seconds", "cpu_seconds"}
// (cpu_seconds: the process's user + system CPU time during the pass, all threads).
// A peer that throws or crashes on an input (tiktoken-rs panics on long pieces) makes
// this process fail; run.sh reports that as a crash.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const [peer, encoding, ...files] = process.argv.slice(2);

function hfTokenizer() {
  if (encoding !== 'gpt2') throw new Error(`hf: no tokenizer files for encoding ${encoding}`);
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
    const enc = require('tiktoken-rs-node-linux-x64-gnu').getEncoding(encoding);
    return async (t) => enc.encode(t).length;
  }
  if (name === 'tiktoken') {
    const enc = require('tiktoken').get_encoding(encoding);
    return async (t) => enc.encode_ordinary(t).length;
  }
  if (name === 'hf') {
    const tok = hfTokenizer();
    return async (t) => (await tok.encodeBatch([t], { addSpecialTokens: false }))[0].getIds().length;
  }
  throw new Error(`unknown peer ${name}`);
}

if (!peer || !encoding || files.length === 0) {
  console.error('usage: node peers.mjs PEER ENCODING FILE...');
  process.exit(2);
}
const docs = files.map((f) => readFileSync(f));
const texts = docs.map((b) => b.toString('utf8'));
const bytes = docs.reduce((s, b) => s + b.length, 0);
const encode = await encoderFor(peer);
await encode('Warm-up: a sentence of no corpus, 12 words and digits 3.14.');
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
let tokens = 0;
for (const t of texts) tokens += await encode(t);
const c = process.cpuUsage(c0);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu_seconds = (c.user + c.system) / 1e6;
console.log(JSON.stringify({ peer, encoding, bytes, tokens, seconds, cpu_seconds }));
