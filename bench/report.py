#!/usr/bin/env python3
"""report.py - the table of bench/run.sh from its results file.

    report.py RESULTS.tsv

Each line of RESULTS.tsv: input, implementation, bytes, tokens, wall seconds, CPU seconds,
or input, implementation, "crashed", message. An implementation may have a line for each round
of run.sh on an input: its wall and CPU seconds are then the medians over the rounds (the
bytes and tokens must agree), and one crash makes it crashed. Prints a Markdown table: wall-clock
MB/s of each implementation, simdbpe's Mtokens/s, and simdbpe's speed ratio to tiktoken-rs and
HF on the same input, by wall clock and by CPU time (the CPU-time ratio is the steadier one on a
shared, loaded machine). Lines of implementation "simdbpe-cold" (one pass of a fresh encoder)
get a second table, with their ratios to the same tiktoken-rs run. Where simdbpe and
tiktoken-rs have several rounds on an input, their ratio in each round follows the table, with
its median: the ratio of the medians above can pair a fast simdbpe round with a slow peer one.
"""
import statistics
import sys
from collections import OrderedDict

lines = OrderedDict()
for line in open(sys.argv[1], encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    if len(f) < 3:
        continue
    lines.setdefault(f[0], OrderedDict()).setdefault(f[1], []).append(f[2:])


def combine(inp, impl, runs):
    """One row from the rounds' rows: a crash if any crashed, else the medians."""
    for v in runs:
        if v[0] == "crashed":
            return v
    if len({(v[0], v[1]) for v in runs}) != 1:
        sys.exit(f"report.py: {impl} on {inp}: the rounds disagree on bytes or tokens: {runs}")
    wall = statistics.median(float(v[2]) for v in runs)
    cpu = statistics.median(float(v[3]) for v in runs) if all(len(v) > 3 for v in runs) else 0
    return [runs[0][0], runs[0][1], f"{wall:.6f}", f"{cpu:.6f}"]


rows = OrderedDict(
    (inp, OrderedDict((impl, combine(inp, impl, runs)) for impl, runs in r.items()))
    for inp, r in lines.items())

impls = ["simdbpe", "tiktoken-rs", "tiktoken", "hf"]
print("| input | MB | " + " | ".join(f"{i} MB/s" for i in impls) +
      " | simdbpe Mtok/s | / tiktoken-rs | / tiktoken-rs (CPU) | / hf | / hf (CPU) |")
print("|---|---:|" + "---:|" * len(impls) + "---:|---:|---:|---:|---:|")
for inp, r in rows.items():
    mbs, cpu, mb, mtok = {}, {}, "", ""
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
            if len(v) > 3 and float(v[3]) > 0:
                cpu[i] = b / float(v[3]) / 1e6
            mb = f"{b / 1e6:.1f}"
            if i == "simdbpe":
                mtok = f"{t / s / 1e6:.1f}"
            cells.append(f"{mbs[i]:.1f}")
    def ratio(d, peer):
        return f"{d['simdbpe'] / d[peer]:.1f}x" if "simdbpe" in d and peer in d else "-"
    print(f"| {inp} | {mb} | " + " | ".join(cells) +
          f" | {mtok} | {ratio(mbs, 'tiktoken-rs')} | {ratio(cpu, 'tiktoken-rs')} | "
          f"{ratio(mbs, 'hf')} | {ratio(cpu, 'hf')} |")


def per_round(inp):
    """simdbpe / tiktoken-rs by wall clock in each round of inp, or [] (crashes, one round)."""
    ours, peer = lines[inp].get("simdbpe", []), lines[inp].get("tiktoken-rs", [])
    if len(ours) < 2 or len(ours) != len(peer) or any(v[0] == "crashed" for v in ours + peer):
        return []
    return [float(p[2]) / float(o[2]) for o, p in zip(ours, peer)]


rounds = [(inp, rr) for inp, rr in ((inp, per_round(inp)) for inp in rows) if rr]
if rounds:
    print()
    print("simdbpe / tiktoken-rs round by round (wall clock; a round times simdbpe, then the peers):")
    print()
    for inp, rr in rounds:
        print(f"{inp:<14} " + "  ".join(f"{x:5.1f}x" for x in rr) +
              f"   median {statistics.median(rr):.1f}x")

cold = [(inp, r) for inp, r in rows.items() if "simdbpe-cold" in r]
if cold:
    print()
    print("One pass of a fresh encoder (what a job that sees each text once gets; the runs above")
    print("reuse one encoder, whose tables remember pieces from the earlier runs): median of 3")
    print("processes by CPU time, against the same tiktoken-rs run.")
    print()
    print("| input | simdbpe cold MB/s | cold MB/s (CPU) | / tiktoken-rs | / tiktoken-rs (CPU) |")
    print("|---|---:|---:|---:|---:|")
    for inp, r in cold:
        v = r["simdbpe-cold"]
        b, s, c = int(v[0]), float(v[2]), float(v[3])
        wall, cpu = b / s / 1e6, b / c / 1e6
        peer = r.get("tiktoken-rs")
        if peer and peer[0] != "crashed":
            pw = int(peer[0]) / float(peer[2]) / 1e6
            pc = int(peer[0]) / float(peer[3]) / 1e6 if float(peer[3]) > 0 else 0
            rw = f"{wall / pw:.1f}x"
            rc = f"{cpu / pc:.1f}x" if pc else "-"
        else:
            rw = rc = "-"
        print(f"| {inp} | {wall:.1f} | {cpu:.1f} | {rw} | {rc} |")
