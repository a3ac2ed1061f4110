// added_tokens.mjs - the reference of the hf_added fuzz target
// (tests/fuzz/fuzz_hf_added.c) against HF tokenizers itself (npm
// `tokenizers` 0.23.2).
//
//   node added_tokens.mjs DUMP_DIR
//
// DUMP_DIR holds what `FUZZ_HF_ADDED_DUMP=DUMP_DIR fuzz_replay_hf_added
// CORPUS` wrote for each input: NNNNN.json (the tokenizer.json), NNNNN.txt
// (the text) and NNNNN.ids: "accepted" or "refused" (the library's
// verdict), then either "unmodelled" or the reference's ids with special
// tokens allowed, without and with the post-processor's (a line each).
// For every input the reference models, HF must load the file and give
// those ids; a file the library accepted must be one HF loads. Prints
// "N compared, N unmodelled, N failed".
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const dir = process.argv[2];
const names = fs.readdirSync(dir).filter((f) => f.endsWith('.ids')).sort();
let compared = 0, unmodelled = 0, failed = 0;
const fail = (name, why) => {
  if (failed++ < 10) console.error(`${name}: ${why}`);
};
for (const f of names) {
  const name = f.slice(0, -4);
  const lines = fs.readFileSync(path.join(dir, f), 'utf8').split('\n');
  const accepted = lines[0] === 'accepted';
  const json = fs.readFileSync(path.join(dir, name + '.json'), 'utf8');
  if (lines[1] === 'unmodelled') {
    unmodelled++;
    continue; // HF may panic on these (a template naming B): not encoded here
  }
  let tok;
  try {
    tok = Tokenizer.fromString(json);
  } catch (e) {
    if (accepted) fail(name, `accepted by the library, refused by HF: ${e.message}`);
    else fail(name, `the reference models a file HF refuses: ${e.message}`);
    continue;
  }
  const text = fs.readFileSync(path.join(dir, name + '.txt'), 'utf8');
  for (let add = 0; add < 2; add++) {
    const want = lines[1 + add];
    const got = (await tok.encode(text, null, { addSpecialTokens: add === 1 })).getIds().join(' ');
    if (got !== want) fail(name, `add_special_tokens ${add}: HF ${got} | reference ${want} | text ${JSON.stringify(text)}`);
  }
  compared++;
}
console.log(`${compared} compared, ${unmodelled} unmodelled, ${failed} failed`);
process.exit(failed || compared === 0 ? 1 : 0);
