#!/usr/bin/env bash
# ci_sanitize.sh - the sanitizer leg of CI: builds simdbpe with
# AddressSanitizer + UndefinedBehaviorSanitizer in its own build directory
# (-DSIMDBPE_SANITIZE=ON) and runs the whole ctest suite there, which
# includes the replay of every fuzz target's committed corpus
# (fuzz_replay_*) and the adversarial suite. Any sanitizer report fails the
# run (-fno-sanitize-recover=all, halt_on_error) with a non-zero exit.
#
#   bash tests/ci_sanitize.sh       build dir: build-sanitize/ (or
#                                   $SIMDBPE_SANITIZE_BUILD_DIR)
#
# tools/dev.sh test (CI) runs it when it is executable. An input that
# shows a bug not yet fixed waits in tests/fuzz/findings/ (not replayed),
# so that a known, reported bug does not block every landing.
# Takes 5-8 minutes on the 2-core machine (build ~1, tests 3-7, 48 tests).
#
# Environment:
#   SIMDBPE_CI_FUZZ_SECONDS=N   also build the libFuzzer targets with clang
#                               (build-fuzz-ci/) and fuzz each for N seconds
#                               (default 0: off; the replays always run).
# Prints how long each step took and a final "N passed, N failed" line.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${SIMDBPE_SANITIZE_BUILD_DIR:-$here/build-sanitize}
fuzz_seconds=${SIMDBPE_CI_FUZZ_SECONDS:-0}
t0=$(date +%s)
step() { echo "ci_sanitize: $1 ($(($(date +%s) - t0)) s so far)"; }

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSIMDBPE_SANITIZE=ON > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
ninja -C "$build" > "$build.build.log" 2>&1 || { tail -50 "$build.build.log"; exit 1; }
step "built $build with ASan+UBSan"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
replays=$(cd "$build" && ctest -N -R '^fuzz_replay_' | sed -n 's/^Total Tests: //p')
set +e
(cd "$build" && ctest --output-on-failure -j2 --timeout 1200 2>&1) | tee "$build.ctest.log"
rc=${PIPESTATUS[0]}
set -e
step "ctest under ASan+UBSan exit $rc (includes $replays fuzz corpus replays)"

fuzz_failed=0
if [ "$fuzz_seconds" -gt 0 ]; then
  fb=$here/build-fuzz-ci
  cmake -S "$here" -B "$fb" -G Ninja -DCMAKE_C_COMPILER=clang -DSIMDBPE_FUZZ=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$fb.configure.log" 2>&1 &&
    ninja -C "$fb" > "$fb.build.log" 2>&1 || { tail -50 "$fb.build.log" "$fb.configure.log"; exit 1; }
  for bin in "$fb"/tests/fuzz_*; do
    t=${bin##*/fuzz_}
    case $t in replay_*) continue ;; esac
    mkdir -p "$fb/work/$t"
    if ! "$bin" -max_total_time="$fuzz_seconds" -max_len=4096 "$fb/work/$t" \
        "$here/tests/fuzz/corpus/$t" > "$fb/$t.log" 2>&1; then
      tail -40 "$fb/$t.log"
      fuzz_failed=$((fuzz_failed + 1))
    fi
  done
  step "fuzzed each target for $fuzz_seconds s: $fuzz_failed failed"
fi

passed=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\2 \1/p' "$build.ctest.log" | awk '{print $1 - $2}')
failed=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of .*/\1/p' "$build.ctest.log")
echo "ci_sanitize: ${passed:-0} passed, ${failed:-?} failed"
[ "$rc" -eq 0 ] && [ "$fuzz_failed" -eq 0 ]
