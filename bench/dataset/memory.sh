#!/usr/bin/env bash
# memory.sh - peak resident memory of `simdbpe encode` on long documents.
#
#   bench/dataset/memory.sh [BUILD_DIR] [SCALE_MB]
#
# Writes the inputs into a temporary folder (SCALE_MB, default 200: the
# size of the long documents) and prints one Markdown row per input: its
# size, the process's peak RSS (`peak_rss_kb` of the summary: VmHWM), the
# bound the project states for it and whether it holds. Bounds:
#   a document with cut points   64 MB
#   a JSON record                64 MB + 2 x the record
#   a single pre-token           64 MB + 4 x the pre-token (one letter repeated,
#                                and random letters: BPE over one long word)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
scale=${2:-200}
cli=$build/simdbpe
[ -x "$cli" ] || { echo "memory.sh: $cli not built" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/simdbpe-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$scale" <<'EOF'
import json, random, sys
work, mb = sys.argv[1], int(sys.argv[2])
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
EOF

echo "| input | MB | peak RSS MB | MB/s | bound MB | holds |"
echo "|---|---:|---:|---:|---:|---|"
row() {
    local name=$1 bound=$2
    shift 2
    local file=$work/$name size summary rss mbs
    file=$(ls "$work"/"$name".* | head -1)
    size=$(stat -c %s "$file")
    summary=$("$cli" encode --summary - --output-format u32 -o "$work/out.u32" "$@" "$file" 2>&1 >/dev/null |
        grep '^{' | tail -1)
    rss=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["peak_rss_kb"] // 1024)' "$summary")
    mbs=$(python3 -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["mb_per_s"])' "$summary")
    local holds=-
    [ "$bound" = - ] || holds=$([ "$rss" -le "$bound" ] && echo yes || echo NO)
    echo "| $name | $((size >> 20)) | $rss | $mbs | $bound | $holds |"
}
row no_space 64
row english_like 64
row record $((64 + 2 * (scale / 2))) --input-format jsonl
row one_piece $((64 + 4 * (scale / 4)))
row letters_piece $((64 + 4 * (scale / 4)))
