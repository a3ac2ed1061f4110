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


API = os.path.join(HERE, "..", "data", "api")


def test_compressed_corpora_and_a_model_without_endoftext(corpus, tmp_path):
    """.jsonl.gz and .jsonl.zst corpora are read through the library's
    reader; the small tokenizer.json (gzip'd) has no <|endoftext|> token, so
    the end of each document is its EOS </s> (its post-processor's), as the
    command-line tool takes it."""
    import gzip
    import shutil
    path, docs = corpus
    gz = tmp_path / "corpus.jsonl.gz"
    with open(path, "rb") as f, gzip.open(gz, "wb") as g:
        g.write(f.read())
    zst = tmp_path / "corpus.jsonl.zst"
    if not shutil.which("zstd"):
        pytest.fail("zstd (the command) is needed to make the .zst corpus")
    subprocess.run(["zstd", "-q", "-f", path, "-o", str(zst)], check=True)
    model = os.path.join(API, "hf_small.tokenizer.json.gz")
    for name in (gz, zst):
        example("megatron_preprocess.py", str(name), str(tmp_path / "py"), "--encoding", model)
        cli("-m", model, "--output-format", "megatron", "-o", str(tmp_path / "cli"), str(name))
        for ext in (".bin", ".idx"):
            assert (tmp_path / ("py" + ext)).read_bytes() == \
                (tmp_path / ("cli" + ext)).read_bytes(), (name, ext)
        example("nanogpt_prepare.py", str(name), str(tmp_path / "py.u16"), "--encoding", model)
        cli("-m", model, "--output-format", "u16", "--eot", "append", "-o",
            str(tmp_path / "cli.u16"), str(name))
        assert (tmp_path / "py.u16").read_bytes() == (tmp_path / "cli.u16").read_bytes()
    eos = 10430  # </s> in tests/data/api/hf_small.tokenizer.json.gz
    data = np.frombuffer((tmp_path / "py.u16").read_bytes(), "<u2")
    assert (data == eos).sum() == len(docs)


def test_a_damaged_corpus_leaves_no_file(corpus, tmp_path):
    path, _ = corpus
    bad = tmp_path / "bad.jsonl.zst"
    subprocess.run(["zstd", "-q", "-f", path, "-o", str(bad)], check=True)
    data = bad.read_bytes()
    bad.write_bytes(data[:len(data) // 2])  # truncated
    for script, out in (("nanogpt_prepare.py", "o.bin"), ("megatron_preprocess.py", "o")):
        p = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), str(bad),
                            str(tmp_path / out)], capture_output=True, text=True)
        assert p.returncode != 0 and "bad.jsonl.zst" in p.stderr, p.stderr[-500:]
    assert sorted(os.listdir(tmp_path)) == ["bad.jsonl.zst"]
