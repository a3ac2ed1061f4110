"""simdbpe's Encoding answers as tiktoken's does: every call of tiktoken 0.14's
Encoding, with the ids, bytes and exceptions tiktoken gives.

Where the answers come from:
  - tests/data/api/tiktoken.json.gz: tiktoken's Rust core itself (npm
    `tiktoken` 1.0.22, WASM; tiktoken's Python package is not installable
    here), recorded by tests/gen/api_golden.mjs;
  - the values tiktoken 0.14.0's own tests assert (tests/test_encoding.py,
    test_offsets.py, test_misc.py of openai/tiktoken at 4e71bbe), quoted
    below with their file;
  - which exception each call raises: tiktoken 0.14.0's src/py.rs and
    tiktoken/core.py (KeyError from decode_bytes with "Invalid token for
    decoding: N", from decode_single_token_bytes with the id, from
    encode_single_token with the bytes; Python ints converted to u32 by
    pyo3: TypeError for a non-integer, OverflowError below 0)."""
import copy
import functools
import gzip
import hashlib
import json
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "data", "api")
ROOT = os.path.join(HERE, "..", "..")


@pytest.fixture(scope="module")
def answers():
    with gzip.open(os.path.join(API, "tiktoken.json.gz"), "rt", encoding="utf-8") as f:
        return json.load(f)["answers"]


NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]


@pytest.mark.parametrize("name", NAMES)
def test_encode_with_every_special_token_policy(name, answers):
    enc = simdbpe.get_encoding(name)
    a = answers[name]
    assert sorted(enc.special_tokens_set) == sorted(a["specials"])
    first = a["specials"][0]
    for r in a["records"]:
        text = r["text"]
        assert enc.encode_ordinary(text) == r["ordinary"], text
        assert enc.encode(text, allowed_special="all") == r["all"], text
        assert enc.encode(text, disallowed_special=()) == r["none"], text
        assert enc.encode(text, allowed_special={first}, disallowed_special=()) == \
            r["first_only"], text
        for want, kw in ((r["default"], {}), (r["first"], {"allowed_special": {first}})):
            if want == "error":
                with pytest.raises(ValueError, match="disallowed special token"):
                    enc.encode(text, **kw)
            else:
                assert enc.encode(text, **kw) == want, text
    texts = [r["text"] for r in a["records"]]
    assert enc.encode_batch(texts, allowed_special="all") == [r["all"] for r in a["records"]]
    assert enc.encode_ordinary_batch(texts) == [r["ordinary"] for r in a["records"]]
    assert enc.decode_batch([r["all"] for r in a["records"]]) == texts
    assert enc.decode_bytes_batch([r["ordinary"] for r in a["records"]]) == \
        [t.encode("utf-8") for t in texts]


@pytest.mark.parametrize("name", NAMES)
def test_token_bytes_single_tokens_and_byte_values(name, answers):
    enc = simdbpe.get_encoding(name)
    a = answers[name]
    for i, want in a["token_bytes"].items():
        i = int(i)
        if want is None:
            with pytest.raises(KeyError) as e:
                enc.decode_single_token_bytes(i)
            assert e.value.args == (str(i),)  # py.rs: KeyError(token.to_string())
            with pytest.raises(KeyError) as e:
                enc.decode_bytes([5, i])
            assert e.value.args == (f"Invalid token for decoding: {i}",)
            assert isinstance(e.value, simdbpe.Error) and e.value.index == 1
        else:
            assert enc.decode_single_token_bytes(i).hex() == want, i
            assert enc.decode_tokens_bytes([i, i]) == [bytes.fromhex(want)] * 2
    for h, want in a["single"].items():
        b = bytes.fromhex(h)
        if want is None:
            with pytest.raises(KeyError) as e:
                enc.encode_single_token(b)
            assert e.value.args == (b,)  # py.rs: KeyError(piece.to_owned())
        else:
            assert enc.encode_single_token(b) == want, h
    values = enc.token_byte_values()
    v = a["token_byte_values"]
    assert len(values) == v["count"]
    joined = b"".join(b"%d:" % len(b) + b for b in values)
    assert hashlib.sha256(joined).hexdigest() == v["sha256"]
    assert [b.hex() for b in values[:5]] == v["first"]
    for t in a["specials"]:
        assert enc.is_special_token(enc.encode_single_token(t))
    assert not enc.is_special_token(0)


