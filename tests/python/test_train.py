"""simdbpe.train: HF tokenizers' BpeTrainer merges (tests/data/train/golden, HF
tokenizers 0.23.2), the same files as `simdbpe train`, inputs as files,
gzip files or texts, and errors that say where."""
import gzip
import os
import subprocess

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "data", "train")


def corpus(name):
    return os.path.join(TRAIN, "corpus", name + ".txt")


def read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", ["tinyshakespeare", "taylorswift"])
def test_trained_to_exhaustion_the_merges_of_hf(tmp_path, name):
    out = tmp_path / "m"
    tok = simdbpe.train([corpus(name)], vocab_size=1000000, special_tokens=["<|endoftext|>"],
                        output=out, threads=2)
    for f in ("merges.txt", "vocab.json"):
        assert read(out / f) == read(os.path.join(TRAIN, "golden", name, f)), f
    text = read(corpus(name)).decode("utf-8")[:5000]
    assert tok.decode(tok.encode(text).ids) == text
    # an HF-shaped Tokenizer: its special token is recognised in the text
    assert tok.encode("<|endoftext|>").ids == [tok.get_vocab_size() - 1]
    enc = tok.as_encoding()
    assert enc.encode("<|endoftext|>", allowed_special="all") == [enc.n_vocab - 1]


def test_the_files_of_the_command_line_tool(tmp_path):
    args = ["--vocab-size", "3000", "--pre-tokenizer", "cl100k", "--special", "<|end|>",
            "--mode", "documents", "--doc-separator", "\\n\\n"]
    subprocess.run([os.environ["SIMDBPE_CLI"], "train", "-q", "-o", str(tmp_path / "cli")] + args
                   + [corpus("tinyshakespeare")], check=True)
    simdbpe.train(corpus("tinyshakespeare"), vocab_size=3000, pre_tokenizer="cl100k",
                  special_tokens=["<|end|>"], mode="documents", doc_separator="\n\n",
                  output=tmp_path / "py")
    for f in ("vocab.json", "merges.txt", "tokenizer.json", "special_tokens"):
        assert read(tmp_path / "py" / f) == read(tmp_path / "cli" / f), f


def test_texts_gzip_and_plain_files_give_one_model(tmp_path):
    data = read(corpus("taylorswift"))
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress(data))
    a = simdbpe.train([corpus("taylorswift")], vocab_size=2000, output=tmp_path / "a")
    simdbpe.train([gz], vocab_size=2000, output=tmp_path / "b")
    simdbpe.train(texts=[data.decode("utf-8")], vocab_size=2000, output=tmp_path / "c")
    want = read(tmp_path / "a" / "merges.txt")
    assert read(tmp_path / "b" / "merges.txt") == want
    assert read(tmp_path / "c" / "merges.txt") == want
    # Without output the model is kept in memory only.
    t = simdbpe.train(texts=[data], vocab_size=2000)
    assert t.encode("Taylor Swift").ids == a.encode("Taylor Swift").ids
    assert t.get_vocab_size() == a.get_vocab_size()


def test_errors_say_where(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"one line\nsecond \xff line\n")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.train([bad], vocab_size=300)
    assert str(bad) in str(e.value) and "invalid UTF-8" in str(e.value)
    assert e.value.status == "ERR_INVALID_UTF8" and e.value.byte_offset == 16
    assert e.value.index == 2  # the line
    with pytest.raises(simdbpe.Error, match="text 1: invalid UTF-8"):
        simdbpe.train(texts=["fine\n", b"\xc3("], vocab_size=300)
    zst = tmp_path / "x.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 8)
    with pytest.raises(ValueError, match="zstd input"):
        simdbpe.train([zst], vocab_size=300)
    with pytest.raises(ValueError, match="unknown mode 'sentences'"):
        simdbpe.train(texts=["x"], mode="sentences")
    with pytest.raises(ValueError, match="unknown pre-tokenizer"):
        simdbpe.train(texts=["x"], pre_tokenizer="bert")
    with pytest.raises(simdbpe.Error, match="empty corpus"):
        simdbpe.train(texts=[], vocab_size=300)
    # A failed save leaves nothing half-written: the directory's parent is missing.
    with pytest.raises(simdbpe.Error):
        simdbpe.train(texts=["a b\n"], vocab_size=300, output=tmp_path / "no" / "such")
    assert not (tmp_path / "no").exists()
