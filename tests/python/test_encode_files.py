"""simdbpe.encode_files: the library's dataset engine from Python writes the
command-line tool's files byte for byte (nanoGPT's u16 + EOT, Megatron's
.bin/.idx), holding the golden ids (tiktoken 1.0.22 = HF tokenizers 0.23.2),
and a bad document raises simdbpe.Error naming its file, line and byte."""
import gzip
import json
import os
import subprocess

import numpy as np
import pytest

import simdbpe
from conftest import records

EOT = 50256


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two JSON Lines files (the second gzip'ed) of golden documents."""
    recs = records("stress.jsonl") + records("edge.jsonl")[:1500]
    docs = [(r["text"], r["ids"]) for r in recs] + [("", [])]  # an empty document too
    d = tmp_path_factory.mktemp("encode_files")
    half = len(docs) // 2
    lines = [json.dumps({"id": i, "text": t}) + "\n" for i, (t, _) in enumerate(docs)]
    a, b = d / "a.jsonl", d / "b.jsonl.gz"
    a.write_text("".join(lines[:half]), encoding="utf-8")
    with gzip.open(b, "wt", encoding="utf-8") as f:
        f.write("".join(lines[half:]))
    return [str(a), str(b)], docs


def cli(*args):
    """`simdbpe encode` on two threads; returns (exit code, stderr)."""
    p = subprocess.run([os.environ["SIMDBPE_CLI"], "encode", "-q", "--threads", "2"]
                       + list(args), capture_output=True)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def test_nanogpt_u16_eot_append(corpus, tmp_path):
    paths, docs = corpus
    out = tmp_path / "py.bin"
    totals = simdbpe.encode_files(paths, out, input_format="jsonl", format="u16",
                                  eot="append", threads=2)
    assert cli("--input-format", "jsonl", "--output-format", "u16", "--eot", "append",
               "-o", str(tmp_path / "cli.bin"), *paths) == (0, "")
    got = out.read_bytes()
    assert got == (tmp_path / "cli.bin").read_bytes()
    want = [t for _, ids in docs for t in ids + [EOT]]
    assert np.frombuffer(got, dtype="<u2").tolist() == want
    assert totals["documents"] == len(docs) and totals["tokens"] == len(want)
    assert [f["documents"] for f in totals["files"]] == [len(docs) // 2, len(docs) - len(docs) // 2]
    assert totals["threads"] == 2 and totals["skipped"] == 0
    assert totals["cache_mb"] == 256  # the library's default, for every worker


def test_megatron(corpus, tmp_path):
    paths, docs = corpus
    simdbpe.encode_files(paths, tmp_path / "py", input_format="jsonl", format="megatron",
                         threads=2)
    assert cli("--input-format", "jsonl", "--output-format", "megatron",
               "-o", str(tmp_path / "cli"), *paths) == (0, "")
    for ext in (".bin", ".idx"):
        assert (tmp_path / ("py" + ext)).read_bytes() == (tmp_path / ("cli" + ext)).read_bytes()
    # Megatron: EOD after each non-empty document, nothing for an empty one.
    want = [t for _, ids in docs if ids for t in ids + [EOT]]
    assert np.frombuffer((tmp_path / "py.bin").read_bytes(), dtype="<u2").tolist() == want
    assert sorted(os.listdir(tmp_path)) == ["cli.bin", "cli.idx", "py.bin", "py.idx"]


def test_bad_document_raises_with_its_place(tmp_path):
    good = tmp_path / "good.txt"
    good.write_bytes(b"first line\n")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"one\ntwo \xff three\nfour\n")  # 0xFF: byte 8, line 2
    out = tmp_path / "ids.bin"
    with pytest.raises(simdbpe.Error) as info:
        simdbpe.encode_files([good, bad], out, input_format="lines", threads=2)
    e = info.value
    assert (e.status, e.path, e.index, e.line, e.byte_offset) == (
        "ERR_INVALID_UTF8", str(bad), 1, 2, 8)
    # The CLI prints the same message after "simdbpe: ", and neither leaves a file.
    rc, err = cli("--input-format", "lines", "--output-format", "u16", "-o",
                  str(tmp_path / "cli.bin"), str(good), str(bad))
    assert rc == 1 and err == "simdbpe: %s\n" % e
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "good.txt"]


