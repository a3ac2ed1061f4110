#!/usr/bin/python3
"""bench.py - end-to-end throughput of `simdbpe encode` on the public corpora
with 1 and 2 threads (and a peer), for bench/dataset/run.sh.

  bench.py SIMDBPE CORPUS_DIR OUT_DIR RUNS [--peer NODE_SCRIPT]

Every run is a whole `simdbpe encode` process: reading the compressed file,
zstd decompression, JSON parsing, encoding and writing the output included
(output on the same disk, under OUT_DIR, which is emptied before each run
outside the timing). Runs alternate between 1 and 2
threads so that both see the same machine load; the medians and the ratio of
medians are printed, with each run's wall and CPU seconds. MB/s counts the
decompressed input bytes (58.5 MB for mixed.jsonl.zst).

Inputs:
  mixed.jsonl.zst     --input-format jsonl --output-format u16 --eot append
  english.txt.zst     one 100 MB document (cut at safe pre-token boundaries
                      to be encoded in parallel) --output-format megatron
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

simdbpe, corpus, out_dir, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
peer = sys.argv[sys.argv.index("--peer") + 1] if "--peer" in sys.argv else None

CASES = [
    ("mixed.jsonl.zst", ["--input-format", "jsonl", "--output-format", "u16", "--eot", "append",
                         "-o", os.path.join(out_dir, "mixed.u16")]),
    ("english.txt.zst", ["--output-format", "megatron", "-o", os.path.join(out_dir, "english")]),
]


def timed(cmd):
    """Wall seconds, CPU seconds (user+sys of the child) and stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr.decode()))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stderr.decode()


def clear_outputs():
    """Removes the previous run's outputs before the next run is timed: a
    run that renames its result over an existing 40-100 MB file also pays
    for the kernel freeing the old file's pages (15 ms here), which a user
    encoding a dataset once never does."""
    for f in os.listdir(out_dir):
        path = os.path.join(out_dir, f)
        if os.path.isfile(path):
            os.unlink(path)


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


results = {}
for name, args in CASES:
    path = os.path.join(corpus, name)
    if not os.path.exists(path):
        print("# %s not found, skipped" % path)
        continue
    walls = {1: [], 2: []}
    cpus = {1: [], 2: []}
    in_bytes = None
    for r in range(runs):
        for threads in (1, 2) if r % 2 == 0 else (2, 1):
            clear_outputs()
            wall, cpu, err = timed([simdbpe, "encode", "--summary", "-", "--threads", str(threads)]
                                   + args + [path])
            summary = json.loads(err.strip().splitlines()[-1])
            in_bytes = summary["bytes"]
            walls[threads].append(wall)
            cpus[threads].append(cpu)
            print("#   %-16s threads %d  run %d  wall %6.3f s  cpu %6.3f s  load %s" %
                  (name, threads, r + 1, wall, cpu, load_average()))
            sys.stdout.flush()
    med = {t: statistics.median(walls[t]) for t in (1, 2)}
    best = {t: min(walls[t]) for t in (1, 2)}
    results[name] = (in_bytes, med, {t: statistics.median(cpus[t]) for t in (1, 2)}, best)

peer_result = None
if peer and os.path.exists(os.path.join(corpus, "mixed.jsonl.zst")):
    times = []
    for r in range(runs):
        clear_outputs()
        t0 = time.perf_counter()
        p = subprocess.run(["node", peer, os.path.join(corpus, "mixed.jsonl.zst"),
                            os.path.join(out_dir, "peer.u16")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            print("# peer failed: %s" % p.stderr.decode()[-500:])
            break
        times.append(wall)
        print("#   peer tiktoken-rs (node) mixed.jsonl.zst run %d wall %6.3f s  load %s" %
              (r + 1, wall, load_average()))
    if times:
        peer_result = statistics.median(times)

print()
print("| input | MB (decompressed) | 1 thread MB/s | 2 threads MB/s | 2t / 1t | best-of 2t / 1t |"
      " CPU s 1t / 2t |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, (b, med, cpu, best) in results.items():
    mb = b / 1e6
    print("| %s | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2f / %.2f |" %
          (name, mb, mb / med[1], mb / med[2], med[1] / med[2], best[1] / best[2], cpu[1],
           cpu[2]))
print("(MB/s and the first ratio from the medians of the wall times; best-of from the minimums;"
      " CPU = median user+sys seconds)")
if peer_result and "mixed.jsonl.zst" in results:
    b, med, _, _ = results["mixed.jsonl.zst"]
    print()
    print("peer (tiktoken-rs via node, 1 thread, same job: zstd -dc | JSON.parse | encode | u16 file):"
          " %.1f MB/s; simdbpe 1 thread / peer = %.1fx" % (b / 1e6 / peer_result, peer_result / med[1]))
