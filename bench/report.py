#!/usr/bin/env python3
"""report.py - the tables of bench/run.sh and bench/dataset.sh from their results files.

    report.py RESULTS.tsv [--gigatoken GT.tsv] [--cpu] [--svg CHART.svg [--title TEXT]]
    report.py --dataset RESULTS.tsv

Each line of a results file: input, implementation, bytes, tokens, wall seconds, CPU
seconds[, 1-minute load average at the start, peak RSS KB]; or input, implementation,
"crashed", message; or input, "ids", "equal" or "differ", what differs. The input is "MODEL
NAME" (e.g. "gpt2 english"). Every implementation has a line for each round on an input, in
the order the rounds ran, so the n-th lines of two implementations were timed seconds apart.

RESULTS.tsv (run.sh's documents, one file each) gives a Markdown table of one pass over text
not seen before (a fresh process each): each implementation's MB/s, the median over the
rounds; simdbpe's Mtokens/s; and the ratios of simdbpe and of the whole `simdbpe encode`
process (simdbpe-cli) to tiktoken-rs, each the median of the ratios within a round (a slow
stretch of a shared machine lands on both), by wall clock and by CPU time. simdbpe-reencode,
passes over text the encoder has already encoded, is in columns of its own. Then the ratios
round by round. Token counts that differ between implementations on an input are reported:
they are all exact tokenizers of the same encoding, so a difference is a bug or a wrong setup.

GT.tsv (each input as one file, one document) gives the table against GigaToken: simdbpe's
one pass against GigaToken's first pass (both a fresh tokenizer's, timed inside the process),
the whole `simdbpe encode` process against the same, simdbpe's re-encode against GigaToken's
second pass, ratios within rounds, whether the ids were equal in every round, peak RSS.
--svg draws the corpora's MB/s of both files, by CPU time, as a bar chart. --cpu: the MB/s
columns of both tables by CPU time too (a loaded machine stretches the wall clock of every
run; the ratios are given both ways).

--dataset: bench/dataset.sh's file, the `simdbpe encode` process on one thread and on two
(simdbpe-cli, simdbpe-cli-2) with peak RSS, one pass against re-encode, then the GigaToken
table of the same lines.
"""
import argparse
import statistics
from collections import OrderedDict

SPEED_COL = 2  # the MB/s columns of the run.sh tables: 2 wall clock, 3 CPU time (--cpu)


def read(path):
    lines = OrderedDict()
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3:
            lines.setdefault(f[0], OrderedDict()).setdefault(f[1], []).append(f[2:])
    return lines


def crashed(runs):
    return next((v for v in runs if v[0] == "crashed"), None)


def timed(runs):
    """The runs if they all have times, else None (missing or crashed)."""
    return None if not runs or crashed(runs) else runs


def mbs(v, col=2):
    return int(v[0]) / float(v[col]) / 1e6 if float(v[col]) > 0 else None


def median_mbs(runs, col=2):
    return statistics.median(mbs(v, col) for v in runs)


def speed_cell(runs, col=None):
    """Median MB/s (col 2 wall clock, 3 CPU time; default SPEED_COL), or why there is none."""
    col = SPEED_COL if col is None else col
    if runs is None:
        return "-"
    bad = crashed(runs)
    if bad:
        return "timeout" if "within" in (bad[1] if len(bad) > 1 else "") else "crashed"
    return f"{median_mbs(runs, col):.1f}"


def ratios(r, a, b, col):
    """a's speed / b's within each round (col 2 wall, 3 CPU), or [] if not comparable."""
    ours, peer = timed(r.get(a)), timed(r.get(b))
    if not ours or not peer or len(ours) != len(peer):
        return []
    return [float(p[col]) / float(o[col]) * int(o[0]) / int(p[0]) for o, p in zip(ours, peer)
            if float(o[col]) > 0 and float(p[col]) > 0]


def ratio_cell(rr, digits=1):
    return f"{statistics.median(rr):.{digits}f}x" if rr else "-"


def load_cell(r):
    loads = [float(v[4]) for runs in r.values() for v in runs if len(v) > 4 and v[0] != "crashed"
             and v[4] not in ("", "-")]
    return f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-"


