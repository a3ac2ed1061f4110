"""Golden parity through Python: the references' ids for every golden document."""
import os
import subprocess

import pytest

import simdbpe
from conftest import GOLDEN, records


def test_encode_every_golden_document(enc, golden):
    # The golden ids are encode_ordinary's: some texts hold "<|endoftext|>",
    # which encode() with its defaults refuses, as tiktoken's does.
    refused = 0
    for i, (text, want) in enumerate(golden):
        assert enc.encode_ordinary(text) == want, i
        assert enc.encode(text, disallowed_special=()) == want, i
        if "<|endoftext|>" in text:
            with pytest.raises(ValueError):
                enc.encode(text)
            refused += 1
        else:
            assert enc.encode(text) == want, i
    assert refused > 0


def test_bytes_input_equals_str_input(enc, golden):
    for text, want in golden[:2000]:
        assert enc.encode_ordinary(text.encode("utf-8")) == want


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_encode_batch_golden(enc, golden, threads):
    texts = [t for t, _ in golden]
    want = [ids for _, ids in golden]
    assert enc.encode_batch(texts, num_threads=threads, disallowed_special=()) == want
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == want


def test_specials_allowed_and_as_text(enc):
    recs = records("specials.jsonl")
    assert len(recs) > 10
    for r in recs:
        assert enc.encode(r["text"], allowed_special="all") == r["ids_allow"]
        assert enc.encode(r["text"], allowed_special={"<|endoftext|>"}) == r["ids_allow"]
        assert enc.encode(r["text"], disallowed_special=()) == r["ids_text"]
        assert enc.encode_ordinary(r["text"]) == r["ids_text"]
    texts = [r["text"] for r in recs]
    assert enc.encode_batch(texts, allowed_special="all") == [r["ids_allow"] for r in recs]


def test_invalid_utf8_bytes_fail_at_pythons_offset(enc):
    checked = 0
    for r in records("utf8.jsonl"):
        data = bytes.fromhex(r["hex"])
        if r["strict_offset"] is None:
            continue
        with pytest.raises(simdbpe.Error) as e:
            enc.encode_ordinary(data)
        assert e.value.status == "ERR_INVALID_UTF8"
        assert e.value.byte_offset == r["strict_offset"]
        checked += 1
    assert checked > 100


def test_decode_round_trip(enc, golden):
    for text, ids in golden[:3000]:
        assert enc.decode_bytes(ids) == text.encode("utf-8")
        assert enc.decode(ids) == text


def test_tokenizer_from_directory():
    """The RoBERTa-style model (ids not 256 + rank): HF tokenizers 0.23.2's ids."""
    tok = simdbpe.Encoding.from_file(os.path.join(GOLDEN, "small_model"))
    recs = records("small_model.jsonl")
    assert recs
    for r in recs:
        assert tok.encode_ordinary(r["text"]) == r["ids_text"]
        assert tok.encode(r["text"], allowed_special="all") == r["ids_allow"]


def test_tokenizer_from_compiled_file(tmp_path, golden):
    cli = os.environ.get("SIMDBPE_CLI")
    if not cli:
        pytest.skip("SIMDBPE_CLI (the simdbpe binary, to compile a .sbpe) not set")
    out = tmp_path / "gpt2.sbpe"
    subprocess.run([cli, "compile", "-m", "gpt2", "-o", str(out)], check=True)
    tok = simdbpe.Encoding.from_file(out)
    for text, want in golden[:1000]:
        assert tok.encode_ordinary(text) == want
