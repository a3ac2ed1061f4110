// trained_tokenizer_json.mjs - `simdbpe train --pre-tokenizer F` writes a
// tokenizer.json that HF tokenizers (npm `tokenizers` 0.23.2, the
// reference) loads and encodes exactly as `simdbpe encode -m DIR` does.
//
//   node trained_tokenizer_json.mjs SIMDBPE_BINARY CORPUS SAMPLES.jsonl WORKDIR
//
// For each family, trains a 2,000-token vocabulary with one special token
// on CORPUS, then encodes every "text" of SAMPLES.jsonl (one per line) and
// the corpus itself with both, and fails on the first difference. Prints
// "N passed, N failed".
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [, , bin, corpus, samplesPath, work] = process.argv;
fs.mkdirSync(work, { recursive: true });
const families = ['gpt2', 'cl100k', 'qwen2', 'o200k', 'deepseek_v3', 'tekken', 'kimi'];
const samples = fs.readFileSync(samplesPath, 'utf8').split('\n').filter((l) => l)
  .map((l) => JSON.parse(l).text).filter((t) => typeof t === 'string' && t.length > 0);
samples.push(fs.readFileSync(corpus, 'utf8'));

let passed = 0, failed = 0;
for (const fam of families) {
  const dir = path.join(work, fam);
  fs.rmSync(dir, { recursive: true, force: true });
  execFileSync(bin, ['train', '-q', '--vocab-size', '2000', '--special', '<|endoftext|>',
    '--pre-tokenizer', fam, '--mode', 'documents', '-o', dir, corpus]);
  const tok = Tokenizer.fromString(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  // simdbpe encodes the samples as JSON Lines, one document each.
  const input = path.join(work, 'samples.jsonl');
  fs.writeFileSync(input, samples.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  const ours = execFileSync(bin, ["encode", "-q", "-m", dir, "--special", "allow", "--input-format", "jsonl", input],
    { maxBuffer: 1 << 30 }).toString().split('\n');
  let bad = 0;
  for (let i = 0; i < samples.length; i++) {
    const want = (await tok.encode(samples[i])).getIds().join(' ');
    if (want !== ours[i]) {
      if (bad++ < 3)
        console.error(`${fam}: sample ${i} ${JSON.stringify(samples[i].slice(0, 60))}: HF ${want.slice(0, 80)} | simdbpe ${String(ours[i]).slice(0, 80)}`);
    }
  }
  if (bad) {
    failed++;
    console.error(`${fam}: ${bad} of ${samples.length} samples differ`);
  } else {
    passed++;
    console.error(`${fam}: ${samples.length} samples identical`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
