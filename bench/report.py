#!/usr/bin/env python3
"""report.py - the table of bench/run.sh from its results file.

    report.py RESULTS.tsv

Each line of RESULTS.tsv: input, implementation, bytes, tokens, seconds (medians), or
input, implementation, "crashed", message. Prints a Markdown table: MB/s, Mtokens/s and the
ratio to tiktoken-rs on the same input, then the ratio targets of issue 3.
"""
import sys
from collections import OrderedDict

rows = OrderedDict()
for line in open(sys.argv[1], encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    if len(f) < 3:
        continue
    rows.setdefault(f[0], OrderedDict())[f[1]] = f[2:]

impls = ["simdbpe", "tiktoken-rs", "tiktoken", "hf"]
print("| input | MB | " + " | ".join(f"{i} MB/s" for i in impls) +
      " | simdbpe Mtok/s | simdbpe / tiktoken-rs | simdbpe / hf |")
print("|---|---:|" + "---:|" * len(impls) + "---:|---:|---:|")
for inp, r in rows.items():
    mbs, mb, mtok = {}, "", ""
    cells = []
    for i in impls:
        v = r.get(i)
        if v is None:
            cells.append("-")
        elif v[0] == "crashed":
            cells.append("timeout" if "within" in (v[1] if len(v) > 1 else "") else "crashed")
        else:
            b, t, s = int(v[0]), int(v[1]), float(v[2])
            mbs[i] = b / s / 1e6
            mb = f"{b / 1e6:.1f}"
            if i == "simdbpe":
                mtok = f"{t / s / 1e6:.1f}"
            cells.append(f"{mbs[i]:.1f}")
    rt = f"{mbs['simdbpe'] / mbs['tiktoken-rs']:.1f}x" if "simdbpe" in mbs and "tiktoken-rs" in mbs else "-"
    rh = f"{mbs['simdbpe'] / mbs['hf']:.1f}x" if "simdbpe" in mbs and "hf" in mbs else "-"
    print(f"| {inp} | {mb} | " + " | ".join(cells) + f" | {mtok} | {rt} | {rh} |")
