"""simdbpe: exact, fast byte-level BPE tokenization, shaped like tiktoken.

    import simdbpe
    enc = simdbpe.get_encoding("gpt2")          # as tiktoken.get_encoding
    enc.encode("hello world")                    # [31373, 995]
    enc.encode_batch(texts, num_threads=4)       # list of id lists
    ids, offsets = enc.encode_batch_to_buffer(texts, num_threads=4)  # uint32 + offsets

Every method of tiktoken's Encoding that simdbpe can honour has the same
name, arguments, defaults and errors; the buffer methods add ids without
one Python int per token (numpy.asarray(buf) shares the memory). Encoding
runs in C with the GIL released, on encoders kept per calling thread, so
many Python threads can encode at once. Library failures raise
simdbpe.Error, a ValueError with `status`, `byte_offset`, `document` and
`index` attributes.

    tok = simdbpe.train(["corpus.txt"], vocab_size=32000, output="my-bpe")
    tok.encode("hello")                          # a Tokenizer over my-bpe/

    # a dataset to nanoGPT's train.bin, as `simdbpe encode` writes it
    simdbpe.encode_files(["a.jsonl.zst"], "train.bin", input_format="jsonl",
                         format="u16", eot="append")
"""
import gzip
import os
import re
import shutil
import tempfile
import threading

from . import _simdbpe
from ._simdbpe import Buffer, Error, Model, Trainer, ids_buffer, version

__all__ = ["Buffer", "Encoding", "EncodeError", "Error", "Tokenizer", "encode_files",
           "get_encoding", "list_encoding_names", "train", "version"]

EncodeError = Error

# Library options (simdbpe.h): special-token policy and UTF-8 policy.
_TEXT, _ALLOW, _ERROR = 0, 1, 2
_STRICT, _REPLACE = 0, 1

# Names tiktoken gives the same model. Other names go to simdbpe_model_open,
# which knows every model the library has.
_ALIASES = {"r50k_base": "gpt2"}