def rss_cell(runs):
    kb = [int(v[5]) for v in timed(runs) or [] if len(v) > 5 and v[5].isdigit()]
    return f"{statistics.median(kb) / 1024:.0f}" if kb else "-"


MB_S = {2: "MB/s", 3: "CPU MB/s"}


def split(inp):
    model, _, name = inp.partition(" ")
    return model, name


def main_table(lines):
    impls = ["simdbpe", "simdbpe-cli", "tiktoken-rs", "tiktoken", "hf"]
    u = MB_S[SPEED_COL]
    print("| model | input | MB | " + " | ".join(f"{i} {u}" for i in impls) +
          " | simdbpe Mtok/s | simdbpe / tiktoken-rs | (CPU) | simdbpe-cli / tiktoken-rs | (CPU) |"
          f" re-encode {u} | re-encode / tiktoken-rs | load |")
    print("|---|---|---:|" + "---:|" * len(impls) + "---:|---:|---:|---:|---:|---:|---:|---|")
    mismatch = []
    for inp, r in lines.items():
        model, name = split(inp)
        counts = {i: {(v[0], v[1]) for v in runs} for i, runs in r.items() if timed(runs)}
        if len(set().union(*counts.values())) > 1 if counts else False:
            mismatch.append((inp, counts))
        some = next(iter(counts.values()), None)
        mb = f"{int(next(iter(some))[0]) / 1e6:.1f}" if some else ""
        ours = timed(r.get("simdbpe"))
        mtok = (f"{statistics.median(int(v[1]) / float(v[SPEED_COL]) for v in ours) / 1e6:.1f}"
                if ours else "")
        print(f"| {model} | {name} | {mb} | " + " | ".join(speed_cell(r.get(i)) for i in impls) +
              f" | {mtok} | "
              f"{ratio_cell(ratios(r, 'simdbpe', 'tiktoken-rs', 2))} | "
              f"{ratio_cell(ratios(r, 'simdbpe', 'tiktoken-rs', 3))} | "
              f"{ratio_cell(ratios(r, 'simdbpe-cli', 'tiktoken-rs', 2))} | "
              f"{ratio_cell(ratios(r, 'simdbpe-cli', 'tiktoken-rs', 3))} | "
              f"{speed_cell(r.get('simdbpe-reencode'))} | "
              f"{ratio_cell(ratios(r, 'simdbpe-reencode', 'tiktoken-rs', SPEED_COL))} | "
              f"{load_cell(r)} |")

    shown = False
    for inp, r in lines.items():
        for impl in ("simdbpe", "simdbpe-cli"):
            rr = ratios(r, impl, "tiktoken-rs", 2)
            if len(rr) < 2:
                continue
            if not shown:
                print()
                print("one pass / tiktoken-rs's one pass, round by round (wall clock; CPU time in "
                      "brackets):")
                print()
                shown = True
            rc = ratios(r, impl, "tiktoken-rs", 3)
            cells = [f"{x:5.1f}x" + (f" ({c:.1f}x)" if len(rc) == len(rr) else "")
                     for x, c in zip(rr, rc or rr)]
            print(f"{inp:<22} {impl:<12} " + "  ".join(cells) +
                  f"   median {statistics.median(rr):.1f}x" +
                  (f" ({statistics.median(rc):.1f}x)" if len(rc) == len(rr) else ""))
    report_mismatch(mismatch)


def report_mismatch(mismatch):
    for inp, counts in mismatch:
        print()
        print(f"TOKEN COUNTS DIFFER on {inp}: " +
              "; ".join(f"{i} {sorted(int(t) for _, t in c)}" for i, c in counts.items()))


def ids_cell(r):
    checks = r.get("ids", [])
    if not checks:
        return "-"
    bad = [c for c in checks if c[0] != "equal"]
    return f"equal ({len(checks)})" if not bad else f"**DIFFER** ({bad[0][1]})"


