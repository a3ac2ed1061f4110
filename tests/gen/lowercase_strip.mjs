// lowercase_strip.mjs - HF tokenizers' Lowercase and Strip normalizers on
// every code point, for tests/encode/test_normalizer.c.
//
//   cd tests/gen && npm ci && node lowercase_strip.mjs \
//       > ../data/normalizers/hf_lowercase_strip.txt
//
// "L CP HEX" for each code point Lowercase changes (HEX: the UTF-8 bytes of
// the result), "S CP" for each one Strip(left, right) removes when it is
// the whole text (Rust's char::is_whitespace). Code points alone, in batches
// separated by U+000A (itself listed by hand: Strip removes it, Lowercase
// keeps it); surrogates skipped.
import tk from 'tokenizers';

const lower = tk.lowercase(), strip = tk.stripNormalizer(true, true);
const out = [];
for (let base = 0; base <= 0x10FFFF; base += 4096) {
  const items = [];
  for (let cp = base; cp < base + 4096 && cp <= 0x10FFFF; cp++)
    if (!(cp >= 0xD800 && cp <= 0xDFFF) && cp !== 10) items.push(cp);
  const res = lower.normalizeString(items.map((cp) => String.fromCodePoint(cp)).join('\n'))
    .split('\n');
  if (res.length !== items.length) throw new Error(`batch at ${base} lost a line`);
  items.forEach((cp, i) => {
    if (res[i] !== String.fromCodePoint(cp))
      out.push(`L ${cp.toString(16)} ${Buffer.from(res[i]).toString('hex')}`);
  });
}
if (lower.normalizeString('\n') !== '\n') throw new Error('Lowercase changes U+000A');
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue;
  if (strip.normalizeString(String.fromCodePoint(cp)) === '') out.push(`S ${cp.toString(16)}`);
}
process.stdout.write(out.join('\n') + '\n');
