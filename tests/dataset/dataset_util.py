"""dataset_util.py - shared helpers of the dataset-encoding tests (tests/dataset/).

The readers here are written from the published layouts (see
../shared/REFERENCE.md and the sources named below), not from simdbpe's
writers, so they check the files the way the training tools would read them:

  nanoGPT / raw   bare little-endian u16 or u32 ids
  llm.c           dev/data/data_common.py: 256 int32 header (magic, version,
                  token count) + u16 (20240520, v1) or u32 (20240801, v7)
  Megatron-LM     megatron/core/datasets/indexed_dataset.py: .idx =
                  b"MMIDIDX\\x00\\x00", <Q version 1, <B dtype, <Q S, <Q D,
                  int32[S] lengths, int64[S] byte offsets, int64[D] doc indices
  datatrove       pipeline/tokens/tokenizer.py: .ds ids, .ds.index uint64
                  document ends, .ds.metadata "name|token_size\\ncount\\nhuman"

Expected ids come from the references only: the golden files produced by
tiktoken / HF tokenizers (tests/data/golden, ../shared/golden).
"""
import array
import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
GOLDEN_DIR = os.path.join(SOURCE_DIR, "tests", "data", "golden")
EOT = 50256
SKIP_LINE = "SIMDBPE DATASET CORPUS TESTS SKIPPED"
SKIP_CODE = 77


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def cli_path():
    path = os.environ.get("SIMDBPE_CLI")
    check(path and os.access(path, os.X_OK), "set SIMDBPE_CLI to the simdbpe binary")
    return path


