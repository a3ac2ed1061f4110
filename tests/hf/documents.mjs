// documents.mjs - the texts the checks against HF compare simdbpe on:
// text found on this machine (licences, package documentation, this
// project's own sources), random strings over all of Unicode, and a sample
// of the public corpora's documents.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// Up to 20 licences, 100 package documents and 80 of the project's files,
// each cut to 20,000 characters; files that are not UTF-8 are left out.
export function machineTexts(project) {
  const docs = [];
  function addFile(p, limit) {
    try {
      const b = fs.readFileSync(p);
      const t = b.toString('utf8');
      if (Buffer.from(t, 'utf8').equals(b) && t.length > 0)
        docs.push(t.length > limit ? t.slice(0, limit) : t);
    } catch { /* unreadable: skip */ }
  }
  function walk(dir, filter, max) {
    let found = 0;
    const stack = [dir];
    while (stack.length && found < max) {
      const d = stack.pop();
      let entries = [];
      try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { continue; }
      entries.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules' &&
            !e.name.startsWith('build')) stack.push(p);
        else if (e.isFile() && filter(p) && found < max) { addFile(p, 20000); found++; }
      }
    }
  }
  walk('/usr/share/common-licenses', () => true, 20);
  walk('/usr/share/doc', (p) => /copyright$|README|changelog$/.test(p), 100);
  walk(path.join(project, 'src'), (p) => /\.(c|h)$/.test(p), 40);
  walk(path.join(project, 'tools'), (p) => /\.(c|h|md|sh|mjs)$/.test(p), 40);
  return docs;
}

// 3,600 random strings (the same on every run): code points from every
// plane (no surrogates), runs of one class, whitespace and line breaks,
// contractions; then letters, marks and digits new in Unicode 15.0-16.0
// (Kawi, Nag Mundari, CJK Extensions H and I, Garay, Sunuwar, Kirat Rai,
// Cyrillic U+1C89), which Oniguruma's tables in Debian (Unicode 14) do not
// have: the generic regex path must see them as HF (Unicode 16) does.
// `src` (randomSource()) is the generator and its pieces of text, which a
// caller may go on drawing from.
export function randomSource() {
  let x = 0x9E3779B97F4A7C15n;
  function rnd(n) {
    x ^= (x << 13n) & 0xFFFFFFFFFFFFFFFFn; x ^= x >> 7n; x ^= (x << 17n) & 0xFFFFFFFFFFFFFFFFn;
    return Number(x % BigInt(n));
  }
  const pieces = [' ', '  ', '\n', '\r\n', ' \n ', '\t', "'s", "'LL", "'ſ", '123456', 'Hello',
    'WORLD', 'über', 'ǅemal', '日本語', 'カタカナ', '١٢٣', 'e\u0301', '\u3000', '\u00A0', '...',
    '/', '/\n', '“quoted”', '—', '😀😀', '\u200D', '\uFEFF', 'ßẞ',
    // compatibility characters (NFKC), a mark after a precomposed letter
    'ﬁ', '①', 'Ａｂ', 'ｶﾞ', '½', '\u2002', 'ℌ', 'é\u0323', '\uFDFA'];
  return { rnd, pieces };
}
export function randomStrings(src = randomSource()) {
  const docs = [];
  const { rnd, pieces } = src;
  for (let i = 0; i < 3000; i++) {
    let s = '';
    const len = 1 + rnd(30);
    for (let k = 0; k < len; k++) {
      const r = rnd(4);
      if (r === 0) s += pieces[rnd(pieces.length)];
      else if (r === 1) s += String.fromCharCode(32 + rnd(95));
      else if (r === 2) s += String.fromCodePoint(0x80 + rnd(0x3000 - 0x80));
      else {
        let cp = rnd(0x110000);
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0x4E00 + rnd(0x5000);
        s += String.fromCodePoint(cp);
      }
    }
    docs.push(s);
  }
  const fresh = [[0x11F00, 0x11F5A], [0x1E4D0, 0x1E4F9], [0x31350, 0x323AF], [0x2EBF0, 0x2EE5D],
    [0x10D40, 0x10D8F], [0x11BC0, 0x11BE1], [0x16D40, 0x16D79], [0x1C89, 0x1C8A]];
  for (let i = 0; i < 600; i++) {
    let s = '';
    const len = 1 + rnd(20);
    for (let k = 0; k < len; k++) {
      const r = rnd(3);
      if (r === 0) s += pieces[rnd(pieces.length)];
      else {
        const [lo, hi] = fresh[rnd(fresh.length)];
        s += String.fromCodePoint(lo + rnd(hi - lo + 1));
      }
    }
    docs.push(s);
  }
  return docs;
}

