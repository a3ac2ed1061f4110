#!/usr/bin/env bash
# ab.sh - compare builds of simdbpe on one input set, in alternating rounds.
#
#   bench/ab.sh [-r RUNS] SET ROUNDS BUILD_DIR...
#
# Each round runs every build's `bench/bench_encode --cpu --best -r RUNS SET FILES...` in
# turn (RUNS default 3; --best is the fastest of runs 2.. by this thread's CPU time), so the
# builds share the machine's slow and quiet minutes; then prints each build's median MB/s
# over the rounds and the median of its per-round ratios to the first build. SET is
# english, code or multilingual: the documents bench/run.sh wrote to
# ${TMPDIR:-/tmp}/simdbpe-bench/SET (run it once first). A BUILD_DIR is a CMake build of the
# tree to compare (e.g. `cmake -S . -B /tmp/b1 -G Ninja -DCMAKE_BUILD_TYPE=Release
# -DSIMDBPE_BUILD_TESTS=OFF && ninja -C /tmp/b1 bench_encode`).
#
# On this project's 2-core machine differences under about 3% need 10 or more rounds, and a
# second set of rounds, to be told from the noise.
set -euo pipefail
runs=3
if [ "${1:-}" = "-r" ]; then
  runs=${2:?-r needs a number}
  shift 2
fi
if [ $# -lt 3 ]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
set_name=$1 rounds=$2
shift 2
me=ab.sh
. "$(dirname "$0")/args.sh"
need_count ROUNDS "$rounds" 1
need_count RUNS "$runs" 2
set_documents "$set_name"
for b in "$@"; do
  if [ ! -x "$b/bench/bench_encode" ]; then
    echo "ab.sh: $b/bench/bench_encode is not built" >&2
    exit 2
  fi
done

declare -A results ratios
for r in $(seq "$rounds"); do
  line="round $r:"
  first=""
  for b in "$@"; do
    mbs=$("$b/bench/bench_encode" --cpu --best -r "$runs" "$set_name" "${files[@]}" |
      awk '{for (i = 2; i <= NF; i++) if ($i == "MB/s") { print $(i - 1); exit }}')
    first=${first:-$mbs}
    results[$b]="${results[$b]:-} $mbs"
    ratios[$b]="${ratios[$b]:-} $(awk -v a="$mbs" -v b="$first" 'BEGIN {printf "%.4f", a / b}')"
    line="$line  $b $mbs"
  done
  echo "$line"
done
# The median of the per-round ratios to the first build is the steadier figure: a round's
# builds ran within seconds of each other, while whole rounds swing with the machine.
for b in "$@"; do
  # shellcheck disable=SC2086 # the lists are numbers
  echo "median  $b  $(printf '%s\n' ${results[$b]} | median) MB/s," \
    "median ratio to $1 $(printf '%s\n' ${ratios[$b]} | median) over $rounds rounds"
done
