#!/usr/bin/python3
"""test_split.py - documents cut into pieces (at safe pre-token boundaries,
simdbpe_cut_find) still give exactly the references' ids, for any batch size
and thread count.

With --batch-bytes 64 nearly every document is longer than a batch, so it is
cut into many pieces that are encoded separately (often by different
threads) and joined by the ordered writer. Inputs are the golden documents
of tests/data/golden (ids from tiktoken / HF tokenizers): as documents
separated by --doc-separator, as one file per document, as lines, as
JSON Lines (never cut: a record is parsed whole), with <|endoftext|>
allowed, and with invalid UTF-8 in replace mode; plain, .gz and .zst. With the
argument `families` (ctest dataset_split_families, which needs ../shared): the same
for the other families (documents of the public corpora against golden/models)
and a model that adds BOS to each document.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

SEP = b"\x1e\x1f<|doc|>\x1f\x1e"
SEP_ARG = "\\x1e\\x1f<|doc|>\\x1f\\x1e"
tmp = make_tmpdir("dataset-split-")


def p(name):
    return os.path.join(tmp, name)


def golden_docs():
    docs = []
    for name in ("edge.jsonl", "stress.jsonl", "random.jsonl"):
        for text, ids in golden_records(name):
            docs.append((text.encode("utf-8"), ids))
    check(all(SEP not in t for t, _ in docs), "the separator occurs in a golden text")
    return docs


def summary_of(err):
    line = [l for l in err.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def encode_u32(args, threads, batch):
    out = p("out.u32")
    _, err, _ = run(["encode", "--output-format", "u32", "-o", out, "--threads", threads,
                     "--batch-bytes", batch, "--summary", "-"] + args)
    with open(out, "rb") as f:
        data = f.read()
    return data, summary_of(err)


def separator_documents():
    docs = golden_docs()
    write_bytes(p("sep.txt"), SEP.join(t for t, _ in docs) + SEP)
    want = [ids for _, ids in docs]
    outputs = set()
    for batch in (64, 1000, 1 << 20):
        for threads in (1, 2):
            data, s = encode_u32(["--doc-separator", SEP_ARG, p("sep.txt")], threads, batch)
            check_stream(ids_from_bytes(data, 4), want, "none", "batch %d threads %d" % (batch, threads))
            if batch == 64:
                check(s["cuts"] > 1000, "only %d cuts with 64-byte batches" % s["cuts"])
            outputs.add(data)
    check(len(outputs) == 1, "outputs differ between batch sizes / thread counts")


def one_file_per_document():
    docs = [d for d in golden_docs() if len(d[0]) > 300][:60]
    names = []
    for i, (text, _) in enumerate(docs):
        name = p("doc%03d%s" % (i, ("", ".gz", ".zst")[i % 3]))
        if i % 3 == 1:
            text = gzip.compress(text)
        elif i % 3 == 2:
            raw = p("doc%03d.raw" % i)
            write_bytes(raw, text)
            subprocess.run(["zstd", "-q", "-f", raw, "-o", name], check=True)
            os.unlink(raw)
            names.append(name)
            continue
        write_bytes(name, text)
        names.append(name)
    for threads in (1, 2):
        _, err, _ = run(["encode", "--summary", "-", "--batch-bytes", "64", "--threads", threads,
                         "-o", p("out.txt")]
                        + names)
        check_against_ids(read_text(p("out.txt")), [ids for _, ids in docs], "none", "files")
        cuts = summary_of(err)["cuts"]
        check(cuts > 50, "whole files were cut only %d times" % cuts)


def lines_and_jsonl():
    # (A line's \r\n ending is not part of it: no text ending in \r.)
    docs = [d for d in golden_docs() if b"\n" not in d[0] and not d[0].endswith(b"\r")]
    write_bytes(p("lines.txt"), b"\n".join(t for t, _ in docs) + b"\n")
    data, s = encode_u32(["--input-format", "lines", p("lines.txt")], 2, 64)
    check_stream(ids_from_bytes(data, 4), [ids for _, ids in docs], "none", "lines")
    check(s["cuts"] > 100, "long lines were not cut")
    # JSON records are never cut; a record longer than a batch is held whole.
    data, s = encode_u32(["--input-format", "jsonl", os.path.join(GOLDEN_DIR, "stress.jsonl")], 2, 64)
    check_stream(ids_from_bytes(data, 4), [ids for _, ids in golden_records("stress.jsonl")],
                 "none", "jsonl")
    check(s["cuts"] == 0, "a JSON record was cut")


def specials_allowed():
    recs = []
    with open(os.path.join(GOLDEN_DIR, "specials.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "text" in r:
                recs.append((r["text"].encode("utf-8"), r["ids_allow"], r["ids_text"]))
    write_bytes(p("spec.txt"), SEP.join(t for t, _, _ in recs))
    for special, k in (("allow", 1), ("text", 2)):
        data, _ = encode_u32(["--doc-separator", SEP_ARG, "--special", special, p("spec.txt")], 2, 64)
        check_stream(ids_from_bytes(data, 4), [r[k] for r in recs], "none", "--special " + special)


def invalid_utf8_replaced():
    cases = []
    with open(os.path.join(GOLDEN_DIR, "utf8.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if "hex" in r and r["hex"]:
                # Padded with text on both sides so that cut points exist.
                cases.append((b"one two " + bytes.fromhex(r["hex"]) + b" three four", r["hex"]))
    check(all(SEP not in c for c, _ in cases), "separator in a case")
    # The references' ids for the padded texts are not in the golden file, so
    # compare the cut run with an uncut one, and the uncut one with the
    # golden ids of each case encoded alone.
    write_bytes(p("utf8.txt"), SEP.join(c for c, _ in cases))
    cut, s = encode_u32(["--doc-separator", SEP_ARG, "--errors", "replace", p("utf8.txt")], 2, 32)
    whole, _ = encode_u32(["--doc-separator", SEP_ARG, "--errors", "replace", p("utf8.txt")], 1,
                          1 << 22)
    check(cut == whole, "cutting changed the ids of replaced invalid UTF-8")
    check(s["cuts"] > 1000, "not cut")
    alone = [bytes.fromhex(h) for _, h in cases]
    want = []
    with open(os.path.join(GOLDEN_DIR, "utf8.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if "hex" in r and r["hex"]:
                want.append(r["ids"])
    write_bytes(p("alone.txt"), SEP.join(alone))
    data, _ = encode_u32(["--doc-separator", SEP_ARG, "--errors", "replace", p("alone.txt")], 2, 16)
    check_stream(ids_from_bytes(data, 4), want, "none", "utf8 replace")


def model_documents(dirs, model, corpus, count):
    """The first `count` documents of a corpus and their golden rows for `model`."""
    c, g = dirs
    text = subprocess.run(["zstd", "-dcq", os.path.join(c, corpus + ".txt.zst")],
                          check=True, stdout=subprocess.PIPE).stdout
    docs = []
    with open(os.path.join(g, "models", model, corpus + ".tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        oi, li = header.index("byte_offset"), header.index("byte_length")
        ti, si = header.index("tokens"), header.index("sha256_u32le")
        for line in f:
            cols = line.rstrip("\n").split("\t")
            off, n = int(cols[oi]), int(cols[li])
            docs.append((text[off:off + n], (int(cols[ti]), cols[si])))
            if len(docs) == count:
                break
    return docs


def other_families():
    dirs = corpus_dirs()
    if dirs is None or not os.path.isdir(os.path.join(dirs[1], "models")):
        skip_without_corpus("the other families' documents (golden/models)")
    for model in ("cl100k_base", "o200k_base"):
        for corpus in ("code", "multilingual"):
            docs = [d for d in model_documents(dirs, model, corpus, 60) if SEP not in d[0]]
            write_bytes(p("fam.txt"), SEP.join(t for t, _ in docs))
            out = p("fam.ids")
            _, err, _ = run(["encode", "--summary", "-", "-m", model, "--doc-separator", SEP_ARG,
                             "-o", out,
                             "--threads", "2", "--batch-bytes", "256", p("fam.txt")])
            s = summary_of(err)
            with open(out) as f:
                got = [[int(x) for x in line.split()] for line in f]
            check_against_tsv(got, [r for _, r in docs], "none", "%s %s" % (model, corpus))
            check(s["cuts"] > 1000, "%s %s: only %d cuts" % (model, corpus, s["cuts"]))
    # Llama-3.1 adds <|begin_of_text|> to each document, once however it is cut.
    path = os.path.join(dirs[0], "..", "models", "llama3_1", "tokenizer.json.zst")
    if not os.path.isfile(path):
        print("other_families: %s: no %s" % (SKIP_LINE, path))
        sys.exit(SKIP_CODE)
    model = p("llama3_1.json")
    write_bytes(model, subprocess.run(["zstd", "-dcq", path], check=True,
                                      stdout=subprocess.PIPE).stdout)
    docs = [t for t, _ in model_documents(dirs, "llama3", "english", 20)]
    write_bytes(p("en.txt"), SEP.join(docs))
    args = ["-m", model, "--add-special-tokens", "--doc-separator", SEP_ARG, p("en.txt")]
    cut, s = encode_u32(args, 2, 256)
    whole, w = encode_u32(args, 1, 1 << 26)
    check(s["cuts"] > 1000 and w["cuts"] == 0, "cuts: %d and %d" % (s["cuts"], w["cuts"]))
    ids = ids_from_bytes(cut, 4)
    check(ids.count(128000) == len(docs), "%d BOS ids for %d documents"
          % (ids.count(128000), len(docs)))
    check(cut == whole, "cutting changed the ids with --add-special-tokens")


if __name__ == "__main__":
    if sys.argv[1:] == ["families"]:  # ctest dataset_split_families: needs ../shared
        main([other_families])
    else:
        main([separator_documents, one_file_per_document, lines_and_jsonl, specials_allowed,
              invalid_utf8_replaced])
