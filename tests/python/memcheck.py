"""The Python package's calls into the library, run under valgrind memcheck by
run.sh: an uninitialised read in the extension or the library (an options
struct filled field by field once gave Llama-3.1's BOS to encode_ordinary
depending on stack garbage, invisible to ASan) is a memcheck error, which
fails the run. Also asserts the ids, so it needs no golden file: the
model is a tokenizer.json made here from GPT-2's byte tokens and a few
merges, with a TemplateProcessing post-processor (BOS and EOS)."""
import json
import os
import pickle
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
        enc = simdbpe.Encoding.from_file(path)
        hello = enc.encode_ordinary("Hello world")
        assert hello == [259, 260, 111, 114, 108, 100], hello  # Hello, Ġw, o, r, l, d
        assert enc.encode("Hello world") == hello
        assert enc.encode_ordinary_batch(["Hello world"] * 3, num_threads=2) == [hello] * 3
        assert enc.encode_to_numpy("Hello world").tolist() == hello
        ids, offsets = enc.encode_ordinary_batch_to_buffer(["Hello world", "x"], num_threads=2)
        assert list(ids) == hello + [120] and list(offsets) == [0, 6, 7]
        assert enc._model.encode("Hello world", add_special_tokens=True) == [bos] + hello + [eos]
        assert enc._model.encode_batch(["Hello world"], threads=2, add_special_tokens=True) == \
            [[bos] + hello + [eos]]
        assert enc.decode(hello) == "Hello world"
        assert enc.decode_with_offsets(hello) == ("Hello world", [0, 5, 7, 8, 9, 10])

        # the HF-shaped calls: offsets (the library's simdbpe_encode_offsets),
        # added tokens (a model built again), truncation and padding
        tok = simdbpe.Tokenizer.from_file(path)
        out = tok.encode("Hello world \U0001F600")
        assert out.ids[:7] == [bos] + hello and out.ids[-1] == eos
        assert out.offsets[:3] == [(0, 0), (0, 5), (5, 7)] and out.offsets[-2] == (12, 13)
        assert out.tokens[1] == "Hello" and out.word_ids[1] == 0
        assert tok.decode(out.ids) == "Hello world \U0001F600"
        assert tok.add_tokens(["<tool>"]) == 1 and tok.add_special_tokens(["<x>"]) == 1
        out = tok.encode("a<tool>b<x>", add_special_tokens=False)
        assert out.offsets == [(0, 1), (1, 7), (7, 8), (8, 11)], out.offsets
        tok.enable_truncation(4, stride=1)
        tok.enable_padding(length=6, pad_token="<pad>")
        out = tok.encode("Hello world and more")
        assert len(out.ids) == 6 and out.overflowing and out.attention_mask[-1] == 0
        assert [len(e.ids) for e in tok.encode_batch(["a", "Hello world"])] == [6, 6]
        assert pickle.loads(pickle.dumps(tok)).encode("a<tool>").ids == tok.encode("a<tool>").ids
        # NFC: offsets of a composed character in the text as given
        tj_nfc = dict(tj, normalizer={"type": "NFC"})
        with open(path, "w", encoding="utf-8") as f:
            json.dump(tj_nfc, f)
        nfc = simdbpe.Tokenizer.from_file(path)
        out = nfc.encode("e\u0301x", add_special_tokens=False)
        assert out.offsets == [(0, 1), (0, 1), (2, 3)], out.offsets
        # bytes with invalid UTF-8, offsets in bytes
        ids, offs, pieces = enc._model.encode_offsets(b"ab\xffc", 1, 1, 0)
        assert offs[-2:] == [(2, 3), (3, 4)], offs
        # a SentencePiece-style model, and one under a normalizer chain
        # (offsets as HF tokenizers 0.23.2 gives them)
        sp_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "hf",
                               "sp_small.tokenizer.json")
        sp = simdbpe.Tokenizer.from_file(sp_path)
        out = sp.encode("hello<tool> world", add_special_tokens=False)
        assert out.tokens == ["\u2581hello", "<tool>", "\u2581", "\u2581world"], out.tokens
        assert out.offsets == [(0, 5), (5, 11), (11, 12), (11, 17)], out.offsets
        assert sp.decode(out.ids) == "hello<tool>  world"
        with open(sp_path, encoding="utf-8") as f:
            tj_sp = json.load(f)
        tj_sp["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Lowercase"}]}
        lower = simdbpe.Tokenizer.from_str(json.dumps(tj_sp))
        out = lower.encode("\u0130a", add_special_tokens=False)
        assert out.offsets == [(0, 1), (0, 1), (0, 1), (1, 2)], out.offsets
        ids, offs, pieces = sp._model.encode_offsets(b"a\xffb", 1, 1, 0)
        assert offs[0][0] == 0 and offs[-1] == (2, 3), offs

        # an encoding built from ranks (tiktoken's constructor), pickled
        ranks = {bytes([b]): b for b in range(256)}
        ranks.update({b"He": 256, b"ll": 257, b"Hell": 258, b"Hello": 259})
        custom = simdbpe.Encoding(name="tiny", pat_str=enc._pat_str, mergeable_ranks=ranks,
                                  special_tokens={"<|endoftext|>": 260})
        assert custom.encode("Hello<|endoftext|>", allowed_special="all") == [259, 260]
        assert pickle.loads(pickle.dumps(custom)).encode("Hello") == [259]
        assert custom.encode_single_token(b"\xe6") == 0xE6
        try:
            custom.decode([999])
            raise AssertionError("decode of an id that is no token")
        except KeyError:
            pass

        gpt2 = simdbpe.get_encoding("gpt2")
        assert gpt2.encode("hello world") == [31373, 995]
        assert gpt2.encode("<|endoftext|>", allowed_special="all") == [50256]
        assert gpt2.encode_ordinary_batch(["hello world", "a"], num_threads=2) == [[31373, 995],
                                                                                    [64]]
        src = os.path.join(d, "docs.txt")
        with open(src, "w", encoding="utf-8") as f:
            f.write("hello world")
        totals = simdbpe.encode_files([src], os.path.join(d, "out.bin"), format="u16",
                                      eot="append", threads=2)
        assert totals["tokens"] == 3, totals
        with open(os.path.join(d, "out.bin"), "rb") as f:
            assert f.read() == struct.pack("<3H", 31373, 995, 50256)
        with simdbpe.open_input(src, "rt") as f:
            assert f.read() == "hello world"

        # the Hugging Face cache: found, and each kind of miss (messages
        # built from paths and directory listings)
        commit = "0123456789abcdef" * 2 + "01234567"
        repo = os.path.join(d, "hub", "models--acme--tiny")
        os.makedirs(os.path.join(repo, "snapshots", commit))
        os.makedirs(os.path.join(repo, "refs"))
        os.symlink(path, os.path.join(repo, "snapshots", commit, "tokenizer.json"))
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write(commit)
        os.environ["HF_HUB_CACHE"] = os.path.join(d, "hub")
        hub = simdbpe.Tokenizer.from_pretrained("acme/tiny")
        assert hub.encode("Hello world", add_special_tokens=False).ids == hello
        for args in (("acme/none",), ("acme/tiny", "v2"), ("a/b/c",), ("acme/tiny", "0" * 40)):
            try:
                simdbpe.Tokenizer.from_pretrained(*args)
                raise AssertionError(f"{args} is not cached")
            except simdbpe.Error:
                pass
    print("memcheck.py: ok")


if __name__ == "__main__":
    sys.exit(main())
