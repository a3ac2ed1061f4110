#!/usr/bin/python3
"""test_outputs.py - a run owns the whole set of files it writes.

An llm.c run removes the shards an earlier, longer run left under its prefix
(llm.c reads every PREFIX_train_*.bin) and says which; two runs whose outputs
overlap under different formats exclude each other, whatever the names they
were given (each final file is locked, not the prefix as typed); merge
refuses ranks that were given different input lists; a --summary or an
@LIST that the run would write over is refused before any work; a shard
that cannot be written is named in the message.
"""
import json
import os
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403


def entries(d):
    return sorted(os.listdir(d))


def jsonl(texts):
    return b"".join(json.dumps({"text": t}).encode() + b"\n" for t in texts)


def llmc_rerun_removes_stale_shards():
    """A second run under the same prefix with less data leaves only its own
    shards (the first run's higher-numbered ones stayed, and llm.c trained
    on both runs' data), and says which it removed; an empty input leaves
    none."""
    d = make_tmpdir("dataset-outputs-")
    big = os.path.join(d, "big.jsonl")
    small = os.path.join(d, "small.jsonl")
    write_bytes(big, jsonl(["hello world number %d " % i * 20 for i in range(300)]))
    write_bytes(small, jsonl(["hi there"]))
    out = os.path.join(d, "P")
    args = ["encode", "--input-format", "jsonl", "--output-format", "llmc", "--shard-tokens",
            "1000", "-o", out]
    run(args + ["-q", big])
    first = [n for n in entries(d) if n.startswith("P_")]
    check(len(first) > 5, "the first run wrote %s" % first)
    _, err, _ = run(args + ["--summary", "-", small])
    check(entries(d) == ["P_val_000000.bin", "big.jsonl", "small.jsonl"],
          "after the second run: %s" % entries(d))
    said = json.loads(err)["notices"]
    check(len(said) == 1 and
          "removed %d llm.c shards an earlier run left under %s" % (len(first) - 1, out) in said[0]
          and "(%s_train_000001.bin, ...)" % out in said[0], "notices: %s" % said)
    stream, width, shards = read_llmc(out)
    want, _, _ = run(["encode", "-q", "--input-format", "jsonl", "--output-format", "u16",
                      "--eot", "prepend", small])
    check(shards == 1 and list(ids_from_bytes(want, 2)) == list(stream),
          "the shard is not the second run's")
    empty = os.path.join(d, "empty.jsonl")
    write_bytes(empty, b"")
    _, err, _ = run(args + ["--summary", "-", empty])
    check(not any(n.startswith("P_") for n in entries(d)), "after an empty run: %s" % entries(d))
    said = json.loads(err)["notices"]
    check(len(said) == 1 and "removed 1 llm.c shard an earlier run left under %s" % out in said[0]
          and "(%s_val_000000.bin)" % out in said[0], "notices: %s" % said)


def overlapping_outputs_exclude_each_other():
    """-o X.bin --output-format u16 and -o X --output-format megatron write
    one file, X.bin: while the first runs (reading a FIFO, so it waits), the
    second is refused naming X.bin (both ran and mixed the u16 X.bin with
    the Megatron X.idx). The first then finishes as if alone."""
    d = make_tmpdir("dataset-outputs-")
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello world\n")
    fifo = os.path.join(d, "in.fifo")
    os.mkfifo(fifo)
    x = os.path.join(d, "X")
    first = subprocess.Popen([cli_path(), "encode", "-q", "--output-format", "u16", "-o",
                              x + ".bin", fifo], stderr=subprocess.PIPE)
    w = None
    try:
        deadline = time.time() + 30
        while w is None:
            try:
                w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                check(time.time() < deadline and first.poll() is None,
                      "the first run did not open its input")
                time.sleep(0.05)
        # The first run holds X.bin's lock from before it reads its input.
        deadline = time.time() + 30
        while not os.path.exists(x + ".bin.lock"):
            check(time.time() < deadline, "no X.bin.lock: %s" % entries(d))
            time.sleep(0.05)
        _, err, rc = run(["encode", "--output-format", "megatron", "-o", x, a], expect=None)
        check(rc == 1 and "another run is writing %s.bin" % x in err,
              "megatron -o X beside u16 -o X.bin: exit %d, %s" % (rc, err))
        check(not os.path.exists(x + ".idx"), "the second run wrote X.idx")
        os.write(w, b"hello world\n")
    finally:
        if w is not None:
            os.close(w)
    _, err = first.communicate(timeout=60)
    check(first.returncode == 0, "the first run: %s" % err)
    want, _, _ = run(["encode", "-q", "--output-format", "u16", a])
    with open(x + ".bin", "rb") as f:
        check(f.read() == want, "X.bin is not the first run's")
    check(entries(d) == ["X.bin", "a.txt", "in.fifo"], "files: %s" % entries(d))
    # The same file under two names (a symbolic link): one lock.
    os.symlink("X.bin", os.path.join(d, "link.bin"))
    import fcntl
    with open(x + ".bin.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        _, err, rc = run(["encode", "--output-format", "u16", "-o", os.path.join(d, "link.bin"),
                          a], expect=None)
        check(rc == 1 and "another run is writing" in err, "through the link: %d %s" % (rc, err))
    os.unlink(x + ".bin.lock")


