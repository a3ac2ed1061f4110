"""simdbpe.Tokenizer answers as HF tokenizers' Tokenizer does: the ids, tokens,
offsets, masks, decodings, vocabulary, added tokens, truncation and padding
that HF tokenizers 0.23.2 gave for the same calls (tests/gen/api_golden.mjs
recorded them in tests/data/api/). The small model is in tests/data/api;
Llama-3.1, Qwen3, DeepSeek-V3 and the synthetic Kimi (Llama-3's vocabulary
under Kimi K2's Split regex: the generic regex path) are checked when
../shared/models has them (else those cases are reported as skipped)."""
import gzip
import hashlib
import json
import os

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "data", "api")
MODELS = os.environ.get("SIMDBPE_MODELS_DIR") or os.path.join(HERE, "..", "..", "..", "shared",
                                                              "models")


def golden(name):
    with gzip.open(os.path.join(API, f"hf_{name}.json.gz"), "rt", encoding="utf-8") as f:
        return json.load(f)


def model_path(name):
    if name == "small":
        return os.path.join(API, "hf_small.tokenizer.json.gz")
    if name == "kimi":
        return os.path.join(MODELS, "synthetic", "kimi.tokenizer.json.zst")
    return os.path.join(MODELS, name, "tokenizer.json.zst")


def cases():
    out = []
    for name in ("small", "llama3_1", "qwen3", "deepseek_v3", "kimi"):
        if os.path.exists(model_path(name)):
            out.append(name)
        else:
            out.append(pytest.param(name, marks=pytest.mark.skip(
                reason=f"{model_path(name)} is not there")))
    return out


_loaded = {}


@pytest.fixture(params=cases())
def case(request):
    name = request.param
    if name not in _loaded:
        _loaded[name] = (golden(name)["answers"], simdbpe.Tokenizer.from_file(model_path(name)))
    return _loaded[name]


def fresh(name_or_case):
    return simdbpe.Tokenizer.from_file(model_path(name_or_case))


def as_record(e):
    """An Encoded as api_golden.mjs writes HF's Encoding."""
    return {"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets],
            "attention_mask": e.attention_mask, "special_tokens_mask": e.special_tokens_mask,
            "type_ids": e.type_ids, "word_ids": e.word_ids,
            "overflowing": [as_record(o) for o in e.overflowing]}


def test_encode_ids_tokens_offsets_masks(case):
    answers, tok = case
    for rec in answers["encode"]:
        text = rec["text"]
        assert as_record(tok.encode(text)) == rec["with_special"], text
        assert as_record(tok.encode(text, add_special_tokens=False)) == rec["plain"], text
        ids = rec["with_special"]["ids"]
        assert tok.decode(ids) == rec["decode_skip"], text
        assert tok.decode(ids, skip_special_tokens=False) == rec["decode_keep"], text
    texts = [r["text"] for r in answers["encode"]]
    assert [as_record(e) for e in tok.encode_batch(texts)] == \
        [r["with_special"] for r in answers["encode"]]
    assert tok.decode_batch([r["with_special"]["ids"] for r in answers["encode"]]) == \
        [r["decode_skip"] for r in answers["encode"]]


def test_vocabulary(case):
    answers, tok = case
    assert tok.get_vocab_size() == answers["vocab_size"]
    assert tok.get_vocab_size(with_added_tokens=False) == answers["vocab_size_plain"]
    for key, with_added in (("vocab_sha256", True), ("vocab_plain_sha256", False)):
        v = sorted(tok.get_vocab(with_added_tokens=with_added).items(), key=lambda kv: (kv[1], kv[0]))
        text = json.dumps([list(kv) for kv in v], ensure_ascii=False, separators=(",", ":"))
        assert hashlib.sha256(text.encode("utf-8")).hexdigest() == answers[key], key
    for i, token in answers["id_to_token"]:
        assert tok.id_to_token(i) == token, i
    for token, i in answers["token_to_id"]:
        assert tok.token_to_id(token) == i, token


def test_decode_odd_ids(case):
    answers, tok = case
    for rec in answers["decode_odd"]:
        assert tok.decode(rec["ids"]) == rec["skip"], rec["ids"]
        assert tok.decode(rec["ids"], skip_special_tokens=False) == rec["keep"], rec["ids"]


