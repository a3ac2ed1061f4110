#!/usr/bin/env bash
# pair.sh - compare two builds of simdbpe in the same processes, pass for pass.
#
#   bench/pair.sh [-n PAIRS] SET PROCESSES BUILD_BASE BUILD_NEW
#
# Runs BUILD_BASE/bench/bench_pair PROCESSES times on the documents bench/run.sh wrote to
# ${TMPDIR:-/tmp}/simdbpe-bench/SET (english, code or multilingual), each time with both
# builds' libsimdbpe.so loaded side by side, PAIRS pairs of passes (default 12), each build
# loaded first in every other process; prints new/base speed of each process and their
# median. A BUILD is a build directory of the tree to compare (it has libsimdbpe.so):
#   cmake -S . -B /tmp/b1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMDBPE_BUILD_TESTS=OFF \
#     && ninja -C /tmp/b1
# On this project's 2-core VM a build against a copy of itself gives 0.97-1.02 a process:
# eight processes tell about 1.5%, where bench/ab.sh needs dozens of rounds (see
# bench_pair.c).
set -euo pipefail
pairs=12
if [ "${1:-}" = "-n" ]; then
  pairs=${2:?-n needs a number}
  shift 2
fi
if [ $# -ne 4 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
set_name=$1 procs=$2 base=$3 new=$4
me=pair.sh
. "$(dirname "$0")/args.sh"
need_count PAIRS "$pairs" 1
need_count PROCESSES "$procs" 1
set_documents "$set_name"
for b in "$base" "$new"; do
  if [ ! -e "$b/libsimdbpe.so" ]; then
    echo "pair.sh: $b/libsimdbpe.so is not built (a shared build: see the top of this file)" >&2
    exit 2
  fi
done
tool=$base/bench/bench_pair
if [ ! -x "$tool" ]; then
  echo "pair.sh: $tool is not built" >&2
  exit 2
fi
# The same path twice would be one library: a copy makes it two.
new_lib=$new/libsimdbpe.so
if [ "$(realpath "$base/libsimdbpe.so")" = "$(realpath "$new_lib")" ]; then
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  cp "$new_lib" "$copy/libsimdbpe.so"
  new_lib=$copy/libsimdbpe.so
fi
ratios=$(for p in $(seq "$procs"); do
  if [ $((p % 2)) = 1 ]; then
    "$tool" -n "$pairs" "$base/libsimdbpe.so" "$new_lib" "${files[@]}" |
      awk '{print $8}'
  else # the new build loaded first: its speed is the base's here
    "$tool" -n "$pairs" "$new_lib" "$base/libsimdbpe.so" "${files[@]}" |
      awk '{printf "%.4f\n", 1 / $8}'
  fi
done | sort -n)
echo "new/base by process:" $ratios # unquoted: one line
printf 'median %.4f over %d processes\n' "$(median <<<"$ratios")" "$procs"
