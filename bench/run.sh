#!/usr/bin/env bash
# run.sh - the benchmark: simdbpe and its peers on the same inputs, in one run.
#
#   bench/run.sh [--full] [--runs N] [--peer-runs N] [--hf-runs N] [--sample-mb MB]
#                [--adversarial-mb MB] [--no-peers]
#
# 1. builds simdbpe (Release, into build-bench/ or $SIMDBPE_BENCH_BUILD);
# 2. installs the peers pinned in bench/package.json + package-lock.json with npm ci
#    (tiktoken-rs-node-linux-x64-gnu, tiktoken, tokenizers);
# 3. writes the inputs (bench/gen_inputs.py): documents of the english, code and
#    multilingual corpora from $SIMDBPE_CORPUS_DIR or ../shared/corpus (a sample of
#    --sample-mb MB each, default 8, spread over the corpus; --full for all of it), and
#    the adversarial single pieces (--adversarial-mb MB each, default 5);
# 4. times simdbpe (bench_encode: one thread, one encoder, every document, median of --runs
#    runs, default 3; on the corpora also one pass of a fresh encoder, median of 3 processes)
#    and each peer (bench/peers.mjs) on the same files. The peers run --peer-runs times
#    (default --runs; they take minutes on the full corpora), one run per round, and
#    simdbpe is timed again at the start of every round: its table entry is the median of
#    its rounds, measured in the same minutes as the peers' (a slow stretch of this shared
#    machine lands on both, not on one). A peer that crashes, panics or runs past
#    $SIMDBPE_PEER_TIMEOUT seconds (default 300) on an input is reported as crashed, with the
#    reason, and not run again on that input. HF, which takes minutes a run, runs only in
#    the first --hf-runs rounds (default all of them, 0 for none), so that more rounds of
#    tiktoken-rs, the peer the targets are set against, fit in the same time;
# 5. prints the table (bench/report.py): MB/s, Mtokens/s, ratios to tiktoken-rs and HF,
#    then simdbpe's stage breakdown (validate, pre-tokenize, merge), kernel GB/s, one pass
#    of the command-line tool over each corpus on 1 and 2 threads, and model load times
#    (embedded, compiled .sbpe, vocab.json + merges.txt; bench_load).
#
# The machine is shared and noisy: read the ratios, which compare runs made minutes apart
# on the same files, and the medians.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SIMDBPE_BENCH_BUILD:-$root/build-bench}
runs=3 peer_runs="" hf_runs="" sample=8 adv=5 full="" peers=1 peer_timeout=${SIMDBPE_PEER_TIMEOUT:-300}
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=--full ;;
    --runs) runs=$2; shift ;;
    --peer-runs) peer_runs=$2; shift ;;
    --hf-runs) hf_runs=$2; shift ;;
    --sample-mb) sample=$2; shift ;;
    --adversarial-mb) adv=$2; shift ;;
    --no-peers) peers=0 ;;
    *) sed -n '2,31p' "$0" >&2; exit 2 ;;
  esac
  shift
done
peer_runs=${peer_runs:-$runs}
hf_runs=${hf_runs:-$peer_runs}
for v in "runs $runs" "peer-runs $peer_runs" "hf-runs $hf_runs"; do
  case "${v#* }" in
    '' | *[!0-9]*)
      echo "run.sh: --${v% *} must be a whole number, got '${v#* }'" >&2
      exit 2
      ;;
  esac
done
if [ "$runs" -lt 1 ] || [ "$peer_runs" -lt 1 ]; then
  echo "run.sh: --runs and --peer-runs must be at least 1" >&2
  exit 2
fi
rounds=$peer_runs # simdbpe is timed once a round; without peers there is one round
[ "$peers" = 1 ] || rounds=1

echo "# building simdbpe (Release) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMDBPE_BUILD_TESTS=OFF \
  >/dev/null
ninja -C "$build" bench_encode bench_load simdbpe_cli >/dev/null

if [ "$peers" = 1 ]; then
  if [ ! -d "$here/node_modules/tiktoken-rs-node-linux-x64-gnu" ]; then
    echo "# installing the peers (npm ci in bench/)" >&2
    (cd "$here" && npm ci --no-audit --no-fund >/dev/null)
  fi
fi

corpus=${SIMDBPE_CORPUS_DIR:-$root/../shared/corpus}
work=${TMPDIR:-/tmp}/simdbpe-bench
mkdir -p "$work"
if [ -d "$corpus" ]; then
  echo "# inputs: corpora from $corpus (${full:-sample of $sample MB each}), adversarial $adv MB" >&2
  python3 "$here/gen_inputs.py" "$work" --corpus "$corpus" --sample-mb "$sample" \
    --adversarial-mb "$adv" $full
else
  echo "# corpora not found at $corpus (set SIMDBPE_CORPUS_DIR): corpus benchmarks skipped" >&2
  python3 "$here/gen_inputs.py" "$work" --adversarial-mb "$adv"
fi

results=$work/results.tsv
: >"$results"
sets=()
for name in english code multilingual; do
  [ -d "$work/$name" ] && sets+=("$name")
done
for kind in one_letter random_letters digits spaces punctuation one_emoji; do
  sets+=("adversarial/$kind")
done