def test_an_encoding_extended_with_chat_tokens(answers):
    """tiktoken's README: Encoding(name, pat_str=cl100k._pat_str,
    mergeable_ranks=cl100k._mergeable_ranks, special_tokens={...})."""
    chat = answers["chat"]
    cl100k = simdbpe.get_encoding("cl100k_base")
    # tiktoken 0.14.0's cl100k_base pat_str (openai_public.py), the older
    # spelling the npm package uses (chat["pat_str"]), and simdbpe's own
    patterns = [chat["pat_str"], cl100k._pat_str,
                r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
                r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""]
    for pat in patterns:
        enc = simdbpe.Encoding(name="cl100k_im", pat_str=pat,
                               mergeable_ranks=cl100k._mergeable_ranks,
                               special_tokens=chat["special_tokens"])
        assert enc.name == "cl100k_im" and enc._pat_str == pat
        for r in chat["records"]:
            assert enc.encode(r["text"], allowed_special="all") == r["all"], (pat, r["text"])
            assert enc.encode_ordinary(r["text"]) == r["ordinary"]
        assert enc.n_vocab == 100277
    with pytest.raises(AssertionError):
        simdbpe.Encoding(name="x", pat_str=cl100k._pat_str, mergeable_ranks=cl100k._mergeable_ranks,
                         special_tokens={"<|x|>": 100300}, explicit_n_vocab=100257)


def test_a_pattern_simdbpe_does_not_implement_is_refused():
    cl100k = simdbpe.get_encoding("cl100k_base")
    with pytest.raises(simdbpe.Error, match=r"pat_str .*\\w\+.* is not the pattern") as e:
        simdbpe.Encoding(name="words", pat_str=r"\w+|\s+", mergeable_ranks=cl100k._mergeable_ranks,
                         special_tokens={})
    assert e.value.status == "ERR_UNSUPPORTED"
    # tiktoken 0.14's cl100k pattern keeps whitespace that ends a text
    # whole; with a token that could span the cut the family makes there,
    # the ids could differ: refused, the token named
    ranks = dict(cl100k._mergeable_ranks)
    ranks[b"\n  "] = len(ranks) + 1000
    with pytest.raises(simdbpe.Error, match=r"the token \"\\x0A  \""):
        simdbpe.Encoding(name="x", mergeable_ranks=ranks, special_tokens={},
                         pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| """
                         r"""?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")


def test_values_tiktokens_own_tests_assert():
    # tests/test_encoding.py: test_simple, test_simple_repeated, test_simple_regex,
    # test_basic_encode, test_encode_surrogate_pairs
    gpt2, cl100k = simdbpe.get_encoding("gpt2"), simdbpe.get_encoding("cl100k_base")
    assert gpt2.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]
    assert cl100k.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]
    for zeros, ids in ((1, [15]), (8, [8269]), (9, [10535, 830]), (16, [25645]),
                       (17, [8269, 10535, 830])):
        assert gpt2.encode("0" * zeros) == ids
    assert cl100k.encode("rer") == [38149]
    assert cl100k.encode("'rer") == [2351, 81]
    assert cl100k.encode("today\n ") == [31213, 198, 220]
    assert cl100k.encode("today\n \n") == [31213, 27907]
    assert cl100k.encode("today\n  \n") == [31213, 14211]
    assert cl100k.encode(" \x850") == [220, 126, 227, 15]
    assert cl100k.encode("👍") == [9468, 239, 235]
    assert cl100k.encode("\ud83d\udc4d") == [9468, 239, 235]
    assert cl100k.encode("\ud83d") == cl100k.encode("�")
    # ... and whatever allowed_special says (the path that splits in Python)
    assert cl100k.encode("a\ud83d<|endoftext|>", allowed_special={"<|endoftext|>"}) == \
        cl100k.encode("a�<|endoftext|>", allowed_special="all")
    for name in simdbpe.list_encoding_names():
        enc = simdbpe.get_encoding(name)
        for token in range(0, 10_000, 7):
            assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token
    # tests/test_offsets.py: test_basic_offsets
    for prompt, offsets, kw in (
            ("hello world", [0, 5], {}),
            ("hello world<|endoftext|> green cow", [0, 5, 11, 24, 30], {"allowed_special": "all"}),
            ("我非常渴望与人工智能一起工作", [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13], {}),
            ("நடிகர் சூர்யா", [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12], {}),
            (" Ġ除", [0, 1], {})):
        assert cl100k.decode_with_offsets(cl100k.encode(prompt, **kw)) == (prompt, offsets)
    # tests/test_misc.py: test_encoding_for_model
    for model, name in (("gpt2", "gpt2"), ("text-davinci-003", "p50k_base"),
                        ("text-davinci-edit-001", "p50k_edit"),
                        ("gpt-3.5-turbo-0301", "cl100k_base"), ("gpt-4", "cl100k_base"),
                        ("gpt-4o", "o200k_base")):
        assert simdbpe.encoding_for_model(model).name == name
    assert simdbpe.encoding_name_for_model("gpt-oss-120b") == "o200k_harmony"
    with pytest.raises(KeyError):
        simdbpe.encoding_name_for_model("no-such-model")


