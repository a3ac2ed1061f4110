"""Megatron-LM's PREFIX.bin + PREFIX.idx from a JSON Lines corpus, as
Megatron's tools/preprocess_data.py writes them with --append-eod: each
document one sequence of its ids and the end-of-document id, an empty
document no sequence; ids as uint16 (dtype code 8) when the vocabulary has
fewer than 65,500 ids, else int32 (code 4). The files are byte-identical to

    simdbpe encode --input-format jsonl --output-format megatron -o PREFIX CORPUS

    python3 megatron_preprocess.py corpus.jsonl PREFIX [--key text] [--encoding gpt2]

The index layout (megatron/core/datasets/indexed_dataset.py): b"MMIDIDX\\0\\0",
<Q version 1, <B dtype code, <Q sequence count S, <Q document count + 1,
then int32[S] lengths, int64[S] byte offsets, int64[documents + 1]
document indices. Needs numpy.

This script shows the steps in Python, for corpora that need Python on the
way; when the files go in as they are, one call does the same in C (also
.zst input, threads, shards), writing the same bytes:

    simdbpe.encode_files(["corpus.jsonl"], "PREFIX", input_format="jsonl",
                         format="megatron")
"""
import argparse
import gzip
import json
import os
import struct

import numpy as np

import simdbpe


def documents(path, key):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("prefix")
    ap.add_argument("--key", default="text")
    ap.add_argument("--batch", type=int, default=1024, help="documents per batch")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--encoding", default="gpt2")
    args = ap.parse_args()
    enc = simdbpe.get_encoding(args.encoding)
    eod = enc.eot_token
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

    bin_tmp, idx_tmp = args.prefix + ".bin.tmp", args.prefix + ".idx.tmp"
    with open(bin_tmp, "wb") as out:
        batch = []
        for text in documents(args.corpus, args.key):
            batch.append(text)
            if len(batch) == args.batch:
                flush(out, batch)
                batch = []
        if batch:
            flush(out, batch)
    lens = np.array(lengths, dtype=np.int32)
    pointers = np.zeros(len(lens), dtype=np.int64)
    if len(lens):
        pointers[1:] = np.cumsum(lens[:-1], dtype=np.int64) * np.dtype(dtype).itemsize
    with open(idx_tmp, "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, code, len(lens), len(doc_index)))
        f.write(lens.tobytes() + pointers.tobytes() + np.array(doc_index, np.int64).tobytes())
    os.replace(bin_tmp, args.prefix + ".bin")
    os.replace(idx_tmp, args.prefix + ".idx")
    print(f"{args.prefix}: {len(doc_index) - 1} documents, {int(lens.sum())} tokens")


if __name__ == "__main__":
    main()
