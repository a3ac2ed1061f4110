#!/usr/bin/python3
"""test_formats.py - every output format, read back by readers written from
the published layouts (dataset_util.py), against the references' ids.

  test_formats.py golden   edge.jsonl + stress.jsonl from tests/data/golden
                           (in the project: always runs)
  test_formats.py mixed    every record of ../shared/corpus/mixed.jsonl.zst
                           against ../shared/golden/mixed.tsv (count + sha256
                           of the u32le ids); skipped, saying so, without them

Each format is one encode run over the input; the mixed corpus (58 MB) is
read seven times in all: six formats with 2 threads, then Megatron again
with 1 thread, which must give the same bytes.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403


def golden_input(tmp):
    """edge.jsonl then stress.jsonl as two JSON Lines inputs (key "text";
    the extra "doc"/"ids" fields exercise skipping other values)."""
    recs = golden_records("edge.jsonl") + golden_records("stress.jsonl")
    files = [os.path.join(GOLDEN_DIR, "edge.jsonl"), os.path.join(GOLDEN_DIR, "stress.jsonl")]
    return files, [ids for _, ids in recs]


def run_golden():
    tmp = make_tmpdir("dataset-formats-")
    files, want = golden_input(tmp)
    base = ["encode", "--input-format", "jsonl", "-q"] + files
    p = lambda name: os.path.join(tmp, name)  # noqa: E731

    def text_format():
        run(base + ["-o", p("out.txt")])
        check_against_ids(read_text(p("out.txt")), want, "none", "text")

    def nanogpt_u16_append():
        run(base + ["--output-format", "u16", "--eot", "append", "-o", p("out.u16")])
        with open(p("out.u16"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 2), want, "append", "u16")

    def u32_no_eot_and_prepend():
        run(base + ["--output-format", "u32", "-o", p("out.u32")])
        with open(p("out.u32"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 4), want, "none", "u32")
        run(base + ["--output-format", "u32", "--eot", "prepend", "-o", p("pre.u32")])
        with open(p("pre.u32"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 4), want, "prepend", "u32 prepend")

    def llmc_shards():
        # Small shards so that documents straddle shard boundaries.
        run(base + ["--output-format", "llmc", "--shard-tokens", "20000", "-o", p("tok")])
        stream, width, n = read_llmc(p("tok"), 20000)
        check(width == 2 and n > 3, "llmc: width %d, %d shards" % (width, n))
        check_stream(stream, want, "prepend", "llmc")
        run(base + ["--output-format", "llmc", "--dtype", "u32", "-o", p("tok32")])
        stream, width, n = read_llmc(p("tok32"))
        check(width == 4 and n == 1, "llmc u32: width %d, %d shards" % (width, n))
        check_stream(stream, want, "prepend", "llmc u32")

    def megatron():
        run(base + ["--output-format", "megatron", "-o", p("meg")])
        dtype, docs = read_megatron(p("meg"))
        check(dtype == 8, "megatron dtype %d, want 8 (u16 for vocab < 65500)" % dtype)
        check_against_ids(docs, want, "append", "megatron")
        run(base + ["--output-format", "megatron", "--dtype", "u32", "--eot", "none",
                    "-o", p("meg32")])
        dtype, docs = read_megatron(p("meg32"))
        check(dtype == 4, "megatron --dtype u32: dtype %d, want 4 (int32)" % dtype)
        check_against_ids(docs, want, "none", "megatron u32")

    def datatrove():
        run(base + ["--output-format", "datatrove", "-o", p("dt")])
        name, size, docs, human = read_datatrove(p("dt"))
        check(name == "gpt2" and size == 2, "datatrove metadata %s|%d" % (name, size))
        check_against_ids(docs, want, "append", "datatrove")
        total = sum(len(d) for d in docs)
        check(human == human_metric(total), "human count %r, want %r" % (human, human_metric(total)))
        run(base + ["--output-format", "datatrove", "--dtype", "u32", "-o", p("dt32.ds")])
        name, size, docs, _ = read_datatrove(p("dt32"))
        check(size == 4, "datatrove --dtype u32: token size %d" % size)
        check_against_ids(docs, want, "append", "datatrove u32")

    def empty_documents():
        # Empty texts: EOT alone for nanoGPT/llm.c/datatrove; no sequence and
        # no EOD in Megatron (as tools/preprocess_data.py does).
        write_bytes(p("e.jsonl"), b'{"text": ""}\n{"text": "a"}\n{"text": ""}\n')
        run(["encode", "-q", "--input-format", "jsonl", "--output-format", "megatron",
             "-o", p("e"), p("e.jsonl")])
        _, docs = read_megatron(p("e"))
        check([list(d) for d in docs] == [[], [64, EOT], []], "megatron empty docs: %r" % docs)
        run(["encode", "-q", "--input-format", "jsonl", "--output-format", "u16", "--eot",
             "append", "-o", p("e.u16"), p("e.jsonl")])
        with open(p("e.u16"), "rb") as f:
            check(list(ids_from_bytes(f.read(), 2)) == [EOT, 64, EOT, EOT], "u16 empty docs")

    main([text_format, nanogpt_u16_append, u32_no_eot_and_prepend, llmc_shards, megatron,
          datatrove, empty_documents])


def run_mixed():
    corpus, golden = skip_without_corpus("test_formats.py mixed")
    rows = golden_tsv(os.path.join(golden, "mixed.tsv"))
    src = os.path.join(corpus, "mixed.jsonl.zst")
    tmp = make_tmpdir("dataset-mixed-")
    p = lambda name: os.path.join(tmp, name)  # noqa: E731
    base = ["encode", "-q", "--threads", "2", "--input-format", "jsonl", src]

    def mixed_u32():
        run(base + ["--output-format", "u32", "-o", p("m.u32")])
        with open(p("m.u32"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 4), rows, "none", "u32")

    def mixed_nanogpt_u16():
        run(base + ["--output-format", "u16", "--eot", "append", "-o", p("m.u16")])
        with open(p("m.u16"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 2), rows, "append", "u16")

    def mixed_llmc():
        run(base + ["--output-format", "llmc", "--shard-tokens", "5000000", "-o", p("m")])
        stream, width, n = read_llmc(p("m"), 5000000)
        check(n == 5 and width == 2, "llmc: %d shards of width %d" % (n, width))
        check_stream(stream, rows, "prepend", "llmc")

    def mixed_megatron():
        run(base + ["--output-format", "megatron", "-o", p("meg")])
        dtype, docs = read_megatron(p("meg"))
        check(dtype == 8, "dtype %d" % dtype)
        check_against_tsv(docs, rows, "append", "megatron")

    def mixed_datatrove():
        run(base + ["--output-format", "datatrove", "-o", p("dt")])
        _, _, docs, _ = read_datatrove(p("dt"))
        check_against_tsv(docs, rows, "append", "datatrove")

    def mixed_text():
        run(base + ["-o", p("m.txt")])
        check_against_tsv(read_text(p("m.txt")), rows, "none", "text")

    def mixed_smallest_cache():
        # Each encoder's piece cache at its smallest (3 MB): pieces are pushed
        # out of every table and encoded again; the ids must not change.
        run(base + ["--cache-mb", "3", "--output-format", "u32", "-o", p("m3.u32")])
        with open(p("m3.u32"), "rb") as f:
            check_stream(ids_from_bytes(f.read(), 4), rows, "none", "u32, --cache-mb 3")

    def mixed_one_thread_same_bytes():
        one = ["encode", "-q", "--threads", "1", "--input-format", "jsonl", src]
        run(one + ["--output-format", "megatron", "-o", p("meg1")])
        for ext in (".bin", ".idx"):
            with open(p("meg" + ext), "rb") as a, open(p("meg1" + ext), "rb") as b:
                check(a.read() == b.read(), "1 and 2 threads differ in %s" % ext)

    main([mixed_u32, mixed_nanogpt_u16, mixed_llmc, mixed_megatron, mixed_datatrove, mixed_text,
          mixed_smallest_cache, mixed_one_thread_same_bytes])


if __name__ == "__main__":
    {"golden": run_golden, "mixed": run_mixed}[sys.argv[1]]()
