"""Opening models: by name, by path (once per process while the file is
unchanged, so that unpickling an Encoding in every task of a
multiprocessing pool does not load its file again), compressed model files
through the library's reader, and what a pickled Encoding or Tokenizer
carries to find its model again."""
import collections
import io
import os
import threading

from . import _simdbpe as _c

# Models opened from files, most recently used last: a worker that
# unpickles the same Encoding for every chunk of a pool's tasks opens its
# file once. A few are kept, so that opening many files does not keep
# them all.
_KEEP = 8
_lock = threading.Lock()
_opened = collections.OrderedDict()

_COMPRESSED = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")  # gzip, zstd
_SUFFIXES = (".gz", ".zst")


def _identity(path):
    """What changes when the model a path names changes: the file's (or, for
    a directory, its model files') real path, size and modification time."""
    real = os.path.realpath(path)
    if os.path.isdir(real):
        names = [os.path.join(real, f) for f in
                 ("tokenizer.json", "vocab.json", "merges.txt", "special_tokens")]
    else:
        names = [real]
    key = [real]
    for n in names:
        try:
            st = os.stat(n)
            key.append((n, st.st_size, st.st_mtime_ns))
        except OSError:
            key.append((n, None))
    return tuple(key)


def read_input(path):
    """The whole contents of a file as the dataset engine reads it (gzip and
    zstd decompressed)."""
    with open_input(path) as f:
        return f.read()


def _is_compressed(path):
    try:
        with open(path, "rb") as f:
            return f.read(4).startswith(_COMPRESSED)
    except OSError:
        return False


def _open_uncached(path):
    if os.path.isfile(path) and _is_compressed(path):
        name = path
        for s in _SUFFIXES:
            if name.endswith(s):
                name = name[:-len(s)]
        return _c.model_from_buffer(read_input(path), name=name)
    return _c.Model(path)


def locate(path):
    """The path the library reads for a model name or path (str): the path
    itself if it exists, ORG/NAME[@REVISION]'s tokenizer.json in the local
    Hugging Face cache, or the name of a built-in model; simdbpe.Error (where
    it looked) for anything else."""
    if path is None or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"a model name or path is a str, bytes or os.PathLike, "
                        f"not {type(path).__name__}")
    path = os.fsdecode(os.fspath(path))
    if os.path.exists(path):
        return path
    return _c.locate(path) or path


def open_path(path):
    """A Model over a name simdbpe_model_open knows or a path (a model file,
    plain or gzip/zstd compressed, or a directory; ORG/NAME in the Hugging
    Face cache)."""
    path = locate(path)
    if not os.path.exists(path):
        return _c.Model(path)  # a built-in name
    key = _identity(path)
    with _lock:
        model = _opened.get(key)
        if model is not None:
            _opened.move_to_end(key)
            return model
    model = _open_uncached(path)
    with _lock:
        _opened[key] = model
        while len(_opened) > _KEEP:
            _opened.popitem(last=False)
    return model


class _Raw(io.RawIOBase):
    """The library's reader (simdbpe_dataset_input) as a raw Python stream."""

    def __init__(self, path):
        super().__init__()
        self._in = _c.Input(path)
        self.name = os.fsdecode(path)

    def readable(self):
        return True

    def readinto(self, b):
        return self._in.readinto(b)

    def close(self):
        if not self.closed:
            self._in.close()
        super().close()


def open_input(path, mode="rb", *, encoding="utf-8", errors="strict", newline=None):
    """Opens a file as `simdbpe encode` reads its inputs: plain, gzip or zstd
    (told by their first bytes, decompressed as a stream by the library),
    "-" for standard input. mode "rb" gives a binary file object, "rt" (or
    "r") a text one (`encoding`, `errors`, `newline` as for open()); a
    damaged compressed stream raises OSError naming the file."""
    if mode not in ("rb", "r", "rt"):
        raise ValueError(f"open_input: mode is 'rb', 'rt' or 'r', not {mode!r}")
    raw = _Raw(os.fspath(path))
    buffered = io.BufferedReader(raw, 1 << 16)
    if mode == "rb":
        return buffered
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline=newline)
