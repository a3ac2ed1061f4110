#!/usr/bin/env bash
# run.sh - the checks against HF tokenizers itself (npm `tokenizers`,
# pinned in package.json): installs it with `npm ci` into the build
# directory (the npm registry is reachable on the project's machines), then
# runs one of the checks:
#
#   bash tests/hf/run.sh SIMDBPE_BINARY WORKDIR trained
#       trained_tokenizer_json.mjs (a trained tokenizer.json in HF)
#   bash tests/hf/run.sh SIMDBPE_BINARY WORKDIR unseen
#       unseen_documents.mjs (every model on documents no golden file
#       holds; the models of shared/models are looked for in
#       $SIMDBPE_CORPUS_DIR/models, else <project>/../shared/models)
#   bash tests/hf/run.sh FUZZ_REPLAY_HF_ADDED WORKDIR added
#       added_tokens.mjs (the reference of the hf_added fuzz target against
#       HF on every input of its corpus)
#   bash tests/hf/run.sh SIMDBPE_BINARY WORKDIR npm
#       npm_models.mjs (the tokenizer.json files of npm packages,
#       NPM_MODELS.md), with npm_models/package.json and its lock instead
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
work=$2
what=$3
mkdir -p "$work"
deps=$here
[ "$what" = npm ] && deps=$here/npm_models
cp "$deps/package.json" "$deps/package-lock.json" "$here"/*.mjs "$work/"
(cd "$work" && npm ci --silent --no-audit --no-fund >/dev/null)
case "$what" in
  trained)
    node "$work/trained_tokenizer_json.mjs" "$bin" "$here/../data/train/corpus/taylorswift.txt" \
        "$here/../data/golden/edge.jsonl" "$work/trained" ;;
  unseen)
    project=$(cd "$here/../.." && pwd)
    models=${SIMDBPE_CORPUS_DIR:-$project/../shared}/models
    node "$work/unseen_documents.mjs" "$bin" "$project" "$models" "$work/unseen" ;;
  added)
    project=$(cd "$here/../.." && pwd)
    rm -rf "$work/added" && mkdir -p "$work/added"
    FUZZ_HF_ADDED_DUMP="$work/added" "$bin" "$project/tests/fuzz/corpus/hf_added" 2>/dev/null
    node "$work/added_tokens.mjs" "$work/added" ;;
  npm)
    project=$(cd "$here/../.." && pwd)
    node "$work/npm_models.mjs" "$bin" "$project" "$work/npm" ;;
  *) echo "run.sh: trained, unseen, added or npm, not '$what'" >&2; exit 2 ;;
esac