def _fix_surrogates(text):
    """tiktoken's treatment of str that UTF-8 cannot hold (lone surrogates)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _as_frozenset(x):
    return x if isinstance(x, frozenset) else frozenset(x)


def _disallowed_error(token, document=None, byte_offset=None):
    # tiktoken's message, word for word.
    e = Error(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n")
    e.status, e.byte_offset, e.document, e.index = "ERR_SPECIAL_TOKEN", byte_offset, document, None
    return e


class Encoding:
    """A tokenizer with tiktoken's Encoding interface over one simdbpe model."""

    def __init__(self, model, name):
        self._model = model
        self.name = name
        specials = model.specials()
        self._special_ids = {t.decode("utf-8", "surrogateescape"): i for t, i in specials}
        self.special_tokens_set = frozenset(self._special_ids)
        self.n_vocab = model.vocab_size()
        self.max_token_value = self.n_vocab - 1
        self.eot_token = self._special_ids.get("<|endoftext|>")
        self._regex_cache = {}

    def __repr__(self):
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------ encoding
    def _plan(self, allowed_special, disallowed_special):
        """(library special policy or None for the general path, allowed, disallowed)."""
        if allowed_special == "all":
            allowed = self.special_tokens_set
        else:
            allowed = _as_frozenset(allowed_special) & self.special_tokens_set
        if disallowed_special == "all":
            disallowed = self.special_tokens_set - allowed
        else:
            disallowed = _as_frozenset(disallowed_special)
        if not self.special_tokens_set or (not allowed and not disallowed):
            return _TEXT, allowed, disallowed
        if allowed == self.special_tokens_set and not disallowed:
            return _ALLOW, allowed, disallowed
        if not allowed and disallowed >= self.special_tokens_set:
            return _ERROR, allowed, disallowed
        return None, allowed, disallowed

    def _regex(self, tokens):
        r = self._regex_cache.get(tokens)
        if r is None:
            alts = sorted(tokens, key=len, reverse=True)
            r = self._regex_cache[tokens] = re.compile("|".join(map(re.escape, alts)))
        return r

    def _special_at(self, text, byte_offset):
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        for tok in sorted(self._special_ids, key=len, reverse=True):
            if data.startswith(tok.encode("utf-8", "surrogateescape"), byte_offset):
                return tok
        return None

    def _call(self, fn, text, *args):
        try:
            return fn(text, *args)
        except UnicodeEncodeError:
            return fn(_fix_surrogates(text), *args)
        except Error as e:
            if e.status == "ERR_SPECIAL_TOKEN":
                raise _disallowed_error(self._special_at(text, e.byte_offset),
                                        byte_offset=e.byte_offset) from None
            raise

    def _general(self, text, allowed, disallowed):
        """Subsets of the specials allowed or disallowed: split in Python."""
        s = text if isinstance(text, str) else bytes(text).decode("utf-8", "surrogateescape")
        if disallowed:
            m = self._regex(_as_frozenset(disallowed)).search(s)
            if m:
                raise _disallowed_error(m.group())
        ids = []
        pos = 0
        if allowed:
            for m in self._regex(_as_frozenset(allowed)).finditer(s):
                ids += self._encode_piece(s[pos:m.start()])
                ids.append(self._special_ids[m.group()])
                pos = m.end()
        ids += self._encode_piece(s[pos:])
        return ids

    def _encode_piece(self, s):
        if isinstance(s, str):
            try:
                return self._model.encode(s, _TEXT)
            except UnicodeEncodeError:
                # surrogateescape'd bytes input: back to the original bytes.
                return self._model.encode(s.encode("utf-8", "surrogateescape"), _TEXT)
        return self._model.encode(s, _TEXT)

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """Ids of `text` (str or bytes) as tiktoken's Encoding.encode gives them."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            return self._general(text, allowed, disallowed)
        return self._call(self._model.encode, text, mode)

    def encode_ordinary(self, text):
        """Ids of `text` with special tokens treated as ordinary text."""
        return self._call(self._model.encode, text, _TEXT)

    def encode_to_buffer(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """As encode, but a simdbpe.Buffer of uint32 (buffer protocol) instead of a list."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            return ids_buffer(self._general(text, allowed, disallowed))
        return self._call(self._model.encode, text, mode, _STRICT, True)

    def encode_to_numpy(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """tiktoken's encode_to_numpy: a uint32 numpy array (needs numpy)."""
        import numpy as np
        return np.asarray(self.encode_to_buffer(text, allowed_special=allowed_special,
                                                disallowed_special=disallowed_special))

    def _batch(self, texts, mode, num_threads, buffer):
        texts = list(texts)
        try:
            return self._model.encode_batch(texts, mode, _STRICT, num_threads, buffer)
        except UnicodeEncodeError:
            texts = [_fix_surrogates(t) if isinstance(t, str) else t for t in texts]
            return self._batch(texts, mode, num_threads, buffer)
        except Error as e:
            if e.status == "ERR_SPECIAL_TOKEN":
                raise _disallowed_error(self._special_at(texts[e.document], e.byte_offset),
                                        document=e.document, byte_offset=e.byte_offset) from None
            raise

    def encode_batch(self, text, *, num_threads=8, allowed_special=frozenset(),
                     disallowed_special="all"):
        """encode for each text, on num_threads threads; a list of id lists."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            return [self._general(t, allowed, disallowed) for t in text]
        return self._batch(text, mode, num_threads, False)

    def encode_ordinary_batch(self, text, *, num_threads=8):
        """encode_ordinary for each text, on num_threads threads."""
        return self._batch(text, _TEXT, num_threads, False)

    def encode_batch_to_buffer(self, text, *, num_threads=8, allowed_special=frozenset(),
                               disallowed_special="all"):
        """(ids, offsets): every text's ids in one uint32 Buffer, text i's being
        ids[offsets[i]:offsets[i+1]]; offsets has len(text) + 1 entries."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            raise ValueError("encode_batch_to_buffer: allowed_special must be all of the "
                             "specials or none of them")
        return self._batch(text, mode, num_threads, True)

    def encode_ordinary_batch_to_buffer(self, text, *, num_threads=8):
        """encode_batch_to_buffer with special tokens as ordinary text."""
        return self._batch(text, _TEXT, num_threads, True)

    def encode_single_token(self, text_or_bytes):
        """The id of a text that is exactly one token (special or not)."""
        if isinstance(text_or_bytes, str) and text_or_bytes in self._special_ids:
            return self._special_ids[text_or_bytes]
        ids = self.encode_ordinary(text_or_bytes)
        if len(ids) != 1 or self._model.token_bytes(ids[0]) != _utf8(text_or_bytes):
            raise KeyError(text_or_bytes)
        return ids[0]

    # ------------------------------------------------------------ decoding
    def decode_bytes(self, tokens):
        """The bytes of a sequence of ids (a list, or any uint32 buffer)."""
        return self._model.decode_bytes(tokens)

    def decode(self, tokens, errors="replace"):
        """The text of a sequence of ids; invalid UTF-8 handled by `errors`."""
        return self._model.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token):
        return self._model.token_bytes(token)

    def decode_tokens_bytes(self, tokens):
        return [self._model.token_bytes(t) for t in tokens]


def _utf8(x):
    return x.encode("utf-8") if isinstance(x, str) else bytes(x)