// The corpus folder: $SIMDBPE_CORPUS_DIR (or <project>/../shared) as a
// folder laid out like shared/ (with corpus/ in it) or the corpus folder
// itself, as tests/corpus_util.h finds it; null when it has no corpora.
export function corpusDir(project) {
  const env = process.env.SIMDBPE_CORPUS_DIR;
  const root = env ? env : path.join(project, '..', 'shared');
  const dir = fs.existsSync(path.join(root, 'corpus')) ? path.join(root, 'corpus') : root;
  return fs.existsSync(path.join(dir, 'english.index.tsv')) ? dir : null;
}

// `count` documents of each corpus (english, code, multilingual), evenly
// spaced through its index, each cut to its first `limit` characters
// (never inside a surrogate pair). Returns { docs, skipped } with the
// reason in skipped when the corpora are not there.
export function corpusSample(project, count, limit) {
  const dir = corpusDir(project);
  if (!dir) return { docs: [], skipped: 'no corpora in $SIMDBPE_CORPUS_DIR or ../shared/corpus' };
  const docs = [];
  for (const name of ['english', 'code', 'multilingual']) {
    const rows = fs.readFileSync(path.join(dir, `${name}.index.tsv`), 'utf8').trim().split('\n')
      .slice(1).map((l) => l.split('\t').map(Number));
    const data = execFileSync('zstd', ['-dc', path.join(dir, `${name}.txt.zst`)],
      { maxBuffer: 1 << 30 });
    const step = Math.max(1, rows.length / count);
    for (let i = 0, got = 0; i < rows.length && got < count; i += step, got++) {
      const [off, len] = rows[Math.floor(i)];
      let t = data.subarray(off, off + len).toString('utf8');
      if (t.length > limit) {
        t = t.slice(0, limit);
        const last = t.charCodeAt(t.length - 1);
        if (last >= 0xD800 && last <= 0xDBFF) t = t.slice(0, -1);
      }
      docs.push(t);
    }
  }
  return { docs, skipped: null };
}

// simdbpe decode (BIN) of every document's ids (one line each; the CLI
// writes the texts separated by "\n") against HF's decode of the same ids,
// joined alike; says which on stderr and returns whether they agree.
export function decodeMatches(bin, work, label, model, idLists, hfTexts) {
  const ids = path.join(work, `${label}.ids`);
  fs.writeFileSync(ids, idLists.map((l) => l.join(' ')).join('\n') + '\n');
  const got = execFileSync(bin, ['decode', '-q', '-m', model, ids], { maxBuffer: 1 << 30 })
    .toString();
  const want = hfTexts.join('\n');
  if (got === want) {
    console.error(`${label}: decoding ${idLists.length} documents gives HF's text`);
    return true;
  }
  let k = 0;
  while (k < got.length && got[k] === want[k]) k++;
  console.error(`${label}: decoding differs from HF's at character ${k}: ` +
    `HF ${JSON.stringify(want.slice(k, k + 40))} | simdbpe ${JSON.stringify(got.slice(k, k + 40))}`);
  return false;
}