def test_added_tokens(case):
    answers, tok = case
    want = answers["added"]
    t = simdbpe.Tokenizer.from_file(tok._source[1])
    assert t.add_tokens(want["add_tokens"]) == want["count"]
    t.add_special_tokens(want["add_special_tokens"])
    assert t.get_vocab_size() == want["vocab_size"]
    assert t.get_vocab_size(with_added_tokens=False) == want["vocab_size_plain"]
    for token, i in want["ids"]:
        assert t.token_to_id(token) == i, token
    for rec in want["encodings"]:
        e = t.encode(rec["text"])
        assert as_record(e) == rec["enc"], rec["text"]
        assert t.decode(e.ids) == rec["decode_skip"]
        assert t.decode(e.ids, skip_special_tokens=False) == rec["decode_keep"]
    # the tokenizer it was made from is as it was
    assert tok.get_vocab_size() == answers["vocab_size"]


def configure(t, s):
    if "truncation" in s:
        length, opts = s["truncation"]
        t.enable_truncation(length, stride=opts.get("stride", 0),
                            direction=opts.get("direction", "right"))
    if "padding" in s:
        p = s["padding"]
        t.enable_padding(direction=p.get("direction", "right"), pad_id=p.get("padId", 0),
                         pad_type_id=p.get("padTypeId", 0), pad_token=p.get("padToken", "[PAD]"),
                         length=p.get("maxLength"), pad_to_multiple_of=p.get("padToMultipleOf"))


def test_truncation_and_padding(case):
    answers, tok = case
    for s in answers["settings"]:
        t = simdbpe.Tokenizer.from_file(tok._source[1])
        configure(t, s)
        where = {k: v for k, v in s.items() if k in ("truncation", "padding")}
        for text, want in zip(s["texts"], s["single"]):
            assert as_record(t.encode(text)) == want, (where, text)
        assert [as_record(e) for e in t.encode_batch(s["texts"])] == s["batch"], where
        t.no_truncation()
        t.no_padding()
        assert t.truncation is None and t.padding is None
        assert as_record(t.encode(s["texts"][0])) == \
            as_record(tok.encode(s["texts"][0]))


def test_settings_read_from_the_file(tmp_path):
    tj = json.loads(gzip.open(model_path("small"), "rt", encoding="utf-8").read())
    tj["truncation"] = {"direction": "Left", "max_length": 5, "strategy": "LongestFirst",
                        "stride": 1}
    tj["padding"] = {"strategy": {"Fixed": 9}, "direction": "Left", "pad_to_multiple_of": None,
                     "pad_id": 7, "pad_type_id": 0, "pad_token": "<pad>"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tj), encoding="utf-8")
    t = simdbpe.Tokenizer.from_file(path)
    assert t.truncation == {"max_length": 5, "stride": 1, "strategy": "longest_first",
                            "direction": "left"}
    assert t.padding == {"length": 9, "pad_to_multiple_of": None, "pad_id": 7,
                         "pad_token": "<pad>", "pad_type_id": 0, "direction": "left"}
    e = t.encode("Hello world, this is longer")
    assert len(e.ids) == 9 and e.ids[:4] == [7] * 4 and e.attention_mask[:4] == [0] * 4
    assert e.tokens[:4] == ["<pad>"] * 4
    # the same settings given by the calls (HF's answers for them are in
    # test_truncation_and_padding); the file's and the calls' agree
    u = fresh("small")
    u.enable_truncation(5, stride=1, direction="left")
    u.enable_padding(direction="left", pad_id=7, pad_token="<pad>", length=9)
    assert as_record(u.encode("Hello world, this is longer")) == as_record(e)


def test_errors_are_hfs():
    t = fresh("small")
    with pytest.raises(TypeError):
        simdbpe.Tokenizer.from_file(None)
    with pytest.raises(TypeError):
        t.decode([1.5])
    with pytest.raises(OverflowError):
        t.decode([-1])
    with pytest.raises(TypeError):
        t.encode(b"bytes are not text")
    with pytest.raises(NotImplementedError):
        t.encode("a", "pair")
    assert t.id_to_token(10**9) is None and t.token_to_id("\x00nothing") is None
