"""Tokenizer.from_pretrained and ORG/NAME model names read the local Hugging
Face cache as huggingface_hub lays it out (the library's
simdbpe_model_find_pretrained): a cache is built per test under a short temporary directory,
with refs/, snapshots/COMMIT/tokenizer.json linked into blobs/, and the
variables that choose it set per test. The tokenizer.json is
tests/data/api/hf_small.tokenizer.json.gz; the ids it must give are HF
tokenizers 0.23.2's (tests/data/api/hf_small.json.gz)."""
import gzip
import json
import os
import pathlib
import pickle
import tempfile

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "data", "api")
COMMIT = "0123456789abcdef0123456789abcdef01234567"
COMMIT2 = "89abcdef0123456789abcdef0123456789abcdef"


def small_json():
    with gzip.open(os.path.join(API, "hf_small.tokenizer.json.gz"), "rb") as f:
        return f.read()


def hf_answers():
    with gzip.open(os.path.join(API, "hf_small.json.gz"), "rt", encoding="utf-8") as f:
        return json.load(f)["answers"]["encode"]


def make_repo(cache, repo, commit=COMMIT, ref="main", data=None):
    """cache/models--ORG--NAME as huggingface_hub writes it; its folder."""
    folder = os.path.join(cache, "models--" + repo.replace("/", "--"))
    os.makedirs(os.path.join(folder, "blobs"), exist_ok=True)
    blob = os.path.join(folder, "blobs", "e1")
    with open(blob, "wb") as f:
        f.write(small_json() if data is None else data)
    snap = os.path.join(folder, "snapshots", commit)
    os.makedirs(snap, exist_ok=True)
    link = os.path.join(snap, "tokenizer.json")
    if not os.path.lexists(link):
        os.symlink("../../blobs/e1", link)
    if ref:
        os.makedirs(os.path.dirname(os.path.join(folder, "refs", ref)), exist_ok=True)
        with open(os.path.join(folder, "refs", ref), "w") as f:
            f.write(commit)
    return folder


@pytest.fixture
def hf_home(monkeypatch):
    # A short path of its own, not pytest's tmp_path (whose length grows
    # with the test's name and the run's number): the messages quote the
    # snapshot's path and the library's messages hold 255 bytes.
    with tempfile.TemporaryDirectory(prefix="hub", dir="/tmp") as d:
        for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HOME", d)
        monkeypatch.setenv("HF_HOME", os.path.join(d, "hf"))
        yield pathlib.Path(d) / "hf"


def test_from_pretrained_gives_hf_ids(hf_home):
    folder = make_repo(str(hf_home / "hub"), "acme/small")
    tok = simdbpe.Tokenizer.from_pretrained("acme/small")
    direct = simdbpe.Tokenizer.from_file(os.path.join(folder, "blobs", "e1"))
    answers = hf_answers()
    assert len(answers) > 5
    for rec in answers:
        text = rec["text"]
        assert tok.encode(text).ids == rec["with_special"]["ids"], text
        assert tok.encode(text, add_special_tokens=False).ids == rec["plain"]["ids"], text
        assert tok.encode(text).ids == direct.encode(text).ids, text
    # the same model through every door that takes a model name
    for other in (simdbpe.Tokenizer.from_file("acme/small"),
                  simdbpe.Tokenizer.from_pretrained("acme/small", revision=COMMIT),
                  pickle.loads(pickle.dumps(tok))):
        assert other.encode("Hello <tool> world").ids == tok.encode("Hello <tool> world").ids
    enc = simdbpe.Encoding.from_file("acme/small")
    assert enc.encode_ordinary("Hello world") == tok.encode("Hello world",
                                                            add_special_tokens=False).ids


