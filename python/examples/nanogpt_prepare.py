"""nanoGPT's train.bin from a JSON Lines corpus, the way nanoGPT's
data/openwebtext/prepare.py writes it: each document's
encode_ordinary ids, then <|endoftext|>, all documents concatenated as
uint16. The result is byte-identical to

    simdbpe encode --input-format jsonl --output-format u16 --eot append -o train.bin CORPUS

    python3 nanogpt_prepare.py corpus.jsonl[.gz|.zst] train.bin [--key text] [--batch 1024]

The corpus is read through simdbpe.open_input (plain, .gz or .zst, as the
command reads it). Documents are encoded a batch at a time
(encode_ordinary_batch_to_buffer: the GIL released, ids in one uint32
buffer) and appended to the file; the file appears under its final name
only when complete, and a failed run leaves none. The end-of-text id is
the model's (end_of_text_token: <|endoftext|>, else its EOS). Needs numpy.

This script shows the steps in Python, for corpora that need Python on the
way; when the files go in as they are, one call does the same in C (also
.zst input, threads, shards), writing the same bytes:

    simdbpe.encode_files(["corpus.jsonl"], "train.bin", input_format="jsonl", format="u16",
                         eot="append")
"""
import argparse
import json
import os

import numpy as np

import simdbpe


def documents(path, key):
    """The documents of a JSON Lines file, plain, .gz or .zst (read through the
    library's reader, as `simdbpe encode` reads it)."""
    with simdbpe.open_input(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)[key]


def encoding(name_or_path):
    """An encoding by name (gpt2, cl100k_base, ...) or any model file."""
    if os.path.exists(name_or_path):
        return simdbpe.Encoding.from_file(name_or_path)
    return simdbpe.get_encoding(name_or_path)


def replace_when_done(tmp, final, write):
    """Runs write(file) on tmp, then renames it to final; removes tmp if
    anything fails, so that no partial file is left."""
    try:
        with open(tmp, "wb") as out:
            write(out)
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_batch(out, enc, texts, threads):
    ids, offsets = enc.encode_ordinary_batch_to_buffer(texts, num_threads=threads)
    ids, offsets = np.asarray(ids), np.asarray(offsets).astype(np.int64)
    # Each document's ids followed by EOT: insert one EOT at every document end.
    with_eot = np.insert(ids, offsets[1:], enc.end_of_text_token).astype(np.uint16)
    out.write(with_eot.tobytes())
    return len(with_eot)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("output")
    ap.add_argument("--key", default="text")
    ap.add_argument("--batch", type=int, default=1024, help="documents per batch")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--encoding", default="gpt2")
    args = ap.parse_args()
    enc = encoding(args.encoding)
    if enc.n_vocab > 65536:
        raise SystemExit(f"{args.encoding} has {enc.n_vocab} ids: more than uint16 holds")
    total = 0

    def write(out):
        nonlocal total
        batch = []
        for text in documents(args.corpus, args.key):
            batch.append(text)
            if len(batch) == args.batch:
                total += write_batch(out, enc, batch, args.threads)
                batch = []
        if batch:
            total += write_batch(out, enc, batch, args.threads)

    replace_when_done(args.output + ".tmp", args.output, write)
    print(f"{args.output}: {total} tokens")


if __name__ == "__main__":
    main()
