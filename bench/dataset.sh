#!/usr/bin/env bash
# dataset.sh - simdbpe at dataset scale: one pass over more than a gigabyte of text it has not seen.
#
#   bench/dataset.sh [--rounds N] [--model NAME[,NAME...]] [--no-gigatoken]
#
# The input (bench/dataset_input.py, written once to WORK/dataset.txt, WORK being
# ${TMPDIR:-/tmp}/simdbpe-bench; never committed): the C sources and headers of Debian's
# linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz; installed with apt-get when missing,
# as root or through sudo) and the public corpora ($SIMDBPE_CORPUS_DIR or ../shared/corpus),
# about 1.35 GB in one file, one document.
# For each model (default gpt2,cl100k_base,o200k_base) and round (default 5), one after the
# other, each a fresh process:
#   simdbpe-cli       the whole `simdbpe encode --output-format u32 --threads 1 -o F` process
#                     (cli_pass.py): wall clock, CPU time, peak RSS;
#   simdbpe-cli-2     the same with --threads 2;
#   simdbpe           bench_encode -r 1: the file read into memory, a fresh encoder, one pass
#                     timed (what GigaToken's first pass is);
#   simdbpe-reencode  bench_encode --warm -r 1: a second pass of the same encoder;
#   gigatoken         GigaToken's gtenc (gt_pass.py, built as in run.sh): its first and
#                     second pass over the file as one document, peak RSS of the process.
# In the first round the ids of the two thread counts are compared byte for byte (a
# difference stops the run), and after it those of gtenc (an extra run writing its ids,
# untimed). Prints the tables of report.py --dataset, with the load average of every run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SIMDBPE_BENCH_BUILD:-$root/build-bench}
rounds=5 models=() gigatoken=1
me=dataset.sh
. "$here/args.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds | --model)
      [ $# -ge 2 ] || { echo "dataset.sh: $1 needs a value" >&2; exit 2; }
      if [ "$1" = --rounds ]; then
        need_count --rounds "$2" 1
        rounds=$2
      else
        IFS=, read -r -a more <<<"$2,"
        models+=("${more[@]}")
      fi
      shift 2 ;;
    --no-gigatoken) gigatoken=""; shift ;;
    *) sed -n '2,24p' "$0" >&2; exit 2 ;;
  esac
done
[ ${#models[@]} -gt 0 ] || models=(gpt2 cl100k_base o200k_base)
[ -z "$gigatoken" ] || tiktoken_dir "${models[@]}"

tar=/usr/src/linux-source-6.1.tar.xz
if [ ! -f "$tar" ]; then
  echo "# installing linux-source-6.1 (apt-get) for $tar" >&2
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    linux-source-6.1 >/dev/null
  [ -f "$tar" ] || { echo "dataset.sh: linux-source-6.1 installed, but no $tar" >&2; exit 1; }
fi

echo "# building simdbpe (Release) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMDBPE_BUILD_TESTS=OFF \
  >/dev/null
ninja -C "$build" bench_encode simdbpe_cli >/dev/null
[ -z "$gigatoken" ] || build_gigatoken "$build"

work=${TMPDIR:-/tmp}/simdbpe-bench
mkdir -p "$work"
input=$work/dataset.txt
corpus=${SIMDBPE_CORPUS_DIR:-$root/../shared/corpus}
if [ ! -f "$input" ]; then
  echo "# writing $input" >&2
  python3 "$here/dataset_input.py" "$input" --tar "$tar" --corpus "$corpus" >&2
fi
results=$work/results-dataset.tsv
: >"$results"
one=$work/dataset-1.u32 two=$work/dataset-2.u32
trap 'rm -f "$one" "$two"' EXIT
started=$(date +%s)
for model in "${models[@]}"; do
  label="$model dataset"
  for round in $(seq 1 "$rounds"); do
    echo "# $label, round $round of $rounds" >&2
    python3 "$here/cli_pass.py" --keep "$build/simdbpe" "$model" "$label" "$one" "$input"
    python3 "$here/cli_pass.py" --keep --threads 2 --impl simdbpe-cli-2 "$build/simdbpe" \
      "$model" "$label" "$two" "$input"
    if [ "$round" = 1 ] && ! cmp -s "$one" "$two"; then
      echo "dataset.sh: $model: the ids of --threads 2 differ from --threads 1" >&2
      exit 1
    fi
    rm -f "$two"
    "$build/bench/bench_encode" --tsv -r 1 -m "$model" "$label" "$input" | stamp
    "$build/bench/bench_encode" --tsv --warm -r 1 -m "$model" "$label" "$input" |
      awk -F '\t' -v OFS='\t' '{ $2 = "simdbpe-reencode"; print }' | stamp
    if [ -n "$gigatoken" ]; then
      python3 "$here/gt_pass.py" "$gtenc" "$ranks" "$model" "$label" "$input" || true
      if [ "$round" = 1 ]; then
        python3 "$here/gt_pass.py" --passes 1 --check "$one" "$gtenc" "$ranks" "$model" \
          "$label" "$input" | grep -P '\tids\t' || true
      fi
    fi
    rm -f "$one"
  done >>"$results"
done
minutes=$((($(date +%s) - started + 59) / 60))
echo
echo "simdbpe $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, $minutes min; $(stat -c %s "$input" | awk '{printf "%.1f MB", $1 / 1e6}') in one file, medians of $rounds rounds"
echo
python3 "$here/report.py" --dataset --cpu "$results"
grep -P '\tcrashed\t' "$results" | awk -F'\t' '{printf "crashed: %s on %s: %s\n", $2, $1, $4}' || true
