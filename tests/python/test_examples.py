"""python/examples: nanoGPT's train.bin and Megatron's .bin/.idx written from
Python equal the command-line tool's files byte for byte, and hold the
golden ids (tiktoken 1.0.22 = HF tokenizers 0.23.2) of every document."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import records

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "python", "examples")
EOT = 50256


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    recs = records("stress.jsonl") + records("edge.jsonl")[:2000]
    docs = [(r["text"], r["ids"]) for r in recs] + [("", [])]  # an empty document too
    path = tmp_path_factory.mktemp("examples") / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, (text, _) in enumerate(docs):
            f.write(json.dumps({"id": i, "text": text}) + "\n")
    return str(path), docs


def cli(*args):
    subprocess.run([os.environ["SIMDBPE_CLI"], "encode", "-q", "--input-format", "jsonl"]
                   + list(args), check=True)


def example(name, *args):
    subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--batch", "300",
                    "--threads", "2"] + list(args), check=True, stdout=subprocess.DEVNULL)


def test_nanogpt_train_bin(corpus, tmp_path):
    path, docs = corpus
    example("nanogpt_prepare.py", path, str(tmp_path / "py.bin"))
    cli("--output-format", "u16", "--eot", "append", "-o", str(tmp_path / "cli.bin"), path)
    got = (tmp_path / "py.bin").read_bytes()
    assert got == (tmp_path / "cli.bin").read_bytes()
    want = [t for _, ids in docs for t in ids + [EOT]]
    assert np.frombuffer(got, dtype="<u2").tolist() == want


def test_megatron_bin_idx(corpus, tmp_path):
    path, docs = corpus
    example("megatron_preprocess.py", path, str(tmp_path / "py"))
    cli("--output-format", "megatron", "-o", str(tmp_path / "cli"), path)
    for ext in (".bin", ".idx"):
        assert (tmp_path / ("py" + ext)).read_bytes() == (tmp_path / ("cli" + ext)).read_bytes()
    # Read back by the layout in Megatron's indexed_dataset.py.
    idx = (tmp_path / "py.idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, S, D = struct.unpack_from("<QBQQ", idx, 9)
    assert (version, code, D) == (1, 8, len(docs) + 1)
    lens = np.frombuffer(idx, "<i4", S, 34)
    ptrs = np.frombuffer(idx, "<i8", S, 34 + 4 * S)
    doc_index = np.frombuffer(idx, "<i8", D, 34 + 12 * S)
    data = np.frombuffer((tmp_path / "py.bin").read_bytes(), "<u2")
    for d, (_, ids) in enumerate(docs):
        seqs = range(doc_index[d], doc_index[d + 1])
        got = [t for s in seqs for t in data[ptrs[s] // 2: ptrs[s] // 2 + lens[s]].tolist()]
        assert got == (ids + [EOT] if ids else []), d
