// peer_jsonl.mjs - the same dataset job done with a peer tokenizer, for
// bench/dataset/bench.py: decompress a .jsonl.zst (the zstd CLI), parse each
// line (JSON.parse), encode its "text" with tiktoken-rs (npm
// tiktoken-rs-node-linux-x64-gnu, native Rust, encode_ordinary semantics:
// specials are text), append EOT 50256, write little-endian u16 ids to a
// file. One thread, like most preprocessing scripts.
//
//   node peer_jsonl.mjs IN.jsonl.zst OUT.u16
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { openSync, writeSync, closeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'package.json'));
const enc = require('tiktoken-rs-node-linux-x64-gnu').getEncoding('gpt2');
const [input, output] = process.argv.slice(2);

const zstd = spawn('zstd', ['-dc', input], { stdio: ['ignore', 'pipe', 'inherit'] });
const lines = createInterface({ input: zstd.stdout, crlfDelay: Infinity });
const fd = openSync(output, 'w');
let docs = 0;
let tokens = 0;
for await (const line of lines) {
  if (!line) continue;
  const ids = enc.encode(JSON.parse(line).text);
  const out = new Uint16Array(ids.length + 1);
  out.set(ids);
  out[ids.length] = 50256;
  writeSync(fd, new Uint8Array(out.buffer));
  docs++;
  tokens += out.length;
}
closeSync(fd);
console.log(JSON.stringify({ docs, tokens }));
