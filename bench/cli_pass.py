#!/usr/bin/env python3
"""cli_pass.py - one run of the command-line tool as a user runs it, for bench/run.sh.

    cli_pass.py [--threads N] [--keep] [--impl NAME] SIMDBPE MODEL LABEL OUT FILE...

Runs `SIMDBPE encode -m MODEL --output-format u32 -q -o OUT FILE...` as a fresh process
(it starts, opens the model, reads every file, encodes each as one document on one thread
(or N), writes little-endian u32 ids and renames OUT into place) and prints one results line
of bench/run.sh: LABEL, NAME (default "simdbpe-cli"), bytes of the files, tokens (OUT's size
/ 4), the wall seconds from start to exit, the process's user + system CPU seconds, the
1-minute load average when it started and its peak RSS in KB (the kernel's maxrss of the
process, as its summary's peak_rss_kb). OUT is removed, unless --keep (to compare its ids).
"""
import os
import subprocess
import sys
import tempfile
import threading
import time


class Run:
    """One child process, run to its end: status (None if killed at the timeout), wall and
    user + system CPU seconds, peak RSS in KB, the 1-minute load average when it started,
    its standard output and error."""

    def __init__(self, argv, timeout=None):
        with open("/proc/loadavg", encoding="ascii") as f:
            self.load = float(f.read().split()[0])
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t = time.monotonic()
            proc = subprocess.Popen(argv, stdout=out, stderr=err)
            self.killed = False

            def kill():
                self.killed = True
                proc.kill()

            timer = threading.Timer(timeout, kill) if timeout else None
            if timer:
                timer.start()
            _, status, usage = os.wait4(proc.pid, 0)
            self.wall = time.monotonic() - t
            if timer:
                timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
            self.status = None if self.killed else proc.returncode
            self.cpu = usage.ru_utime + usage.ru_stime
            self.rss_kb = usage.ru_maxrss
            out.seek(0)
            err.seek(0)
            self.stdout, self.stderr = out.read(), err.read()

    def line(self, label, impl, size, tokens, wall, cpu):
        """A results line of bench/run.sh."""
        return (f"{label}\t{impl}\t{size}\t{tokens}\t{wall:.6f}\t{cpu:.6f}\t{self.load:.2f}"
                f"\t{self.rss_kb}")


def main():
    args = sys.argv[1:]
    threads, keep, impl = "1", False, "simdbpe-cli"
    while args and args[0].startswith("--"):
        if args[0] == "--threads":
            threads, args = args[1], args[2:]
        elif args[0] == "--impl":
            impl, args = args[1], args[2:]
        elif args[0] == "--keep":
            keep, args = True, args[1:]
        else:
            sys.exit(f"cli_pass.py: unknown option {args[0]}")
    tool, model, label, out, files = args[0], args[1], args[2], args[3], args[4:]
    size = sum(os.path.getsize(f) for f in files)
    run = Run([tool, "encode", "-m", model, "--output-format", "u32", "--threads", threads,
                     "-q", "-o", out] + files)
    if run.status != 0:
        sys.exit(f"cli_pass.py: {tool} encode exited with status {run.status}: "
                 f"{run.stderr[:300].decode(errors='replace')}")
    tokens = os.path.getsize(out) // 4
    if not keep:
        os.remove(out)
    print(run.line(label, impl, size, tokens, run.wall, run.cpu))


if __name__ == "__main__":
    main()
