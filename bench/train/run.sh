#!/usr/bin/env bash
# run.sh - training benchmark: `simdbpe train` against HF tokenizers'
# BpeTrainer (npm `tokenizers`, native, pinned in package.json), side by side
# on the same text, same number of merges, both with 2 threads.
#
#   bench/train/run.sh [RUNS]          (default 3 runs of each, alternating)
#
# Environment:
#   SIMDBPE       the simdbpe binary (default: build-train/simdbpe, else build/simdbpe)
#   CORPUS        a .txt or .txt.zst file (default: ../shared/corpus/english.txt.zst,
#                 or $SIMDBPE_CORPUS_DIR/english.txt.zst)
#   VOCAB         HF's vocab_size is fixed at 30000 by the node binding; simdbpe
#                 gets 30000 - (HF's alphabet) + 256, i.e. the same merges
#   THREADS       threads for both (default 2; HF via RAYON_NUM_THREADS)
#
# Reports for each tool the median wall time and the median peak resident
# memory (from /usr/bin/time -v), the ratios, and whether the two merges.txt
# files are identical. Output: a markdown table on stdout; logs in $WORK.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${1:-3}
threads=${THREADS:-2}
work=${WORK:-$(mktemp -d /tmp/simdbpe-bench-train.XXXXXX)}
mkdir -p "$work"

simdbpe=${SIMDBPE:-}
if [ -z "$simdbpe" ]; then
  for b in "$root/build-train/simdbpe" "$root/build/simdbpe"; do
    [ -x "$b" ] && simdbpe=$b && break
  done
fi
[ -x "${simdbpe:-}" ] || { echo "run.sh: build simdbpe first or set SIMDBPE" >&2; exit 2; }

corpus=${CORPUS:-}
if [ -z "$corpus" ]; then
  for d in "${SIMDBPE_CORPUS_DIR:-}" "${SIMDBPE_CORPUS_DIR:-}/corpus" "$root/../shared/corpus"; do
    [ -n "$d" ] && [ -f "$d/english.txt.zst" ] && corpus=$d/english.txt.zst && break
  done
fi
[ -f "${corpus:-}" ] || { echo "run.sh: no corpus (set CORPUS)" >&2; exit 2; }

text=$corpus
if [[ "$corpus" == *.zst ]]; then
  text=$work/$(basename "${corpus%.zst}")
  [ -f "$text" ] || zstd -q -d -c "$corpus" > "$text"
fi

if [ ! -d "$here/node_modules/tokenizers" ]; then
  (cd "$here" && npm ci --no-audit --no-fund >/dev/null 2>&1 || npm install --no-audit --no-fund >/dev/null)
fi

# /usr/bin/time -v: wall seconds and peak RSS in kB.
measure() { # log -> "seconds kB"
  awk -F': ' '/Elapsed \(wall clock\)/ {
      n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.3f %d\n", wall, rss }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

hf_walls=() hf_rss=() sb_walls=() sb_rss=()
vocab=""
for i in $(seq 1 "$runs"); do
  RAYON_NUM_THREADS=$threads /usr/bin/time -v -o "$work/hf_$i.time" \
    node "$here/hf_train.mjs" "$work/hf" "$text" > "$work/hf_$i.out" 2> "$work/hf_$i.err"
  read -r w r < <(measure "$work/hf_$i.time"); hf_walls+=("$w"); hf_rss+=("$r")
  if [ -z "$vocab" ]; then
    alphabet=$(awk '/^alphabet/ { print $2 }' "$work/hf_$i.out")
    vocab=${VOCAB:-$((30000 - alphabet + 256))}
  fi
  /usr/bin/time -v -o "$work/sb_$i.time" \
    "$simdbpe" train --vocab-size "$vocab" --mode lines --threads "$threads" -o "$work/sb" "$text" \
    > "$work/sb_$i.out" 2> "$work/sb_$i.err"
  read -r w r < <(measure "$work/sb_$i.time"); sb_walls+=("$w"); sb_rss+=("$r")
  echo "run $i: HF ${hf_walls[-1]} s ${hf_rss[-1]} kB | simdbpe ${sb_walls[-1]} s ${sb_rss[-1]} kB" >&2
done

hf_w=$(printf '%s\n' "${hf_walls[@]}" | median); hf_r=$(printf '%s\n' "${hf_rss[@]}" | median)
sb_w=$(printf '%s\n' "${sb_walls[@]}" | median); sb_r=$(printf '%s\n' "${sb_rss[@]}" | median)
same=no
cmp -s "$work/hf/merges.txt" "$work/sb/merges.txt" && same=yes
merges=$(($(wc -l < "$work/sb/merges.txt") - 1))
bytes=$(stat -c %s "$text")

cat <<EOF
Corpus: $(basename "$corpus") ($bytes bytes), lines mode, $merges merges (simdbpe --vocab-size $vocab = HF vocab_size 30000 with its $alphabet-symbol alphabet), $threads threads, $runs runs each, medians.

| trainer | wall time (s) | peak RSS (MB) |
|---|---:|---:|
| HF tokenizers 0.23.2 (npm, native) | $hf_w | $(awk -v k="$hf_r" 'BEGIN { printf "%.0f", k / 1024 }') |
| simdbpe train | $sb_w | $(awk -v k="$sb_r" 'BEGIN { printf "%.0f", k / 1024 }') |
| ratio HF / simdbpe | $(awk -v a="$hf_w" -v b="$sb_w" 'BEGIN { printf "%.1fx", a / b }') | $(awk -v a="$hf_r" -v b="$sb_r" 'BEGIN { printf "%.1fx", a / b }') |

merges.txt identical: $same
All runs (s): HF ${hf_walls[*]}; simdbpe ${sb_walls[*]}
sha256 of merges.txt: HF $(sha256sum < "$work/hf/merges.txt" | cut -c1-64), simdbpe $(sha256sum < "$work/sb/merges.txt" | cut -c1-64)
Logs: $work
EOF