def test_bad_options_and_skips(corpus, tmp_path):
    paths, _ = corpus
    with pytest.raises(simdbpe.Error) as info:
        simdbpe.encode_files(paths, tmp_path / "x", format="u16", json_key="content")
    assert info.value.status == "ERR_INVALID_ARG" and info.value.path is None
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "a"}\n{"text": 1}\n{"text": "b"}\n')
    totals = simdbpe.encode_files(bad, tmp_path / "s.bin", input_format="jsonl",
                                  on_error="skip", threads=2)
    assert totals["documents"] == 2 and totals["skipped"] == 1
    assert totals["skipped_documents"] == [
        "%s: line 2: the \"text\" value is not a string" % bad]


def test_progress_messages_and_stopping(corpus, tmp_path):
    """progress sees every document by the end; on_message the skipped one; an exception
    in a callback stops the run, is raised, and leaves no output."""
    paths, docs = corpus
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": 7}\n', encoding="utf-8")
    calls, messages = [], []
    out = tmp_path / "ok.bin"
    res = simdbpe.encode_files(paths + [str(bad)], str(out), input_format="jsonl", format="u16",
                               threads=2, batch_bytes=4096, on_error="skip",
                               progress=lambda *a: calls.append(a),
                               on_message=lambda kind, text: messages.append((kind, text)))
    assert len(calls) > 10
    assert [c[2] for c in calls] == sorted(c[2] for c in calls)
    assert calls[-1][2] == len(docs) == res["documents"]
    assert messages == [("skipped", res["skipped_documents"][0])]
    assert "bad.jsonl: line 1" in messages[0][1]
    assert res["notices"] == []
    with pytest.raises(TypeError, match="progress and on_message must be callables or None"):
        simdbpe.encode_files(paths, str(out), input_format="jsonl", progress=5)

    class Stop(Exception):
        pass

    def stop_at_third(raw, done, documents):
        if len(seen) == 2:
            raise Stop("enough")
        seen.append(documents)

    for threads in (1, 2):
        seen = []
        out = tmp_path / f"stopped{threads}"
        with pytest.raises(Stop, match="enough"):
            simdbpe.encode_files(paths, str(out), input_format="jsonl", format="megatron",
                                 threads=threads, batch_bytes=4096, progress=stop_at_third)
        assert len(seen) == 2
        left = [p.name for p in tmp_path.iterdir() if p.name.startswith(out.name)]
        assert set(left) <= {out.name + ".bin.lock", out.name + ".idx.lock"}, left


