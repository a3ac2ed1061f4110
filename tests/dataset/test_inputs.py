#!/usr/bin/python3
"""test_inputs.py - the ways to name inputs: many files, a quoted glob
pattern (expanded by simdbpe, sorted), @LIST files, standard input (plain,
.gz or .zst, detected by content, not by name), and the document framings
(whole file, lines, separator, JSON Lines with nested keys). Expected ids
come from tests/data/golden/stress.jsonl.
"""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

RECS = golden_records("stress.jsonl")
TEXTS = [t.encode("utf-8") for t, _ in RECS]
IDS = [ids for _, ids in RECS]


def zstd_bytes(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def text_ids(out):
    return [[int(x) for x in line.split()] for line in out.decode().split("\n")[:-1]]


def globs_lists_and_many_files():
    d = make_tmpdir("dataset-inputs-")
    names = []
    for i, t in enumerate(TEXTS[:30]):
        name = os.path.join(d, "doc%02d.txt%s" % (i, ("", ".gz", ".zst")[i % 3]))
        write_bytes(name, (t, gzip.compress(t), zstd_bytes(t))[i % 3])
        names.append(name)
    want = IDS[:30]
    out, _, _ = run(["encode", "-q"] + names)
    check_against_ids(text_ids(out), want, "none", "files")
    # A quoted pattern: simdbpe expands it, in sorted order.
    out, _, _ = run(["encode", "-q", os.path.join(d, "doc*.txt*")])
    check_against_ids(text_ids(out), want, "none", "glob")
    # @LIST: one path per line (empty lines ignored), in the order listed.
    lst = os.path.join(d, "list.txt")
    with open(lst, "w") as f:
        f.write("\n".join(reversed(names)) + "\n\n")
    out, _, _ = run(["encode", "-q", "@" + lst])
    check_against_ids(text_ids(out), want[::-1], "none", "@list")
    # Mixed with a plain argument.
    out, _, _ = run(["encode", "-q", names[0], "@" + lst])
    check_against_ids(text_ids(out), [want[0]] + want[::-1], "none", "file + @list")


def standard_input_any_compression():
    data = b"".join(json.dumps({"meta": {"body": t}}).encode() + b"\n" for t, _ in RECS)
    for name, blob in (("plain", data), ("gzip", gzip.compress(data)), ("zstd", zstd_bytes(data))):
        out, _, _ = run(["encode", "-q", "--input-format", "jsonl", "--json-key", "meta.body"],
                        stdin=blob)
        check_against_ids(text_ids(out), IDS, "none", "stdin " + name)
        out, _, _ = run(["encode", "-q", "--input-format", "jsonl", "--json-key", "meta.body",
                         "-"], stdin=blob)
        check_against_ids(text_ids(out), IDS, "none", "stdin '-' " + name)


def framings():
    texts = [t for t in TEXTS if b"\n" not in t]
    ids = [i for t, i in zip(TEXTS, IDS) if b"\n" not in t]
    out, _, _ = run(["encode", "-q", "--input-format", "lines"],
                    stdin=gzip.compress(b"\n".join(texts) + b"\n"))
    check_against_ids(text_ids(out), ids, "none", "lines from gzip stdin")
    # A line ends with \n or \r\n: a file written on Windows gives the same
    # documents (the \r was kept, changing the last id of every line).
    crlf = [(t, i) for t, i in zip(texts, ids) if not t.endswith(b"\r")]
    out, _, _ = run(["encode", "-q", "--input-format", "lines"],
                    stdin=b"\r\n".join(t for t, _ in crlf) + b"\r\n")
    check_against_ids(text_ids(out), [i for _, i in crlf], "none", "CRLF lines")
    out, _, _ = run(["encode", "-q", "--input-format", "lines"], stdin=b"a\r\nb\r")
    check(out == b"64\n65 201\n", "a \\r that ends no line is text: %r" % out)
    # stress.jsonl has <|endoftext|> in its texts (as text); another marker.
    sep = b"<|doc-end|>"
    check(all(sep not in t for t in TEXTS), "separator inside a text")
    out, _, _ = run(["encode", "-q", "--doc-separator", "<|doc-end|>"],
                    stdin=sep.join(TEXTS) + sep)
    check_against_ids(text_ids(out), IDS, "none", "separator")
    # Separators next to each other give empty documents; a final
    # separator does not start another one.
    out, _, _ = run(["encode", "-q", "--doc-separator", "\\n\\n"], stdin=b"a\n\n\n\nb\n\n")
    check(out == b"64\n\n65\n", "blank-line separator: %r" % out)
    # Count names each document with its file and first line.
    d = make_tmpdir("dataset-inputs-")
    write_bytes(os.path.join(d, "x.txt"), b"one\ntwo three\n")
    out, _, _ = run(["count", "-q", "--input-format", "lines", os.path.join(d, "x.txt")])
    lines = out.decode().splitlines()
    check(lines[0].endswith("x.txt:1") and lines[1].endswith("x.txt:2") and
          lines[2].endswith("\ttotal"), "count: %s" % lines)


if __name__ == "__main__":
    main([globs_lists_and_many_files, standard_input_any_compression, framings])
