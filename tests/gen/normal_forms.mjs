// normal_forms.mjs - HF tokenizers' NFKC, NFD and NFKD of every code point,
// alone and after 'e', for tests/encode/test_nfc.c.
//
//   cd tests/gen && npm ci && node normal_forms.mjs | zstd -19 -q \
//       -o ../data/normalizers/hf_forms.txt.zst
//
// One line per string the normalizer changes: "FORM CTX CP HEX", CTX "-"
// (the code point alone) or "e" (after the letter e), CP in hex, HEX the
// normalized string's UTF-8 bytes. Strings it leaves alone are not listed.
// Surrogates and U+000A (the separator of each batch) are skipped.
import tk from 'tokenizers';

const forms = {NFKC: tk.nfkcNormalizer(), NFD: tk.nfdNormalizer(), NFKD: tk.nfkdNormalizer()};
const out = [];
for (const [name, nz] of Object.entries(forms)) {
  for (const ctx of ['', 'e']) {
    for (let base = 1; base <= 0x10FFFF; base += 4096) {
      const items = [];
      for (let cp = base; cp < base + 4096 && cp <= 0x10FFFF; cp++)
        if (!(cp >= 0xD800 && cp <= 0xDFFF) && cp !== 10) items.push(cp);
      const res = nz.normalizeString(items.map(cp => ctx + String.fromCodePoint(cp)).join('\n'))
        .split('\n');
      if (res.length !== items.length) throw new Error(`${name}: batch at ${base} lost a line`);
      items.forEach((cp, i) => {
        if (res[i] !== ctx + String.fromCodePoint(cp))
          out.push(`${name} ${ctx || '-'} ${cp.toString(16)} ${Buffer.from(res[i]).toString('hex')}`);
      });
    }
  }
}
process.stdout.write(out.join('\n') + '\n');
