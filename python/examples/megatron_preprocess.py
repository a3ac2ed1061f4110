"""Megatron-LM's PREFIX.bin + PREFIX.idx from a JSON Lines corpus, as
Megatron's tools/preprocess_data.py writes them with --append-eod: each
document one sequence of its ids and the end-of-document id, an empty
document no sequence; ids as uint16 (dtype code 8) when the vocabulary has
fewer than 65,500 ids, else int32 (code 4). The files are byte-identical to

    simdbpe encode --input-format jsonl --output-format megatron -o PREFIX CORPUS

    python3 megatron_preprocess.py corpus.jsonl[.gz|.zst] PREFIX [--key text] [--encoding gpt2]

The index layout (megatron/core/datasets/indexed_dataset.py): b"MMIDIDX\\0\\0",
<Q version 1, <B dtype code, <Q sequence count S, <Q document count + 1,
then int32[S] lengths, int64[S] byte offsets, int64[documents + 1]
document indices. The corpus is read through simdbpe.open_input (plain,
.gz or .zst); the end-of-document id is the model's (end_of_text_token:
<|endoftext|>, else its EOS); a failed run leaves no file. Needs numpy.

This script shows the steps in Python, for corpora that need Python on the
way; when the files go in as they are, one call does the same in C (also
.zst input, threads, shards), writing the same bytes:

    simdbpe.encode_files(["corpus.jsonl"], "PREFIX", input_format="jsonl",
                         format="megatron")
"""
import argparse
import json
import os
import struct

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


def replace_when_done(files):
    """Runs write(file) on each (tmp, final, write) in turn, then renames every
    tmp to its final name; removes the tmps if anything fails, so that no
    partial output is left."""
    try:
        for tmp, _, write in files:
            with open(tmp, "wb") as out:
                write(out)
        for tmp, final, _ in files:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _, _ in files:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("prefix")
    ap.add_argument("--key", default="text")
    ap.add_argument("--batch", type=int, default=1024, help="documents per batch")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--encoding", default="gpt2")
    args = ap.parse_args()
    enc = encoding(args.encoding)
    eod = enc.end_of_text_token
    dtype, code = (np.uint16, 8) if enc.n_vocab < 65500 else (np.int32, 4)
    lengths, doc_index = [], [0]

    def flush(out, texts):
        ids, offsets = enc.encode_ordinary_batch_to_buffer(texts, num_threads=args.threads)
        ids, offsets = np.asarray(ids), np.asarray(offsets).astype(np.int64)
        sizes = np.diff(offsets)
        keep = sizes > 0  # an empty document: no sequence, no EOD
        ends = offsets[1:][keep]
        out.write(np.insert(ids, ends, eod).astype(dtype).tobytes())
        for n in sizes:
            if n:
                lengths.append(int(n) + 1)
            doc_index.append(len(lengths))

    def write_bin(out):
        batch = []
        for text in documents(args.corpus, args.key):
            batch.append(text)
            if len(batch) == args.batch:
                flush(out, batch)
                batch = []
        if batch:
            flush(out, batch)

    def write_idx(f):
        lens = np.array(lengths, dtype=np.int32)
        pointers = np.zeros(len(lens), dtype=np.int64)
        if len(lens):
            pointers[1:] = np.cumsum(lens[:-1], dtype=np.int64) * np.dtype(dtype).itemsize
        f.write(b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, code, len(lens), len(doc_index)))
        f.write(lens.tobytes() + pointers.tobytes() + np.array(doc_index, np.int64).tobytes())

    replace_when_done([(args.prefix + ".bin.tmp", args.prefix + ".bin", write_bin),
                       (args.prefix + ".idx.tmp", args.prefix + ".idx", write_idx)])
    lens = np.array(lengths, dtype=np.int64)
    print(f"{args.prefix}: {len(doc_index) - 1} documents, {int(lens.sum())} tokens")


if __name__ == "__main__":
    main()
