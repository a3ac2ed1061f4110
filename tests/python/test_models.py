"""simdbpe.Encoding.from_file over the tokenizer.json of claude (GPT-2's regex
behind NFKC), gpt_oss (o200k with the harmony chat tokens), mistral_v1 and
gemma3 (SentencePiece-style BPE): every line of
golden/edge.jsonl gives the ids of golden/models/NAME/edge.tsv (HF tokenizers
0.23.2's; compared by count and sha256 of the ids as little-endian uint32),
and decoding them gives the text back (NFKC of it for claude). The models and
golden files are in ../shared (SIMDBPE_MODELS_DIR, SIMDBPE_GOLDEN_DIR); a
model that is not there is reported as skipped."""
import hashlib
import json
import os
import struct
import unicodedata

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared")
MODELS = os.environ.get("SIMDBPE_MODELS_DIR") or os.path.join(SHARED, "models")
GOLDEN = os.environ.get("SIMDBPE_GOLDEN_DIR") or os.path.join(SHARED, "golden")


def model_path(name):
    return os.path.join(MODELS, name, "tokenizer.json.zst")


def cases():
    out = []
    for name in ("claude", "gpt_oss", "mistral_v1", "gemma3"):
        have = os.path.exists(model_path(name)) and os.path.exists(
            os.path.join(GOLDEN, "models", name, "edge.tsv"))
        out.append(name if have else pytest.param(name, marks=pytest.mark.skip(
            reason=f"{model_path(name)} or its golden files are not there")))
    return out


@pytest.mark.parametrize("name", cases())
def test_edge_documents_give_hf_ids_and_decode_back(name):
    enc = simdbpe.Encoding.from_file(model_path(name))
    with open(os.path.join(GOLDEN, "edge.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    with open(os.path.join(GOLDEN, "models", name, "edge.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    assert len(rows) == len(texts)
    bad = []
    for text, row in zip(texts, rows):
        ids = enc.encode_ordinary(text)
        sha = hashlib.sha256(struct.pack(f"<{len(ids)}I", *ids)).hexdigest()
        back = enc.decode(ids)
        want = unicodedata.normalize("NFKC", text) if name == "claude" else text
        if len(ids) != int(row[3]) or sha != row[4] or (back != want and back != text):
            bad.append(row[0])
    assert not bad, f"{name}: {len(bad)} of {len(rows)} documents differ, first {bad[:5]}"
