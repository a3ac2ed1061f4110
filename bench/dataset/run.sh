#!/usr/bin/env bash
# run.sh - end-to-end dataset encoding throughput, 1 vs 2 threads.
#
#   bench/dataset/run.sh [--runs N] [--no-peer] [--boost]
#
# Builds simdbpe (Release) into build-bench-dataset/ (or $SIMDBPE_BENCH_BUILD),
# then times whole `simdbpe encode` runs on mixed.jsonl.zst and english.txt.zst
# from $SIMDBPE_CORPUS_DIR or ../shared/corpus, alternating 1 and 2 threads,
# --runs times each (default 5), and prints medians (bench.py). With the peer
# (default), also times the same JSON Lines job done by tiktoken-rs in node
# (bench/dataset/peer_jsonl.mjs; installs bench/'s pinned peers with npm ci).
# The machine is shared and noisy: read the ratios and the medians, and the
# load average printed with each run.
#
# --boost runs the measurements with this session's scheduler autogroup at
# nice -15 (/proc/self/autogroup, as root). Linux shares the CPUs fairly
# between sessions, not threads, when autogroup is on: on a machine busy with
# other sessions a 2-thread run then gets no more CPU than a 1-thread run, and
# the ratio measures the other users, not simdbpe. Restored afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${SIMDBPE_BENCH_BUILD:-$root/build-bench-dataset}
runs=5 peer=1 boost=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --no-peer) peer=0 ;;
    --boost) boost=1 ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
  shift
done

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMDBPE_BUILD_TESTS=OFF \
  >/dev/null
ninja -C "$build" simdbpe_cli >/dev/null

corpus=${SIMDBPE_CORPUS_DIR:-$root/../shared/corpus}
[ -d "$corpus/corpus" ] && corpus=$corpus/corpus
out=$(mktemp -d "${TMPDIR:-/tmp}/simdbpe-dataset-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT

args=("$build/simdbpe" "$corpus" "$out" "$runs")
if [ "$peer" = 1 ]; then
  if [ ! -d "$root/bench/node_modules/tiktoken-rs-node-linux-x64-gnu" ]; then
    (cd "$root/bench" && npm ci --no-audit --no-fund >/dev/null)
  fi
  args+=(--peer "$here/peer_jsonl.mjs")
fi
echo "# $(nproc) CPUs, simdbpe $("$build/simdbpe" --version), corpus $corpus" >&2
if [ "$boost" = 1 ]; then
  old=$(sed 's/.* nice //' /proc/self/autogroup)
  echo -15 > /proc/self/autogroup
  trap 'echo "$old" > /proc/self/autogroup; rm -rf "$out"' EXIT
  echo "# scheduler: $(cat /proc/self/autogroup)" >&2
fi
/usr/bin/python3 "$here/bench.py" "${args[@]}"
