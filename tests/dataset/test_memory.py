#!/usr/bin/python3
"""test_memory.py - the dataset engine's memory bound.

Peak RSS <= 64 MB + the model (and its table of whole tokens, 4 MB for
GPT-2) + workers x (6 MB + the cache: --cache-mb, 12 here) + 5 x the
longest pre-token (tools/DATASET.md, "Memory"); a
document is cut wherever its family's pieces certainly end, so only a
single pre-token is held whole. Here: no more workers than CPUs whatever
--threads asks (64 threads on 12 MB took 751 MB), and runs of digits,
which Qwen2's family makes one piece each digit and cl100k's/o200k's three,
are cut (Qwen3's 50 MB of digits were one part, 387 MB). Peak RSS is the
summary's peak_rss_kb (VmHWM); not checked under the sanitizers.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

SANITIZED = os.environ.get("SIMDBPE_SANITIZED") == "1"
QWEN3_2K = os.path.join(SOURCE_DIR, "tests", "data", "hf", "qwen3_2k.json")


def summary_of(args):
    _, err, _ = run(["encode", "--summary", "-"] + args)
    return json.loads([l for l in err.splitlines() if l.startswith("{")][-1])


def check_rss(summary, limit_mb, what):
    rss = summary["peak_rss_kb"]
    if SANITIZED:
        print("  %s: peak RSS %d KB not checked under ASan (bound %d MB)" % (what, rss, limit_mb))
        return
    check(rss <= limit_mb * 1024, "%s: peak RSS %d KB, bound %d MB" % (what, rss, limit_mb))


def workers_never_exceed_the_cpus():
    """--threads 1024 on 12 MB: as many workers as CPUs, within the bound,
    and the same ids as one thread."""
    d = make_tmpdir("dataset-memory-")
    text = os.path.join(d, "t.txt")
    words = b" ".join(b"word%d" % (i % 7919) for i in range(2000000))[:12 << 20]
    write_bytes(text, words)
    cpus = len(os.sched_getaffinity(0))
    outs = []
    for threads in ("1", "1024"):
        out = os.path.join(d, "out%s.u32" % threads)
        s = summary_of(["--threads", threads, "--cache-mb", "12", "--output-format", "u32", "-o",
                        out, text])
        want = 1 if threads == "1" else cpus
        check(s["threads"] == want, "--threads %s: %d workers on %d CPUs"
              % (threads, s["threads"], cpus))
        workers = s["threads"]
        check_rss(s, 64 + 4 + workers * (6 + 12), "--threads %s, %d workers" % (threads, workers))
        with open(out, "rb") as f:
            outs.append(f.read())
    check(outs[0] == outs[1], "the ids depend on the thread count")


def every_worker_has_the_whole_budget():
    """Each encoder's budget is --cache-mb, else the library's default,
    whatever the number of workers (a smaller one for two threads filled
    each worker's table early in a large input: twice one thread's CPU)."""
    d = make_tmpdir("dataset-memory-")
    text = os.path.join(d, "t.txt")
    write_bytes(text, b"word " * (1 << 18))
    out = os.path.join(d, "out.u32")
    for args, want in (([], 256), (["--cache-mb", "7"], 7)):
        for threads in ("1", "2"):
            s = summary_of(["--threads", threads, "--batch-bytes", "65536", "--output-format",
                            "u32", "-o", out, text] + args)
            check(s["cache_mb"] == want, "--threads %s %s: cache_mb %d, not %d"
                  % (threads, " ".join(args), s["cache_mb"], want))


def digit_runs_are_cut():
    """24 MB of digits: a Qwen3 tokenizer.json (NFC, one piece each digit)
    and o200k (groups of three) cut it into parts, so it streams within
    64 MB over the model; GPT-2 (one piece) holds it whole, within its
    5 x bound. The ids are those of small batches."""
    d = make_tmpdir("dataset-memory-")
    digits = os.path.join(d, "digits.txt")
    block = bytes(b"0123456789"[(i * 7 + i // 10) % 10] for i in range(1 << 20))
    write_bytes(digits, block * 24)
    for model, bound, cut in ((QWEN3_2K, 64 + 8, True), ("o200k_base", 64 + 16, True),
                              ("gpt2", 64 + 16 + 5 * 24, False)):
        out = os.path.join(d, "out.u32")
        s = summary_of(["-m", model, "--output-format", "u32", "-o", out, digits])
        what = "%s, 24 MB of digits" % os.path.basename(model)
        check((s["cuts"] > 0) == cut, "%s: %d cuts" % (what, s["cuts"]))
        check_rss(s, bound, what)
        with open(out, "rb") as f:
            whole = f.read()
        small = os.path.join(d, "small.u32")
        run(["encode", "-q", "-m", model, "--batch-bytes", "65536", "--threads", "2",
             "--output-format", "u32", "-o", small, digits])
        with open(small, "rb") as f:
            check(f.read() == whole, "%s: the ids depend on where the text is cut" % what)


if __name__ == "__main__":
    main([workers_never_exceed_the_cpus, every_worker_has_the_whole_budget, digit_runs_are_cut])
