"""simdbpe.Tokenizer on SentencePiece-style models and under normalizer
chains answers as HF tokenizers does: ids, tokens, character offsets, word
ids and decodings of each text,
and the encodings under truncation with the post-processor's tokens, as HF
tokenizers 0.23.2 gave them (tests/gen/sp_offsets.mjs recorded them in
tests/data/hf/sp_offsets.json.gz). sp_small and its variants are written
whole there, the byte-level model of tests/data/api under two normalizer
chains as edits of it; mistral_v1 and gemma3 are checked when ../shared/models has
them (else those cases are reported as skipped)."""
import gzip
import json
import os

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
ANSWERS = os.path.join(HERE, "..", "data", "hf", "sp_offsets.json.gz")
MODELS = os.environ.get("SIMDBPE_MODELS_DIR") or os.path.join(HERE, "..", "..", "..", "shared",
                                                              "models")

with gzip.open(ANSWERS, "rt", encoding="utf-8") as _f:
    _MODELS = {m["name"]: m for m in json.load(_f)["models"]}


def cases(names=None):
    out = []
    for name, m in _MODELS.items():
        if names is not None and name not in names:
            continue
        path = os.path.join(MODELS, m["file"]) if "file" in m else None
        if path and not os.path.exists(path):
            out.append(pytest.param(name, marks=pytest.mark.skip(reason=f"{path} is not there")))
        else:
            out.append(name)
    return out


def load(name):
    m = _MODELS[name]
    if "file" in m:
        tok = simdbpe.Tokenizer.from_file(os.path.join(MODELS, m["file"]))
    elif "base" in m:
        with gzip.open(os.path.join(HERE, "..", "data", m["base"]), "rt",
                       encoding="utf-8") as f:
            j = json.load(f)
        j["normalizer"] = m["normalizer"]
        tok = simdbpe.Tokenizer.from_str(json.dumps(j))
    else:
        tok = simdbpe.Tokenizer.from_str(m["tokenizer"])
    return m, tok


@pytest.fixture(params=cases())
def case(request):
    return load(request.param)


# the models whose encodings under truncation and with tokens added at run
# time were recorded
@pytest.fixture(params=cases(("sp_small", "mistral_v1", "gemma3")))
def truncated_case(request):
    return load(request.param)


def record(e):
    return {"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets],
            "word_ids": e.word_ids}


def test_ids_tokens_offsets_word_ids_decode(case):
    m, tok = case
    recs = m["records"]
    assert len(recs) > 300
    for r in recs:
        want = {k: r[k] for k in ("ids", "tokens", "offsets", "word_ids")}
        assert record(tok.encode(r["text"], add_special_tokens=False)) == want, r["text"]
        assert tok.decode(r["ids"], skip_special_tokens=False) == r["decode"], r["text"]
    texts = [r["text"] for r in recs[:100]]
    assert [record(e) for e in tok.encode_batch(texts, add_special_tokens=False)] == \
        [{k: r[k] for k in ("ids", "tokens", "offsets", "word_ids")} for r in recs[:100]]


def truncated_record(e):
    return {"ids": e.ids, "offsets": [list(o) for o in e.offsets], "word_ids": e.word_ids,
            "special_tokens_mask": e.special_tokens_mask,
            "overflowing": [truncated_record(o) for o in e.overflowing]}


def test_truncation_keeps_hfs_offsets(truncated_case):
    m, tok = truncated_case
    texts = [r["text"] for r in m["records"][:40]]
    for t in m["truncated"]:
        tok.enable_truncation(t["max_length"], stride=t["stride"], direction=t["direction"])
        for text, want in zip(texts, t["encodings"]):
            assert truncated_record(tok.encode(text)) == want, (t["max_length"], text)
    tok.no_truncation()


def test_tokens_added_at_run_time(truncated_case):
    m, tok = truncated_case
    a = m["added"]
    tok.add_tokens(a["tokens"])
    tok.add_special_tokens(a["special_tokens"])
    for r in a["encodings"]:
        e = tok.encode(r["text"])
        assert (e.ids, [list(o) for o in e.offsets], e.word_ids) == \
            (r["ids"], r["offsets"], r["word_ids"]), r["text"]