def merge_refuses_different_file_lists():
    """Ranks given different lists of the same length (rank 0 ran on a b,
    rank 1 on c a) are refused by merge, naming the lists' files (it merged
    a twice, without b and c); so are markers without the list's hash that
    list a file twice. A rank rerun over another list is not 'already
    done'."""
    d = make_tmpdir("dataset-outputs-")
    for n in "abc":
        write_bytes(os.path.join(d, n + ".txt"), b"text " + n.encode())
    p = lambda n: os.path.join(d, n + ".txt")  # noqa: E731
    out = os.path.join(d, "run")

    def rank(r, files):
        run(["encode", "-q", "--output-format", "megatron", "--rank", str(r), "--world-size",
             "2", "-o", out] + files)
        return "%s.%05d-of-00002" % (out, r)

    parts = [rank(0, [p("a"), p("b")]), rank(1, [p("c"), p("a")])]
    merged = os.path.join(d, "merged")
    _, err, rc = run(["merge", "--output-format", "megatron", "-o", merged] + parts, expect=None)
    check(rc == 1 and "come from runs over different input lists" in err and
          "the first lists %s as file 0, the second %s as file 1" % (p("a"), p("a")) in err,
          "merge: exit %d, %s" % (rc, err))
    check(not os.path.exists(merged + ".bin"), "a refused merge wrote merged.bin")
    for part in parts:
        with open(part + ".done") as f:
            m = json.load(f)
        m.pop("input_list_xxh3")
        with open(part + ".done", "w") as f:
            json.dump(m, f)
    _, err, rc = run(["merge", "--output-format", "megatron", "-o", merged] + parts, expect=None)
    check(rc == 1 and "%s is file 0 in %s.done and file 1 in %s.done" % (p("a"), parts[0],
                                                                         parts[1]) in err,
          "merge of older markers: exit %d, %s" % (rc, err))
    # Rank 0 again over the list rank 1 had: its marker is another run's.
    os.unlink(parts[0] + ".done")
    rank(0, [p("a"), p("b")])
    _, err, rc = run(["encode", "--output-format", "megatron", "--rank", "0", "--world-size", "2",
                      "-o", out, p("c"), p("a")], expect=None)
    check(rc == 1 and "written by a different run" in err, "rerun: exit %d, %s" % (rc, err))
    # The same lists: merged, a single run's bytes.
    os.unlink(parts[1] + ".done")
    rank(1, [p("a"), p("b")])
    run(["merge", "--output-format", "megatron", "-o", merged] + parts)
    run(["encode", "-q", "--output-format", "megatron", "-o", os.path.join(d, "one"), p("a"),
         p("b")])
    for sfx in (".bin", ".idx"):
        with open(merged + sfx, "rb") as f, open(os.path.join(d, "one") + sfx, "rb") as g:
            check(f.read() == g.read(), "merged%s differs from a single run's" % sfx)


def own_files_the_run_would_replace_are_refused():
    """--summary F -o F and -o LIST (or --summary LIST) with the input
    @LIST are refused before any work, the files untouched (the first
    removed the run's own temporary and failed after writing F; the second
    replaced the list)."""
    d = make_tmpdir("dataset-outputs-")
    a = os.path.join(d, "a.txt")
    write_bytes(a, b"hello")
    lst = os.path.join(d, "L")
    write_bytes(lst, (a + "\n").encode())
    f = os.path.join(d, "F")
    for args, needle in (
            (["--summary", f, "-o", f, a], "--summary %s is one of the run's outputs" % f),
            (["--summary", os.path.join(d, ".", "F.bin"), "--output-format", "megatron", "-o", f,
              a], "is one of the run's outputs"),
            (["-o", lst, "@" + lst], "the input list @%s would be written over by -o" % lst),
            (["--summary", lst, "-o", os.path.join(d, "o"), "@" + lst],
             "the input list @%s would be written over by --summary" % lst),
            (["--output-format", "llmc", "-o", os.path.join(d, "P"), "--summary",
              os.path.join(d, "P_train_000004.bin"), a], "is one of the run's outputs")):
        names = entries(d)
        _, err, rc = run(["encode"] + args, expect=None)
        check(rc == 2 and needle in err, "%s: exit %d, %s" % (args, rc, err))
        check(entries(d) == names, "%s: files now %s" % (args, entries(d)))
        with open(lst, "rb") as g:
            check(g.read() == (a + "\n").encode(), "%s: the list changed" % args)


def a_shard_that_cannot_be_written_is_named():
    """A write that fails in the middle of an llm.c run (here a file size
    limit, as a full disk would) names the shard, not the prefix, and
    leaves no file."""
    d = make_tmpdir("dataset-outputs-")
    big = os.path.join(d, "big.txt")
    write_bytes(big, b"hello world " * 1000000)  # about 2 M ids: 4 MB in one shard

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    p = subprocess.run([cli_path(), "encode", "-q", "--output-format", "llmc", "-o",
                        os.path.join(d, "P"), big], stderr=subprocess.PIPE, preexec_fn=limit)
    err = p.stderr.decode()
    check(p.returncode == 1 and "cannot write %s: File too large" %
          os.path.join(d, "P_val_000000.bin") in err, "exit %d, %s" % (p.returncode, err))
    check(entries(d) == ["big.txt"], "files left: %s" % entries(d))


if __name__ == "__main__":
    main([llmc_rerun_removes_stale_shards, overlapping_outputs_exclude_each_other,
          merge_refuses_different_file_lists, own_files_the_run_would_replace_are_refused,
          a_shard_that_cannot_be_written_is_named])