# One peer run on an input, as a results line (or a "crashed" line, returning 1).
run_peer() {
  local label=$1 peer=$2 out code msg
  shift 2
  if out=$(timeout "$peer_timeout" node "$here/peers.mjs" "$peer" 1 "$@" 2>"$work/err.txt"); then
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("\t".join([sys.argv[2], r["peer"], str(r["bytes"]), str(r["tokens"]), "%.6f" % r["seconds"], "%.6f" % r["cpu_seconds"]]))' \
      "$out" "$label" >>"$results"
  else
    code=$?
    if [ "$code" = 124 ]; then
      msg="no result within ${peer_timeout} s (killed)"
    else
      msg=$(grep -m1 -iE "panic|error|abort|overflow|killed" "$work/err.txt" | cut -c1-100 || true)
      msg=${msg:-exit status $code}
    fi
    printf '%s\t%s\tcrashed\t%s\n' "$label" "$peer" "$msg" >>"$results"
    return 1
  fi
}

for set in "${sets[@]}"; do
  if [ -d "$work/$set" ]; then files=("$work/$set"/*); else files=("$work/$set"); fi
  label=${set#adversarial/}
  if [ "$set" = "$label" ]; then # a corpus: also one pass of a fresh encoder, 3 processes
    echo "# $label: simdbpe, cold" >&2
    for i in 1 2 3; do "$build/bench/bench_encode" --tsv -r 1 "$label" "${files[@]}"; done |
      sort -t "$(printf '\t')" -k6,6g | sed -n 2p |
      awk -F '\t' -v OFS='\t' '{ $2 = "simdbpe-cold"; print }' >>"$results"
  fi
  live=(tiktoken-rs tiktoken hf)
  for round in $(seq 1 "$rounds"); do
    echo "# $label, round $round of $rounds: simdbpe" >&2
    "$build/bench/bench_encode" --tsv -r "$runs" "$label" "${files[@]}" >>"$results"
    [ "$peers" = 1 ] || continue
    still=()
    for peer in "${live[@]}"; do
      if [ "$peer" = hf ] && [ "$round" -gt "$hf_runs" ]; then
        still+=("$peer")
        continue
      fi
      echo "# $label, round $round of $rounds: $peer" >&2
      run_peer "$label" "$peer" "${files[@]}" && still+=("$peer")
    done
    live=("${still[@]}")
  done
done
echo
echo "simdbpe $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); single thread; simdbpe: medians of $runs runs, in each of $rounds rounds; peers: one run a round (hf: in the first $((hf_runs < rounds ? hf_runs : rounds))); the table: medians over the rounds"
echo
python3 "$here/report.py" "$results"
echo
grep -P '\tcrashed\t' "$results" | awk -F'\t' '{printf "crashed: %s on %s: %s\n", $2, $1, $4}' || true
echo
echo "simdbpe stages and kernels (this thread's CPU time, steadier than the wall clock here):"
for set in english code multilingual; do
  [ -d "$work/$set" ] || continue
  "$build/bench/bench_encode" --cpu -r "$runs" --stages "$set" "$work/$set"/*
done
if [ -d "$work/english" ]; then
  "$build/bench/bench_encode" --cpu -r "$runs" --kernels english "$work/english"/* | grep kernels
fi
echo
echo "the command-line tool, one pass of each corpus with fresh encoders (what a job that tokenizes a"
echo "corpus gets): simdbpe encode --output-format u16 -q, each document a file, wall clock, median of 3:"
python3 - "$build/simdbpe" "$work" <<'PY'
import os, subprocess, sys, time
tool, work = sys.argv[1], sys.argv[2]
out = os.path.join(work, "cli.u16")
for name in ("english", "code", "multilingual"):
    d = os.path.join(work, name)
    if not os.path.isdir(d):
        continue
    files = [os.path.join(d, f) for f in sorted(os.listdir(d))]
    size = sum(os.path.getsize(f) for f in files)
    for threads in (1, 2):
        times = []
        for _ in range(3):
            t = time.monotonic()
            subprocess.run([tool, "encode", "--output-format", "u16", "--threads", str(threads),
                            "-q", "-o", out] + files, check=True)
            times.append(time.monotonic() - t)
        times.sort()
        print("cli  %-14s %d thread%s  %7.1f MB/s" % (name, threads, "s" if threads > 1 else " ",
                                                      size / times[1] / 1e6))
if os.path.exists(out):
    os.remove(out)
PY
echo
echo "model loading (medians; first in fresh processes, then repeated in one process per model):"
"$build/simdbpe" compile -q -m gpt2 -o "$work/gpt2.sbpe"
models=(gpt2 "$work/gpt2.sbpe" "$root/src/model/gpt2")
for m in "${models[@]}"; do
  for i in 1 2 3 4 5; do "$build/bench/bench_load" -r 1 "$m"; done |
    awk '{print $3}' | sort -n | sed -n 3p | xargs printf "fresh process  %-40s %s ms\n" "$m"
done
# One process per model: after another model's loads and frees, glibc's heap
# trimming gave the vocab.json + merges.txt load 46-57 ms instead of 31-35
# (every load faulted its pages in again), which measured glibc, not the loader.
for m in "${models[@]}"; do "$build/bench/bench_load" -r 11 "$m"; done
