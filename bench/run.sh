#!/usr/bin/env bash
# run.sh - the benchmark: simdbpe and its peers, each on one pass over text it has not seen.
#
#   bench/run.sh [--full] [--rounds N] [--hf-rounds N] [--reencode-runs N] [--model NAME]...
#                [--sample-mb MB] [--adversarial-mb MB] [--peers LIST | --no-peers]
#                [--inputs LIST]
#
# 1. builds simdbpe (Release, into build-bench/ or $SIMDBPE_BENCH_BUILD) and checks that it
#    opens every --model (default gpt2; repeat the option or give a comma list, e.g.
#    --model gpt2,cl100k_base): a model simdbpe refuses stops the run with its message;
# 2. installs the peers pinned in bench/package.json + package-lock.json with npm ci
#    (tiktoken-rs-node-linux-x64-gnu, tiktoken, tokenizers); with the gigatoken peer, builds
#    GigaToken's encoder with the peer's build.sh ($SIMDBPE_GIGATOKEN_DIR, default
#    ../shared/peers/gigatoken) into BUILD/gigatoken: if that fails, its output and exit 1;
# 3. writes the inputs (bench/gen_inputs.py): documents of the english, code and
#    multilingual corpora from $SIMDBPE_CORPUS_DIR or ../shared/corpus (a sample of
#    --sample-mb MB each, default 8, spread over the corpus; --full for all of it), and
#    the adversarial single pieces (--adversarial-mb MB each, default 5); --inputs takes a
#    comma list of english, code, multilingual and adversarial (default all) to time;
# 4. for each model and input, --rounds rounds (default 5). A round times, each as a fresh
#    process on one thread, one pass over every document of the input:
#      simdbpe      bench_encode -r 1: model opened, a fresh encoder, then the pass timed;
#      simdbpe-cli  the whole `simdbpe encode -m MODEL --output-format u32 --threads 1 -o F`
#                   process: start, model, reading the files, encoding, writing (cli_pass.py);
#      tiktoken-rs, tiktoken, hf  bench/peers.mjs with the same encoding (hf: gpt2 only,
#                   and only in the first --hf-rounds rounds, default all, 0 for none);
#                   --peers takes a comma list of them and gigatoken (default the three
#                   npm peers);
#    and, if --reencode-runs N > 0 (default 3), simdbpe-reencode: bench_encode --warm -r N,
#    the median of N passes over documents the encoder has already encoded once (the speed
#    of encoding the same text again, not what a user who tokenizes a corpus once gets).
#    With gigatoken, the round goes on over the same text as one file (gtenc encodes a file
#    as one document; for a corpus, its documents joined by newlines): simdbpe, simdbpe-cli
#    and simdbpe-reencode again on that file, then gtenc (bench/gt_pass.py: its first and
#    second pass, the .tiktoken files of $SIMDBPE_TIKTOKEN_DIR, default
#    ../shared/models/tiktoken), whose ids are compared with simdbpe-cli's.
#    A peer that crashes, panics or runs past $SIMDBPE_PEER_TIMEOUT seconds (default 300)
#    on an input is reported as crashed, with the reason, and not run again on that input;
# 5. prints the table (bench/report.py --cpu): MB/s of each by CPU time (medians over the
#    rounds; on a shared machine the wall clock waits for a core), and the
#    ratios to tiktoken-rs as the median of the ratios within each round, whose two runs
#    were made seconds apart; the table against GigaToken likewise; writes the corpora's
#    MB/s by CPU time as a bar chart to $SIMDBPE_BENCH_CHART (default WORK/speed.svg,
#    WORK being ${TMPDIR:-/tmp}/simdbpe-bench); then the ratios round by round, simdbpe's
#    stages on one pass (validate, pre-tokenize, the rest), kernel GB/s, and model load
#    times (bench_load).
#
# The machine is shared and noisy: read the per-round ratios, and the load average printed
# with the table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SIMDBPE_BENCH_BUILD:-$root/build-bench}
rounds=5 hf_rounds="" reencode=3 sample=8 adv=5 full="" peers=1 models=()
inputs=(english code multilingual adversarial)
peer_list=(tiktoken-rs tiktoken hf)
peer_timeout=${SIMDBPE_PEER_TIMEOUT:-300}
usage() {
  sed -n '2,49p' "$0" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=--full ;;
    --rounds | --hf-rounds | --reencode-runs | --model | --peers | --sample-mb | --adversarial-mb | --inputs)
      [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --rounds) rounds=$2 ;;
        --hf-rounds) hf_rounds=$2 ;;
        --reencode-runs) reencode=$2 ;;
        --model)
          IFS=, read -r -a more <<<"$2,"
          [ ${#more[@]} -gt 0 ] || more=("")
          models+=("${more[@]}") ;;
        --peers) IFS=, read -r -a peer_list <<<"$2," ;;
        --inputs) IFS=, read -r -a inputs <<<"$2," ;;
        --sample-mb) sample=$2 ;;
        --adversarial-mb) adv=$2 ;;
      esac
      shift ;;
    --no-peers) peers=0 ;;
    *) usage ;;
  esac
  shift
