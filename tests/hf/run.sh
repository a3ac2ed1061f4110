#!/usr/bin/env bash
# run.sh - the checks against HF tokenizers itself (npm `tokenizers`,
# pinned in package.json): installs it with `npm ci` into the build
# directory (the npm registry is reachable on the project's machines), then
# runs trained_tokenizer_json.mjs.
#
#   bash tests/hf/run.sh SIMDBPE_BINARY WORKDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
work=$2
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/trained_tokenizer_json.mjs" "$work/"
(cd "$work" && npm ci --silent --no-audit --no-fund >/dev/null)
node "$work/trained_tokenizer_json.mjs" "$bin" "$here/../data/train/corpus/taylorswift.txt" \
    "$here/../data/golden/edge.jsonl" "$work"
