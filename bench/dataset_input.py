#!/usr/bin/env python3
"""dataset_input.py - the input of bench/dataset.sh: over a gigabyte of text in one file.

    dataset_input.py OUT --tar LINUX.tar.xz [--corpus DIR]

Writes OUT: every C source and header (*.c, *.h) of the Linux source tarball, in the
tarball's order, then the public corpora DIR/{english,code,multilingual}.txt.zst
decompressed, each file followed by a newline. Files that are not valid UTF-8 are left out
(simdbpe refuses invalid UTF-8 by default; a byte-level peer would not) and counted. The
file is written as OUT.partial and renamed when complete. Prints what went in.
"""
import argparse
import os
import subprocess
import tarfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--tar", required=True)
    p.add_argument("--corpus")
    a = p.parse_args()
    partial = a.out + ".partial"
    n = size = skipped = 0
    with open(partial, "wb") as out:
        with tarfile.open(a.tar, "r|xz") as tar:
            for m in tar:
                if not m.isfile() or not m.name.endswith((".c", ".h")):
                    continue
                data = tar.extractfile(m).read()
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    skipped += 1
                    continue
                out.write(data + b"\n")
                n += 1
                size += len(data) + 1
        print(f"{os.path.basename(a.tar)}: {n} C files, {size / 1e6:.1f} MB"
              f" ({skipped} not UTF-8, left out)")
        for name in ("english", "code", "multilingual"):
            zst = os.path.join(a.corpus or "", name + ".txt.zst")
            if not a.corpus or not os.path.exists(zst):
                print(f"{zst}: not found, left out")
                continue
            data = subprocess.run(["zstd", "-dc", zst], check=True, capture_output=True).stdout
            out.write(data + b"\n")
            print(f"{name}: {len(data) / 1e6:.1f} MB")
    os.rename(partial, a.out)
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