done
hf_rounds=${hf_rounds:-$rounds}
[ ${#models[@]} -gt 0 ] || models=(gpt2)
for v in "rounds $rounds" "hf-rounds $hf_rounds" "reencode-runs $reencode"; do
  case "${v#* }" in
    '' | *[!0-9]*)
      echo "run.sh: --${v% *} must be a whole number, got '${v#* }'" >&2
      exit 2
      ;;
  esac
done
if [ "$rounds" -lt 1 ]; then
  echo "run.sh: --rounds must be at least 1" >&2
  exit 2
fi
for p in "${peer_list[@]}"; do
  case "$p" in
    tiktoken-rs | tiktoken | hf | gigatoken) ;;
    *)
      echo "run.sh: --peers takes a comma list of tiktoken-rs, tiktoken, hf and gigatoken, got '$p'" >&2
      exit 2
      ;;
  esac
done
[ ${#peer_list[@]} -gt 0 ] || peers=0
for i in "${inputs[@]}"; do
  case "$i" in
    english | code | multilingual | adversarial) ;;
    *)
      echo "run.sh: --inputs takes a comma list of english, code, multilingual and adversarial, got '$i'" >&2
      exit 2
      ;;
  esac
done
for m in "${models[@]}"; do
  if [[ ! $m =~ ^[A-Za-z0-9_.-]+$ ]]; then
    echo "run.sh: --model takes encoding names such as gpt2 or cl100k_base, got '$m'" >&2
    exit 2
  fi
done
me=run.sh
. "$here/args.sh"
gigatoken=""
if [ "$peers" = 1 ] && [[ " ${peer_list[*]} " == *" gigatoken "* ]]; then
  gigatoken=1
  tiktoken_dir "${models[@]}"
fi

echo "# building simdbpe (Release) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMDBPE_BUILD_TESTS=OFF \
  >/dev/null
ninja -C "$build" bench_encode bench_load simdbpe_cli >/dev/null

work=${TMPDIR:-/tmp}/simdbpe-bench
mkdir -p "$work"
printf 'hello world\n' >"$work/probe.txt"
for m in "${models[@]}"; do
  if ! "$build/simdbpe" encode -q -m "$m" -o "$work/probe.ids" "$work/probe.txt" 2>"$work/err.txt"; then
    echo "run.sh: simdbpe does not open model '$m': $(head -c 300 "$work/err.txt")" >&2
    exit 2
  fi
done

if [ "$peers" = 1 ] && [[ " ${peer_list[*]} " == *" tiktoken"* || " ${peer_list[*]} " == *" hf "* ]] &&
  [ ! -d "$here/node_modules/tiktoken-rs-node-linux-x64-gnu" ]; then
  echo "# installing the peers (npm ci in bench/)" >&2
  (cd "$here" && npm ci --no-audit --no-fund >/dev/null)
fi
[ -z "$gigatoken" ] || build_gigatoken "$build"

corpus=${SIMDBPE_CORPUS_DIR:-$root/../shared/corpus}
if [ -d "$corpus" ]; then
  echo "# inputs: corpora from $corpus (${full:-sample of $sample MB each}), adversarial $adv MB" >&2
  python3 "$here/gen_inputs.py" "$work" --corpus "$corpus" --sample-mb "$sample" \
    --adversarial-mb "$adv" $full ${gigatoken:+--whole}
else
  echo "# corpora not found at $corpus (set SIMDBPE_CORPUS_DIR): corpus benchmarks skipped" >&2
  python3 "$here/gen_inputs.py" "$work" --adversarial-mb "$adv"
fi

results=$work/results.tsv gt_results=$work/results-gigatoken.tsv
: >"$results"
: >"$gt_results"
sets=()
for name in english code multilingual; do
  [[ " ${inputs[*]} " == *" $name "* ]] && [ -d "$work/$name" ] && sets+=("$name")
done
if [[ " ${inputs[*]} " == *" adversarial "* ]]; then
  for kind in one_letter random_letters digits spaces punctuation one_emoji; do
    sets+=("adversarial/$kind")
  done
fi

