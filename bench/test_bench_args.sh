#!/usr/bin/env bash
# test_bench_args.sh - ctest: bench/ab.sh, bench/pair.sh, bench/run.sh and bench/dataset.sh
# refuse bad arguments with a message that names them, exit 2, before they build or run
# anything.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect MESSAGE [VAR=VALUE] ARGS...: the command exits 2 and its stderr contains MESSAGE
expect() {
  local msg=$1
  shift
  env "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$msg" "$tmp/err"; then
    echo "FAIL: $* -> exit $rc, stderr: $(cat "$tmp/err")" >&2
    fails=$((fails + 1))
  fi
}

expect "ROUNDS must be a whole number >= 1, got '0'" bash "$here/ab.sh" code 0 "$tmp/b"
expect "ROUNDS must be a whole number >= 1, got 'x'" bash "$here/ab.sh" code x "$tmp/b"
expect "RUNS must be a whole number >= 2, got '1'" bash "$here/ab.sh" -r 1 code 2 "$tmp/b"
expect "no documents in $tmp/simdbpe-bench/code (run bench/run.sh first)" \
  TMPDIR="$tmp" bash "$here/ab.sh" code 2 "$tmp/b"
mkdir -p "$tmp/simdbpe-bench/code" && : >"$tmp/simdbpe-bench/code/doc"
expect "$tmp/b/bench/bench_encode is not built" TMPDIR="$tmp" bash "$here/ab.sh" code 2 "$tmp/b"
expect "compare builds of simdbpe" bash "$here/ab.sh" code 2

expect "PAIRS must be a whole number >= 1, got '0'" bash "$here/pair.sh" -n 0 code 2 "$tmp/b" "$tmp/b"
expect "PROCESSES must be a whole number >= 1, got 'x'" bash "$here/pair.sh" code x "$tmp/b" "$tmp/b"
expect "no documents in $tmp/simdbpe-bench/english (run bench/run.sh first)" \
  TMPDIR="$tmp" bash "$here/pair.sh" english 2 "$tmp/b" "$tmp/b"
expect "$tmp/b/libsimdbpe.so is not built" TMPDIR="$tmp" bash "$here/pair.sh" code 2 "$tmp/b" "$tmp/b"
mkdir -p "$tmp/b" && : >"$tmp/b/libsimdbpe.so"
expect "$tmp/b/bench/bench_pair is not built" TMPDIR="$tmp" bash "$here/pair.sh" code 2 "$tmp/b" "$tmp/b"
expect "compare two builds of simdbpe" bash "$here/pair.sh" code 2

expect "--hf-rounds must be a whole number, got 'x'" bash "$here/run.sh" --hf-rounds x
expect "--reencode-runs must be a whole number, got '-1'" bash "$here/run.sh" --reencode-runs -1
expect "--rounds must be at least 1" bash "$here/run.sh" --rounds 0
expect "--rounds needs a value" bash "$here/run.sh" --rounds
expect "--model takes encoding names such as gpt2 or cl100k_base, got ''" bash "$here/run.sh" --model ''
expect "--model takes encoding names such as gpt2 or cl100k_base, got 'a b'" \
  bash "$here/run.sh" --model 'gpt2,a b'
expect "--peers takes a comma list of tiktoken-rs, tiktoken, hf and gigatoken, got 'tiktok'" \
  bash "$here/run.sh" --peers tiktoken-rs,tiktok
expect "--inputs takes a comma list of english, code, multilingual and adversarial, got 'bible'" \
  bash "$here/run.sh" --inputs code,bible
expect "GigaToken runs gpt2, cl100k_base and o200k_base, not 'p50k_base'" \
  bash "$here/run.sh" --peers gigatoken --model gpt2,p50k_base
expect "$tmp/none/r50k_base.tiktoken not found (set SIMDBPE_TIKTOKEN_DIR)" \
  SIMDBPE_TIKTOKEN_DIR="$tmp/none" bash "$here/run.sh" --peers gigatoken

expect "--rounds must be a whole number >= 1, got '0'" bash "$here/dataset.sh" --rounds 0
expect "--model needs a value" bash "$here/dataset.sh" --model
expect "GigaToken runs gpt2, cl100k_base and o200k_base, not 'qwen2'" \
  bash "$here/dataset.sh" --model qwen2
expect "simdbpe at dataset scale" bash "$here/dataset.sh" --threads 2
expect "the benchmark: simdbpe and its peers" bash "$here/run.sh" --runs 3

[ "$fails" -eq 0 ] && echo "test_bench_args: all refused as expected"
exit $((fails != 0))