def test_ctrl_c_stops_a_run(tmp_path):
    """SIGINT during encode_files (no callback of the caller's): KeyboardInterrupt within a
    batch or so, on one thread and on two, and no output."""
    import signal
    import time
    big = tmp_path / "big.txt"
    big.write_text("The quick brown fox jumps over the lazy dog. " * 400_000, encoding="utf-8")
    for threads in (1, 2):
        out = tmp_path / f"big{threads}.u32"
        script = f"""
import sys, simdbpe
print("starting", flush=True)
try:
    simdbpe.encode_files([{str(big)!r}] * 500, {str(out)!r}, format="u32", threads={threads})
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""
        p = subprocess.Popen([os.sys.executable, "-c", script], stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "starting"
        time.sleep(0.5)  # the run takes many seconds (9 GB of text)
        p.send_signal(signal.SIGINT)
        rest = p.stdout.read()
        assert p.wait(timeout=120) == 3, rest
        assert rest.strip() == "interrupted"
        assert [q.name for q in tmp_path.iterdir() if q.name.startswith(out.name)] in (
            [], [out.name + ".lock"])


API = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "api")
SMALL = os.path.join(API, "hf_small.tokenizer.json.gz")  # no <|endoftext|>; its EOS: </s>
SMALL_EOS = 10430


def test_inputs_as_the_command_takes_them(corpus, tmp_path):
    """Glob patterns and @LIST files stand for the files they name."""
    paths, docs = corpus
    want = [t for _, ids in docs for t in ids + [EOT]]
    lst = tmp_path / "files.txt"
    lst.write_text("\n".join(paths) + "\n\n", encoding="utf-8")
    pattern = os.path.join(os.path.dirname(paths[0]), "*.jsonl*")
    for given in ([f"@{lst}"], [pattern]):
        out = tmp_path / "o.bin"
        simdbpe.encode_files(given, out, input_format="jsonl", eot="append", threads=2)
        assert np.frombuffer(out.read_bytes(), "<u2").tolist() == want, given
    with pytest.raises(OSError, match="no file matches this pattern"):
        simdbpe.encode_files([str(tmp_path / "nothing*.jsonl")], tmp_path / "x.bin")
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="the list names no file"):
        simdbpe.encode_files([f"@{tmp_path / 'empty.txt'}"], tmp_path / "x.bin")


def test_end_of_text_of_a_model_without_endoftext(corpus, tmp_path):
    """Megatron's format appends the end of text: the model's own (its EOS)
    when it has no <|endoftext|>, or the one named."""
    paths, docs = corpus
    for enc in (SMALL, simdbpe.Tokenizer.from_file(SMALL)):
        totals = simdbpe.encode_files(paths, tmp_path / "m", encoding=enc, input_format="jsonl",
                                      format="megatron")
        assert totals["eot_token"] == SMALL_EOS
    assert cli("-m", SMALL, "--input-format", "jsonl", "--output-format", "megatron", "-o",
               str(tmp_path / "c"), *paths)[0] == 0
    for ext in (".bin", ".idx"):
        assert (tmp_path / ("m" + ext)).read_bytes() == (tmp_path / ("c" + ext)).read_bytes()
    totals = simdbpe.encode_files(paths, tmp_path / "n.bin", encoding=SMALL,
                                  input_format="jsonl", eot="append", eot_token="<tool>")
    assert totals["eot_token"] == 10431
    totals = simdbpe.encode_files(paths, tmp_path / "n.bin", encoding=SMALL,
                                  input_format="jsonl", eot="append", eot_token=7)
    ids = np.frombuffer((tmp_path / "n.bin").read_bytes(), "<u2")
    assert totals["eot_token"] == 7 and ids[-1] == 7
    with pytest.raises(simdbpe.Error, match="eot_token 'nope' is neither"):
        simdbpe.encode_files(paths, tmp_path / "n.bin", encoding=SMALL, eot="append",
                             eot_token="nope")


def test_messages_name_encode_files_keywords(corpus, tmp_path):
    paths, _ = corpus
    out = tmp_path / "o.bin"
    with pytest.raises(simdbpe.Error, match=r"^json_key is for input_format jsonl$"):
        simdbpe.encode_files(paths, out, json_key="x")
    with pytest.raises(simdbpe.Error, match=r"^format megatron writes several files: give "
                                            r"output \(the second argument\) a prefix$"):
        simdbpe.encode_files(paths, "-", format="megatron")
    with pytest.raises(simdbpe.Error, match=r"^shard_tokens is for format llmc$"):
        simdbpe.encode_files(paths, out, shard_tokens=10)
    for bad in (-1, 10000):
        with pytest.raises(ValueError, match=rf"^threads={bad}: give a whole number from 1 to "
                                             r"1024, or 0 \(the CPUs this process may use\)$"):
            simdbpe.encode_files(paths, out, threads=bad)
    with pytest.raises(TypeError, match="threads is an int"):
        simdbpe.encode_files(paths, out, threads="2")


def test_truncation_and_padding_are_not_applied_and_said_so(corpus, tmp_path):
    paths, docs = corpus
    tok = simdbpe.Tokenizer.from_file(SMALL)
    tok.enable_truncation(4)
    tok.enable_padding(length=9)
    said = []
    totals = simdbpe.encode_files(paths, tmp_path / "o.bin", encoding=tok, input_format="jsonl",
                                  format="u32", on_message=lambda k, t: said.append((k, t)))
    assert said == [("notice", totals["notices"][0])] and "applies neither" in said[0][1]
    plain = simdbpe.encode_files(paths, tmp_path / "p.bin", encoding=SMALL, input_format="jsonl",
                                 format="u32")
    assert plain["notices"] == []
    assert (tmp_path / "o.bin").read_bytes() == (tmp_path / "p.bin").read_bytes()
