// gen_expected.mjs - records what the references make of simdbpe's
// adversarial inputs, for tests/adversarial/test_adversarial.c.
//
// References, never simdbpe:
//   - HF `tokenizers` 0.23.2 (npm, native binding; pinned in package.json
//     and package-lock.json) with the GPT-2 vocab.json + merges.txt of
//     src/model/gpt2/, ByteLevel pre-tokenizer without prefix space, no
//     added tokens (the GPT-2 tokenizer.json semantics, encode_ordinary).
//     REFERENCE.md: HF is the oracle for long pieces (tiktoken crashes).
//   - Python 3 for UTF-8: the strict error offset is
//     UnicodeDecodeError.start of bytes.decode("utf-8"), and the text
//     encoded in replace mode is bytes.decode("utf-8", errors="replace").
//
// Writes (into this folder):
//   long.tsv    one row per kind of adv_gen.h, generated at 10,000,000
//               bytes by the same algorithm (mirrored below; the test checks
//               input_sha256 so a drift cannot go unnoticed):
//               kind, bytes, input_sha256, strict_offset (- when valid),
//               tokens and ids_sha256 (sha256 of the ids as uint32
//               little-endian) of the text, or of Python's replacement of
//               it when it is not valid UTF-8.
//   cases.jsonl small cases (NUL bytes, overlong forms, surrogates, above
//               U+10FFFF, multi-byte characters cut or whole at block
//               boundaries 16..65536): input = pre * n + hex(mid) + post * m,
//               with strict_offset (null when valid), tokens, ids_sha256
//               (as above) and the ids themselves when there are at most 64.
//
// Run:  cd tests/adversarial && npm ci && node gen_expected.mjs
// Takes a few minutes (HF encodes long pieces at about 1 MB/s).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const { Tokenizer } = require('tokenizers');
const SIZE = 10000000;

// ---- the HF GPT-2 tokenizer
function hfGpt2() {
  const dir = path.join(root, 'src', 'model', 'gpt2');
  const vocab = JSON.parse(readFileSync(path.join(dir, 'vocab.json'), 'utf8'));
  const merges = readFileSync(path.join(dir, 'merges.txt'), 'utf8')
    .split('\n')
    .filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith('#version')));
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges,
    },
  };
  return Tokenizer.fromString(JSON.stringify(json));
}
const hf = hfGpt2();

export async function hfIds(text) {
  const [enc] = await hf.encodeBatch([text], { addSpecialTokens: false });
  return enc.getIds();
}

function idsDigest(ids) {
  const buf = Buffer.alloc(ids.length * 4);
  ids.forEach((id, i) => buf.writeUInt32LE(id, i * 4));
  return createHash('sha256').update(buf).digest('hex');
}

// ---- Python's view of the bytes: strict offset and replacement text
const PY = `
import json, sys
data = sys.stdin.buffer.read()
try:
    data.decode("utf-8"); off = None
except UnicodeDecodeError as e:
    off = e.start
sys.stdout.write(json.dumps({"offset": off, "text": data.decode("utf-8", errors="replace")}))
`;
function python(bytes) {
  const out = execFileSync('python3', ['-c', PY], { input: bytes, maxBuffer: 1 << 30 });
  return JSON.parse(out.toString('utf8'));
}

// ---- the generator of adv_gen.h, mirrored
export const KINDS = [
  ['one_letter', [[0x61, 0x61]]],
  ['letters', [[0x41, 0x5a], [0x61, 0x7a]]],
  ['digits', [[0x30, 0x39]]],
  ['punctuation', [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]]],
  ['spaces', [[0x20, 0x20]]],
  ['whitespace', [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x2000, 0x200a], [0x3000, 0x3000]]],
  ['cjk', [[0x4e00, 0x9fff]]],
  ['emoji', [[0x1f600, 0x1f64f]]],
  ['letters_mixed', [[0x61, 0x7a], [0x430, 0x44f], [0x3b1, 0x3c9], [0x4e00, 0x9fff],
    [0xac00, 0xd7a3], [0xe0, 0xf6]]],
  ['nul', [[0x00, 0x00]]],
  ['mixture', [[0x61, 0x7a], [0x41, 0x5a], [0x30, 0x39], [0x20, 0x20], [0x20, 0x20],
    [0x0a, 0x0a], [0x21, 0x2f], [0x27, 0x27], [0xe0, 0xff], [0x300, 0x36f], [0x4e00, 0x9fff],
    [0x1f600, 0x1f64f], [0x3000, 0x3000], [0xa0, 0xa0], [0x660, 0x669], [0xfeff, 0xfeff]]],
  ['overlong', Buffer.from([0xc0, 0xaf])],
  ['surrogates', Buffer.from([0xed, 0xa0, 0x80])],
  ['late_invalid', null],
];

export function generate(k, size) {
  const [name, spec] = KINDS[k];
  const buf = Buffer.alloc(size);
  if (name === 'late_invalid') {
    buf.fill(0x61);
    buf[size - 1] = 0xff;
    return buf;
  }
  let n = 0;
  if (Buffer.isBuffer(spec)) {
    while (n + spec.length <= size) n += spec.copy(buf, n);
    return buf.subarray(0, n);
  }
  let s = (2463534242 + k) >>> 0;
  const next = () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
  for (;;) {
    const [lo, hi] = spec[next() % spec.length];
    const cp = lo + (next() % (hi - lo + 1));
    const ch = Buffer.from(String.fromCodePoint(cp), 'utf8');
    if (n + ch.length > size) break;
    n += ch.copy(buf, n);
  }
  return buf.subarray(0, n);
}

