// hf_train.mjs - the peer of `simdbpe train` in bench/train/run.sh: HF
// tokenizers' BpeTrainer (npm `tokenizers`, native binding, pinned in
// package.json) with the ByteLevel pre-tokenizer (add_prefix_space=false,
// GPT-2 regex), trained on files read line by line (HF's train-from-files).
//
//   node hf_train.mjs OUT_DIR FILE...
//
// The node binding trains with BpeTrainer's defaults: vocab_size 30000 (HF
// counts its alphabet, which is only the characters seen), no minimum
// frequency, no special tokens. Threads: RAYON_NUM_THREADS.
//
// Writes OUT_DIR/tokenizer.json (HF's own) and OUT_DIR/merges.txt in GPT-2
// layout ("#version: 0.2", then "left right" per merge), and prints
// "alphabet A merges M" so run.sh can ask simdbpe for the same number of
// merges (simdbpe's alphabet is always all 256 bytes).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer, BPE, byteLevelPreTokenizer } = require('tokenizers');

const [out, ...files] = process.argv.slice(2);
if (!out || files.length === 0) {
  console.error('usage: node hf_train.mjs OUT_DIR FILE...');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const tok = new Tokenizer(BPE.empty());
tok.setPreTokenizer(byteLevelPreTokenizer(false, true));
tok.train(files);
const path = join(out, 'tokenizer.json');
tok.save(path);
const model = JSON.parse(readFileSync(path, 'utf8')).model;
const merges = model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
writeFileSync(join(out, 'merges.txt'), '#version: 0.2\n' + merges.map(([a, b]) => `${a} ${b}\n`).join(''));
const alphabet = Object.keys(model.vocab).filter((k) => [...k].length === 1).length;
console.log(`alphabet ${alphabet} merges ${merges.length}`);
