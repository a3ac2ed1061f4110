#!/usr/bin/env bash
# run.sh - fuzzes one target for a while, then merges what it found into
# the committed corpus (tests/fuzz/corpus/<target>/, coverage-minimal).
#
#   tests/fuzz/run.sh TARGET SECONDS [BUILD_DIR]
#
# BUILD_DIR (default build-fuzz) is configured with clang and
# -DSIMDBPE_FUZZ=ON. Runs under `nice -n 19` on one core so other builds
# are not starved. The working corpus lives in BUILD_DIR/fuzz-work/TARGET
# and persists between runs; crashes land in BUILD_DIR/fuzz-work/crashes.
# Prints libFuzzer's final stats (executions, coverage) and a summary line.
set -euo pipefail
target=${1:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
seconds=${2:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
build=${3:-$here/../../build-fuzz}
bin=$build/tests/fuzz_$target
corpus=$here/corpus/$target
work=$build/fuzz-work/$target
crashes=$build/fuzz-work/crashes/$target
[ -x "$bin" ] || { echo "run.sh: $bin not built (configure with -DSIMDBPE_FUZZ=ON)" >&2; exit 2; }
mkdir -p "$work" "$crashes"

dict=()
[ -f "$here/$target.dict" ] && dict=(-dict="$here/$target.dict")
log=$build/fuzz-work/$target.log
# max_len: model files need room; text targets find more with short inputs.
max_len=4096
case $target in model_load | model_compiled | hf_json | tiktoken) max_len=16384 ;; esac

set +e
ASAN_OPTIONS=detect_leaks=1 nice -n 19 "$bin" "${dict[@]}" -max_total_time="$seconds" \
    -max_len=$max_len -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$work" "$corpus" > "$log" 2>&1
rc=$?
set -e
grep -E "^stat::|DONE|ERROR|SUMMARY" "$log" | tail -20
# Keep only inputs that add coverage to the committed corpus.
nice -n 19 "$bin" -merge=1 -max_len=$max_len "$corpus" "$work" > "$build/fuzz-work/$target.merge.log" 2>&1 || true
echo "run.sh: $target: exit $rc, $(ls "$crashes" | wc -l) crash files, corpus $(ls "$corpus" | wc -l) files"
exit $rc
