"""The tiktoken-shaped interface: names, defaults, errors, buffers."""
import threading

import numpy as np
import pytest

import simdbpe


def test_names_and_attributes(enc):
    assert simdbpe.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    assert enc.name == "gpt2"
    assert enc.n_vocab == 50257
    assert enc.max_token_value == 50256
    assert enc.eot_token == 50256
    assert enc.special_tokens_set == {"<|endoftext|>"}
    assert enc.encode_single_token("<|endoftext|>") == 50256
    assert enc.encode_single_token(" world") == 995
    assert enc.decode_single_token_bytes(995) == b" world"


def test_every_built_in_encoding(tmp_path):
    # Sizes and special tokens as tiktoken's openai_public.py defines them.
    want = {"gpt2": (50257, 50256, {"<|endoftext|>"}),
            "r50k_base": (50257, 50256, {"<|endoftext|>"}),
            "p50k_base": (50281, 50256, {"<|endoftext|>"}),
            "p50k_edit": (50284, 50256, {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>",
                                         "<|fim_suffix|>"}),
            "cl100k_base": (100277, 100257, {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>",
                                             "<|fim_suffix|>", "<|endofprompt|>"}),
            "o200k_base": (200019, 199999, {"<|endoftext|>", "<|endofprompt|>"})}
    assert simdbpe.list_encoding_names() == list(want)
    for name, (n_vocab, eot, specials) in want.items():
        e = simdbpe.get_encoding(name)
        assert (e.n_vocab, e.eot_token, e.special_tokens_set) == (n_vocab, eot, specials), name
        text = "DON'T stop $hello, 12345 日本語"
        assert e.decode(e.encode(text)) == text


def test_unknown_encoding_is_a_value_error():
    with pytest.raises(ValueError, match="no_such_encoding"):
        simdbpe.get_encoding("no_such_encoding")


def test_disallowed_special_raises_tiktokens_error(enc):
    with pytest.raises(ValueError) as e:
        enc.encode("say <|endoftext|> now")
    # tiktoken 1.0.22's message begins so, naming the token.
    assert str(e.value).startswith(
        "Encountered text corresponding to disallowed special token '<|endoftext|>'.\n")
    assert isinstance(e.value, simdbpe.Error)
    assert e.value.byte_offset == 4
    with pytest.raises(ValueError) as e:
        enc.encode_batch(["fine", "also fine", "x<|endoftext|>"], num_threads=2)
    assert e.value.document == 2
    assert e.value.byte_offset == 1


def test_batch_errors_carry_document_and_offset(enc):
    texts = ["fine text"] * 5000
    texts[3001] = b"ok \xc3("
    texts[4000] = b"\xff"
    for threads in (1, 2, 4):
        with pytest.raises(simdbpe.Error) as e:
            enc.encode_ordinary_batch(texts, num_threads=threads)
        assert isinstance(e.value, ValueError)
        assert (e.value.status, e.value.document, e.value.byte_offset) == \
            ("ERR_INVALID_UTF8", 3001, 3)
        assert str(e.value).startswith("document 3001: ")


def test_decode_bad_id_names_its_position(enc):
    with pytest.raises(simdbpe.Error) as e:
        enc.decode_bytes([1, 2, 60000])
    assert e.value.status == "ERR_TOKEN_ID"
    assert e.value.index == 2
    assert isinstance(e.value, KeyError)  # as tiktoken


def test_surrogates_are_replaced_as_tiktoken_does(enc):
    assert enc.encode("a\ud800b") == enc.encode("a\ufffdb")


def test_buffers_are_uint32_and_shared_with_numpy(enc):
    buf = enc.encode_to_buffer("hello world, hello buffers")
    mv = memoryview(buf)
    assert (mv.format, mv.itemsize, mv.readonly) == ("I", 4, True)
    a = np.asarray(buf)
    assert a.dtype == np.uint32
    assert a.tolist() == enc.encode("hello world, hello buffers") == buf.tolist()
    assert np.shares_memory(a, np.asarray(buf))  # both views of the Buffer's memory
    assert np.asarray(buf).ctypes.data == a.ctypes.data
    assert enc.encode_to_numpy("hello").tolist() == [31373]


def test_batch_buffer_is_flat_ids_and_offsets(enc):
    texts = ["a b", "", "hello world", "<|endoftext|>"]
    ids, off = enc.encode_ordinary_batch_to_buffer(texts, num_threads=2)
    ids, off = np.asarray(ids), np.asarray(off)
    assert ids.dtype == np.uint32 and off.dtype == np.uint64
    assert len(off) == len(texts) + 1 and off[0] == 0 and off[-1] == len(ids)
    lists = enc.encode_ordinary_batch(texts)
    for i, want in enumerate(lists):
        assert ids[off[i]:off[i + 1]].tolist() == want
    ids, off = enc.encode_batch_to_buffer([], num_threads=2)
    assert len(ids) == 0 and list(off) == [0]
    ids, off = enc.encode_batch_to_buffer(texts[3:], allowed_special="all")
    assert list(ids) == [50256]


def test_decode_takes_a_buffer(enc):
    buf = enc.encode_to_buffer("round trip through a buffer")
    assert enc.decode(buf) == "round trip through a buffer"
    assert enc.decode(np.asarray(buf)) == "round trip through a buffer"
    assert enc.decode(np.asarray(buf, dtype=np.int64)) == "round trip through a buffer"
    with pytest.raises(OverflowError):  # as tiktoken (pyo3's u32)
        enc.decode([1, -1])


def test_empty_inputs(enc):
    assert enc.encode("") == []
    assert enc.encode_batch([]) == []
    assert enc.encode_batch(["", ""]) == [[], []]
    assert enc.decode([]) == ""


def test_many_python_threads_share_one_encoding(enc, golden):
    texts = [t for t, _ in golden[:3000]]
    want = [ids for _, ids in golden[:3000]]
    failures = []

    def work(k):
        for i in range(k, len(texts), 7):
            if enc.encode(texts[i]) != want[i]:
                failures.append(i)
        if enc.encode_batch(texts[k::7], num_threads=2) != want[k::7]:
            failures.append(("batch", k))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