// Encodes bytes as the test expects: the text itself if valid, else
// Python's replacement of it.
async function expected(bytes) {
  const py = python(bytes);
  const text = py.offset === null ? bytes.toString('utf8') : py.text;
  const ids = await hfIds(text);
  return { strict_offset: py.offset, tokens: ids.length, ids_sha256: idsDigest(ids), ids };
}

async function longKinds() {
  const rows = ['kind\tbytes\tinput_sha256\tstrict_offset\ttokens\tids_sha256'];
  for (let k = 0; k < KINDS.length; k++) {
    const t0 = Date.now();
    const bytes = generate(k, SIZE);
    const e = await expected(bytes);
    const sha = createHash('sha256').update(bytes).digest('hex');
    rows.push([KINDS[k][0], bytes.length, sha, e.strict_offset ?? '-', e.tokens, e.ids_sha256]
      .join('\t'));
    console.error(`${KINDS[k][0]}: ${bytes.length} bytes, ${e.tokens} tokens, ` +
      `${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  return rows.join('\n') + '\n';
}

// ---- small cases
function smallCases() {
  const cases = [];
  const add = (name, mid, pre = 'a', n = 1, post = ' b', m = 1) =>
    cases.push({ name, pre, n, mid, post, m });
  // NUL bytes: valid UTF-8, class "other" (neither letter, number nor space)
  for (const [i, h] of ['00', '610062', '000000200000', '2000780a', '0027730a', '00e4b8ad00f09f988000',
    '3c7c656e646f66746578747c3e00', '20200020', '000a0a00'].entries()) add(`nul${i}`, h, '', 0, '', 0);
  add('nul_in_word', '00', 'x', 5, 'y', 5);
  // overlong forms of '/', NUL and the largest 2/3-byte values
  for (const h of ['c0af', 'c080', 'c1bf', 'e080af', 'e08080', 'e09fbf', 'f08080af', 'f0808080',
    'f08fbfbf', 'f8808080af', 'fc80808080af']) add(`overlong_${h}`, h);
  // UTF-16 surrogates encoded in UTF-8 (lone, pairs as CESU-8)
  for (const h of ['eda080', 'edafbf', 'edb080', 'edbfbf', 'eda0bdedb880', 'edafbfedbfbf',
    'eda080eda080']) add(`surrogate_${h}`, h);
  // above U+10FFFF and bytes that never occur
  for (const h of ['f4908080', 'f7bfbfbf', 'f5', 'f8', 'fe', 'ff', 'c2', 'e4b8', 'f09f98']) add(`bad_${h}`, h);
  // multi-byte characters at block boundaries: whole (straddling), or cut
  // exactly at the boundary (at the end of the text and before more text)
  const chars = { e_acute: 'c3a9', nbsp: 'c2a0', zhong: 'e4b8ad', ideo_space: 'e38080',
    grin: 'f09f9880' };
  for (const block of [16, 32, 64, 128, 4096, 65536]) {
    for (const [cname, h] of Object.entries(chars)) {
      const len = h.length / 2;
      for (let s = 1; s < len; s++) {
        add(`b${block}_${cname}_s${s}`, h, 'a', block - s, 'b', 8);
        add(`b${block}_${cname}_cut${s}_end`, h.slice(0, 2 * s), 'a', block - s, '', 0);
        add(`b${block}_${cname}_cut${s}_mid`, h.slice(0, 2 * s), 'a', block - s, 'b', 8);
      }
    }
    for (const d of [-1, 0, 1]) add(`b${block}_ff_at${d}`, 'ff', 'a', block + d, 'b', 40);
  }
  return cases;
}

function build(c) {
  return Buffer.concat([Buffer.from(c.pre.repeat(c.n), 'utf8'), Buffer.from(c.mid, 'hex'),
    Buffer.from(c.post.repeat(c.m), 'utf8')]);
}

async function main() {
  const tok = JSON.parse(readFileSync(path.join(here, 'node_modules', 'tokenizers', 'package.json'), 'utf8'));
  const py = execFileSync('python3', ['-c', 'import platform; print(platform.python_version())']).toString().trim();
  const head = { generator: 'tests/adversarial/gen_expected.mjs', tokenizers: tok.version, python: py };
  const lines = [JSON.stringify({ header: head })];
  for (const c of smallCases()) {
    const e = await expected(build(c));
    const rec = { ...c, strict_offset: e.strict_offset, tokens: e.tokens, ids_sha256: e.ids_sha256 };
    if (e.ids.length <= 64) rec.ids = Array.from(e.ids);
    lines.push(JSON.stringify(rec));
  }
  writeFileSync(path.join(here, 'cases.jsonl'), lines.join('\n') + '\n');
  console.error(`cases.jsonl: ${lines.length - 1} cases`);
  if (process.argv[2] !== '--cases-only')
    writeFileSync(path.join(here, 'long.tsv'), `# ${JSON.stringify(head)}\n` + await longKinds());
}

// Importable (bench/adversarial/bench_hf.mjs) without writing anything.
if (!process.env.SIMDBPE_ADV_NO_MAIN) main();