def gigatoken_table(lines, u="MB/s"):
    print(f"| model | input | MB | simdbpe one pass {u} | GigaToken 1st pass {u} | "
          f"one pass / GT 1st | (CPU) | `simdbpe encode` {u} | encode / GT 1st | (CPU) | "
          f"simdbpe re-encode {u} | GigaToken 2nd pass {u} | re-encode / GT 2nd | (CPU) | "
          "peak RSS MB encode / GT | ids | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    mismatch = []
    for inp, r in lines.items():
        model, name = split(inp)
        counts = {i: {(v[0], v[1]) for v in runs} for i, runs in r.items()
                  if i != "ids" and timed(runs)}
        if len(set().union(*counts.values())) > 1 if counts else False:
            mismatch.append((inp, counts))
        some = next(iter(counts.values()), None)
        mb = f"{int(next(iter(some))[0]) / 1e6:.1f}" if some else ""
        cli = "simdbpe-cli"
        print(f"| {model} | {name} | {mb} | {speed_cell(r.get('simdbpe'))} | "
              f"{speed_cell(r.get('gigatoken'))} | "
              f"{ratio_cell(ratios(r, 'simdbpe', 'gigatoken', 2), 2)} | "
              f"{ratio_cell(ratios(r, 'simdbpe', 'gigatoken', 3), 2)} | "
              f"{speed_cell(r.get(cli))} | {ratio_cell(ratios(r, cli, 'gigatoken', 2), 2)} | "
              f"{ratio_cell(ratios(r, cli, 'gigatoken', 3), 2)} | "
              f"{speed_cell(r.get('simdbpe-reencode'))} | {speed_cell(r.get('gigatoken-2nd'))} | "
              f"{ratio_cell(ratios(r, 'simdbpe-reencode', 'gigatoken-2nd', 2), 2)} | "
              f"{ratio_cell(ratios(r, 'simdbpe-reencode', 'gigatoken-2nd', 3), 2)} | "
              f"{rss_cell(r.get(cli))} / {rss_cell(r.get('gigatoken'))} | {ids_cell(r)} | "
              f"{load_cell(r)} |")
    report_mismatch(mismatch)


def dataset_table(lines):
    print("| model | MB | `simdbpe encode` 1 thread MB/s | (CPU) | peak RSS MB | 2 threads MB/s | "
          "peak RSS MB | 2 / 1 | one pass MB/s | (CPU) | re-encode MB/s | (CPU) | "
          "encode 1 thread / re-encode | (CPU) | one pass / re-encode | (CPU) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for inp, r in lines.items():
        model, _ = split(inp)
        one = timed(r.get("simdbpe-cli"))
        mb = f"{int(one[0][0]) / 1e6:.1f}" if one else ""
        cells = [speed_cell(r.get("simdbpe-cli"), 2), speed_cell(r.get("simdbpe-cli"), 3),
                 rss_cell(r.get("simdbpe-cli")), speed_cell(r.get("simdbpe-cli-2"), 2),
                 rss_cell(r.get("simdbpe-cli-2")),
                 ratio_cell(ratios(r, "simdbpe-cli-2", "simdbpe-cli", 2), 2),
                 speed_cell(r.get("simdbpe"), 2), speed_cell(r.get("simdbpe"), 3),
                 speed_cell(r.get("simdbpe-reencode"), 2),
                 speed_cell(r.get("simdbpe-reencode"), 3)]
        for a in ("simdbpe-cli", "simdbpe"):
            cells += [ratio_cell(ratios(r, a, "simdbpe-reencode", col), 2) for col in (2, 3)]
        print(f"| {model} | {mb} | " + " | ".join(cells) + f" | {load_cell(r)} |")


BARS = [  # (file, implementation, legend, colour)
    ("gt", "simdbpe", "simdbpe, one pass", "#1f5fa8"),
    ("gt", "simdbpe-cli", "simdbpe encode (whole process)", "#6f9fd8"),
    ("gt", "gigatoken", "GigaToken, first pass", "#c8501e"),
    ("gt", "simdbpe-reencode", "simdbpe, re-encode", "#1f8a4c"),
    ("gt", "gigatoken-2nd", "GigaToken, second pass", "#e8a33a"),
    ("main", "tiktoken-rs", "tiktoken-rs, one pass (per document)", "#8c8c8c"),
]
CORPORA = ("english", "code", "multilingual")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_chart(main, gt, path, title):
    """Grouped bars: one panel a model, one group a corpus, one bar an implementation; MB/s
    by CPU time (the process's, or the timed thread's for a pass inside a process), which a
    busy shared machine changes less than the wall clock."""
    models = list(OrderedDict.fromkeys(split(i)[0] for i in list(gt) + list(main)
                                       if split(i)[1] in CORPORA))
    files = {"gt": gt, "main": main}
    bars = [b for b in BARS if any(b[1] in r for r in files[b[0]].values())]
    value = {}
    for m in models:
        for c in CORPORA:
            for f, impl, _, _ in bars:
                runs = timed(files[f].get(f"{m} {c}", {}).get(impl))
                if runs:
                    value[m, c, impl] = median_mbs(runs, 3)
    if not value:
        return
    top = max(value.values())
    step = next(s for s in (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000) if top / s <= 8)
    top = (int(top / step) + 1) * step
    bw, gap, left, plot_h, head = 14, 18, 60, 260, 60
    group_w = len(bars) * bw + gap
    panel_w = len(CORPORA) * group_w + 30
    width = left + len(models) * panel_w + 20
    cols = 3 if width - left >= 900 else 2
    legend_h = 22 * ((len(bars) + cols - 1) // cols)
    height = head + plot_h + 60 + legend_h
    y0 = head + plot_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15" font-weight="bold">{esc(title[0])}</text>',
           f'<text x="{left}" y="42" fill="#444">{esc(title[1])}</text>']
    for k in range(0, top + 1, step):
        y = y0 - k / top * plot_h
        out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{k}</text>')
    out.append(f'<text transform="translate(16,{y0 - plot_h / 2:.0f}) rotate(-90)" '
               f'text-anchor="middle">MB per second of CPU time (one thread)</text>')
    for pi, m in enumerate(models):
        px = left + 15 + pi * panel_w
        out.append(f'<text x="{px + panel_w / 2 - 15:.0f}" y="{y0 + 38}" text-anchor="middle" '
                   f'font-weight="bold">{esc(m)}</text>')
        for ci, c in enumerate(CORPORA):
            gx = px + ci * group_w
            out.append(f'<text x="{gx + (group_w - gap) / 2:.0f}" y="{y0 + 18}" '
                       f'text-anchor="middle">{c}</text>')
            for bi, (_, impl, legend, colour) in enumerate(bars):
                v = value.get((m, c, impl))
                if v is None:
                    continue
                h = v / top * plot_h
                out.append(f'<rect x="{gx + bi * bw}" y="{y0 - h:.1f}" width="{bw - 2}" '
                           f'height="{h:.1f}" fill="{colour}"><title>{esc(m)} {c}, '
                           f'{esc(legend)}: {v:.0f} MB/s</title></rect>')
    out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y0}" y2="{y0}" stroke="#444"/>')
    for bi, (_, _, legend, colour) in enumerate(bars):
        lx = left + (bi % cols) * 300
        ly = y0 + 60 + (bi // cols) * 22
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{lx + 18}" y="{ly}">{esc(legend)}</text>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--gigatoken")
    p.add_argument("--dataset", action="store_true")
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--svg")
    p.add_argument("--title", default="simdbpe and its peers|")
    a = p.parse_args()
    global SPEED_COL
    SPEED_COL = 3 if a.cpu else 2
    lines = read(a.results)
    if a.dataset:
        dataset_table(lines)
        print()
        gigatoken_table(lines, MB_S[SPEED_COL])
        return
    main_table(lines)
    gt = read(a.gigatoken) if a.gigatoken else OrderedDict()
    if gt:
        print()
        print("Against GigaToken (each input as one file, one document; GT = GigaToken):")
        print()
        gigatoken_table(gt, MB_S[SPEED_COL])
    if a.svg:
        title, _, sub = a.title.partition("|")
        every = OrderedDict((f"{n} {inp} {i}", runs) for n, f in enumerate((lines, gt))
                            for inp, r in f.items() for i, runs in r.items())
        svg_chart(lines, gt, a.svg, (title, f"{sub}, load average {load_cell(every)}"))


if __name__ == "__main__":
    main()
