#!/usr/bin/env python3
"""gen_inputs.py - the inputs bench/run.sh times, written as one file per document.

    gen_inputs.py OUT_DIR [--corpus DIR] [--sample-mb MB | --full] [--adversarial-mb MB] [--whole]

Corpora (english, code, multilingual) come from DIR/NAME.txt.zst and DIR/NAME.index.tsv
(../shared/corpus by default); each document becomes OUT_DIR/NAME/NNNNN. With --sample-mb,
documents are taken evenly spread over the corpus (every k-th) until MB megabytes, so slow
peers finish; --full takes every document. A corpus that is missing is skipped with a line
saying so. --whole also writes OUT_DIR/whole/NAME: the same documents in one file, separated
by a newline as in the corpus (with --full, the corpus itself), for a peer that encodes one
file as one document (GigaToken's gtenc).

Adversarial inputs (OUT_DIR/adversarial/KIND, MB megabytes each, default 5), each one
pre-token: one_letter ("a" repeated), random_letters (a-z A-Z, no spaces), digits, spaces,
punctuation (ASCII symbols) and one_emoji (U+1F600 repeated). The random ones use a fixed seed.
"""
import argparse
import os
import random
import subprocess
import sys


def write_corpus(name, corpus_dir, out_dir, sample_mb, full, whole):
    zst = os.path.join(corpus_dir, name + ".txt.zst")
    index = os.path.join(corpus_dir, name + ".index.tsv")
    if not (os.path.exists(zst) and os.path.exists(index)):
        print(f"gen_inputs: {zst} not found: corpus {name} skipped", file=sys.stderr)
        return
    data = subprocess.run(["zstd", "-dc", zst], check=True, capture_output=True).stdout
    rows = [l.split("\t") for l in open(index, encoding="utf-8").read().splitlines()[1:]]
    docs = [(int(r[0]), int(r[1])) for r in rows]
    if not full:
        budget = int(sample_mb * 1e6)
        total = sum(n for _, n in docs)
        step = max(1, round(total / budget)) if budget < total else 1
        picked, size = [], 0
        for off, n in docs[::step]:
            if size >= budget:
                break
            picked.append((off, n))
            size += n
        docs = picked
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    for i, (off, n) in enumerate(docs):
        with open(os.path.join(d, f"{i:05d}"), "wb") as f:
            f.write(data[off:off + n])
    if whole:
        os.makedirs(os.path.join(out_dir, "whole"), exist_ok=True)
        with open(os.path.join(out_dir, "whole", name), "wb") as f:
            f.write(b"\n".join(data[off:off + n] for off, n in docs))


def write_adversarial(out_dir, mb):
    n = int(mb * 1e6)
    rng = random.Random(20241122)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    punct = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~"
    kinds = {
        "one_letter": b"a" * n,
        "random_letters": "".join(rng.choice(letters) for _ in range(n)).encode(),
        "digits": "".join(rng.choice("0123456789") for _ in range(n)).encode(),
        "spaces": b" " * n,
        "punctuation": "".join(rng.choice(punct) for _ in range(n)).encode(),
        "one_emoji": "\U0001F600".encode() * (n // 4),
    }
    d = os.path.join(out_dir, "adversarial")
    os.makedirs(d, exist_ok=True)
    for kind, data in kinds.items():
        with open(os.path.join(d, kind), "wb") as f:
            f.write(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--corpus", default=None)
    p.add_argument("--sample-mb", type=float, default=8)
    p.add_argument("--full", action="store_true")
    p.add_argument("--adversarial-mb", type=float, default=5)
    p.add_argument("--whole", action="store_true")
    a = p.parse_args()
    if a.corpus:
        for name in ("english", "code", "multilingual"):
            write_corpus(name, a.corpus, a.out, a.sample_mb, a.full, a.whole)
    write_adversarial(a.out, a.adversarial_mb)


if __name__ == "__main__":
    main()
