#!/usr/bin/env python3
"""report.py - the table of bench/run.sh from its results file.

    report.py RESULTS.tsv

Each line of RESULTS.tsv: input, implementation, bytes, tokens, wall seconds, CPU seconds,
or input, implementation, "crashed", message. The input is "MODEL NAME" (e.g. "gpt2 english").
Every implementation has a line for each round of run.sh on an input, in the order the rounds
ran. Prints a Markdown table of one pass over text not seen before (a fresh process each):
each implementation's MB/s, the median over the rounds; simdbpe's Mtokens/s; and the ratios
of simdbpe and of the whole `simdbpe encode` process (simdbpe-cli) to tiktoken-rs, each the
median of the ratios within a round (the two were timed seconds apart, so a slow stretch of a
shared machine lands on both), by wall clock and by CPU time. simdbpe-reencode, passes over
text the encoder has already encoded, is in columns of its own. Then the ratios round by
round. Token counts that differ between implementations on an input are reported: they are
all exact tokenizers of the same encoding, so a difference is a bug or a wrong setup.
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


def crashed(runs):
    return next((v for v in runs if v[0] == "crashed"), None)


def mbs(v, col=2):
    return int(v[0]) / float(v[col]) / 1e6 if float(v[col]) > 0 else None


def median_mbs(runs):
    return statistics.median(mbs(v) for v in runs)


def round_ratios(inp, impl, col):
    """impl / tiktoken-rs within each round (col 2 wall, 3 CPU), or [] if not comparable."""
    ours, peer = lines[inp].get(impl, []), lines[inp].get("tiktoken-rs", [])
    if not ours or len(ours) != len(peer) or crashed(ours) or crashed(peer):
        return []
    return [float(p[col]) / float(o[col]) * int(o[0]) / int(p[0]) for o, p in zip(ours, peer)
            if float(o[col]) > 0 and float(p[col]) > 0]


def ratio_cell(rr):
    return f"{statistics.median(rr):.1f}x" if rr else "-"


impls = ["simdbpe", "simdbpe-cli", "tiktoken-rs", "tiktoken", "hf"]
print("| model | input | MB | " + " | ".join(f"{i} MB/s" for i in impls) +
      " | simdbpe Mtok/s | simdbpe / tiktoken-rs | (CPU) | simdbpe-cli / tiktoken-rs | (CPU) |"
      " re-encode MB/s | re-encode / tiktoken-rs |")
print("|---|---|---:|" + "---:|" * len(impls) + "---:|---:|---:|---:|---:|---:|---:|")
mismatch = []
for inp, r in lines.items():
    model, _, name = inp.partition(" ")
    cells, mb, mtok, counts = [], "", "", {}
    for i in impls + ["simdbpe-reencode"]:
        runs = r.get(i)
        if runs is None:
            cells.append("-")
            continue
        bad = crashed(runs)
        if bad:
            cells.append("timeout" if "within" in (bad[1] if len(bad) > 1 else "") else "crashed")
            continue
        counts[i] = {(v[0], v[1]) for v in runs}
        mb = f"{int(runs[0][0]) / 1e6:.1f}"
        cells.append(f"{median_mbs(runs):.1f}")
        if i == "simdbpe":
            mtok = f"{statistics.median(int(v[1]) / float(v[2]) for v in runs) / 1e6:.1f}"
    if len(set().union(*counts.values())) > 1 if counts else False:
        mismatch.append((inp, counts))
    main, again = cells[:len(impls)], cells[len(impls)]
    print(f"| {model} | {name} | {mb} | " + " | ".join(main) + f" | {mtok} | "
          f"{ratio_cell(round_ratios(inp, 'simdbpe', 2))} | "
          f"{ratio_cell(round_ratios(inp, 'simdbpe', 3))} | "
          f"{ratio_cell(round_ratios(inp, 'simdbpe-cli', 2))} | "
          f"{ratio_cell(round_ratios(inp, 'simdbpe-cli', 3))} | {again} | "
          f"{ratio_cell(round_ratios(inp, 'simdbpe-reencode', 2))} |")

shown = False
for inp in lines:
    for impl in ("simdbpe", "simdbpe-cli"):
        rr = round_ratios(inp, impl, 2)
        if len(rr) < 2:
            continue
        if not shown:
            print()
            print("one pass / tiktoken-rs's one pass, round by round (wall clock; CPU time in brackets):")
            print()
            shown = True
        rc = round_ratios(inp, impl, 3)
        cells = [f"{x:5.1f}x" + (f" ({c:.1f}x)" if len(rc) == len(rr) else "")
                 for x, c in zip(rr, rc or rr)]
        print(f"{inp:<22} {impl:<12} " + "  ".join(cells) +
              f"   median {statistics.median(rr):.1f}x" +
              (f" ({statistics.median(rc):.1f}x)" if len(rc) == len(rr) else ""))
for inp, counts in mismatch:
    print()
    print(f"TOKEN COUNTS DIFFER on {inp}: " +
          "; ".join(f"{i} {sorted(int(t) for _, t in c)}" for i, c in counts.items()))
