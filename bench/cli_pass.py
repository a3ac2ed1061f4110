#!/usr/bin/env python3
"""cli_pass.py - one run of the command-line tool as a user runs it, for bench/run.sh.

    cli_pass.py [--threads N] SIMDBPE MODEL LABEL OUT FILE...

Runs `SIMDBPE encode -m MODEL --output-format u32 -q -o OUT FILE...` as a fresh process
(it starts, opens the model, reads every file, encodes each as one document on one thread
(or N),
writes little-endian u32 ids and renames OUT into place) and prints one results line of
bench/run.sh: LABEL, "simdbpe-cli", bytes of the files, tokens (OUT's size / 4), the wall
seconds from start to exit and the process's user + system CPU seconds. OUT is removed.
"""
import os
import subprocess
import sys
import time

args = sys.argv[1:]
threads = "1"
if args[:1] == ["--threads"]:
    threads, args = args[1], args[2:]
tool, model, label, out, files = args[0], args[1], args[2], args[3], args[4:]
size = sum(os.path.getsize(f) for f in files)
t = time.monotonic()
proc = subprocess.Popen([tool, "encode", "-m", model, "--output-format", "u32", "--threads", threads,
                         "-q", "-o", out] + files)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.monotonic() - t
if status != 0:
    sys.exit(f"cli_pass.py: {tool} encode exited with status {status}")
tokens = os.path.getsize(out) // 4
os.remove(out)
print(f"{label}\tsimdbpe-cli\t{size}\t{tokens}\t{wall:.6f}\t{usage.ru_utime + usage.ru_stime:.6f}")
