"""Dataset encoding and training from Python: encode_files (the engine under
`simdbpe encode`), train (under `simdbpe train`) and open_input (the
engine's reader as a Python file object)."""
import gzip
import os
import re
import shutil
import tempfile

from . import _models, _simdbpe
from ._encoding import ALLOW, ERROR, REPLACE, STRICT, TEXT, Encoding, get_encoding
from ._simdbpe import Error, Model, Trainer, expand_inputs
from ._tokenizer import Tokenizer

_FEED_BYTES = 1 << 22


def _located(e, where):
    """e with `where` in front of its message, and its attributes."""
    out = Error(f"{where}: {e}")
    for a in ("status", "byte_offset", "document", "index"):
        setattr(out, a, getattr(e, a, None))
    return out


def _feed_file(trainer, path):
    """Feeds one file as one stream: plain or gzip (by its first bytes)."""
    with open(path, "rb") as raw:
        head = raw.read(4)
        if head[:4] == b"\x28\xb5\x2f\xfd":
            raise ValueError(f"{os.fsdecode(path)}: zstd input: decompress it first, or train "
                             "with the command-line tool (`simdbpe train` reads .zst)")
        raw.seek(0)
        f = gzip.GzipFile(fileobj=raw) if head[:2] == b"\x1f\x8b" else raw
        try:
            while True:
                chunk = f.read(_FEED_BYTES)
                if not chunk:
                    break
                trainer.feed(chunk)
            trainer.end_stream()
        except Error as e:
            raise _located(e, os.fsdecode(path)) from None


