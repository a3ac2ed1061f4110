"""The Python package's calls into the library, run under valgrind memcheck by
run.sh: an uninitialised read in the extension or the library (an options
struct filled field by field once gave Llama-3.1's BOS to encode_ordinary
depending on stack garbage, invisible to ASan) is a memcheck error, which
fails the run. Also asserts the ids, so it needs no golden file: the
model is a tokenizer.json made here from GPT-2's byte tokens and a few
merges, with a TemplateProcessing post-processor (BOS and EOS)."""
import json
import os
import struct
import sys
import tempfile

import simdbpe


def byte_alphabet():
    """GPT-2's byte -> character map, as its encoder.py defines it."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def tiny_tokenizer_json():
    a = byte_alphabet()
    vocab = {a[b]: b for b in range(256)}
    merges = [("H", "e"), ("l", "l"), ("He", "ll"), ("Hell", "o"), ("\u0120", "w")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    bos, eos = len(vocab), len(vocab) + 1
    return {
        "version": "1.0",
        "added_tokens": [
            {"id": bos, "content": "<s>", "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True},
            {"id": eos, "content": "</s>", "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]},
                               "</s>": {"id": "</s>", "ids": [eos], "tokens": ["</s>"]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{left} {right}" for left, right in merges]},
    }, bos, eos


def main():
    tj, bos, eos = tiny_tokenizer_json()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(tj, f)
        tok = simdbpe.Tokenizer.from_file(path)
        hello = tok.encode_ordinary("Hello world")
        assert hello == [259, 260, 111, 114, 108, 100], hello  # Hello, Ġw, o, r, l, d
        assert tok.encode("Hello world") == hello
        assert tok.encode_ordinary_batch(["Hello world"] * 3, num_threads=2) == [hello] * 3
        assert tok.encode_to_numpy("Hello world").tolist() == hello
        ids, offsets = tok.encode_ordinary_batch_to_buffer(["Hello world", "x"], num_threads=2)
        assert list(ids) == hello + [120] and list(offsets) == [0, 6, 7]
        assert tok._model.encode("Hello world", add_special_tokens=True) == [bos] + hello + [eos]
        assert tok._model.encode_batch(["Hello world"], threads=2, add_special_tokens=True) == \
            [[bos] + hello + [eos]]
        assert tok.decode(hello) == "Hello world"

        enc = simdbpe.get_encoding("gpt2")
        assert enc.encode("hello world") == [31373, 995]
        assert enc.encode("<|endoftext|>", allowed_special="all") == [50256]
        assert enc.encode_ordinary_batch(["hello world", "a"], num_threads=2) == [[31373, 995],
                                                                                   [64]]
        src = os.path.join(d, "docs.txt")
        with open(src, "w", encoding="utf-8") as f:
            f.write("hello world")
        totals = simdbpe.encode_files([src], os.path.join(d, "out.bin"), format="u16",
                                      eot="append", threads=2)
        assert totals["tokens"] == 3, totals
        with open(os.path.join(d, "out.bin"), "rb") as f:
            assert f.read() == struct.pack("<3H", 31373, 995, 50256)
    print("memcheck.py: ok")


if __name__ == "__main__":
    sys.exit(main())
