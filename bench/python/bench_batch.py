#!/usr/bin/env python3
"""bench_batch.py - encode_batch from Python against the CLI and peer tokenizers.

    python3 bench/python/bench_batch.py [--mb 20] [--runs 3] [--threads 1,2]
                                        [--build build] [--peers tiktoken-rs,hf]

Input: the records of mixed.jsonl.zst (from $SIMDBPE_CORPUS_DIR or
../shared/corpus) of 1 KB and more, up to --mb MB of text, in file order.
Timed, median of --runs:

  python-buffer   enc.encode_ordinary_batch_to_buffer(texts, num_threads=T):
                  the texts already Python str, the result one uint32 buffer
  python-cold     the same on a model opened for the run (cold encoders, as
                  in a fresh CLI process; the other rows reuse warm ones)
  python-lists    enc.encode_ordinary_batch(texts, num_threads=T): a list of
                  lists of Python ints, as tiktoken returns
  encode-files    simdbpe.encode_files([the JSON Lines file], output,
                  input_format="jsonl", format="u32", threads=T): the CLI's
                  work (reading, parsing, writing the file) from Python
  cli             `simdbpe encode --input-format jsonl --output-format u32
                  --threads T` on the same records written as JSON Lines (a
                  whole process: start, reading, JSON parsing, writing)
  peers           bench/peers.mjs (node; needs bench/node_modules from
                  `npm ci` in bench/): each record one document, one thread

The ids from Python are checked equal to the CLI's before anything is
reported. Python's overhead is python-buffer time / cli time - 1.
The package must be importable (pip install ./python, or tools/dev.sh build
and PYTHONPATH=python).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corpus_dir():
    d = os.environ.get("SIMDBPE_CORPUS_DIR") or os.path.join(ROOT, "..", "shared", "corpus")
    if not os.path.exists(os.path.join(d, "mixed.jsonl.zst")):
        sys.exit(f"bench_batch.py: no mixed.jsonl.zst in {d} (set SIMDBPE_CORPUS_DIR)")
    return d


def load_texts(mb):
    raw = subprocess.run(["zstd", "-dc", os.path.join(corpus_dir(), "mixed.jsonl.zst")],
                         check=True, capture_output=True).stdout
    texts, total = [], 0
    for line in raw.splitlines():
        if not line:
            continue
        t = json.loads(line)["text"]
        n = len(t.encode("utf-8"))
        if n < 1024:
            continue
        texts.append(t)
        total += n
        if total >= mb * 2**20:
            break
    return texts, total


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--peers", default="tiktoken-rs,hf")
    a = ap.parse_args()

    import simdbpe
    enc = simdbpe.get_encoding("gpt2")
    texts, nbytes = load_texts(a.mb)
    mb = nbytes / 1e6
    print(f"{len(texts)} documents of 1 KB and more, {mb:.1f} MB; load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)
    tmp = tempfile.mkdtemp(prefix="bench_batch.")
    rows = []
    try:
        jsonl = os.path.join(tmp, "docs.jsonl")
        with open(jsonl, "w", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps({"text": t}) + "\n")
        cli = os.path.join(a.build, "simdbpe")
        for threads in [int(x) for x in a.threads.split(",")]:
            out = os.path.join(tmp, f"cli{threads}.u32")
            cmd = [cli, "encode", "-q", "--input-format", "jsonl", "--json-key", "text",
                   "--output-format", "u32", "--threads", str(threads), "-o", out, jsonl]
            ids, _ = enc.encode_ordinary_batch_to_buffer(texts, num_threads=threads)
            subprocess.run(cmd, check=True)
            pyout = os.path.join(tmp, f"py{threads}.u32")
            files_run = lambda: simdbpe.encode_files([jsonl], pyout, input_format="jsonl",
                                                     format="u32", threads=threads)
            files_run()
            with open(out, "rb") as f, open(pyout, "rb") as g:
                cli_ids = f.read()
                if cli_ids != bytes(memoryview(ids)) or cli_ids != g.read():
                    sys.exit("bench_batch.py: Python's ids differ from the CLI's")
            # Alternate the three so that they see the same machine load.
            tb, tl, tc, tcold, tf = [], [], [], [], []
            for _ in range(a.runs):
                tcold.append(median_time(
                    lambda: simdbpe.Tokenizer.from_file("gpt2").encode_ordinary_batch_to_buffer(
                        texts, num_threads=threads), 1))
                tb.append(median_time(
                    lambda: enc.encode_ordinary_batch_to_buffer(texts, num_threads=threads), 1))
                tl.append(median_time(
                    lambda: enc.encode_ordinary_batch(texts, num_threads=threads), 1))
                tc.append(median_time(lambda: subprocess.run(cmd, check=True), 1))
                tf.append(median_time(files_run, 1))
            for name, ts in (("python-buffer", tb), ("python-cold", tcold),
                             ("python-lists", tl), ("encode-files", tf), ("cli", tc)):
                rows.append((name, threads, statistics.median(ts)))
        peers = [p for p in a.peers.split(",") if p]
        if peers and shutil.which("node") and os.path.isdir(os.path.join(ROOT, "bench",
                                                                          "node_modules")):
            files = []
            for i, t in enumerate(texts):
                p = os.path.join(tmp, f"d{i}.txt")
                with open(p, "w", encoding="utf-8") as f:
                    f.write(t)
                files.append(p)
            for peer in peers:
                # peers.mjs PEER ENCODING FILE...: one pass a process; the median of --runs.
                ts = []
                for _ in range(a.runs):
                    r = subprocess.run(["node", os.path.join(ROOT, "bench", "peers.mjs"), peer,
                                        "gpt2", *files], check=True, capture_output=True,
                                       text=True)
                    ts.append(json.loads(r.stdout)["seconds"])
                rows.append((peer + " (node)", 1, statistics.median(ts)))
        elif peers:
            print("peers skipped: node or bench/node_modules missing (npm ci in bench/)",
                  file=sys.stderr)
    finally:
        shutil.rmtree(tmp)

    print(f"| what | threads | seconds | MB/s |")
    print(f"|---|---:|---:|---:|")
    for name, threads, s in rows:
        print(f"| {name} | {threads} | {s:.3f} | {mb / s:.1f} |")
    for threads in sorted({t for n, t, _ in rows if n == "cli"}):
        c = next(s for n, t, s in rows if n == "cli" and t == threads)
        for name in ("python-buffer", "python-cold", "encode-files"):
            b = next(s for n, t, s in rows if n == name and t == threads)
            print(f"Python overhead, {threads} thread(s): {100 * (b / c - 1):+.1f}% "
                  f"({name} against the whole CLI process)")


if __name__ == "__main__":
    main()