def train(files=(), *, texts=None, output=None, vocab_size=30000, min_frequency=0,
          special_tokens=(), mode="lines", doc_separator=None, pre_tokenizer="gpt2",
          threads=0, errors="strict"):
    """Trains a byte-level BPE model, as `simdbpe train` does, and returns a
    Tokenizer over it.

    files: paths of text files (plain or gzip), each one stream; texts: an
    iterable of str or bytes, each one stream, after the files. mode
    "lines": every line is a document; "documents": every stream is one,
    or its parts between occurrences of doc_separator. pre_tokenizer: the
    family whose pieces the words are ("gpt2", "cl100k", "qwen2", "o200k",
    "deepseek_v3", "tekken", "kimi"). special_tokens get the last ids. output: a directory
    that receives vocab.json, merges.txt, tokenizer.json (and
    special_tokens), written atomically; without it the model lives in a
    temporary directory only while it is loaded. Counting and merging run
    in C on `threads` threads (0: every CPU) with the GIL released. Errors
    raise simdbpe.Error (invalid UTF-8: the file, `byte_offset` and, in
    `index`, the line)."""
    sep = doc_separator.encode("utf-8") if isinstance(doc_separator, str) else doc_separator
    trainer = Trainer(vocab_size, min_frequency, list(special_tokens), mode, sep,
                      pre_tokenizer, threads, errors)
    if isinstance(files, (str, bytes, os.PathLike)):
        files = [files]
    for path in files:
        _feed_file(trainer, path)
    for i, text in enumerate(texts or ()):
        try:
            trainer.feed(text)
            trainer.end_stream()
        except Error as e:
            raise _located(e, f"text {i}") from None
    trainer.train()
    if output is not None:
        trainer.save(output)
        return Tokenizer.from_file(os.fspath(output))
    tmp = tempfile.mkdtemp(prefix="simdbpe-train-")
    try:
        trainer.save(tmp)
        return Tokenizer(Model(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# The library's names of its values (simdbpe_dataset.h), indexed by value; eot None is
# the library's "default" (the format's).
_INPUT_FORMATS = {name: v for v, name in enumerate(_simdbpe.INPUT_FORMATS)}
_OUTPUT_FORMATS = {name: v for v, name in enumerate(_simdbpe.OUTPUT_FORMATS)}
_EOTS = {None: _simdbpe.EOTS.index("default")}
_EOTS.update((name, v) for v, name in enumerate(_simdbpe.EOTS) if name != "default")
_DTYPES = {None: 0, "u16": 2, "u32": 4}
_ON_ERROR = {"stop": 0, "skip": 1}
_SPECIAL = {"text": TEXT, "allow": ALLOW, "error": ERROR}
_UTF8 = {"strict": STRICT, "replace": REPLACE}


def _choice(what, value, table):
    if value not in table:
        names = ", ".join(repr(k) for k in table if k is not None)
        raise ValueError(f"unknown {what} {value!r} (one of {names})")
    return table[value]


# The library's option fields (its messages name them in backquotes,
# simdbpe_dataset.h) as encode_files' keywords spell them.
_KEYWORDS = {"output_format": "format", "dtype_bytes": "dtype", "skip_errors": 'on_error="skip"',
             "output": "output (the second argument)"}
_FIELD = re.compile(r"`([a-z_]+)`")


def _keywords(message):
    """A library message with its option fields as encode_files' keywords."""
    return _FIELD.sub(lambda m: _KEYWORDS.get(m.group(1), m.group(1)), message)


_IGNORED = ("the tokenizer.json sets truncation or padding; encode_files encodes whole "
            "documents and applies neither (simdbpe.Tokenizer's encode does)")


def _model_of(encoding):
    """(the Model, its name, whether its tokenizer.json sets truncation or
    padding) of encode_files' `encoding`: an Encoding, a Tokenizer, an
    encoding's name or a model file's path."""
    if isinstance(encoding, Encoding):
        return encoding._model, encoding.name, False
    if isinstance(encoding, Tokenizer):
        kind, value = encoding._source
        name = os.path.basename(value) if kind == "path" else "tokenizer"
        return encoding._model, name, encoding.truncation is not None or \
            encoding.padding is not None
    if isinstance(encoding, str) and not os.path.exists(encoding):
        enc = get_encoding(encoding)
        return enc._model, enc.name, False
    if isinstance(encoding, (str, bytes, os.PathLike)):
        tok = Tokenizer.from_file(encoding)
        path = os.fsdecode(os.fspath(encoding))
        return tok._model, os.path.basename(path.rstrip("/")), \
            tok.truncation is not None or tok.padding is not None
    raise TypeError(f"encoding is an Encoding, a Tokenizer, a name or a path, not "
                    f"{type(encoding).__name__}")


def _count(name, value, lo, hi, zero=None):
    """An int option in [lo, hi] (0 allowed when `zero` says what it means)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} is an int, not {type(value).__name__}")
    if value == 0 and zero:
        return 0
    if not lo <= value <= hi:
        where = f"from {lo} to {hi}" + (f", or 0 ({zero})" if zero else "")
        raise ValueError(f"{name}={value}: give a whole number {where}")
    return value


def encode_files(paths, output, *, encoding="gpt2", format="u16", input_format="text",
                 json_key=None, doc_separator=None, eot=None, eot_token=None, dtype=None,
                 threads=0, add_special_tokens=False, special="text", errors="strict",
                 on_error="stop", shard_tokens=None, batch_bytes=None, cache_mb=None, rank=None,
                 world_size=None, progress=None, on_message=None):
    """Encodes files into a token dataset, as `simdbpe encode` does (the same files, byte
    for byte), with the GIL released; returns the totals as a dict.

    paths: files (str, bytes or os.PathLike; "-" is standard input), plain, .gz or .zst;
    as the command takes them, a glob pattern ("data/*.jsonl.zst", its matches in sorted
    order) or "@LIST" (a file naming one input per line) stands for those files, and a
    pattern matching nothing is an error. encoding: a name (get_encoding's), the path of
    any model file simdbpe opens, an Encoding or a Tokenizer (the tokenizer.json's
    truncation and padding are not applied to whole documents: a notice says so).
    output: a file (text, u16, u32) or a prefix (llmc, megatron, datatrove).
    format: "text", "u16", "u32", "llmc", "megatron", "datatrove" (tools/DATASET.md has the
    layouts); input_format: "text" (a document per file, or per `doc_separator` bytes),
    "lines" or "jsonl" (the string at `json_key`, default "text"); eot: None (the
    format's default), "none", "append" or "prepend"; eot_token: the end-of-text token
    (its text or id; None: <|endoftext|>, else the model's EOS, e.g. Llama-3's
    <|end_of_text|>; the result's "eot_token" is the id used); dtype: None, "u16" or
    "u32"; threads: 1 to 1024, or 0 for the CPUs this process may use; on_error "skip"
    drops bad documents (listed in the result's "skipped_documents"); rank and
    world_size make the run one shard (OUTPUT.RRRRR-of-WWWWW plus a .done marker).

    progress(raw_bytes, bytes, documents) is called after each batch written (compressed
    bytes read, bytes encoded and documents so far); on_message(kind, text) for each skipped
    document ("skipped") and each notice ("notice", e.g. temporary files of an interrupted
    run removed; the result's "notices" lists them too). An exception either raises stops
    the run and is raised; so does Ctrl-C. A run that stops leaves no output file.

    A failure raises simdbpe.Error with `status`, `path` and `index` (the input and its
    position in the expanded paths), `line` and `byte_offset` (None where they do not
    apply).
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = expand_inputs([os.fsencode(p) for p in paths])
    model, model_name, ignored = _model_of(encoding)
    sep = doc_separator.encode("utf-8") if isinstance(doc_separator, str) else doc_separator
    sharded = rank is not None or world_size is not None
    if sharded and (rank is None or world_size is None):
        raise ValueError("rank and world_size go together")
    if eot_token is not None and not isinstance(eot_token, str):
        eot_token = str(_count("eot_token", eot_token, 0, 0xFFFFFFFF))
    notices = []

    def message(kind, text):
        text = _keywords(text)
        if kind == "notice":
            notices.append(text)
        if on_message is not None:
            on_message(kind, text)

    if ignored:
        message("notice", _IGNORED)
    try:
        totals = model.encode_files(
            paths, os.fsencode(output),
            input_format=_choice("input_format", input_format, _INPUT_FORMATS),
            json_key=json_key, doc_separator=sep, special=_choice("special", special, _SPECIAL),
            errors=_choice("errors", errors, _UTF8), add_special_tokens=bool(add_special_tokens),
            skip_errors=bool(_choice("on_error", on_error, _ON_ERROR)),
            output_format=_choice("format", format, _OUTPUT_FORMATS),
            eot=_choice("eot", eot, _EOTS), eot_token=eot_token,
            dtype_bytes=_choice("dtype", dtype, _DTYPES),
            shard_tokens=_count("shard_tokens", shard_tokens, 1, 2**31 - 1),
            model_name=model_name,
            threads=_count("threads", threads, 1, 1024, "the CPUs this process may use"),
            cache_mb=_count("cache_mb", cache_mb, 3, 96),
            batch_bytes=_count("batch_bytes", batch_bytes, 16, 1 << 30),
            rank=_count("rank", rank, 0, 10**6), world_size=_count("world_size", world_size, 1,
                                                                     10**6),
            progress=progress, on_message=message)
    except Error as e:
        raise _reworded(e) from None
    totals["notices"] = notices
    return totals


def _reworded(e):
    """An Error of encode_files with its message in encode_files' keywords."""
    out = Error(_keywords(str(e)))
    for a in ("status", "byte_offset", "document", "index", "path", "line"):
        setattr(out, a, getattr(e, a, None))
    return out
