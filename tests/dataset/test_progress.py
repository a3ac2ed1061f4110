#!/usr/bin/python3
"""test_progress.py - feedback on stderr: a progress line (bytes, documents,
MB/s, ETA) and a one-line summary only when stderr is a terminal, nothing
otherwise; a JSON summary where --summary says (FILE, or - for stderr) with
documents, tokens, bytes, seconds and
skipped counts that match the input.

The terminal is a pseudo-terminal from the pty module; the input is the
golden edge.jsonl (7,229 records) fed in small batches so that the line is
drawn while the run goes on.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

EDGE = os.path.join(GOLDEN_DIR, "edge.jsonl")
ARGS = ["encode", "--input-format", "jsonl", "--output-format", "u16", "--batch-bytes", "4096"]


def run_with_tty_stderr(args):
    """Runs simdbpe with stderr on a pseudo-terminal; returns what it wrote."""
    master, slave = os.openpty()
    p = subprocess.Popen([cli_path()] + args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    check(p.wait(timeout=120) == 0, "exit %d: %r" % (p.returncode, out[-500:]))
    return out.decode("utf-8", "replace")


def progress_on_a_terminal():
    d = make_tmpdir("dataset-progress-")
    err = run_with_tty_stderr(ARGS + ["-o", os.path.join(d, "o.u16"), EDGE])
    check("\r[" in err and "docs" in err and "MB/s" in err and "ETA" in err,
          "no progress line on the terminal: %r" % err[:300])
    last = err.rstrip().splitlines()[-1]
    check("simdbpe: encoded " in last and "tokens" in last and "{" not in err,
          "the summary line is not the last thing: %r" % err[-300:])
    # With --summary FILE the terminal gets the same, the JSON goes to FILE.
    err = run_with_tty_stderr(ARGS + ["-o", os.path.join(d, "o.u16"), EDGE, "--summary",
                                      os.path.join(d, "s.json")])
    check("\r[" in err and "{" not in err, "with --summary FILE: %r" % err[-300:])
    err = run_with_tty_stderr(ARGS + ["-q", "-o", os.path.join(d, "o.u16"), EDGE])
    check(err == "", "-q should print nothing: %r" % err[:200])


def nothing_on_success_otherwise():
    d = make_tmpdir("dataset-progress-")
    _, err, _ = run(ARGS + ["-o", os.path.join(d, "o.u16"), EDGE])
    check(err == "", "stderr of a run that succeeded: %r" % err[:300])
    # --summary -: the JSON on stderr, one line
    _, err, _ = run(ARGS + ["-o", os.path.join(d, "o.u16"), "--summary", "-", EDGE])
    lines = err.splitlines()
    check(len(lines) == 1 and "\r" not in err, "stderr is not one line: %r" % err[:300])
    s = json.loads(lines[0])
    recs = golden_records("edge.jsonl")
    tokens = sum(len(ids) for _, ids in recs)
    for key, want in (("documents", len(recs)), ("tokens", tokens),
                      ("bytes", os.path.getsize(EDGE)), ("skipped", 0)):
        check(s[key] == want, "summary %s = %s, want %s" % (key, s[key], want))
    check(s["seconds"] > 0 and s["skipped_documents"] == [] and s["notices"] == [],
          "summary: %s" % s)
    check(os.path.getsize(os.path.join(d, "o.u16")) == 2 * tokens, "output size")
    # --summary FILE: the same JSON in the file, nothing on stderr.
    _, err, _ = run(ARGS + ["-o", os.path.join(d, "o.u16"), "--summary",
                            os.path.join(d, "s.json"), EDGE])
    check(err == "", "stderr with --summary FILE: %r" % err)
    with open(os.path.join(d, "s.json")) as f:
        s2 = json.load(f)
    check(s2["documents"] == len(recs) and s2["tokens"] == tokens, "summary file: %s" % s2)
    # decode says nothing either
    _, err, _ = run(["decode", "--input-format", "u16", os.path.join(d, "o.u16")])
    check(err == "", "stderr of decode: %r" % err)


if __name__ == "__main__":
    main([progress_on_a_terminal, nothing_on_success_otherwise])