# run_peer LABEL PEER MODEL FILE...: one pass of a fresh peer process, as a results line
# (or a "crashed" line, returning 1).
run_peer() {
  local label=$1 peer=$2 model=$3 out code msg load
  shift 3
  load=$(cut -d' ' -f1 /proc/loadavg)
  if out=$(timeout "$peer_timeout" node "$here/peers.mjs" "$peer" "$model" "$@" 2>"$work/err.txt"); then
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("\t".join([sys.argv[2], r["peer"], str(r["bytes"]), str(r["tokens"]), "%.6f" % r["seconds"], "%.6f" % r["cpu_seconds"], sys.argv[3], "-"]))' \
      "$out" "$label" "$load" >>"$results"
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

# run_simdbpe LABEL MODEL OUT FILE...: simdbpe's runs of a round as results lines: one pass
# of a fresh encoder, the `simdbpe encode` process (its ids left in OUT) and the re-encode.
run_simdbpe() {
  local label=$1 model=$2 out=$3
  shift 3
  "$build/bench/bench_encode" --tsv -r 1 -m "$model" "$label" "$@" | stamp
  python3 "$here/cli_pass.py" --keep "$build/simdbpe" "$model" "$label" "$out" "$@"
  if [ "$reencode" -gt 0 ]; then
    "$build/bench/bench_encode" --tsv --warm -r "$reencode" -m "$model" "$label" "$@" |
      awk -F '\t' -v OFS='\t' '{ $2 = "simdbpe-reencode"; print }' | stamp
  fi
}

started=$(date +%s)
for model in "${models[@]}"; do
  for set in "${sets[@]}"; do
    if [ -d "$work/$set" ]; then files=("$work/$set"/*); else files=("$work/$set"); fi
    label="$model ${set#adversarial/}"
    whole=$work/whole/$set
    [ -d "$work/$set" ] || whole=$work/$set
    live=()
    for p in "${peer_list[@]}"; do
      if [ "$p" != hf ] || [ "$model" = gpt2 ]; then live+=("$p"); fi
    done
    for round in $(seq 1 "$rounds"); do
      echo "# $label, round $round of $rounds" >&2
      run_simdbpe "$label" "$model" "$work/cli.u32" "${files[@]}" >"$work/round.tsv"
      cat "$work/round.tsv" >>"$results"
      [ "$peers" = 1 ] && [ ${#live[@]} -gt 0 ] || continue
      still=()
      for peer in "${live[@]}"; do
        if [ "$peer" = hf ] && [ "$round" -gt "$hf_rounds" ]; then
          still+=("$peer")
          continue
        elif [ "$peer" = gigatoken ]; then
          # An adversarial input is one file already: simdbpe's runs above were on it.
          if [ "$whole" != "${files[0]}" ]; then
            run_simdbpe "$label" "$model" "$work/cli.u32" "$whole" >"$work/round.tsv"
          fi
          cat "$work/round.tsv" >>"$gt_results"
          python3 "$here/gt_pass.py" --timeout "$peer_timeout" --check "$work/cli.u32" \
            "$gtenc" "$ranks" "$model" "$label" "$whole" >>"$gt_results" && still+=("$peer")
          continue
        fi
        run_peer "$label" "$peer" "$model" "${files[@]}" && still+=("$peer")
      done
      live=("${still[@]}")
      rm -f "$work/cli.u32"
    done
  done
done
again=""
[ "$reencode" = 0 ] || again=" (simdbpe-reencode: median of $reencode passes after one untimed)"
minutes=$((($(date +%s) - started + 59) / 60))
echo
echo "simdbpe $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, $minutes min; one thread; every figure one pass of a fresh process over the documents, $rounds rounds$again; hf in the first $((hf_rounds < rounds ? hf_rounds : rounds)) rounds"
echo
chart=${SIMDBPE_BENCH_CHART:-$work/speed.svg}
python3 "$here/report.py" "$results" --gigatoken "$gt_results" --cpu --svg "$chart" \
  --title "simdbpe, GigaToken and tiktoken-rs: MB/s by CPU time, one thread|simdbpe $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), medians of $rounds rounds"
echo
echo "chart: $chart"
echo
cat "$results" "$gt_results" | grep -P '\tcrashed\t' | awk -F'\t' '{printf "crashed: %s on %s: %s\n", $2, $1, $4}' || true
echo
echo "simdbpe, one pass of a fresh encoder by stage (this thread's CPU time; validate and"
echo "pre-tokenize have no caches, the rest is merge, caches and output):"
for model in "${models[@]}"; do
  for set in "${sets[@]}"; do
    [ -d "$work/$set" ] || continue
    "$build/bench/bench_encode" --cpu -r 1 -m "$model" --stages "$model-$set" "$work/$set"/*
  done
done
if [[ " ${sets[*]} " == *" english "* ]]; then
  "$build/bench/bench_encode" --cpu -r 3 --kernels english "$work/english"/* | grep kernels
fi
echo
echo "model loading (medians; first in fresh processes, then repeated in one process per model):"
"$build/simdbpe" compile -q -m gpt2 -o "$work/gpt2.sbpe"
loads=(gpt2 "$work/gpt2.sbpe" "$root/src/model/gpt2")
for m in "${loads[@]}"; do
  for i in 1 2 3 4 5; do "$build/bench/bench_load" -r 1 "$m"; done |
    awk '{print $3}' | sort -n | sed -n 3p | xargs printf "fresh process  %-40s %s ms\n" "$m"
done
# One process per model: after another model's loads and frees, glibc's heap trimming
# made every later load fault its pages in again, which would measure glibc, not the loader.
for m in "${loads[@]}"; do "$build/bench/bench_load" -r 11 "$m"; done
