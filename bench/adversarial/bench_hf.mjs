// bench_hf.mjs - HF tokenizers' time on the adversarial inputs, the peer
// for bench_adversarial.c. Inputs come from gen_expected.mjs's mirror of
// adv_gen.h (imported), invalid kinds as Python-style replaced text (what
// simdbpe's replace mode encodes).
//   node bench/adversarial/bench_hf.mjs BYTES RUNS
// Output TSV: kind, MB, median seconds, MB/s, tokens.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const adv = path.join(here, '..', '..', 'tests', 'adversarial');
process.env.SIMDBPE_ADV_NO_MAIN = '1';
const gen = await import(path.join(adv, 'gen_expected.mjs'));
const bytes = Number(process.argv[2] || 1000000);
const runs = Number(process.argv[3] || 5);
console.log('kind\tMB\tmedian_s\tMB_per_s\ttokens');
for (let k = 0; k < gen.KINDS.length; k++) {
  const buf = gen.generate(k, bytes);
  const text = new TextDecoder('utf-8').decode(buf); // WHATWG = maximal subparts, as Python
  const times = [];
  let tokens = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    tokens = (await gen.hfIds(text)).length;
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  times.sort((a, b) => a - b);
  const med = times[Math.floor(runs / 2)];
  console.log(`${gen.KINDS[k][0]}\t${(buf.length / 1e6).toFixed(2)}\t${med.toFixed(3)}\t` +
    `${(buf.length / 1e6 / med).toFixed(2)}\t${tokens}`);
}