def run(args, stdin=None, env=None, expect=0, timeout=600):
    """Runs simdbpe; returns (stdout bytes, stderr text). `expect` is the
    exit status wanted (None: any)."""
    full_env = dict(os.environ)
    for k in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_PROCID",
              "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
              "RANK", "WORLD_SIZE"):
        full_env.pop(k, None)  # a test decides about ranks itself
    if env:
        full_env.update(env)
    p = subprocess.run([cli_path()] + [str(a) for a in args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=full_env, timeout=timeout)
    err = p.stderr.decode("utf-8", "replace")
    if expect is not None:
        check(p.returncode == expect,
              "simdbpe %s: exit %d, wanted %d; stderr:\n%s"
              % (" ".join(map(str, args)), p.returncode, expect, err))
    return p.stdout, err, p.returncode


# ------------------------------------------------------------ references

def golden_records(name):
    """[(text, ids)] from a golden JSON Lines file in tests/data/golden."""
    out = []
    with open(os.path.join(GOLDEN_DIR, name), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "header" not in r:
                out.append((r["text"], r["ids"]))
    return out


def corpus_dirs():
    """(corpus dir, golden dir) like test_corpus.c finds them, or None."""
    env = os.environ.get("SIMDBPE_CORPUS_DIR")
    root = env if env else os.path.join(SOURCE_DIR, "..", "shared")
    if os.path.isdir(os.path.join(root, "corpus")):
        c, g = os.path.join(root, "corpus"), os.path.join(root, "golden")
    else:
        c, g = root, os.path.join(root, "..", "golden")
    if os.path.isfile(os.path.join(c, "mixed.jsonl.zst")) and \
            os.path.isfile(os.path.join(g, "mixed.tsv")):
        return c, g
    return None


def skip_without_corpus(what):
    d = corpus_dirs()
    if d is None:
        print("%s: %s needs mixed.jsonl.zst and golden/mixed.tsv (looked in %s; set "
              "SIMDBPE_CORPUS_DIR)" % (SKIP_LINE, what,
                                       os.environ.get("SIMDBPE_CORPUS_DIR")
                                       or "<project>/../shared"))
        sys.exit(SKIP_CODE)
    return d


def golden_tsv(path):
    """[(count, sha256 of u32le ids)] per document of a golden .tsv."""
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        ci, si = header.index("tokens"), header.index("sha256_u32le")
        for line in f:
            cols = line.rstrip("\n").split("\t")
            rows.append((int(cols[ci]), cols[si]))
    return rows


def sha_u32(ids):
    a = array.array("I", ids)
    if sys.byteorder != "little":
        a.byteswap()
    return hashlib.sha256(a.tobytes()).hexdigest()


def strip_eot(doc, eot):
    """The document's own ids, without the EOT the format added."""
    if eot == "append":
        check(len(doc) >= 1 and doc[-1] == EOT, "document does not end with EOT")
        return doc[:-1]
    if eot == "prepend":
        check(len(doc) >= 1 and doc[0] == EOT, "document does not start with EOT")
        return doc[1:]
    return doc


def check_against_tsv(docs, rows, eot, what):
    check(len(docs) == len(rows), "%s: %d documents, golden has %d" % (what, len(docs), len(rows)))
    for i, (doc, (count, sha)) in enumerate(zip(docs, rows)):
        own = strip_eot(doc, eot)
        check(len(own) == count and sha_u32(own) == sha,
              "%s: document %d: %d ids (golden %d) or sha256 differs" % (what, i, len(own), count))


def check_stream(stream, want, eot, what):
    """A raw id stream against per-document expectations, walking by the
    expected counts: `want` is [(count, sha)] (golden .tsv) or [ids]."""
    pos = 0
    extra = 0 if eot == "none" else 1
    for i, w in enumerate(want):
        count = w[0] if isinstance(w, tuple) else len(w)
        doc = stream[pos:pos + count + extra]
        check(len(doc) == count + extra, "%s: the stream ends inside document %d" % (what, i))
        own = strip_eot(doc, eot)
        if isinstance(w, tuple):
            check(sha_u32(own) == w[1], "%s: document %d: ids differ (sha256)" % (what, i))
        else:
            check(list(own) == list(w), "%s: document %d: ids differ" % (what, i))
        pos += count + extra
    check(pos == len(stream), "%s: %d ids after the last document" % (what, len(stream) - pos))


def check_against_ids(docs, want, eot, what):
    check(len(docs) == len(want), "%s: %d documents, expected %d" % (what, len(docs), len(want)))
    for i, (doc, ids) in enumerate(zip(docs, want)):
        own = strip_eot(doc, eot)
        check(list(own) == list(ids), "%s: document %d: ids differ:\n got  %s\n want %s"
              % (what, i, list(own)[:20], list(ids)[:20]))


# ------------------------------------------------------------ readers

def ids_from_bytes(data, width):
    check(len(data) % width == 0, "%d bytes is not a whole number of %d-byte ids" % (len(data), width))
    a = array.array("H" if width == 2 else "I")
    a.frombytes(data)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def split_stream(ids, eot, n_docs=None):
    """Documents of a raw stream with EOT separators (append or prepend)."""
    docs, cur = [], []
    ids = list(ids)
    if eot == "append":
        for t in ids:
            cur.append(t)
            if t == EOT:
                docs.append(cur)
                cur = []
        check(not cur, "stream does not end with EOT")
    elif eot == "prepend":
        for t in ids:
            if t == EOT and cur:
                docs.append(cur)
                cur = []
            cur.append(t)
        if cur:
            docs.append(cur)
    else:
        raise ValueError("split_stream needs EOT separators")
    return docs


def read_text(path):
    """Text output: one line of decimal ids per document."""
    with open(path) as f:
        data = f.read()
    check(data == "" or data.endswith("\n"), "text output does not end with a newline")
    return [array.array("I", map(int, line.split())) for line in data.split("\n")[:-1]]


def read_llmc(prefix, shard_tokens=None):
    """All shards PREFIX_{val,train}_NNNNNN.bin in order -> one id stream,
    checking names, headers and sizes."""
    names = sorted(glob.glob(prefix + "_val_*.bin") + glob.glob(prefix + "_train_*.bin"),
                   key=lambda p: int(p[-10:-4]))
    stream, width = [], None
    for i, name in enumerate(names):
        want = "%s_%s_%06d.bin" % (prefix, "val" if i == 0 else "train", i)
        check(name == want, "llm.c shard %d is named %s, expected %s" % (i, name, want))
        with open(name, "rb") as f:
            data = f.read()
        check(len(data) >= 1024, "%s: shorter than the header" % name)
        header = struct.unpack("<256i", data[:1024])
        magic, version, count = header[0], header[1], header[2]
        if magic == 20240520:
            check(version == 1, "%s: version %d" % (name, version))
            w = 2
        else:
            check(magic == 20240801 and version == 7, "%s: bad magic/version" % name)
            w = 4
        check(all(v == 0 for v in header[3:]), "%s: header words 3.. not zero" % name)
        check(width in (None, w), "shards disagree on the id width")
        width = w
        check(len(data) == 1024 + count * w, "%s: size %d != header count %d" % (name, len(data), count))
        if shard_tokens is not None and i < len(names) - 1:
            check(count == shard_tokens, "%s: %d tokens, shards hold %d" % (name, count, shard_tokens))
        stream.extend(ids_from_bytes(data[1024:], w))
    return stream, width, len(names)


MEGATRON_DTYPES = {1: ("B", 1), 2: ("b", 1), 3: ("h", 2), 4: ("i", 4), 5: ("q", 8), 8: ("H", 2)}


def read_megatron(prefix):
    """PREFIX.idx + PREFIX.bin -> (dtype code, [document ids]), checking the
    index against itself and the .bin size."""
    with open(prefix + ".idx", "rb") as f:
        idx = f.read()
    check(idx[:9] == b"MMIDIDX\x00\x00", "bad .idx magic")
    version, = struct.unpack_from("<Q", idx, 9)
    dtype, = struct.unpack_from("<B", idx, 17)
    S, D = struct.unpack_from("<QQ", idx, 18)
    check(version == 1, "idx version %d" % version)
    check(dtype in MEGATRON_DTYPES, "dtype code %d" % dtype)
    check(len(idx) == 34 + 4 * S + 8 * S + 8 * D, ".idx size %d does not match S=%d D=%d" % (len(idx), S, D))
    lens = struct.unpack_from("<%di" % S, idx, 34)
    ptrs = struct.unpack_from("<%dq" % S, idx, 34 + 4 * S)
    docidx = struct.unpack_from("<%dq" % D, idx, 34 + 12 * S)
    code, width = MEGATRON_DTYPES[dtype]
    with open(prefix + ".bin", "rb") as f:
        binary = f.read()
    check(len(binary) == sum(lens) * width, ".bin size does not match the lengths")
    check(docidx[0] == 0 and docidx[-1] == S, "document indices must run 0..S")
    pos = 0
    for i in range(S):
        check(ptrs[i] == pos, "sequence %d: offset %d, expected %d" % (i, ptrs[i], pos))
        pos += lens[i] * width
    seqs = []
    a = array.array(code)
    a.frombytes(binary)
    if sys.byteorder != "little":
        a.byteswap()
    for i in range(S):
        start = ptrs[i] // width
        seqs.append(a[start:start + lens[i]])
    docs = []
    for d in range(D - 1):
        doc = []
        for s in range(docidx[d], docidx[d + 1]):
            doc.extend(seqs[s])
        docs.append(doc)
    return dtype, docs


def read_datatrove(prefix):
    """PREFIX.ds + .ds.index + .ds.metadata -> (name, token_size, [documents])."""
    with open(prefix + ".ds.metadata") as f:
        meta = f.read()
    lines = meta.split("\n")
    check(len(lines) == 3, "metadata has %d lines: %r" % (len(lines), meta))
    name, size = lines[0].rsplit("|", 1)
    size = int(size)
    count = int(lines[1])
    with open(prefix + ".ds", "rb") as f:
        ids = ids_from_bytes(f.read(), size)
    check(len(ids) == count, "metadata count %d, .ds has %d ids" % (count, len(ids)))
    with open(prefix + ".ds.index", "rb") as f:
        raw = f.read()
    check(len(raw) % 8 == 0, ".ds.index size")
    ends = struct.unpack("<%dQ" % (len(raw) // 8), raw)
    docs, start = [], 0
    for e in ends:
        check(e >= start, "document ends go backwards")
        docs.append(ids[start:e])
        start = e
    check(start == len(ids), "the last document does not end at the end of .ds")
    return name, size, docs, lines[2]


def human_metric(count):
    """humanize.metric(count, "T") (3 significant digits), written from its
    documentation: '1.50 kT', '200 MT', '15.0 T'."""
    import math
    exp = int(math.floor(math.log10(count))) if count else 0
    bucket = exp // 3
    value = count / 10 ** (3 * bucket)
    digits = max(0, 2 - exp % 3)
    if round(value, digits) >= 1000:
        bucket += 1
        value = count / 10 ** (3 * bucket)
        digits = 2
    prefix = "kMGTPEZY"[bucket - 1] if bucket else ""
    return "%.*f %sT" % (digits, value, prefix)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


_tmpdirs = []


def make_tmpdir(prefix):
    """A scratch directory, removed when the tests pass (kept on failure)."""
    d = tempfile.mkdtemp(prefix=prefix)
    _tmpdirs.append(d)
    return d


def main(tests):
    """Runs test functions, printing each; exits 1 on the first failure."""
    for t in tests:
        name = t.__name__
        try:
            t()
        except Failure as e:
            print("FAIL %s: %s" % (name, e))
            print("(scratch files kept in %s)" % " ".join(_tmpdirs))
            sys.exit(1)
        print("ok   %s" % name)
        sys.stdout.flush()
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
