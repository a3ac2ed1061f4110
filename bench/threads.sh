#!/usr/bin/env bash
# threads.sh - how the `simdbpe encode` process scales from one thread to two on one pass.
#
#   bench/threads.sh [--rounds N] [--model NAME] DIR...
#
# Each DIR holds documents, one a file (bench/run.sh writes them under
# ${TMPDIR:-/tmp}/simdbpe-bench/). A round runs, each as a fresh process (cli_pass.py),
# `simdbpe encode --threads 1` and then `--threads 2` over every file of DIR; the table gives
# the median wall-clock MB/s of each and the median of the rounds' ratios (two threads over
# one, by wall clock: what a user waits). Built like run.sh (build-bench/ or
# $SIMDBPE_BENCH_BUILD); run it after run.sh has written the inputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SIMDBPE_BENCH_BUILD:-$root/build-bench}
rounds=5 model=gpt2
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    -*) sed -n '2,12p' "$0" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" simdbpe >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "model $model, $rounds rounds, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| input | MB | 1 thread MB/s | 2 threads MB/s | 2 / 1 (median of rounds) |"
echo "|---|---:|---:|---:|---:|"
for dir in "$@"; do
  files=("$dir"/*)
  for ((r = 0; r < rounds; r++)); do
    for t in 1 2; do
      python3 "$here/cli_pass.py" --threads $t "$build/simdbpe" "$model" "t$t" "$out/ids.u32" \
        "${files[@]}"
    done
  done | python3 -c '
import statistics, sys
rows = [l.split("\t") for l in sys.stdin.read().splitlines()]
size = int(rows[0][2])
one = [size / float(r[4]) / 1e6 for r in rows if r[0] == "t1"]
two = [size / float(r[4]) / 1e6 for r in rows if r[0] == "t2"]
ratio = statistics.median(b / a for a, b in zip(one, two))
print(f"| {sys.argv[1]} | {size / 1e6:.1f} | {statistics.median(one):.1f} | "
      f"{statistics.median(two):.1f} | {ratio:.2f}x |")' "$(basename "$dir")"
done
