#!/usr/bin/env bash
# run.sh - measures encoding time and peak memory on the adversarial inputs
# (tests/adversarial/adv_gen.h), ours against HF tokenizers in the same run.
#
#   bench/adversarial/run.sh [BUILD_DIR (default build)] [SIZES_MB (default 1,10)] [RUNS (default 5)]
#
# Builds bench_adversarial against BUILD_DIR/libsimdbpe.a (configure and
# build the library there first, Release), runs it (one forked child per
# kind and size: median of RUNS encodes, peak RSS), then HF tokenizers
# (npm, tests/adversarial/node_modules; `cd tests/adversarial && npm ci`)
# on the same 1 MB inputs, and prints both and the speed ratio per kind.
# Medians of several runs; the machine is shared, so compare ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
sizes=${2:-1,10}
runs=${3:-5}
out=$build/bench-adversarial
mkdir -p "$out"
cc -O2 -std=c11 -D_GNU_SOURCE -I"$root/include" -I"$root/tests/adversarial" \
   "$here/bench_adversarial.c" "$build/libsimdbpe.a" -ljansson -lxxhash -o "$out/bench_adversarial"
echo "# simdbpe ($(git -C "$root" rev-parse --short HEAD), $runs runs, median)"
"$out/bench_adversarial" "$sizes" "$runs" | tee "$out/simdbpe.tsv"
if [ -d "$root/tests/adversarial/node_modules/tokenizers" ]; then
  echo "# HF tokenizers on the 1 MB inputs ($runs runs, median)"
  node "$here/bench_hf.mjs" 1000000 "$runs" | tee "$out/hf.tsv"
  echo "# ratio: simdbpe MB/s / HF MB/s at 1 MB"
  awk -F'\t' 'NR==FNR { if ($2+0 > 0.5 && $2+0 < 1.5) ours[$1] = $4; next }
              FNR > 1 && ($1 in ours) { printf "%s\t%.2f\n", $1, ours[$1] / $4 }' \
      "$out/simdbpe.tsv" "$out/hf.tsv"
else
  echo "# HF tokenizers not installed (cd tests/adversarial && npm ci): peer skipped"
fi
