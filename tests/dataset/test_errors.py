#!/usr/bin/python3
"""test_errors.py - bad inputs and interrupted runs.

A bad document (invalid UTF-8, a malformed JSON line, a lone surrogate, a
truncated or corrupt .gz/.zst) stops the run with the file, the line and the
reason, and leaves no file under a final name (nor a temporary one); with
--on-error skip it is skipped, counted and listed in the summary. SIGINT in
the middle of a run leaves nothing either. Expected ids come from
tests/data/golden (stress.jsonl, utf8.jsonl).
"""
import fcntl
import gzip
import json
import random
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

STRESS = golden_records("stress.jsonl")


def fresh_dir():
    return make_tmpdir("dataset-errors-")


def entries(d):
    return sorted(os.listdir(d))


def jsonl_bytes(texts):
    return b"".join(json.dumps({"text": t}).encode() + b"\n" for t in texts)


def expect_failure(d, inputs, needles, fmt="megatron", extra=()):
    """Runs an encode into d/out that must fail; checks the message and that
    d holds nothing new."""
    before = entries(d)
    out = os.path.join(d, "out")
    _, err, rc = run(["encode", "--input-format", "jsonl", "--output-format", fmt, "-o", out]
                     + list(extra) + inputs, expect=None)
    check(rc == 1, "exit %d, wanted 1; stderr: %s" % (rc, err))
    for n in needles:
        check(n in err, "stderr lacks %r:\n%s" % (n, err))
    check(entries(d) == before, "files left behind: %s" % (set(entries(d)) - set(before)))
    return err