class Tokenizer(Encoding):
    """An Encoding over any model simdbpe_model_open accepts."""

    @classmethod
    def from_file(cls, path):
        """A model directory (vocab.json + merges.txt [+ special_tokens]), a
        compiled .sbpe file, or whatever else simdbpe_model_open opens."""
        return cls(Model(str(path)), str(path))


_cache = {}
_cache_lock = threading.Lock()


def get_encoding(encoding_name):
    """The named encoding, as tiktoken.get_encoding; unknown names raise ValueError."""
    with _cache_lock:
        enc = _cache.get(encoding_name)
        if enc is None:
            lib_name = _ALIASES.get(encoding_name, encoding_name)
            if "/" in lib_name or lib_name.endswith(".sbpe"):
                raise ValueError(f"Unknown encoding {encoding_name!r} (for files use "
                                 "simdbpe.Tokenizer.from_file)")
            try:
                model = Model(lib_name)
            except Error as e:
                raise ValueError(f"Unknown encoding {encoding_name!r}: {e}") from None
            enc = _cache[encoding_name] = Encoding(model, encoding_name)
        return enc


def list_encoding_names():
    """The encodings built into the library (simdbpe_model_name_at): get_encoding takes each."""
    return ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


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
    "deepseek_v3"). special_tokens get the last ids. output: a directory
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
        return Tokenizer(Model(tmp), "trained")
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
_SPECIAL = {"text": _TEXT, "allow": _ALLOW, "error": _ERROR}
_UTF8 = {"strict": _STRICT, "replace": _REPLACE}


def _choice(what, value, table):
    if value not in table:
        names = ", ".join(repr(k) for k in table if k is not None)
        raise ValueError(f"unknown {what} {value!r} (one of {names})")
    return table[value]


def encode_files(paths, output, *, encoding="gpt2", format="u16", input_format="text",
                 json_key=None, doc_separator=None, eot=None, dtype=None, threads=0,
                 add_special_tokens=False, special="text", errors="strict", on_error="stop",
                 shard_tokens=None, batch_bytes=None, cache_mb=None, rank=None,
                 world_size=None, progress=None, on_message=None):
    """Encodes files into a token dataset, as `simdbpe encode` does (the same files, byte
    for byte), with the GIL released; returns the totals as a dict.

    paths: files (str, bytes or os.PathLike; "-" is standard input), plain, .gz or .zst.
    output: a file (text, u16, u32) or a prefix (llmc, megatron, datatrove).
    format: "text", "u16", "u32", "llmc", "megatron", "datatrove" (tools/DATASET.md has the
    layouts); input_format: "text" (a document per file, or per `doc_separator` bytes),
    "lines" or "jsonl" (the string at `json_key`, default "text"); eot: None (the
    format's default), "none", "append" or "prepend"; dtype: None, "u16" or "u32";
    threads: 0 for the CPUs this process may use; on_error "skip" drops bad documents
    (listed in the result's "skipped_documents"); rank and world_size make the run one
    shard (OUTPUT.RRRRR-of-WWWWW plus a .done marker).

    progress(raw_bytes, bytes, documents) is called after each batch written (compressed
    bytes read, bytes encoded and documents so far); on_message(kind, text) for each skipped
    document ("skipped") and each notice ("notice", e.g. temporary files of an interrupted
    run removed; the result's "notices" lists them too). An exception either raises stops
    the run and is raised; so does Ctrl-C. A run that stops leaves no output file.

    A failure raises simdbpe.Error with `status`, `path` and `index` (the input and its
    position in `paths`), `line` and `byte_offset` (None where they do not apply).
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    enc = encoding if isinstance(encoding, Encoding) else get_encoding(encoding)
    sep = doc_separator.encode("utf-8") if isinstance(doc_separator, str) else doc_separator
    sharded = rank is not None or world_size is not None
    if sharded and (rank is None or world_size is None):
        raise ValueError("rank and world_size go together")
    return enc._model.encode_files(
        [os.fsencode(p) for p in paths], os.fsencode(output),
        input_format=_choice("input_format", input_format, _INPUT_FORMATS), json_key=json_key,
        doc_separator=sep, special=_choice("special", special, _SPECIAL),
        errors=_choice("errors", errors, _UTF8), add_special_tokens=bool(add_special_tokens),
        skip_errors=bool(_choice("on_error", on_error, _ON_ERROR)),
        output_format=_choice("format", format, _OUTPUT_FORMATS),
        eot=_choice("eot", eot, _EOTS), dtype_bytes=_choice("dtype", dtype, _DTYPES),
        shard_tokens=shard_tokens or 0, model_name=enc.name,
        threads=threads, cache_mb=cache_mb or 0, batch_bytes=batch_bytes or 0,
        rank=rank or 0, world_size=world_size or 0, progress=progress, on_message=on_message)
