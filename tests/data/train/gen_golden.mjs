// gen_golden.mjs - re-creates the trainer's reference files with HF tokenizers.
//
//   cd tests/data/train && npm ci && node gen_golden.mjs
//
// For each corpus in corpus/ (tinyshakespeare, taylorswift):
//   1. trains HF tokenizers' BpeTrainer (npm `tokenizers`, pinned in
//      package.json; the node binding's default trainer: vocab_size 30000,
//      which both corpora exhaust, no minimum frequency) with the ByteLevel
//      pre-tokenizer (add_prefix_space=false, GPT-2 regex) on the file read
//      the way train-from-files reads it (each line with its newline a
//      sequence);
//   2. lays the result out GPT-2 style: ids 0-255 the 256 byte symbols in
//      GPT-2 order, then one id per merge in merge order, then <|endoftext|>;
//      vocab.json is JSON.stringify of an object filled in id order (so keys
//      that are array indices come first, in numeric order), merges.txt is
//      "#version: 0.2" and one "left right" line per merge;
//   3. writes golden/NAME/{vocab.json,merges.txt} and says whether they equal
//      ../../../../shared/golden/train/NAME (where the shared copies live).
// Then, with HF's BPE loaded from each golden model (BPE.fromFile, ByteLevel
// pre-tokenizer, no special tokens), encodes each corpus file whole and
// records the number of ids and the sha256 of the ids as little-endian
// uint32 in golden/encode.tsv.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer, BPE, byteLevelPreTokenizer } = require('tokenizers');

const here = dirname(fileURLToPath(import.meta.url));
const corpora = ['tinyshakespeare', 'taylorswift'];

// GPT-2's byte-level alphabet: bytes that print as themselves keep their code
// point, the other 68 map to U+0100.. in byte order; sorting the symbols by
// code point gives GPT-2's ids 0-255.
function byteSymbols() {
  const own = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
  const syms = [];
  let n = 0;
  for (let b = 0; b < 256; b++) syms.push(own(b) ? String.fromCodePoint(b) : String.fromCodePoint(0x100 + n++));
  return syms.sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
}

function trainHF(file) {
  const tok = new Tokenizer(BPE.empty());
  tok.setPreTokenizer(byteLevelPreTokenizer(false, true));
  tok.train([file]);
  const dir = mkdtempSync(join(tmpdir(), 'simdbpe-train-'));
  const path = join(dir, 'tokenizer.json');
  tok.save(path);
  const model = JSON.parse(readFileSync(path, 'utf8')).model;
  const merges = model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
  return { vocab: model.vocab, merges };
}

function layout(merges) {
  const vocab = {};
  let next = 0;
  for (const s of byteSymbols()) vocab[s] = next++;
  for (const [a, b] of merges) {
    const t = a + b;
    if (!(t in vocab)) vocab[t] = next++;
  }
  vocab['<|endoftext|>'] = next++;
  const text = '#version: 0.2\n' + merges.map(([a, b]) => `${a} ${b}\n`).join('');
  return { vocabJson: JSON.stringify(vocab), mergesTxt: text };
}

const rows = ['model\ttext\ttokens\tsha256_u32le'];
for (const name of corpora) {
  const file = join(here, 'corpus', `${name}.txt`);
  const { merges } = trainHF(file);
  const { vocabJson, mergesTxt } = layout(merges);
  const out = join(here, 'golden', name);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'vocab.json'), vocabJson);
  writeFileSync(join(out, 'merges.txt'), mergesTxt);
  const shared = join(here, '..', '..', '..', '..', 'shared', 'golden', 'train', name);
  if (existsSync(shared)) {
    const same =
      readFileSync(join(shared, 'vocab.json'), 'utf8') === vocabJson &&
      readFileSync(join(shared, 'merges.txt'), 'utf8') === mergesTxt;
    console.log(`${name}: ${merges.length} merges; equal to shared/golden/train/${name}: ${same}`);
  } else {
    console.log(`${name}: ${merges.length} merges (no shared copy to compare with)`);
  }
}

for (const model of corpora) {
  const dir = join(here, 'golden', model);
  const bpe = await BPE.fromFile(join(dir, 'vocab.json'), join(dir, 'merges.txt'));
  const tok = new Tokenizer(bpe);
  tok.setPreTokenizer(byteLevelPreTokenizer(false, true));
  for (const text of corpora) {
    const s = readFileSync(join(here, 'corpus', `${text}.txt`), 'utf8');
    const enc = await tok.encode(s, null, { addSpecialTokens: false });
    const ids = enc.getIds();
    const buf = Buffer.alloc(4 * ids.length);
    ids.forEach((id, i) => buf.writeUInt32LE(id, 4 * i));
    const sha = createHash('sha256').update(buf).digest('hex');
    rows.push(`${model}\t${text}\t${ids.length}\t${sha}`);
    console.log(`encode ${text} with ${model}: ${ids.length} ids`);
  }
}
writeFileSync(join(here, 'golden', 'encode.tsv'), rows.join('\n') + '\n');
