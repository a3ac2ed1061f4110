"""Every tokenizer.json model of ../shared/models that simdbpe loads: Python's
ids equal the command-line tool's, without and with add_special_tokens, for
single texts and batches. Without it no post-processor id appears (HF's
add_special_tokens=False); with it, the ids the file's post-processor names
(Llama-3.1's <|begin_of_text|> = 128000) surround the text's.

The Python encoder's options were once left uninitialised, so Llama-3.1's
BOS came out of encode_ordinary depending on what the stack held."""
import json
import os
import shutil
import subprocess

import pytest

import simdbpe
from conftest import records

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("SIMDBPE_MODELS_DIR") or os.path.join(HERE, "..", "..", "..", "shared",
                                                              "models")


def model_files():
    if not os.path.isdir(MODELS):
        return []
    return sorted(os.path.join(MODELS, d, "tokenizer.json.zst") for d in os.listdir(MODELS)
                  if os.path.exists(os.path.join(MODELS, d, "tokenizer.json.zst")))


def template_ids(tj):
    """(prefix, suffix) ids of the file's TemplateProcessing `single`, read from the JSON."""
    pp = tj.get("post_processor") or {}
    procs = pp.get("processors", [pp]) if pp.get("type") == "Sequence" else [pp]
    pre, suf = [], []
    for p in procs:
        if p.get("type") != "TemplateProcessing":
            continue
        seen_seq = False
        for item in p["single"]:
            if "Sequence" in item:
                seen_seq = True
                continue
            name = item["SpecialToken"]["id"]
            (suf if seen_seq else pre).extend(p["special_tokens"][name]["ids"])
    return pre, suf


def cli_ids(model, texts, tmp_path, add, special="text"):
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    cmd = [os.environ["SIMDBPE_CLI"], "encode", "-q", "-m", model, "--input-format", "jsonl",
           "--special", special, str(src)] + (["--add-special-tokens"] if add else [])
    out = subprocess.run(cmd, check=True, capture_output=True).stdout.decode()
    return [[int(x) for x in line.split()] for line in out.split("\n")[:len(texts)]]


@pytest.fixture(scope="module")
def texts():
    return ["Hello", "", " hello world\n"] + [r["text"] for r in records("edge.jsonl")[:300]]


@pytest.mark.parametrize("path", model_files() or [pytest.param(None, marks=pytest.mark.skip(
    reason=f"no models in {MODELS}"))], ids=lambda p: p and os.path.basename(os.path.dirname(p)))
def test_python_ids_equal_cli_with_and_without_post_processor(path, texts, tmp_path):
    if not shutil.which("zstd"):
        pytest.fail("zstd (the command) is needed to unpack the models")
    model = tmp_path / "tokenizer.json"
    with open(model, "wb") as f:
        subprocess.run(["zstd", "-dc", path], check=True, stdout=f)
    tj = json.loads(model.read_text(encoding="utf-8"))
    try:
        tok = simdbpe.Tokenizer.from_file(model)
    except simdbpe.Error as e:
        # a model simdbpe does not claim (SentencePiece-style ones): refused
        # with the reason, which is the behaviour to check
        assert e.status == "ERR_UNSUPPORTED", e
        return
    enc = tok.as_encoding()
    pre, suf = template_ids(tj)
    plain = cli_ids(str(model), texts, tmp_path, False)
    added = cli_ids(str(model), texts, tmp_path, True)
    for t, want, want_added in zip(texts, plain, added):
        assert enc.encode_ordinary(t) == want
        assert enc._model.encode(t, add_special_tokens=True) == want_added
        assert want_added == pre + want + suf
    assert enc.encode_ordinary_batch(texts, num_threads=2) == plain
    assert enc._model.encode_batch(texts, threads=2, add_special_tokens=True) == added
    buf = enc.encode_to_numpy("Hello")
    assert buf.tolist() == plain[0]
    # the HF-shaped calls recognise special tokens in the text, as HF does
    # (--special allow)
    plain = cli_ids(str(model), texts, tmp_path, False, "allow")
    added = cli_ids(str(model), texts, tmp_path, True, "allow")
    for t, want, want_added in zip(texts, plain, added):
        assert tok.encode(t, add_special_tokens=False).ids == want
        assert tok.encode(t, add_special_tokens=True).ids == want_added
        assert tok.encode(t).ids == want_added  # HF's default adds them
    assert [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)] == added
    assert [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)] == plain