def truncated_gzip_and_zstd():
    d = fresh_dir()
    texts = [t for t, _ in STRESS]
    raw = jsonl_bytes(texts)
    gz = gzip.compress(raw)
    write_bytes(os.path.join(d, "t.jsonl.gz"), gz[: len(gz) // 2])
    expect_failure(d, [os.path.join(d, "t.jsonl.gz")], ["t.jsonl.gz", "line ", "truncated gzip"])
    write_bytes(os.path.join(d, "t.jsonl"), raw)
    subprocess.run(["zstd", "-q", "-f", os.path.join(d, "t.jsonl")], check=True)
    os.unlink(os.path.join(d, "t.jsonl"))
    with open(os.path.join(d, "t.jsonl.zst"), "rb") as f:
        zst = f.read()
    os.unlink(os.path.join(d, "t.jsonl.zst"))
    write_bytes(os.path.join(d, "z.jsonl.zst"), zst[: len(zst) * 2 // 3])
    expect_failure(d, [os.path.join(d, "z.jsonl.zst")], ["z.jsonl.zst", "line ", "truncated zstd"],
                   fmt="llmc")
    os.unlink(os.path.join(d, "z.jsonl.zst"))
    # Corrupt in the middle: a decoder error, not a truncation.
    bad = bytearray(gz)
    for i in range(len(bad) // 2, len(bad) // 2 + 16):
        bad[i] ^= 0x5A
    write_bytes(os.path.join(d, "c.jsonl.gz"), bytes(bad))
    expect_failure(d, [os.path.join(d, "c.jsonl.gz")], ["c.jsonl.gz", "gzip"], fmt="datatrove")
    bad = bytearray(zst)
    for i in range(len(bad) // 2, len(bad) // 2 + 16):
        bad[i] ^= 0x5A
    write_bytes(os.path.join(d, "c.jsonl.zst"), bytes(bad))
    expect_failure(d, [os.path.join(d, "c.jsonl.zst")], ["c.jsonl.zst", "zstd"], fmt="u16")


def bad_records_stop_with_file_and_line():
    d = fresh_dir()
    good = jsonl_bytes(["a", "b"])
    cases = [
        (b'{"text": "x",}\n', ["line 3", "malformed JSON"]),
        (b'{"txt": "x"}\n', ["line 3", 'no key "text"']),
        (b'{"text": 5}\n', ["line 3", "not a string"]),
        (b'{"text": "a\\ud800b"}\n', ["line 3", "surrogate"]),
        (b'{"text": "ok \xff"}\n', ["line 3", "invalid UTF-8"]),
    ]
    for i, (line, needles) in enumerate(cases):
        path = os.path.join(d, "bad%d.jsonl" % i)
        write_bytes(path, good + line + good)
        expect_failure(d, [path], ["bad%d.jsonl" % i] + needles, fmt="u32")
        os.unlink(path)
    # Text input: the file, line and byte offset of invalid UTF-8.
    path = os.path.join(d, "bad.txt")
    write_bytes(path, b"fine\nstill fine\nbroken \xc3( here\n")
    before = entries(d)
    _, err, rc = run(["encode", "--output-format", "megatron", "-o", os.path.join(d, "o"), path],
                     expect=None)
    check(rc == 1 and "bad.txt: line 3, byte offset 23" in err, "stderr: %s" % err)
    check(entries(d) == before, "files left behind")


def byte_order_mark_before_the_first_record():
    """A UTF-8 BOM at the start of a JSON Lines file is skipped (it was
    "'[' or '{' expected near" an invisible character)."""
    d = fresh_dir()
    path = os.path.join(d, "bom.jsonl")
    write_bytes(path, b"\xef\xbb\xbf" + jsonl_bytes(["hello", "world"]))
    out, err, rc = run(["encode", "-q", "--input-format", "jsonl", path], expect=None)
    want, _, _ = run(["encode", "-q", "--input-format", "jsonl", "-"],
                     stdin=jsonl_bytes(["hello", "world"]))
    check(rc == 0 and out == want, "exit %d, %s" % (rc, err))


def zstd_skippable_frame_first():
    """A .zst that starts with a skippable frame (0x184D2A5X, e.g. a seek
    table or metadata) is zstd too: it was read as text."""
    d = fresh_dir()
    raw = jsonl_bytes(["hello", "world"])
    write_bytes(os.path.join(d, "a.jsonl"), raw)
    subprocess.run(["zstd", "-q", "-f", os.path.join(d, "a.jsonl")], check=True)
    with open(os.path.join(d, "a.jsonl.zst"), "rb") as f:
        zst = f.read()
    path = os.path.join(d, "s.jsonl.zst")
    write_bytes(path, struct.pack("<II", 0x184D2A50, 4) + b"meta" + zst)
    out, err, rc = run(["encode", "-q", "--input-format", "jsonl", path], expect=None)
    want, _, _ = run(["encode", "-q", "--input-format", "jsonl", os.path.join(d, "a.jsonl")])
    check(rc == 0 and out == want, "exit %d, %s" % (rc, err))


def compressed_twice_is_named():
    """A .zst holding a .gz (or the other way round) was read as text: it is
    an error that says so and names the file."""
    d = fresh_dir()
    write_bytes(os.path.join(d, "a.jsonl"), jsonl_bytes(["hello", "world"]))
    subprocess.run(["gzip", "-q", "-f", os.path.join(d, "a.jsonl")], check=True)
    subprocess.run(["zstd", "-q", "-f", os.path.join(d, "a.jsonl.gz")], check=True)
    path = os.path.join(d, "a.jsonl.gz.zst")
    _, err, rc = run(["encode", "-q", "--input-format", "jsonl", path], expect=None)
    check(rc != 0 and "zstd data holds gzip data" in err and "a.jsonl.gz.zst" in err,
          "exit %d, %s" % (rc, err))


def lone_surrogate_replaced():
    # utf8.jsonl: b"a\xffa" decoded with errors="replace" is "a\ufffda"; the
    # JSON escape \ud800 in replace mode must give the same ids.
    want = None
    with open(os.path.join(GOLDEN_DIR, "utf8.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("hex") == "61ff61":
                want = r["ids"]
    check(want is not None, "no 61ff61 record")
    d = fresh_dir()
    write_bytes(os.path.join(d, "s.jsonl"), b'{"text": "a\\ud800a"}\n')
    out, _, _ = run(["encode", "-q", "--input-format", "jsonl", "--errors", "replace",
                     os.path.join(d, "s.jsonl")])
    check([int(x) for x in out.split()] == want, "got %s, want %s" % (out, want))


def skip_lists_every_bad_document():
    d = fresh_dir()
    texts = [t for t, _ in STRESS[:10]]
    ids = [i for _, i in STRESS[:10]]
    lines = jsonl_bytes(texts).split(b"\n")[:-1]
    # Bad records at lines 3, 6 and 9 of a.jsonl, between good ones.
    a = lines[:2] + [b'{"text": "x",}'] + lines[2:4] + [b'{"text": "\xff"}'] + lines[4:6] + \
        [b'{"text": "\\udc00"}'] + lines[6:]
    write_bytes(os.path.join(d, "a.jsonl"), b"\n".join(a) + b"\n")
    summary = os.path.join(d, "summary.json")
    _, err, _ = run(["encode", "--input-format", "jsonl", "--on-error", "skip", "--output-format",
                     "megatron", "-o", os.path.join(d, "out"), "--summary", summary,
                     os.path.join(d, "a.jsonl")])
    with open(summary) as f:
        s = json.load(f)
    check(s["skipped"] == 3, "skipped %d, want 3: %s" % (s["skipped"], s))
    listed = s["skipped_documents"]
    for needle in ("a.jsonl: line 3: malformed JSON", "a.jsonl: line 6: invalid UTF-8",
                   "a.jsonl: line 9: the \"text\" value has an escaped lone surrogate"):
        check(any(needle in x for x in listed), "summary lacks %r: %s" % (needle, listed))
    check(err == "", "stderr of a run that skipped (not a terminal): %s" % err)
    _, docs = read_megatron(os.path.join(d, "out"))
    check(len(docs) == 10, "%d documents" % len(docs))
    check_against_ids(docs, ids, "append", "skip")


def broken_stream_fails_the_run_even_with_skip():
    """A compressed stream that fails its check (truncation, CRC, a corrupt
    block) is not one bad document: the documents decoded before the check
    failed may be garbage, so --on-error skip must not keep them. The run
    fails naming the file and leaves no output."""
    d = fresh_dir()
    good = os.path.join(d, "a.jsonl")
    write_bytes(good, jsonl_bytes([t for t, _ in STRESS[:10]]))
    raw = b"".join(json.dumps({"id": i, "text": "record %d of a long file" % i}).encode() + b"\n"
                   for i in range(20000))
    gz = gzip.compress(raw)
    bad = bytearray(gz)
    bad[5000:5004] = b"\x00\x00\x00\x00"  # decodes to something, then fails the CRC
    cases = [("corrupt.jsonl.gz", bytes(bad), "gzip"),
             ("trunc.jsonl.gz", gz[: len(gz) - 12], "truncated gzip")]
    for name, data, needle in cases:
        path = os.path.join(d, name)
        write_bytes(path, data)
        expect_failure(d, [good, path], [name, needle],
                       extra=["--on-error", "skip", "--summary", os.path.join(d, "s.json")])
        os.unlink(path)
    # Without skip, the first malformed record decoded from the damage
    # stopped the run as "malformed JSON": the message names the stream.
    path = os.path.join(d, "corrupt.jsonl.gz")
    write_bytes(path, bytes(bad))
    expect_failure(d, [good, path], ["corrupt.jsonl.gz: corrupt gzip data", "incorrect data check",
                                     "from the damaged data"])


def output_that_is_an_input_is_refused():
    """An output that is one of the inputs (same device and inode) is
    refused before any work, and the input is left as it was; -o through a
    symbolic link writes the link's target and keeps the link."""
    d = fresh_dir()
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello world\n")
    os.symlink("a.txt", os.path.join(d, "alias.txt"))
    e_bin = os.path.join(d, "e.bin")
    write_bytes(e_bin, b"some text that is not ids\n")
    for args, victim in ((["-o", a, a], a),
                         (["-o", os.path.join(d, "alias.txt"), a], a),
                         (["-o", a, os.path.join(d, "alias.txt")], a),
                         (["--summary", a, "-o", os.path.join(d, "x"), a], a),
                         (["--output-format", "megatron", "-o", os.path.join(d, "e"), e_bin],
                          e_bin)):
        with open(victim, "rb") as f:
            before = f.read()
        names = entries(d)
        _, err, rc = run(["encode"] + args, expect=None)
        check(rc == 2 and "is the input" in err, "%s: exit %d, stderr %s" % (args, rc, err))
        with open(victim, "rb") as f:
            check(f.read() == before, "%s: input changed" % args)
        check(entries(d) == names, "%s: files left: %s" % (args, entries(d)))
    # merge onto one of its parts (data or index).
    run(["encode", "-q", "--output-format", "megatron", "-o", os.path.join(d, "p1"), a])
    run(["encode", "-q", "--output-format", "u16", "-o", os.path.join(d, "p2.u16"), a])
    for fmt, out, parts, victim in (
            ("megatron", "p1", ["p1"], "p1.bin"),
            ("u16", "p2.u16", ["p2.u16"], "p2.u16")):
        with open(os.path.join(d, victim), "rb") as f:
            before = f.read()
        names = entries(d)
        _, err, rc = run(["merge", "--output-format", fmt, "-o", os.path.join(d, out)]
                         + [os.path.join(d, p) for p in parts], expect=None)
        check(rc == 2 and "destroy the part" in err, "merge -o %s: exit %d, %s" % (out, rc, err))
        with open(os.path.join(d, victim), "rb") as f:
            check(f.read() == before, "merge -o %s: part changed" % out)
        check(entries(d) == names, "merge -o %s: files left: %s" % (out, entries(d)))
    # Through a link to a file that is not an input: the target is written.
    t = os.path.join(d, "target.out")
    write_bytes(t, b"old")
    link = os.path.join(d, "link.out")
    os.symlink("target.out", link)
    run(["encode", "-q", "-o", link, a])
    check(os.path.islink(link), "-o link replaced the symbolic link itself")
    with open(t, "rb") as f:
        out = f.read()
    check(out != b"old" and out.endswith(b"\n"), "target holds %r" % out)


def one_run_per_output_name():
    """A run holds FILE.lock for each file it writes, so two runs can never
    mix their .bin and .idx: the second is refused, and what is committed
    is one run's whole set."""
    d = fresh_dir()
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello world\n")
    out = os.path.join(d, "out")
    # Held by someone else: refused before anything is written.
    with open(out + ".idx.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        _, err, rc = run(["encode", "--output-format", "megatron", "-o", out, a], expect=None)
        check(rc == 1 and "another run is writing" in err and "out.idx.lock" in err,
              "exit %d, stderr %s" % (rc, err))
        check(entries(d) == ["a.txt", "out.idx.lock"], "files: %s" % entries(d))
    os.unlink(out + ".idx.lock")
    # Runs at once on different inputs: each either wins whole or is refused.
    texts = {"x.jsonl": [t for t, _ in STRESS[:40]], "y.jsonl": [t for t, _ in STRESS[40:]]}
    want = {}
    for name, t in texts.items():
        write_bytes(os.path.join(d, name), jsonl_bytes(t))
        run(["encode", "-q", "--input-format", "jsonl", "--output-format", "megatron", "-o",
             os.path.join(d, "ref_" + name), os.path.join(d, name)])
        want[name] = [list(x) for x in read_megatron(os.path.join(d, "ref_" + name))[1]]
    for _ in range(8):
        procs = [subprocess.Popen([cli_path(), "encode", "-q", "--input-format", "jsonl",
                                   "--output-format", "megatron", "-o", out,
                                   os.path.join(d, name)], stderr=subprocess.PIPE)
                 for name in texts]
        for p in procs:
            _, err = p.communicate(timeout=60)
            check(p.returncode == 0 or b"another run is writing" in err,
                  "exit %d: %s" % (p.returncode, err))
        got = [list(x) for x in read_megatron(out)[1]]
        check(got in want.values(), "out.bin and out.idx do not come from one run")
        check(not any(n.endswith(".lock") for n in entries(d)), "lock left behind")


def killed_run_leftovers_removed():
    """A run killed with SIGKILL cannot remove its temporaries; the next run
    under the same output name removes exactly those (not another name's)
    and says so."""
    d = fresh_dir()
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello world\n")
    ours = ["out.bin.tmp.abc123", "out.idx.tmp.Q1w2E3", "out_train_000001.bin.tmp.zzzzzz",
            "out.ds.metadata.tmp.a1b2c3", "out.done.tmp.XXXXXX"]
    # ... and not those of a live run writing out.ds.index (it holds its
    # lock), nor other names.
    theirs = ["other.bin.tmp.abc123", "out2.bin.tmp.abcdef", "out.bin.tmp.abc", "out.txt",
              "out.ds.index.tmp.aaaaaa", "out.ds.index.lock"]
    for n in ours + theirs:
        write_bytes(os.path.join(d, n), b"x")
    with open(os.path.join(d, "out.ds.index.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        _, err, _ = run(["encode", "--output-format", "megatron", "-o", os.path.join(d, "out"),
                         "--summary", "-", a])
    check("removed 5 temporary files left by an interrupted run" in json.loads(err)["notices"][0],
          "stderr: %s" % err)
    check(entries(d) == sorted(["a.txt", "out.bin", "out.idx"] + theirs), "files: %s"
          % entries(d))
    # A real SIGKILL in the middle of a run, then a rerun: nothing stale.
    d = fresh_dir()
    fifo = os.path.join(d, "in.fifo")
    os.mkfifo(fifo)
    args = [cli_path(), "encode", "-q", "--input-format", "jsonl", "--batch-bytes", "4096",
            "--shard-tokens", "100", "--output-format", "llmc", "-o", os.path.join(d, "out"), fifo]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE)
    with open_fifo_writer(fifo, proc) as w:
        w.write(jsonl_bytes([t for t, _ in STRESS]))
        w.flush()
        # Killed once it has a temporary file (the FIFO stays open, so the
        # run waits for more input): under ASan on a loaded machine a fixed
        # half second was not always enough to reach the first shard.
        deadline = time.time() + 60
        while not any(".tmp." in n for n in entries(d)) and time.time() < deadline:
            time.sleep(0.05)
        proc.kill()
        proc.wait(timeout=30)
    check(any(".tmp." in n for n in entries(d)), "nothing left by SIGKILL: %s" % entries(d))
    os.unlink(fifo)
    write_bytes(os.path.join(d, "b.jsonl"), jsonl_bytes(["hello"]))
    _, err, _ = run(["encode", "--input-format", "jsonl", "--output-format", "llmc", "-o",
                     os.path.join(d, "out"), "--summary", "-", os.path.join(d, "b.jsonl")])
    check("left by an interrupted run" in json.loads(err)["notices"][0], "stderr: %s" % err)
    check(not any(".tmp." in n or n.endswith(".lock") for n in entries(d)),
          "left: %s" % entries(d))


def open_fifo_writer(fifo, proc, timeout=30):
    """Opens the FIFO for writing once `proc` has opened it for reading
    (never blocking forever if it died first)."""
    deadline = time.time() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:  # ENXIO: no reader yet
            check(proc.poll() is None and time.time() < deadline,
                  "simdbpe did not open the FIFO (exit %s)" % proc.poll())
            time.sleep(0.02)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def interrupted_run_leaves_nothing():
    """SIGINT while the run waits for more input (a FIFO): no output file,
    no temporary file."""
    for fmt in ("megatron", "llmc", "u16", "datatrove"):
        d = fresh_dir()
        fifo = os.path.join(d, "in.fifo")
        os.mkfifo(fifo)
        # Small batches, so that outputs are being written while it waits.
        args = [cli_path(), "encode", "-q", "--input-format", "jsonl", "--batch-bytes", "4096",
                "--output-format", fmt, "-o", os.path.join(d, "out"), fifo]
        if fmt == "llmc":
            args[2:2] = ["--shard-tokens", "100"]
        proc = subprocess.Popen(args, stderr=subprocess.PIPE)
        with open_fifo_writer(fifo, proc) as w:
            w.write(jsonl_bytes([t for t, _ in STRESS]))  # several shards' worth
            w.flush()
            time.sleep(0.5)
            names = entries(d)
            check(any(".tmp." in n for n in names), "%s: no temporary file while running: %s"
                  % (fmt, names))
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        check(proc.returncode == -signal.SIGINT, "%s: exit %s" % (fmt, proc.returncode))
        check(entries(d) == ["in.fifo"], "%s: left behind: %s" % (fmt, entries(d)))


def output_that_cannot_be_written():
    d = fresh_dir()
    write_bytes(os.path.join(d, "a.txt"), b"hello")
    _, err, rc = run(["encode", "--output-format", "megatron", "-o",
                      os.path.join(d, "no", "such", "dir", "x"), os.path.join(d, "a.txt")],
                     expect=None)
    check(rc == 1 and "x.bin" in err and "No such file" in err, "stderr: %s" % err)
    # Every output path is checked before the encode: a summary or a
    # Megatron index that cannot be written fails at once, with nothing
    # committed (a slow FIFO input shows that no input was read).
    os.mkdir(os.path.join(d, "busy.idx"))
    os.mkdir(os.path.join(d, "busy.ds.metadata"))
    for args, needle in (
            (["--summary", os.path.join(d, "no", "s.json"), "-o", os.path.join(d, "o1")],
             "s.json"),
            (["--output-format", "megatron", "-o", os.path.join(d, "busy")], "busy.idx"),
            (["--output-format", "datatrove", "-o", os.path.join(d, "busy")],
             "busy.ds.metadata")):
        names = entries(d)
        fifo = os.path.join(d, "in.fifo")
        os.mkfifo(fifo)
        proc = subprocess.Popen([cli_path(), "encode"] + args + [fifo], stderr=subprocess.PIPE)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            check(False, "%s: the output path was not checked before reading the input" % args)
        os.unlink(fifo)
        err = err.decode()
        check(proc.returncode == 1 and needle in err, "%s: exit %d, %s" % (args, proc.returncode,
                                                                           err))
        check(entries(d) == names, "%s: files left: %s" % (args, entries(d)))
    # A full disk names the file (it said "cannot write : No space left"
    # when the write buffer filled in the middle of the run).
    write_bytes(os.path.join(d, "big.txt"), b"hello world " * 400000)
    for fmt in ("text", "u32"):
        _, err, rc = run(["encode", "-q", "--output-format", fmt, "-o", "/dev/full",
                          os.path.join(d, "big.txt")], expect=None)
        check(rc == 1 and "cannot write /dev/full: No space left" in err, "%s: %s" % (fmt, err))
    _, err, rc = run(["encode", os.path.join(d, "missing.txt"), os.path.join(d, "a.txt")],
                     expect=None)
    check(rc == 1 and "missing.txt" in err, "stderr: %s" % err)
    _, err, rc = run(["encode", os.path.join(d, "*.nothing")], expect=None)
    check(rc == 1 and "no file matches" in err, "stderr: %s" % err)
    # @LIST agrees with a pattern: naming no file is an error; a blank line
    # is ignored like an empty one.
    write_bytes(os.path.join(d, "empty.list"), b"\n  \n")
    _, err, rc = run(["encode", "@" + os.path.join(d, "empty.list")], expect=None)
    check(rc == 1 and "the list names no file" in err, "stderr: %s" % err)
    write_bytes(os.path.join(d, "blank.list"), b"   \n" + os.path.join(d, "a.txt").encode()
                + b"\r\n\t\n")
    out, err, rc = run(["encode", "-q", "@" + os.path.join(d, "blank.list")], expect=None)
    check(rc == 0 and out.count(b"\n") == 1, "blank list line: exit %d, %s" % (rc, err))


def usage_errors():
    d = fresh_dir()
    write_bytes(os.path.join(d, "a.txt"), b"hello")
    a = os.path.join(d, "a.txt")
    for args, needle in (
        (["--output-format", "megatron", a], "give -o a prefix"),
        (["--dtype", "u16", a], "--dtype"),
        (["--shard-tokens", "10", a], "--shard-tokens"),
        (["--json-key", "x", a], "--json-key"),
        (["--input-format", "lines", "--doc-separator", "x", a], "--doc-separator"),
        (["--doc-separator", "x\\", a], "bad --doc-separator"),  # a backslash at the end
        (["--doc-separator", "\\q", a], "bad --doc-separator"),  # an unknown escape
        (["--doc-separator", "", a], "bad --doc-separator"),
        (["--threads", "0", a], "--threads"),
        (["--threads", "2000", a], "--threads: give a whole number from 1 to 1024"),
        (["--batch-bytes", "1099511627776", a],
         "--batch-bytes: give a whole number from 16 to 1073741824"),
        (["--cache-mb", "0", a], "--cache-mb"),
        (["--cache-mb", "65537", a], "--cache-mb"),
        (["--rank", "1", a], "--rank"),
        (["--rank", "2", "--world-size", "2", "-o", os.path.join(d, "o"), a], "rank"),
        (["--eot", "append", "--eot-token", "nope", "-o", os.path.join(d, "o"), a],
         "--eot-token 'nope' is neither an added token of the model nor a token id"),
    ):
        _, err, rc = run(["encode"] + args, expect=None)
        check(rc == 2 and needle in err, "%s: exit %d, stderr %s" % (args, rc, err))
    # a model name with a typo: the closest name the library knows
    _, err, rc = run(["encode", "-m", "cl100k", a], expect=None)
    check(rc == 1 and "did you mean 'cl100k_base'?" in err, "exit %d, stderr %s" % (rc, err))
    # each command's --help is its own
    out, _, _ = run(["encode", "--help"])
    check(out.startswith(b"usage: simdbpe encode") and b"--eot-token" in out and
          b"Options (decode)" not in out, "encode --help: %r" % out[:200])
    out, _, _ = run(["count", "--help"])
    check(out.startswith(b"usage: simdbpe count") and b"--output-format" not in out,
          "count --help: %r" % out[:200])
    # The shared option parser (tools/options.c), through every command.
    for args, needle in (
        (["encode", "--bogus", a], "unknown option '--bogus' for encode"),
        (["encode", "--quiet=1", a], "option '--quiet' takes no value"),
        (["encode", a, "--threads"], "option '--threads' needs a value"),
        (["count", "--bogus", a], "unknown option '--bogus' for count"),
        (["decode", "--bogus"], "unknown option '--bogus' for decode"),
        (["merge", "--bogus"], "unknown option '--bogus' for merge"),
        (["compile", "--bogus"], "unknown option '--bogus'"),
        (["train", "--bogus"], "unknown option '--bogus'"),
        (["train", "--vocab-size"], "option '--vocab-size' needs a value"),
        (["train", "--vocab-size", "300", "--doc-separator", "x\\", "-o", d, a],
         "bad escape"),  # cli_unescape, shared with encode
    ):
        _, err, rc = run(args, expect=None)
        check(rc == 2 and needle in err, "%s: exit %d, stderr %s" % (args, rc, err))


def non_utf8_file_names_recorded():
    """File names are bytes: a rank's marker records one that is not UTF-8
    losslessly (merge then puts the documents back in order), and the
    summary lists a document skipped in such a file."""
    d = fresh_dir()
    bad_name = os.path.join(d, os.fsdecode(b"caf\xe9.jsonl"))
    ok_name = os.path.join(d, "ok.jsonl")
    write_bytes(bad_name, jsonl_bytes([t for t, _ in STRESS[:5]]) + b'{"text": 5}\n')
    write_bytes(ok_name, jsonl_bytes([t for t, _ in STRESS[5:10]]))
    common = ["encode", "-q", "--input-format", "jsonl", "--on-error", "skip",
              "--output-format", "megatron"]
    run(common + ["-o", os.path.join(d, "one"), bad_name, ok_name])
    for r in (0, 1):
        run(common + ["--rank", str(r), "--world-size", "2", "-o", os.path.join(d, "out"),
                      bad_name, ok_name])
    with open(os.path.join(d, "out.00000-of-00002.done"), "rb") as f:
        marker = json.load(f)
    check([x.get("path_hex") for x in marker["files"]] == [os.fsencode(bad_name).hex()],
          "marker files: %s" % marker["files"])
    run(["merge", "-q", "--output-format", "megatron", "-o", os.path.join(d, "out")])
    one = read_megatron(os.path.join(d, "one"))[1]
    merged = read_megatron(os.path.join(d, "out"))[1]
    check([list(x) for x in merged] == [list(x) for x in one], "merge differs from one run")
    summary = os.path.join(d, "s.json")
    run(["encode", "--input-format", "jsonl", "--on-error", "skip", "--summary", summary,
         "-o", os.path.join(d, "t.txt"), bad_name], expect=None)
    with open(summary) as f:
        s = json.load(f)
    check(s["skipped"] == 1 and len(s["skipped_documents"]) == 1 and
          "caf\\xE9.jsonl: line 6" in s["skipped_documents"][0], "summary: %s" % s)


SANITIZED = os.environ.get("SIMDBPE_SANITIZED") == "1"


def check_rss(rss_kb, limit_mb, what):
    """Peak RSS within the bound, except under the sanitizers (said so)."""
    if SANITIZED:
        print("  %s: peak RSS %s KB not checked under ASan (bound %d MB)" % (what, rss_kb,
                                                                          limit_mb))
        return
    check(rss_kb is not None and rss_kb < limit_mb * 1024,
          "peak RSS %s KB for %s (bound %d MB)" % (rss_kb, what, limit_mb))


def encode_rss_kb(args):
    """Runs simdbpe encode ARGS; returns (exit code, its peak RSS in KB as its
    summary gives it: VmHWM, which, unlike a child's ru_maxrss, does not count
    what this Python process had resident when it started the child)."""
    _, err, rc = run(["encode", "--summary", "-"] + args, expect=None)
    if rc != 0:
        return rc, None
    return rc, json.loads([l for l in err.splitlines() if l.startswith("{")][-1])["peak_rss_kb"]


# Starts a command and prints its exit code and ru_maxrss. A child's
# ru_maxrss counts what its parent had resident when it was started (Linux
# keeps the larger across exec), so the command is started from this small
# interpreter, not from the test, which holds tens of MB of test data.
RSS_HELPER = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def peak_rss_kb(args):
    """Runs simdbpe ARGS (stdout discarded); returns (exit code, peak RSS in KB)."""
    out = subprocess.run([sys.executable, "-c", RSS_HELPER, cli_path()] + args, check=True,
                         stdout=subprocess.PIPE).stdout.split()
    return int(out[0]), int(out[1])


def merge_says_what_is_wrong():
    """merge names what does not fit: parts of runs with other world sizes
    or input lists, a rank twice or missing, another --output-format (it
    said "does not belong with", or "No such file")."""
    d = fresh_dir()
    inputs = []
    for x in "abc":
        inputs.append(os.path.join(d, x + ".txt"))
        write_bytes(inputs[-1], b"text of " + x.encode())
    def shard(name, rank, world, files):
        run(["encode", "-q", "--output-format", "megatron", "--rank", str(rank), "--world-size",
             str(world), "-o", os.path.join(d, name)] + files)
        return os.path.join(d, "%s.%05d-of-%05d" % (name, rank, world))
    r2 = [shard("run2", r, 2, inputs) for r in range(2)]
    r3 = [shard("run3", r, 3, inputs) for r in range(3)]
    rx = shard("runx", 1, 2, inputs[:2])
    out = os.path.join(d, "out")
    for fmt, parts, needles in (
            ("megatron", [r2[0], r3[2]], ["run3.00002-of-00003.done is from a run of 3 ranks",
                                          "one of 2: parts of different runs"]),
            ("megatron", [r2[0], rx], ["runx.00001-of-00002.done is from a run over 2 input "
                                       "files", "over 3: parts of different runs"]),
            ("megatron", [r3[0], r3[1]], ["2 parts, but the markers say the run had 3 ranks "
                                          "(rank 2 is missing)"]),
            ("megatron", [r2[0], r2[0]], ["both rank 0"]),
            ("u16", r2, ["was written with --output-format megatron, not u16: merge with "
                         "--output-format megatron"]),
            ("megatron", [r2[0] + ".bin"], ["a Megatron part is named by its prefix"]),
            ("megatron", [inputs[0]], ["a.txt.bin does not exist, but", "a raw part is merged "
                                       "with --output-format u16, u32 or text"])):
        _, err, rc = run(["merge", "--output-format", fmt, "-o", out] + parts, expect=None)
        check(rc == 1 and all(n in err for n in needles), "merge %s: %s" % (parts, err))
        check(not os.path.exists(out + ".bin"), "a failed merge wrote out.bin")


def long_documents_in_bounded_memory():
    """A document streams through in bounded memory whatever its length:
    24 MB without whitespace is cut at digits and punctuation (64 MB); a
    32 MB JSON record costs at most twice its size over 64 MB and the
    encoder's tables' budget (256 MB: it keeps its 2 M numbers); a single
    16 MB pre-token of one letter at most four times (BPE over one long word
    keeps a bit a byte beside its ids, and the output room is reserved
    before the piece's ids are written, so no untouched room is copied),
    and so of random letters, whose ids are held once.
    The ids do not depend on where the text is cut (batch sizes, threads)
    and decode back to the text."""
    d = fresh_dir()
    rng = random.Random(7)
    alphabet = b"abcdefghijklmnop,.;:-+=0123456789ABC()"
    block = bytes(rng.choice(alphabet) for _ in range(1 << 20))
    nows = os.path.join(d, "nows.txt")
    write_bytes(nows, block * 24)
    outs = []
    for threads, batch in (("2", "131072"), ("1", "65536")):
        out = os.path.join(d, "nows.%s.u32" % threads)
        rc, rss = encode_rss_kb(["--output-format", "u32", "--threads", threads,
                               "--batch-bytes", batch, "-o", out, nows])
        check(rc == 0, "encode failed")
        check_rss(rss, 64, "24 MB without whitespace")
        with open(out, "rb") as f:
            outs.append(f.read())
    check(outs[0] == outs[1], "the ids depend on the batch size")
    text, _, _ = run(["decode", "--input-format", "u32", os.path.join(d, "nows.1.u32")])
    check(text == block * 24, "the ids do not decode to the text")

    rec = os.path.join(d, "rec.jsonl")
    words = b" ".join(b"w%d\\n\\\"q\\u00e9" % i for i in range(1 << 21))[:32 << 20]
    words = words[:words.rindex(b" ")]
    write_bytes(rec, b'{"id": 1, "text": "' + words + b'"}\n')
    out = os.path.join(d, "rec.u32")
    # 2 M distinct numbers: the encoder keeps them all, its tables grow to
    # their budget (256 MB by default).
    rc, rss = encode_rss_kb(["--input-format", "jsonl", "--output-format", "u32",
                             "--threads", "1", "-o", out, rec])
    check(rc == 0, "encode failed")
    check_rss(rss, 64 + 256 + 2 * 32, "a 32 MB JSON record")
    text, _, _ = run(["decode", "--input-format", "u32", out])
    want = json.loads(b'"' + words + b'"').encode("utf-8")
    check(text == want, "the record's ids do not decode to its text")

    one = os.path.join(d, "one.txt")
    write_bytes(one, b"a" * (16 << 20))
    rc, rss = encode_rss_kb(["--output-format", "u32", "-o", out, one])
    check(rc == 0, "encode failed")
    check_rss(rss, 64 + 4 * 16, "one 16 MB piece")
    # Random letters: about 0.6 ids a byte, held once (the encoder writes
    # them in place into the run's array; they were held three times).
    letters = os.path.join(d, "letters.txt")
    write_bytes(letters, bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(1 << 20)) * 16)
    out3 = os.path.join(d, "letters.u32")
    rc, rss = encode_rss_kb(["--output-format", "u32", "-o", out3, letters])
    check(rc == 0, "encode failed")
    check_rss(rss, 64 + 4 * 16, "16 MB of random letters in one piece")
    text, _, _ = run(["decode", "--input-format", "u32", out3])
    check(text == open(letters, "rb").read(), "the letters' ids do not decode to the text")

    # With --on-error skip a document cut into parts is held until its end
    # (a failure drops it whole): past 16 MB of ids in a temporary file.
    many = os.path.join(d, "many.txt")
    late = b"x y " * (6 << 20) + b"\xff"
    sep = b"\x1e"
    write_bytes(many, block * 24 + sep + late + sep + b"after")
    out2 = os.path.join(d, "many.u32")
    rc, rss = encode_rss_kb(["--on-error", "skip", "--doc-separator", "\\x1e",
                             "--output-format", "u32", "--threads", "2", "-o", out2, many])
    check(rc == 0, "skip mode: exit %d" % rc)
    check_rss(rss, 64, "a long document held in skip mode")
    with open(out2, "rb") as f:
        got = f.read()
    after, _, _ = run(["encode", "-q", "--output-format", "u32", "-"], stdin=b"after")
    check(got == outs[0] + after, "skip mode: not the first and last documents' ids")

    # Without a temporary folder to hold such a document's ids, the run says
    # so (and which folder) instead of growing its memory.
    big = os.path.join(d, "big.txt")
    write_bytes(big, b"a " * (17 << 20))
    _, err, rc = run(["encode", "--on-error", "skip", "--batch-bytes", "1048576",
                      "--output-format", "u32", "-o", out2, big],
                     env={"TMPDIR": os.path.join(d, "no-such-dir")}, expect=None)
    check(rc == 1 and "cannot create a temporary file in %s" % os.path.join(d, "no-such-dir")
          in err and "set TMPDIR" in err, "rc %d: %s" % (rc, err))
    with open(out2, "rb") as f:
        check(f.read() == outs[0] + after, "a failed run replaced the earlier output")

    # A run that stops leaves whole documents on standard output: the lines
    # before the bad document, none of it (its first parts were printed,
    # without a newline).
    two = os.path.join(d, "two.txt")
    write_bytes(two, b"first document" + sep + b"a b " * (1 << 18) + b"\xff")
    got, err, rc = run(["encode", "--doc-separator", "\\x1e", "--batch-bytes", "65536", two],
                       expect=None)
    first, _, _ = run(["encode", "-q", "-"], stdin=b"first document")
    check(rc == 1 and "byte offset" in err and got == first, "stdout %r..." % got[:80])

    # Errors deep in a long text name the offset in the whole text.
    bad = b"a b " * 750000 + b"\xff" + b" c" * 1000
    write_bytes(os.path.join(d, "bad.txt"), bad)
    _, err, rc = run(["encode", "--batch-bytes", "1073741824", "-o", out,
                      os.path.join(d, "bad.txt")], expect=None)
    check(rc == 1 and "byte offset 3000000" in err, err)
    write_bytes(os.path.join(d, "bad.jsonl"), b'{"text": "' + bad + b'"}\n')
    _, err, rc = run(["encode", "--input-format", "jsonl", "-o", out,
                      os.path.join(d, "bad.jsonl")], expect=None)
    check(rc == 1 and 'byte 3000000 of the "text" value' in err, err)


def decode_streams():
    """decode reads its input in chunks: 8 M u16 ids (16 MB, 44 MB of text)
    and one text line of 1 M ids decode in bounded memory (it read the whole
    input: 4.2x its size for u16), with the same bytes."""
    d = fresh_dir()
    n = 8 << 20
    ids = struct.pack("<2H", 15496, 995) * (n // 2)  # "Hello world" repeated
    write_bytes(os.path.join(d, "ids.u16"), ids)
    out = os.path.join(d, "out.txt")
    rc, rss = peak_rss_kb(["decode", "-q", "--input-format", "u16", "-o", out,
                           os.path.join(d, "ids.u16")])
    check(rc == 0, "decode failed")
    with open(out, "rb") as f:
        check(f.read() == b"Hello world" * (n // 2), "u16 decode differs")
    check_rss(rss, 64, "a 16 MB u16 file")
    line = b" ".join(b"15496 995" for _ in range(1 << 19))
    write_bytes(os.path.join(d, "ids.txt"), b"464\n" + line + b"\n\n995")
    rc, rss = peak_rss_kb(["decode", "-q", "-o", out, os.path.join(d, "ids.txt")])
    check(rc == 0, "decode failed")
    with open(out, "rb") as f:
        check(f.read() == b"The\n" + b"Hello world" * (1 << 19) + b"\n\n world",
              "text decode differs")
    # A bad id far into a line is named by its position in the line.
    write_bytes(os.path.join(d, "bad.txt"), line + b" 50257\n")
    _, err, rc = run(["decode", os.path.join(d, "bad.txt")], expect=None)
    check(rc == 1 and "line 1: token id 50257 at position %d" % (1 << 20) in err, err)


def absurd_thread_count_costs_nothing():
    """--threads 1000 on 36 bytes: no more threads than the input has
    batches for (it took 4.2 GB); the ids are the same."""
    d = fresh_dir()
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello world this is thirty-six byte")
    want, _, _ = run(["encode", "-q", a])
    proc = subprocess.Popen([cli_path(), "encode", "-q", "--threads", "1000", a],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    check(os.waitstatus_to_exitcode(status) == 0 and out == want, "output %r" % out)
    check_rss(usage.ru_maxrss, 512, "36 bytes on --threads 1000")


def vocabulary_over_65536_ids():
    """A model with 70,000 ids: u16 is refused; the defaults widen."""
    d = fresh_dir()
    model = os.path.join(d, "model")
    os.mkdir(model)
    with open(os.path.join(SOURCE_DIR, "src", "model", "gpt2", "vocab.json"),
              encoding="utf-8") as f:
        vocab = json.load(f)
    byte_tokens = sorted(vocab.items(), key=lambda kv: kv[1])[:256]
    v = {tok: i for tok, i in byte_tokens}
    for i in range(256, 70000):
        v["<extra_%d>" % i] = i
    with open(os.path.join(model, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(v, f)
    write_bytes(os.path.join(model, "merges.txt"), b"#version: 0.2\n")
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hi")
    hi = [v["h"], v["i"]]  # no merges: one byte token each
    _, err, rc = run(["encode", "-m", model, "--output-format", "u16", a], expect=None)
    check(rc == 2 and "u16" in err and "70000" in err, "stderr: %s" % err)
    _, err, rc = run(["encode", "-m", model, "--output-format", "megatron", "--dtype", "u16",
                      "-o", os.path.join(d, "m"), a], expect=None)
    check(rc == 2, "megatron --dtype u16 accepted with 70000 ids")
    run(["encode", "-q", "-m", model, "--eot", "none", "--output-format", "megatron", "-o",
         os.path.join(d, "m"), a])
    dtype, docs = read_megatron(os.path.join(d, "m"))
    check(dtype == 4 and [list(x) for x in docs] == [hi], "megatron: %d %s" % (dtype, docs))
    run(["encode", "-q", "-m", model, "--eot", "none", "--output-format", "llmc", "-o",
         os.path.join(d, "l"), a])
    stream, width, _ = read_llmc(os.path.join(d, "l"))
    check(width == 4 and list(stream) == hi, "llmc: %d %s" % (width, stream))
    run(["encode", "-q", "-m", model, "--eot", "none", "--output-format", "datatrove", "-o",
         os.path.join(d, "t"), a])
    _, size, docs, _ = read_datatrove(os.path.join(d, "t"))
    check(size == 4 and [list(x) for x in docs] == [hi], "datatrove: %d %s" % (size, docs))


if __name__ == "__main__":
    main([truncated_gzip_and_zstd, bad_records_stop_with_file_and_line, lone_surrogate_replaced,
          byte_order_mark_before_the_first_record, zstd_skippable_frame_first,
          compressed_twice_is_named,
          skip_lists_every_bad_document, broken_stream_fails_the_run_even_with_skip,
          output_that_is_an_input_is_refused, one_run_per_output_name,
          killed_run_leftovers_removed,
          interrupted_run_leaves_nothing,
          output_that_cannot_be_written, usage_errors, absurd_thread_count_costs_nothing,
          non_utf8_file_names_recorded, merge_says_what_is_wrong,
          long_documents_in_bounded_memory, decode_streams,
          vocabulary_over_65536_ids])
