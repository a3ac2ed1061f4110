#!/usr/bin/python3
"""test_dask.py - sharded encoding on a real distributed engine, then merge.

A Dask `distributed` LocalCluster with 2 worker processes runs the 2 shards
of one job, one shard per worker: each worker process runs
`simdbpe encode` with RANK/WORLD_SIZE in its environment (the detection
torchrun-style launchers rely on), the other shard with --rank/--world-size.
Then `simdbpe merge` combines the parts, and the result must be
byte-identical to a single-process run over the same inputs, for Megatron
and raw u16 outputs. Also checked: the completion markers list every input
file exactly once across the ranks, a rerun of a finished rank does
nothing, SLURM/OpenMPI variables are honoured, and merge refuses an
incomplete set of parts.

Inputs are small files made from tests/data/golden (plain, .gz, .zst), so
the test stands alone.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset_util import *  # noqa: E402,F401,F403

WORLD = 2


def make_inputs(d):
    """7 JSON Lines files (uneven sizes, mixed compression) from the golden
    records; returns their paths in order."""
    recs = golden_records("stress.jsonl") + golden_records("edge.jsonl")[:700]
    paths, pos = [], 0
    for i, n in enumerate((40, 3, 200, 17, 120, 1, 300)):
        chunk = recs[pos:pos + n]
        pos += n
        data = b"".join(json.dumps({"id": k, "text": t}).encode() + b"\n" for k, (t, _) in
                        enumerate(chunk))
        path = os.path.join(d, "part%d.jsonl%s" % (i, ("", ".gz", ".zst")[i % 3]))
        if i % 3 == 1:
            data = gzip.compress(data)
        if i % 3 == 2:
            write_bytes(path[:-4], data)
            subprocess.run(["zstd", "-q", "-f", "--rm", path[:-4], "-o", path], check=True)
        else:
            write_bytes(path, data)
        paths.append(path)
    return paths, [ids for _, ids in recs[:pos]]


def shard_task(cli, rank, world, args, use_env):
    """Runs on a Dask worker process: one shard of the job."""
    import os as _os
    import subprocess as _sp
    env = dict(_os.environ)
    for k in ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
              "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "RANK", "WORLD_SIZE"):
        env.pop(k, None)
    if use_env:
        env["RANK"], env["WORLD_SIZE"] = str(rank), str(world)
        cmd = [cli] + args
    else:
        cmd = [cli] + args[:1] + ["--rank", str(rank), "--world-size", str(world)] + args[1:]
    p = _sp.run(cmd, env=env, stdout=_sp.PIPE, stderr=_sp.PIPE)
    return {"rank": rank, "pid": _os.getpid(), "rc": p.returncode,
            "stderr": p.stderr.decode("utf-8", "replace")}


def run_on_dask(jobs):
    """Runs shard_task(*job) for each job on a 2-process LocalCluster, one
    job per worker."""
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=WORLD, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        check(len(workers) == WORLD, "cluster has %d workers" % len(workers))
        futures = [client.submit(shard_task, *job, workers=[workers[i]], pure=False)
                   for i, job in enumerate(jobs)]
        return client.gather(futures)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def main_test():
    d = make_tmpdir("dataset-dask-")
    inputs, want = make_inputs(d)
    cli = cli_path()
    common = ["--input-format", "jsonl", "-q"]

    # The reference: one process, all files.
    run(["encode"] + common + ["--output-format", "megatron", "-o", os.path.join(d, "single")]
        + inputs)
    run(["encode"] + common + ["--output-format", "u16", "--eot", "append", "-o",
                               os.path.join(d, "single.u16")] + inputs)
    _, docs = read_megatron(os.path.join(d, "single"))
    check_against_ids(docs, want, "append", "single process")

    # The shards, one per Dask worker process.
    meg = ["encode"] + common + ["--output-format", "megatron", "-o", os.path.join(d, "sharded")] \
        + inputs
    raw = ["encode"] + common + ["--output-format", "u16", "--eot", "append", "-o",
                                 os.path.join(d, "sharded.u16")] + inputs
    results = run_on_dask([(cli, 0, WORLD, meg, True), (cli, 1, WORLD, meg, False)])
    results += run_on_dask([(cli, 0, WORLD, raw, False), (cli, 1, WORLD, raw, True)])
    for r in results:
        check(r["rc"] == 0, "rank %d failed: %s" % (r["rank"], r["stderr"]))
    check(results[0]["pid"] != results[1]["pid"], "both shards ran in the same process")

    # Markers: every input file exactly once, rank r holding files r, r+W, ...
    seen = []
    for rank in range(WORLD):
        with open(os.path.join(d, "sharded.%05d-of-%05d.done" % (rank, WORLD))) as f:
            m = json.load(f)
        check(m["rank"] == rank and m["world_size"] == WORLD and m["total_files"] == len(inputs),
              "marker %d: %s" % (rank, m))
        for f in m["files"]:
            check(f["index"] % WORLD == rank and f["path"] == inputs[f["index"]],
                  "rank %d has file %s" % (rank, f))
            seen.append(f["index"])
    check(sorted(seen) == list(range(len(inputs))), "files covered: %s" % sorted(seen))

    # Merge, then compare bytes with the single-process run.
    run(["merge", "-q", "--output-format", "megatron", "-o", os.path.join(d, "sharded")])
    for ext in (".bin", ".idx"):
        check(read_bytes(os.path.join(d, "sharded" + ext)) == read_bytes(os.path.join(d, "single" + ext)),
              "merged %s differs from the single-process run" % ext)
    parts = [os.path.join(d, "sharded.u16.%05d-of-%05d" % (r, WORLD)) for r in range(WORLD)]
    run(["merge", "-q", "--output-format", "u16", "-o", os.path.join(d, "merged.u16")] + parts[::-1])
    check(read_bytes(os.path.join(d, "merged.u16")) == read_bytes(os.path.join(d, "single.u16")),
          "merged u16 differs from the single-process run")

    # A rerun of a finished rank does nothing (its outputs stay as they were).
    part_bin = os.path.join(d, "sharded.%05d-of-%05d.bin" % (1, WORLD))
    before = os.stat(part_bin).st_mtime_ns
    _, err, _ = run([meg[0], "--rank", "1", "--world-size", str(WORLD)] + meg[1:]
                    [:-len(inputs)] + ["--summary", os.path.join(d, "s.json")] + inputs)
    check(os.stat(part_bin).st_mtime_ns == before, "a finished rank ran again")
    check(not os.path.exists(os.path.join(d, "s.json")), "a finished rank wrote a summary")

    # SLURM and OpenMPI variables name the rank too (same outputs).
    for env in ({"SLURM_PROCID": "1", "SLURM_NTASKS": "2"},
                {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"},
                {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1",
                 "SLURM_ARRAY_TASK_COUNT": "2"}):
        out = os.path.join(d, "env-%s" % sorted(env)[0])
        run(["encode"] + common + ["--output-format", "megatron", "-o", out] + inputs, env=env)
        check(read_bytes(out + ".00001-of-00002.bin") ==
              read_bytes(os.path.join(d, "sharded.00001-of-00002.bin")),
              "%s: rank 1 wrote something else" % env)

    # Merge refuses an incomplete set of parts.
    _, err, rc = run(["merge", "--output-format", "megatron", "-o", os.path.join(d, "bad"),
                      os.path.join(d, "sharded.00000-of-00002")], expect=None)
    check(rc == 1 and "2 ranks" in err, "merge of one part of two: %d %s" % (rc, err))
    check(not os.path.exists(os.path.join(d, "bad.bin")), "a failed merge left bad.bin")


if __name__ == "__main__":
    main([main_test])
