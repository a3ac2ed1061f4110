#!/usr/bin/env bash
# memory.sh - peak resident memory of `simdbpe encode` on long documents.
#
#   bench/dataset/memory.sh [BUILD_DIR] [SCALE_MB] [PIECE_MB]
#
# Writes the inputs into a temporary folder (SCALE_MB, default 200: the
# size of the long documents) and prints one Markdown row per input: its
# size, the process's peak RSS (`peak_rss_kb` of the summary: VmHWM), the
# bound the project states for it and whether it holds. Bounds (tools/
# DATASET.md, "Memory"), with M what loading the model alone costs (measured
# here on one byte of text) and T = 2 x (6 + 16) + 16 MB: the two workers
# every run here has, each with its tables' budget (--cache-mb 16, not less
# than the model's table of whole tokens: at most 16 MB for these models),
# and that table, shared, once built:
#   a document with cut points   64 MB + M + T
#   a JSON record                64 MB + M + T + 2 x the record
#   a single pre-token           64 MB + M + T + 5 x the pre-token (its text,
#                                and room for an id per byte: BPE over one
#                                long word)
# Then the same for single pieces of PIECE_MB (default 50) and twice that
# with three models: gpt2, o200k_base and Qwen3's tokenizer.json (from
# $SIMDBPE_CORPUS_DIR/models or ../shared/models; its rows are skipped,
# saying so, when it is not there). A piece a family cuts (digits in Qwen2's
# and o200k's) is bounded as a document with cut points.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
scale=${2:-200}
piece=${3:-50}
cli=$build/simdbpe
[ -x "$cli" ] || { echo "memory.sh: $cli not built" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/simdbpe-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$scale" "$piece" <<'EOF'
import json, random, sys
work, mb, piece = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = mb << 20
rng = random.Random(1)
block = bytes(rng.choice(b"abcdefghij,.;-+=0123456789ABC") for _ in range(1 << 20))
open(work + "/no_space.txt", "wb").write((block * (n // len(block) + 1))[:n])
words = b" ".join(b"word%d" % (i % 5000) for i in range(n // 6))[:n]
open(work + "/english_like.txt", "wb").write(words)
text = words.decode()[: n // 2]
open(work + "/record.jsonl", "w").write(json.dumps({"id": 1, "text": text}) + "\n")
open(work + "/one_piece.txt", "wb").write(b"a" * (n // 4))
letters = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(1 << 20))
open(work + "/letters_piece.txt", "wb").write((letters * (n // 4 // len(letters) + 1))[: n // 4])
# Single pieces: digits, random letters, CJK (PIECE_MB), spaces and digits
# (twice that).
n = piece << 20
rng = random.Random(2)
digits = bytes(rng.choice(b"0123456789") for _ in range(1 << 20))
open(work + "/digits.txt", "wb").write((digits * (n // len(digits) + 1))[:n])
open(work + "/digits2x.txt", "wb").write((digits * (2 * n // len(digits) + 1))[:2 * n])
letters = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(1 << 20))
open(work + "/letters.txt", "wb").write((letters * (n // len(letters) + 1))[:n])
cjk = "".join(chr(0x4E00 + rng.randrange(0x5000)) for _ in range(1 << 18)).encode()
open(work + "/cjk.txt", "wb").write((cjk * (n // len(cjk) + 1))[:n // 3 * 3])
open(work + "/spaces2x.txt", "wb").write(b" " * (2 * n))
EOF

# The peak RSS in MB of one encode of FILE (more arguments before it).
peak_mb() {
    "$cli" encode --summary - --threads 2 --cache-mb 16 --output-format u32 -o "$work/out.u32" "$@" \
        2>&1 >/dev/null | grep '^{' |
        tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_rss_kb"] // 1024)'
}
printf x >"$work/x.txt"

echo "| input | model | MB | peak RSS MB | MB/s | bound MB | holds |"
echo "|---|---|---:|---:|---:|---:|---|"
row() {
    local name=$1 model=$2 bound=$3
    shift 3
    local file=$work/$name size summary rss mbs
    file=$(ls "$work"/"$name".* | head -1)
    size=$(stat -c %s "$file")
    summary=$("$cli" encode --summary - --threads 2 --cache-mb 16 -m "$model" --output-format u32 \
        -o "$work/out.u32" "$@" "$file" 2>&1 >/dev/null | grep '^{' | tail -1)
    rss=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["peak_rss_kb"] // 1024)' "$summary")
    mbs=$(python3 -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["mb_per_s"])' "$summary")
    local holds=-
    [ "$bound" = - ] || holds=$([ "$rss" -le "$bound" ] && echo yes || echo NO)
    echo "| $name | $(basename "$model") | $((size >> 20)) | $rss | $mbs | $bound | $holds |"
}
t=$((2 * (6 + 16) + 16))
m=$(($(peak_mb -m gpt2 "$work/x.txt") + t))
row no_space gpt2 $((64 + m))
row english_like gpt2 $((64 + m))
row record gpt2 $((64 + m + 2 * (scale / 2))) --input-format jsonl
row one_piece gpt2 $((64 + m + 5 * (scale / 4)))
row letters_piece gpt2 $((64 + m + 5 * (scale / 4)))

models=${SIMDBPE_CORPUS_DIR:-$here/../../../shared}/models
qwen3=
if [ -f "$models/qwen3/tokenizer.json.zst" ]; then
    qwen3=$work/qwen3.tokenizer.json
    zstd -dqc "$models/qwen3/tokenizer.json.zst" >"$qwen3"
else
    echo "(Qwen3 rows skipped: no $models/qwen3/tokenizer.json.zst)" >&2
fi
for model in gpt2 o200k_base $qwen3; do
    m=$(($(peak_mb -m "$model" "$work/x.txt") + t))
    whole=$((64 + m + 5 * piece))
    case $(basename "$model") in
    gpt2) digits=$whole digits2x=$((64 + m + 10 * piece)) ;;
    *) digits=$((64 + m)) digits2x=$((64 + m)) ;; # one piece a digit, or three
    esac
    row digits "$model" "$digits"
    row letters "$model" "$whole"
    row cjk "$model" "$whole"
    row spaces2x "$model" $((64 + m + 10 * piece))
    row digits2x "$model" "$digits2x"
done
