#!/usr/bin/env python3
"""gt_pass.py - one run of GigaToken's encoder (the peer's gtenc), for bench/run.sh and
bench/dataset.sh.

    gt_pass.py [--passes N] [--timeout S] [--check IDS.u32] GTENC TIKTOKEN_DIR MODEL LABEL FILE

Runs `GTENC TIKTOKEN_DIR/RANKS.tiktoken SCHEME FILE OUT N` as a fresh process (gpt2 or
r50k_base, cl100k_base, o200k_base: their .tiktoken rank files and GigaToken's split scheme).
gtenc builds a fresh tokenizer, reads all of FILE and encodes it as one document N times
(default 2) on one thread, timing each pass: the first starts with an empty cache of pieces,
the later ones reuse it. Prints a results line of bench/run.sh for each pass: LABEL,
"gigatoken" (pass 1) or "gigatoken-2nd" (pass 2; "gigatoken-3rd"...), bytes, tokens, the
pass's wall and thread CPU seconds, the load average when the process started and its peak
RSS in KB. With --check, the ids of the last pass are compared with IDS.u32 (simdbpe's, the
same file as one document) and a line LABEL, "ids", "equal" or "differ", what differs, is
printed. Exits 1 with a line LABEL, "gigatoken", "crashed", the reason if gtenc fails, panics
or runs past --timeout seconds.
"""
import json
import os
import sys
import tempfile

from cli_pass import Run

SCHEMES = {"gpt2": ("r50k_base", "r50k"), "r50k_base": ("r50k_base", "r50k"),
           "cl100k_base": ("cl100k_base", "cl100k"), "o200k_base": ("o200k_base", "o200k")}
PASS_NAMES = ["gigatoken", "gigatoken-2nd", "gigatoken-3rd"]


def first_difference(a_path, b_path):
    """None if the two u32 files are equal, else what differs."""
    na, nb = os.path.getsize(a_path), os.path.getsize(b_path)
    chunk = 1 << 24
    with open(a_path, "rb") as a, open(b_path, "rb") as b:
        off = 0
        while True:
            x, y = a.read(chunk), b.read(chunk)
            if x != y:
                i = next((i for i in range(0, min(len(x), len(y)), 4) if x[i:i + 4] != y[i:i + 4]),
                         min(len(x), len(y)))
                return (f"{nb // 4} ids against simdbpe's {na // 4}; first difference at id "
                        f"{(off + i) // 4}")
            if not x:
                return None
            off += len(x)


def main():
    args = sys.argv[1:]
    passes, timeout, check = 2, None, None
    while args and args[0].startswith("--"):
        opt, val, args = args[0], args[1], args[2:]
        if opt == "--passes":
            passes = int(val)
        elif opt == "--timeout":
            timeout = float(val)
        elif opt == "--check":
            check = val
        else:
            sys.exit(f"gt_pass.py: unknown option {opt}")
    if len(args) != 5 or not 1 <= passes <= len(PASS_NAMES):
        sys.exit(__doc__)
    gtenc, tiktoken_dir, model, label, path = args
    if model not in SCHEMES:
        sys.exit(f"gt_pass.py: no GigaToken scheme for model '{model}' "
                 f"(it runs {', '.join(SCHEMES)})")
    ranks, scheme = SCHEMES[model]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(check or path))) as d:
        out = os.path.join(d, "ids.u32") if check else "-"
        run = Run([gtenc, os.path.join(tiktoken_dir, ranks + ".tiktoken"), scheme, path, out,
                   str(passes)], timeout)
        if run.status != 0:
            if run.status is None:
                why = f"no result within {timeout:g} s (killed)"
            else:
                msg = run.stderr.decode(errors="replace").strip().splitlines()
                why = next((l for l in msg if "panic" in l or "error" in l.lower()),
                           msg[0] if msg else f"exit status {run.status}")[:100]
            print(f"{label}\tgigatoken\tcrashed\t{why}")
            sys.exit(1)
        r = json.loads(run.stdout)
        for name, sec, cpu in zip(PASS_NAMES, r["seconds"], r["cpu_seconds"]):
            print(run.line(label, name, r["bytes"], r["tokens"], sec, cpu))
        if check:
            diff = first_difference(check, out)
            print(f"{label}\tids\t{'differ' if diff else 'equal'}\t{diff or ''}")


if __name__ == "__main__":
    main()
