// common.mjs - helpers shared by the oracle scripts reference_classes.mjs and
// reference_props.mjs: code point range, package versions, run-length output.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));

export const MAX_CP = 0x10ffff;
export const isSurrogate = (cp) => cp >= 0xd800 && cp <= 0xdfff;

// The version of an installed npm package (node_modules next to this file).
export function packageVersion(name) {
  const file = path.join(here, 'node_modules', name, 'package.json');
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

export function hex(cp) {
  return cp.toString(16).toUpperCase().padStart(4, '0');
}

// Maximal runs of one value over U+0000..U+10FFFF as "START END LABEL" lines
// (hex, inclusive); label(value) is the text written for a value.
export function runLines(values, label = String) {
  const lines = [];
  let start = 0;
  for (let cp = 1; cp <= MAX_CP + 1; cp++) {
    if (cp <= MAX_CP && values[cp] === values[start]) continue;
    lines.push(`${hex(start)} ${hex(cp - 1)} ${label(values[start])}`);
    start = cp;
  }
  return lines;
}
