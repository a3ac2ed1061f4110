#!/usr/bin/env bash
# run.sh - fuzzes one target for a while, then merges what it found into
# the committed corpus (tests/fuzz/corpus/<target>/, coverage-minimal).
#
#   [JOBS=N] tests/fuzz/run.sh TARGET SECONDS [BUILD_DIR]
#
# BUILD_DIR (default build-fuzz) is configured with clang and
# -DSIMDBPE_FUZZ=ON. Runs under `nice -n 19` on one core so other builds
# are not starved, or with JOBS=N as N fuzzing processes side by side
# (libFuzzer's -jobs=N -workers=N, sharing the working corpus; each
# process's log is BUILD_DIR/fuzz-work/TARGET.job-K.log). The working
# corpus lives in BUILD_DIR/fuzz-work/TARGET and persists between runs;
# crashes land in BUILD_DIR/fuzz-work/crashes. Prints libFuzzer's final
# stats (executions, coverage; with JOBS, per process and the total
# executions) and a summary line.
set -euo pipefail
target=${1:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
seconds=${2:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${3:-$here/../../build-fuzz}" && pwd)
jobs=${JOBS:-1}
bin=$build/tests/fuzz_$target
corpus=$here/corpus/$target
work=$build/fuzz-work/$target
crashes=$build/fuzz-work/crashes/$target
[ -x "$bin" ] || { echo "run.sh: $bin not built (configure with -DSIMDBPE_FUZZ=ON)" >&2; exit 2; }
mkdir -p "$work" "$crashes"

dict=()
[ -f "$here/$target.dict" ] && dict=(-dict="$here/$target.dict")
log=$build/fuzz-work/$target.log
# max_len: model files need room; text targets find more with short inputs;
# kernels check 45 slices of each input, and 1 KB (16 blocks of 64 bytes,
# past every unrolled loop) reaches every path of theirs at a quarter of
# the cost of 4 KB.
max_len=4096
case $target in
model_load | model_compiled | hf_json | tiktoken) max_len=16384 ;;
kernels) max_len=1024 ;;
esac
par=()
if [ "$jobs" -gt 1 ]; then
    par=(-jobs="$jobs" -workers="$jobs")
    rm -f "$build"/fuzz-work/fuzz-*.log
fi

set +e
# CPU seconds beside wall time: on a shared machine exec/s alone says
# more about the load than about the target.
(cd "$build/fuzz-work" && ASAN_OPTIONS=detect_leaks=1 /usr/bin/time -o "$target.cpu" \
    -f "%U user + %S sys seconds of CPU in %e s" nice -n 19 "$bin" "${dict[@]}" "${par[@]}" \
    -max_total_time="$seconds" -max_len=$max_len -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "$corpus") > "$log" 2>&1
rc=$?
set -e
if [ "$jobs" -gt 1 ]; then
    total=0
    for ((k = 0; k < jobs; k++)); do
        mv "$build/fuzz-work/fuzz-$k.log" "$build/fuzz-work/$target.job-$k.log"
        grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|DONE|ERROR|SUMMARY" \
            "$build/fuzz-work/$target.job-$k.log" | sed "s/^/job $k: /" | tail -8
        n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz-work/$target.job-$k.log")
        total=$((total + ${n:-0}))
    done
    echo "run.sh: $target: $total executions in $jobs processes"
    grep -qE "ERROR|SUMMARY" "$build"/fuzz-work/$target.job-*.log && rc=1
else
    grep -E "^stat::|DONE|ERROR|SUMMARY" "$log" | tail -20
fi
# Keep only inputs that add coverage to the committed corpus.
nice -n 19 "$bin" -merge=1 -max_len=$max_len "$corpus" "$work" > "$build/fuzz-work/$target.merge.log" 2>&1 || true
echo "run.sh: $target: $(cat "$build/fuzz-work/$target.cpu" 2>/dev/null | tail -1)"
echo "run.sh: $target: exit $rc, $(ls "$crashes" | wc -l) crash files, corpus $(ls "$corpus" | wc -l) files"
exit $rc