def test_decode_with_offsets_is_tiktokens_reference_rule():
    """tests/test_offsets.py defines the offsets as the common prefix of the
    text with the decoding of the tokens before each, errors="ignore"."""
    enc = simdbpe.get_encoding("cl100k_base")
    for text in ("😀 héllo 日本", "நடிகர் சூர்யா", "a\u0301b e\u0301", "x\U0001F468\u200d\U0001F469"):
        tokens = enc.encode(text)
        got_text, got = enc.decode_with_offsets(tokens)
        want = []
        for i in range(len(tokens)):
            prefix = enc.decode(tokens[:i], errors="ignore")
            k = 0
            while k < len(text) and k < len(prefix) and text[k] == prefix[k]:
                k += 1
            want.append(k)
        assert (got_text, got) == (text, want), text


def test_ids_are_ints_or_numpy_integers():
    enc = simdbpe.get_encoding("gpt2")
    assert enc.decode(np.array([31373, 995], dtype=np.int64)) == "hello world"
    assert enc.decode_single_token_bytes(np.int64(995)) == b" world"
    assert enc.decode_tokens_bytes(np.array([995], dtype=np.uint16)) == [b" world"]
    assert enc.is_special_token(np.uint32(50256))
    with pytest.raises(TypeError):
        enc.decode([1.5])
    with pytest.raises(TypeError):
        enc.decode_single_token_bytes(1.5)
    with pytest.raises(OverflowError):
        enc.decode([-1])
    with pytest.raises(OverflowError):
        enc.decode([2**32])


def test_version():
    import importlib.metadata
    assert simdbpe.__version__ == simdbpe.version()
    assert simdbpe.__version__.count(".") == 2
    # the package's version is the library's (pyproject.toml: setup.py reads simdbpe.h)
    assert importlib.metadata.version("simdbpe") == simdbpe.__version__


def _encode(enc, text):
    return enc.encode(text, allowed_special="all")


@pytest.mark.parametrize("how", ["name", "file", "ranks", "trained"])
def test_pickle_deepcopy_and_pools(how, tmp_path):
    """An Encoding pickles (tiktoken: a registered encoding by its name, one
    built from ranks by its arguments; a model file by its path) and works
    in a multiprocessing pool, as nanoGPT's prepare.py uses it."""
    cl100k = simdbpe.get_encoding("cl100k_base")
    if how == "name":
        enc = cl100k
        assert pickle.loads(pickle.dumps(enc)).name == "cl100k_base"
        assert len(pickle.dumps(enc)) < 100
    elif how == "file":
        enc = simdbpe.Encoding.from_file(os.path.join(ROOT, "src", "model", "tiktoken",
                                                      "cl100k_base.tiktoken"))
        assert len(pickle.dumps(enc)) < 1000
    elif how == "ranks":
        enc = simdbpe.Encoding(name="custom", pat_str=cl100k._pat_str,
                               mergeable_ranks=cl100k._mergeable_ranks,
                               special_tokens={"<|endoftext|>": 100257, "<|pickle|>": 100_300})
    else:
        enc = simdbpe.train(texts=["hello world " * 50, "more text here"], vocab_size=300,
                            special_tokens=["<|endoftext|>"]).as_encoding()
    texts = ["hello world <|endoftext|>", "日本語 text", "x" * 1000]
    want = [_encode(enc, t) for t in texts]
    for copied in (pickle.loads(pickle.dumps(enc)), copy.deepcopy(enc), copy.copy(enc)):
        assert [_encode(copied, t) for t in texts] == want
        assert copied.name == enc.name and copied.n_vocab == enc.n_vocab
    if how == "ranks":
        assert _encode(pickle.loads(pickle.dumps(enc)), "<|pickle|>") == [100_300]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(functools.partial(_encode, enc), texts) == want
