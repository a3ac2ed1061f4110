#!/usr/bin/env python3
"""make_seeds.py - writes the seed corpora of the fuzz targets.

    python3 tests/fuzz/make_seeds.py [GOLDEN_DIR]

GOLDEN_DIR defaults to ../shared/golden beside the repository. The
selection is fixed (every 97th document of edge.jsonl, the hand-made lines
of stress.jsonl, the first merges of the golden trained model taylorswift)
so re-running it rewrites the same files. Seeds are named seed_*; inputs
found by fuzzing and merged into a corpus are named by their sha1 (as
libFuzzer names them) and are never touched by this script.

Provenance: ../shared/golden (see its README.md): edge.jsonl and
stress.jsonl are hand-made edge cases; train/taylorswift is HF tokenizers'
BpeTrainer output on karpathy/minbpe's taylorswift.txt (CC BY-SA text).
The tokenizer.json seeds wrap that model's first 20 merges in the layout
of HF tokenizers' files, with the Split patterns copied from
src/pretok/pretok.c; the .tiktoken seeds are made here.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# Ill-formed UTF-8 of every kind (Unicode Table 3-7 boundaries), each with
# valid text around it.
INVALID = [
    b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xc2", b"\xdf", b"\xe0\x80\x80",
    b"\xe0\x9f\xbf", b"\xe0\xa0", b"\xed\xa0\x80", b"\xed\xbf\xbf",
    b"\xed\xa0\xbd\xed\xb8\x80",  # CESU-8 surrogate pair for U+1F600
    b"\xef\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf0\x90", b"\xf0\x90\x80",
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff",
    b"\xc0\xaf", b"\xe0\x80\xaf",  # overlong '/'
    b"\x00",  # NUL is valid UTF-8
]

# Characters of 1-4 bytes for block-boundary seeds.
CHARS = ["a", "\u00e9", "\u4e2d", "\U0001f600", " ", "\u3000", "7"]


# Seeds that show an open finding (findings/README.md) go to findings/
# instead of corpus/ until the fix lands, so the replay tests stay green.
HELD_BACK = {}


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    if name in HELD_BACK.get(target, ()):
        d = os.path.join(HERE, "findings", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data)


def text_seeds(golden):
    seeds = {}
    with open(os.path.join(golden, "edge.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % 97 == 0:
                seeds["edge%04d" % i] = json.loads(line)["text"].encode("utf-8")
    with open(os.path.join(golden, "stress.jsonl"), encoding="utf-8") as f:
        lines = f.readlines()
    for i, line in enumerate(lines[:-1]):  # the last record is the whole file
        seeds["stress%02d" % i] = json.loads(line)["text"].encode("utf-8")
    for i, bad in enumerate(INVALID):
        seeds["invalid%02d" % i] = b"ab " + bad + b"cd \xe4\xb8\xad" + bad
        seeds["invalid%02d_end" % i] = b"x y" + bad
    seeds["eot"] = b"a<|endoftext|>b <|endoftext|><|endoftext|>\n<|endoftext"
    return seeds


def boundary_seeds():
    """A character straddling each SIMD block boundary, whole or cut."""
    seeds = {}
    for block in (16, 32, 64):
        for ci, ch in enumerate(CHARS):
            enc = ch.encode("utf-8")
            for shift in range(len(enc)):
                pre = b"a" * (block - shift - 1) + b" "
                seeds["block%d_c%d_s%d" % (block, ci, shift)] = pre + enc + b"b" * 40
                if len(enc) > 1 and shift:
                    seeds["block%d_c%d_cut%d" % (block, ci, shift)] = pre + enc[:shift]
    return seeds


def model_seeds(golden):
    d = os.path.join(golden, "train", "taylorswift")
    with open(os.path.join(d, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(d, "merges.txt"), encoding="utf-8") as f:
        merges = f.read().split("\n")[1:]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    seeds = {}
    for k in (0, 3, 20, 100):
        kept = [kv for kv in by_id if kv[1] < 256 + k]
        extra = [kv for kv in kept if kv[1] >= 256]
        full = dict(kept)
        full["<|endoftext|>"] = 256 + k
        mtxt = "#version: 0.2\n" + "".join(m + "\n" for m in merges[:k])
        vj = json.dumps(full, ensure_ascii=False, separators=(",", ":"))
        seeds["tswift%d" % k] = vj.encode() + b"\0" + mtxt.encode()
        seeds["tswift%d_specials" % k] = vj.encode() + b"\0" + mtxt.encode() + b"\0<|endoftext|>\n"
        plus = ",".join(json.dumps(t, ensure_ascii=False) + ":%d" % i for t, i in extra)
        plus = (plus + "," if plus else "") + '"<|endoftext|>":%d' % (256 + k)
        seeds["plus%d" % k] = b"+" + plus.encode() + b"\0" + mtxt.encode()
        # Ranks out of id order: the same merges listed in reverse.
        rev = "".join(m + "\n" for m in reversed(merges[:k]))
        seeds["plus%d_reversed" % k] = b"+" + plus.encode() + b"\0" + rev.encode()
    # Malformed files, each with a reason to fail (or a corner that must work).
    base = seeds["plus20"]
    vpart, mpart = base.split(b"\0", 1)
    bad = {
        "empty": b"",
        "plus_empty": b"+\0",
        "not_object": b"[1,2,3]\0",
        "truncated_json": base[: len(base) // 3],
        "dup_key": b'+"a":300,"a":301\0',
        "dup_id": b'+"ab":200\0',
        "neg_id": b'+"ab":-1\0',
        "float_id": b'+"ab":1.5\0',
        "huge_id": b'+"ab":16777216\0',
        "sparse_id": b'+"ab":70000\0a b\n',
        "string_id": b'+"ab":"x"\0',
        "not_bytelevel": b'+"\xe4\xb8\xad":300\0',
        "missing_byte": seeds["tswift3"].replace(b'"a":', b'"zz":', 1),
        "merge_unknown": vpart + b"\0#version: 0.2\nq q\n",
        "merge_one_token": vpart + b"\0#version: 0.2\nab\n",
        "merge_three": vpart + b"\0#version: 0.2\na b c\n",
        "merge_crlf": vpart + b"\0#version: 0.2\r\n" + mpart.split(b"\n", 1)[1].replace(b"\n", b"\r\n"),
        "merge_no_version": vpart + b"\0" + mpart.split(b"\n", 1)[1],
        "merge_bad_utf8": vpart + b"\0#version: 0.2\n\xc3 \xa9\n",
        "merge_invalid_cont": vpart + b"\0#version: 0.2\n\xc3A b\n",
        "merge_long": vpart + b"\0" + b"a" * 2000 + b" b\n",
        "special_missing": base + b"\0<|foo|>\n",
        "special_nul": base + b"\0a\0b",
        "special_bytelevel": base + b"\0\xc4\xa0\n",
        "special_is_byte": base + b"\0a\n",
    }
    for name, data in bad.items():
        seeds[name] = data
    # Which tokens BPE yields whole, told from the rules (model/reach.c):
    # a merge across the boundary of a token's two parts ("b c" before
    # "a b": abc is not reachable); equal ranks on the left side (aaa,
    # aaaa are) and on the right side (a + aa is not: "a a" applies left
    # first); a token made by two rules (left to BPE).
    reach = {
        "reach_boundary": (b'"ab":256,"bc":257,"abc":258', b"b c\na b\nab c\n"),
        "reach_tie_left": (b'"aa":256,"aaa":257,"aaaa":258', b"a a\naa a\naa aa\n"),
        "reach_tie_right": (b'"aa":256,"aaa":257', b"a a\na aa\n"),
        "reach_two_rules": (b'"ab":256,"bc":257,"abc":258', b"a b\nb c\nab c\na bc\n"),
    }
    for name, (vocab_part, rules) in reach.items():
        seeds[name] = b"+" + vocab_part + b"\0#version: 0.2\n" + rules
    return seeds


def jsonl_seeds(golden):
    """Records for fuzz_jsonl: byte 0 picks the key and replace mode."""
    seeds = {}
    with open(os.path.join(golden, "stress.jsonl"), "rb") as f:
        lines = f.read().split(b"\n")
    for i, line in enumerate(lines[:40]):
        seeds["stress%02d" % i] = b"\x00" + line
    hand = [
        b'{"text": "plain"}', b'{"text":"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t"}',
        b'{"text": "\\u00e9\\u4e2d\\ud83d\\ude00"}', b'{"text": "\\ud800"}',
        b'{"text": "\\udc00x"}', b'{"text": "\\ud800\\u0041"}', b'{"text": "\\u0000"}',
        b'{"text": "raw \xc3\xa9 \xff bad"}', b'{"text": "ctl \x01"}', b'{"a": {"b": "nested"}}',
        b'{"text": 1}', b'{"text": null}', b'{"text": ["x"]}', b'[]', b'"text"', b'{}',
        b'{"text": "a", "text": "b"}', b'{"x": 1e400, "text": "big"}',
        b'{"x": -0.0e-5, "y": 123456789012345678901234567890, "text": "n"}',
        b'{"x": [1, [2, {"y": [true, false, null]}]], "text": "deep"}',
        b'{"text": "t"} trailing', b'  {"text" : "ws" }  ', b'{"te\\u0078t": "escaped key"}',
        b'{"\xff": 1, "text": "bad key"}', b'{"text": "unterminated', b'{"text": "\\x"}',
        b'{"text": "\\u12"}', b'{"x": 01, "text": "t"}', b'{"x": .5}', b'{"x": tru}',
        b'[' * 70 + b']' * 70, b'{"a":' * 70 + b'1' + b'}' * 70,
        b'{"content": "other key", "t": "short"}',
    ]
    for i, rec in enumerate(hand):
        seeds["hand%02d" % i] = bytes([i % 5]) + rec
        seeds["hand%02d_replace" % i] = bytes([0x80 | (i % 5)]) + rec
    return seeds


def train_seeds(golden):
    """Tiny corpora for fuzz_train: 3 header bytes (merges wanted, options,
    where to cut the stream), then text from the golden training corpora's
    sources (../corpus/small, next to golden/) and stress.jsonl."""
    seeds = {}
    small = os.path.join(golden, "..", "corpus", "small")
    for name in ("tinyshakespeare", "taylorswift"):
        with open(os.path.join(small, name + ".txt"), "rb") as f:
            text = f.read(3000)
        for i, (start, n) in enumerate(((0, 600), (1000, 1500), (2000, 300))):
            chunk = text[start:start + n]
            seeds["%s%d" % (name, i)] = bytes([40 + i, i, (7 * i + 5) % 256]) + chunk
    with open(os.path.join(golden, "stress.jsonl"), encoding="utf-8") as f:
        lines = f.readlines()[:-1]
    for i in range(0, len(lines), 6):
        text = json.loads(lines[i])["text"].encode("utf-8")[:1500]
        seeds["stress%02d" % i] = bytes([i % 64, i % 4, i % 251]) + text
    seeds["ties"] = bytes([63, 1, 3]) + b"ab ba ab ba aaaa abab baba\naaa bbb\n"
    seeds["invalid"] = bytes([20, 0, 2]) + b"a\xe4\xb8 b\xff\xfe c\xc0\xaf\n\xed\xa0\x80 dd"
    seeds["empty"] = bytes([5, 0, 0])
    return seeds


def family_patterns():
    """The Split patterns of each pre-tokenizer family, read from the C
    string literals of src/pretok/pretok.c (so the seeds use exactly the
    patterns the loader recognises)."""
    import codecs
    import re
    path = os.path.join(HERE, "..", "..", "src", "pretok", "pretok.c")
    with open(path, encoding="utf-8") as f:
        src = f.read()
    pats = {}
    for name, body in re.findall(r"static const char (PAT_\w+)\[\] =\s*(.*?);\n", src, re.S):
        raw = b"".join(codecs.escape_decode(lit.encode("latin-1"))[0]
                       for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', body))
        pats[name] = raw.decode("utf-8")
    return {
        "gpt2": [pats["PAT_GPT2"]],
        "cl100k": [pats["PAT_CL100K"]],
        "qwen2": [pats["PAT_QWEN2"]],
        "o200k": [pats["PAT_O200K"]],
        "deepseek_v3": [pats["PAT_DS1"], pats["PAT_DS2"], pats["PAT_DS3"]],
    }


def hf_json_seeds(golden):
    """Small tokenizer.json files for fuzz_hf_json: the golden trained
    model taylorswift cut to its first 20 merges, with each family's
    pre-tokenizer, the NFC normalizer, added tokens (special or not, in
    the vocabulary or not), a post-processor, and files the loader must
    refuse, each for one reason."""
    d = os.path.join(golden, "train", "taylorswift")
    with open(os.path.join(d, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(d, "merges.txt"), encoding="utf-8") as f:
        merges = f.read().split("\n")[1:21]
    vocab = {t: i for t, i in vocab.items() if i < 256 + len(merges)}
    eot = 256 + len(merges)

    def bytelevel(use_regex):
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                "use_regex": use_regex}

    def split(pattern, behavior="Isolated", invert=False):
        return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                "invert": invert}

    def pretok(family):
        if family == "gpt2":
            return bytelevel(True)
        splits = [split(p) for p in family_patterns()[family]]
        return {"type": "Sequence", "pretokenizers": splits + [bytelevel(False)]}

    def added(content, id, special=True, normalized=False):
        return {"id": id, "content": content, "single_word": False, "lstrip": False,
                "rstrip": False, "normalized": normalized, "special": special}

    def file(family="gpt2", pairs=False, **change):
        tj = {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added("<|endoftext|>", eot)],
            "normalizer": None,
            "pre_tokenizer": pretok(family),
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                               "trim_offsets": False, "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": dict(vocab),
                      "merges": [m.split(" ") for m in merges] if pairs else list(merges)},
        }
        for key, value in change.items():
            if key.startswith("model_"):
                tj["model"][key[6:]] = value
            else:
                tj[key] = value
        return json.dumps(tj, ensure_ascii=False, separators=(",", ":")).encode()

    seeds = {}
    for family in ("gpt2", "cl100k", "qwen2", "o200k", "deepseek_v3"):
        seeds["family_" + family] = file(family)
    seeds["pairs_cl100k"] = file("cl100k", pairs=True)
    seeds["nfc"] = file(normalizer={"type": "NFC"})
    seeds["nfc_sequence"] = file("qwen2", normalizer={"type": "Sequence", "normalizers": [{"type": "NFC"}]})
    seeds["ignore_merges"] = file("cl100k", model_ignore_merges=True)
    seeds["added_tokens"] = file("o200k", added_tokens=[
        added("<|endoftext|>", eot),
        added("<|im_start|>", eot + 1),
        added("hello", eot + 2, special=False),
        added("\u00e9t\u00e9", eot + 3, special=False, normalized=True),
    ], normalizer={"type": "NFC"}, model_vocab=dict(vocab, **{"<|endoftext|>": eot}))
    seeds["post_template"] = file("cl100k", added_tokens=[
        added("<|endoftext|>", eot), added("<|begin_of_text|>", eot + 1)],
        post_processor={"type": "TemplateProcessing",
                        "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                   {"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [], "special_tokens": {"<|begin_of_text|>": {
                            "id": "<|begin_of_text|>", "ids": [eot + 1],
                            "tokens": ["<|begin_of_text|>"]}}})
    one = family_patterns()["o200k"][0]
    seeds["removed_inverted"] = file(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        split(one, "Removed", True), bytelevel(False)]})
    seeds["bom"] = b"\xef\xbb\xbf" + file()
    seeds["no_added"] = file("deepseek_v3", added_tokens=[])
    missing = dict(vocab)
    del missing["a"]
    bad = {
        "bad_empty": b"",
        "bad_not_object": b"[]",
        "bad_truncated": file()[:1500],
        "bad_pattern": file(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            split("\\s+"), bytelevel(False)]}),
        "bad_behavior": file(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            split(family_patterns()["cl100k"][0], "Merged"), bytelevel(False)]}),
        "bad_prefix_space": file(pre_tokenizer=dict(bytelevel(True), add_prefix_space=True)),
        "bad_byte_fallback": file(model_byte_fallback=True),
        "bad_dropout": file(model_dropout=0.1),
        "bad_model_type": file(model_type="WordPiece"),
        "bad_lstrip": file(added_tokens=[dict(added("<|endoftext|>", eot), lstrip=True)]),
        "bad_missing_byte": file(model_vocab=missing),
        "bad_merge_unknown": file(model_merges=["q qq"]),
        "bad_merge_three": file(model_merges=["a b c"]),
        "bad_normalizer": file(normalizer={"type": "NFKC"}),
        "bad_added_id": file(added_tokens=[added("<|endoftext|>", -1)]),
        "bad_post_id": file(post_processor={"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "x", "type_id": 0}}], "special_tokens": {
                "x": {"id": "x", "ids": [99999], "tokens": ["x"]}}}),
        "bad_dup_key": file().replace(b'"model":{', b'"model":{"type":"BPE",', 1),
    }
    seeds.update(bad)
    return seeds


def tiktoken_seeds():
    """Small rank files for fuzz_tiktoken: byte 0 picks the encoding (mod
    5: r50k_base, p50k_base, cl100k_base, o200k_base, none), then
    "base64 rank" lines: the 256 bytes, ranked in byte order, and a few
    tokens of two or more bytes whose merges the loader derives from the
    ranks; then files the loader must refuse, each for one reason."""
    import base64
    words = [b"th", b"he", b" t", b"the", b" the", b"in", b"ing", b" a", b"aa", b"aaaa",
             b"aaa", b"12", b"123", b"\xc3\xa9", b"\xe4\xb8\xad"]

    def line(tok, rank):
        return base64.b64encode(tok) + b" %d\n" % rank

    base = b"".join(line(bytes([b]), b) for b in range(256))
    extra = b"".join(line(w, 256 + i) for i, w in enumerate(words))
    seeds = {}
    for sel, name in enumerate(("r50k", "p50k", "cl100k", "o200k", "unnamed")):
        seeds[name] = bytes([sel]) + base + extra
    seeds["bytes_only"] = b"\x02" + base
    lines = (base + extra).split(b"\n")
    seeds["shuffled"] = b"\x03" + b"".join(
        lines[i] + b"\n" for i in sorted(range(len(lines) - 1), key=lambda i: i * 37 % 277))
    seeds["reversed_lines"] = b"\x00" + b"\n".join(reversed(lines[:-1])) + b"\n"
    seeds["crlf"] = b"\x02" + (base + extra).replace(b"\n", b"\r\n")
    seeds["no_final_newline"] = b"\x03" + (base + extra)[:-1]
    seeds["sparse_rank"] = b"\x03" + base + line(b"xyz", 70000) + line(b"xy", 900)
    seeds["unreachable"] = b"\x02" + base + line(b"abc", 256)  # no "ab" or "bc": whole only
    seeds["bad_empty"] = b"\x00"
    seeds["bad_base64"] = b"\x00" + base + b"!!!! 300\n"
    seeds["bad_padding"] = b"\x00" + base + b"YQ=a 300\n"
    seeds["bad_no_rank"] = b"\x01" + base + b"YWI=\n"
    seeds["bad_rank_text"] = b"\x01" + base + b"YWI= 3x\n"
    seeds["bad_huge_rank"] = b"\x02" + base + b"YWI= 99999999999\n"
    seeds["bad_missing_byte"] = b"\x03" + base.replace(line(b"a", 97), b"")
    seeds["bad_dup_rank"] = b"\x02" + base + line(b"ab", 97)
    seeds["bad_special_rank"] = b"\x00" + base + line(b"ab", 50256)
    seeds["bad_long_token"] = b"\x00" + base + line(b"a" * 1500, 300)
    return seeds


def main():
    golden = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "golden")
    text = text_seeds(golden)
    blocks = boundary_seeds()
    for name, data in text.items():
        write("roundtrip", name, data)
        write("replace", name, data)
        write("kernels", name, data)
    for name, data in blocks.items():
        write("kernels", name, data)
        write("roundtrip", name, data)
    for name, data in model_seeds(golden).items():
        write("model_load", name, data)
    for name, data in jsonl_seeds(golden).items():
        write("jsonl", name, data)
    for name, data in train_seeds(golden).items():
        write("train", name, data)
    for name, data in hf_json_seeds(golden).items():
        write("hf_json", name, data)
    for name, data in tiktoken_seeds().items():
        write("tiktoken", name, data)


if __name__ == "__main__":
    main()