def test_revisions(hf_home):
    cache = str(hf_home / "hub")
    folder = make_repo(cache, "acme/small")
    make_repo(cache, "acme/small", commit=COMMIT2, ref="v1.0")
    make_repo(cache, "acme/small", commit=COMMIT2, ref="refs/pr/1")
    snap2 = os.path.join(folder, "snapshots", COMMIT2, "tokenizer.json")
    assert simdbpe._simdbpe.find_pretrained("acme/small", "v1.0") == snap2
    assert simdbpe._simdbpe.find_pretrained("acme/small@refs/pr/1") == snap2
    assert simdbpe._simdbpe.locate("acme/small@" + COMMIT2) == snap2
    assert simdbpe._simdbpe.locate("acme/small") == os.path.join(folder, "snapshots", COMMIT,
                                                                 "tokenizer.json")
    assert simdbpe._simdbpe.locate("gpt2") is None
    tok = simdbpe.Tokenizer.from_pretrained("acme/small", revision="v1.0")
    assert tok.encode("Hello").ids == [10429, 39, 620, 78, 10430]


def test_the_cache_each_variable_chooses(hf_home, tmp_path, monkeypatch):
    make_repo(str(hf_home / "hub"), "acme/small")
    other = tmp_path / "other"
    monkeypatch.setenv("HF_HUB_CACHE", str(other))  # wins over HF_HOME
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small")
    assert str(e.value) == (
        f"acme/small is not in the Hugging Face cache: no {other}/models--acme--small "
        "(the cache: $HF_HUB_CACHE); simdbpe does not download")
    make_repo(str(other), "acme/small")
    assert simdbpe.Tokenizer.from_pretrained("acme/small").encode("Hello").ids[1:-1] == \
        [39, 620, 78]


def test_a_repo_that_is_not_cached(hf_home):
    make_repo(str(hf_home / "hub"), "acme/small")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("other/small")
    assert str(e.value) == (
        f"other/small is not in the Hugging Face cache: no {hf_home}/hub/models--other--small "
        "(the cache: $HF_HOME/hub); simdbpe does not download")
    assert e.value.status == "ERR_IO"
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_file("other/small")
    assert str(e.value).startswith("other/small: not a file or directory, and not in the "
                                   "Hugging Face cache: no ")


def test_a_revision_that_is_not_cached(hf_home):
    folder = make_repo(str(hf_home / "hub"), "acme/small")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small", revision="v2")
    assert str(e.value) == (
        f"acme/small@v2: not in the Hugging Face cache: no {folder}/refs/v2 "
        "(refs: main; snapshots: 0123456789ab...)")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small", revision=COMMIT2)
    assert str(e.value) == (f"acme/small@{COMMIT2}: not in the Hugging Face cache: no "
                            f"{folder}/snapshots/{COMMIT2}")


def test_a_ref_that_is_not_a_commit(hf_home):
    folder = make_repo(str(hf_home / "hub"), "acme/small")
    ref = os.path.join(folder, "refs", "main")
    with open(ref, "w") as f:
        f.write("0123zz")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small")
    assert str(e.value) == f"{ref} byte 4: not a commit; a ref holds a commit (40 hex digits)"
    assert e.value.byte_offset == 4


def test_a_snapshot_without_tokenizer_json(hf_home):
    folder = make_repo(str(hf_home / "hub"), "acme/small")
    snap = os.path.join(folder, "snapshots", COMMIT)
    os.unlink(os.path.join(snap, "tokenizer.json"))
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small")
    assert str(e.value) == (
        f"{snap}: no tokenizer.json (simdbpe does not download: hf download acme/small "
        "tokenizer.json)")
    for name in ("vocab.json", "merges.txt"):
        with open(os.path.join(snap, name), "w") as f:
            f.write("{}" if name == "vocab.json" else "")
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small")
    assert e.value.status == "ERR_UNSUPPORTED"
    assert str(e.value) == (f"{snap}: no tokenizer.json, only vocab.json + merges.txt, which do "
                            "not name the pre-tokenizer; simdbpe needs tokenizer.json")


def test_malformed_repo_ids(hf_home):
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("a/b/c")
    assert str(e.value).startswith("repo id a/b/c byte 1: a repo id is NAME or ORG/NAME")
    assert e.value.status == "ERR_INVALID_ARG" and e.value.byte_offset == 1
    with pytest.raises(simdbpe.Error) as e:
        simdbpe.Tokenizer.from_pretrained("acme/small@v1")  # revision= is "main"
    assert "'@' is not part of a repo id" in str(e.value)
    with pytest.raises(TypeError):
        simdbpe.Tokenizer.from_pretrained(None)
