"""tiktoken's interface: Encoding, get_encoding, encoding_for_model.

Every call of tiktoken 0.14's Encoding has the same name, arguments,
defaults, results and exceptions here; the *_to_buffer calls are simdbpe's
own (ids without one Python int per token)."""
import base64
import operator
import re
import threading

from . import _models
from ._simdbpe import Error, TokenIdError, ids_buffer
from ._simdbpe import model_from_image, model_from_tiktoken

# Library options (simdbpe.h): special-token policy and UTF-8 policy.
TEXT, ALLOW, ERROR = 0, 1, 2
STRICT, REPLACE = 0, 1
ADDED_SPECIAL, ADDED_NORMALIZED, ADDED_IN_VOCAB = 1, 2, 4  # simdbpe_model_special_flags

# Encodings tiktoken knows by name beyond the library's built-in ones: a
# built-in one's ranks with more special tokens (openai_public.py of
# tiktoken 0.14.0).
_DERIVED = {"p50k_edit": ("p50k_base", {"<|endoftext|>": 50256, "<|fim_prefix|>": 50281,
                                        "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283})}
_BUILT_IN = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


def fix_surrogates(text):
    """tiktoken's treatment of a str that UTF-8 cannot hold: lone surrogates
    become U+FFFD (and a surrogate pair the character it stands for)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _frozen(x):
    return x if isinstance(x, frozenset) else frozenset(x)


def disallowed_error(token, document=None, byte_offset=None):
    """tiktoken's ValueError for a disallowed special token, word for word
    (a simdbpe.Error, so also a ValueError)."""
    e = Error(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n")
    e.status, e.byte_offset, e.document, e.index = "ERR_SPECIAL_TOKEN", byte_offset, document, None
    return e


def _index(token):
    """A token id from an int or anything with __index__ (numpy integers):
    TypeError for anything else, OverflowError outside 0 .. 2**32-1, as
    tiktoken and HF tokenizers (their Rust bindings) raise them."""
    i = operator.index(token)
    if not 0 <= i <= 0xFFFFFFFF:
        raise OverflowError(f"{i} is not a token id (0 .. 2**32-1)")
    return i


def ranks_file(mergeable_ranks):
    """mergeable_ranks (bytes -> rank) as the text of a .tiktoken file."""
    b64 = base64.b64encode
    return b"".join(b64(bytes(t)) + b" %d\n" % _index(r) for t, r in mergeable_ranks.items())


class Encoding:
    """A tokenizer with tiktoken's Encoding interface over one simdbpe model.

    Encoding(name, pat_str=..., mergeable_ranks=..., special_tokens=...)
    builds one as tiktoken does; pat_str must be the pattern of one of the
    pre-tokenizers simdbpe implements (tiktoken's r50k_base/gpt2,
    cl100k_base and o200k_base patterns, or a tokenizer.json Split pattern
    of gpt2, cl100k/llama3, qwen2, o200k): another raises simdbpe.Error
    (status ERR_UNSUPPORTED) naming it. get_encoding(name) and
    Encoding.from_file(path) give the others."""

    def __init__(self, name, *, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab=None):
        specials = dict(special_tokens)
        model = model_from_tiktoken(ranks_file(mergeable_ranks), pat_str=pat_str,
                                    specials=[(t, _index(i)) for t, i in specials.items()])
        self._setup(model, name, ("ranks", None))
        self._pat_str = pat_str
        self._mergeable_ranks = mergeable_ranks
        self._special_tokens = specials
        if explicit_n_vocab:  # tiktoken's check
            if len(mergeable_ranks) + len(specials) != explicit_n_vocab or \
                    self.max_token_value != explicit_n_vocab - 1:
                raise AssertionError(
                    f"explicit_n_vocab {explicit_n_vocab}: {len(mergeable_ranks)} mergeable "
                    f"ranks + {len(specials)} special tokens, largest id "
                    f"{self.max_token_value}")

    @classmethod
    def from_file(cls, path):
        """An Encoding over any model file simdbpe opens (tokenizer.json,
        .tiktoken, .sbpe, a model directory; gzip or zstd compressed too)."""
        enc = cls.__new__(cls)
        enc._setup(_models.open_path(path), str(path), ("path", str(path)))
        return enc

    @classmethod
    def _over(cls, model, name, source):
        enc = cls.__new__(cls)
        enc._setup(model, name, source)
        return enc

    def _setup(self, model, name, source):
        self._model = model
        self.name = name
        self._source = source
        self._added = [(t.decode("utf-8", "surrogateescape"), i, f) for t, i, f in model.specials()]
        self._special_tokens = {t: i for t, i, f in self._added if f & ADDED_SPECIAL}
        self._special_token_values = frozenset(self._special_tokens.values())
        self.special_tokens_set = frozenset(self._special_tokens)
        self.max_token_value = model.vocab_size() - 1
        self._regex_cache = {}
        self._lookup = None  # bytes -> id, made on first use
        self._ranks = None

    def __repr__(self):
        return f"<Encoding {self.name!r}>"

    @property
    def n_vocab(self):
        """For backwards compatibility (tiktoken): max_token_value + 1."""
        return self.max_token_value + 1

    @property
    def eot_token(self):
        """The id of <|endoftext|>; KeyError if the model has none (as
        tiktoken). simdbpe.Tokenizer and encode_files use a model's own end
        of text when it has no <|endoftext|> (e.g. Llama-3's
        <|end_of_text|>)."""
        return self._special_tokens["<|endoftext|>"]

    @property
    def end_of_text_token(self):
        """The id a dataset puts between documents (simdbpe's, not tiktoken's):
        <|endoftext|>, else the model's EOS (its post-processor's, or
        <|end_of_text|>, </s>, ...), as encode_files and `simdbpe encode`
        take it; None if the model has none."""
        return self._model.eot()

    def __getattr__(self, name):
        # tiktoken's _pat_str and _mergeable_ranks, made on first use.
        if name.startswith("__") or "_model" not in self.__dict__:
            raise AttributeError(name)
        if name == "_pat_str":
            pat = self._model.pattern()
            if pat is None:
                raise AttributeError(f"{self!r} has no single pat_str: its pre-tokenizer "
                                     f"({self._model.pretokenizer()}) is several Splits")
            self._pat_str = pat
            return pat
        if name == "_mergeable_ranks":
            table = self._model.token_table()
            added = self._not_mergeable()
            self._mergeable_ranks = {b: i for i, b in enumerate(table)
                                     if b is not None and i not in added}
            return self._mergeable_ranks
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        """As tiktoken: a built-in encoding by its name, one built from ranks
        by its arguments; a model file by its path (opened again, once per
        process); anything else (a trained model in no file) by its
        compiled image."""
        kind, value = self._source
        if kind == "name":
            return self.name
        if kind == "ranks":
            return {"name": self.name, "pat_str": self._pat_str,
                    "mergeable_ranks": self._mergeable_ranks,
                    "special_tokens": self._special_tokens}
        if kind == "path":
            return {"name": self.name, "path": value}
        return {"name": self.name, "image": self._model.image()}

    def __setstate__(self, state):
        if isinstance(state, str):
            enc = get_encoding(state)
            self._setup(enc._model, enc.name, enc._source)
        elif "mergeable_ranks" in state:
            self.__init__(**state)
        elif "path" in state:
            self._setup(_models.open_path(state["path"]), state["name"], ("path", state["path"]))
        else:
            self._setup(model_from_image(state["image"]), state["name"], ("image", None))

    # ------------------------------------------------------------ encoding
    def _plan(self, allowed_special, disallowed_special):
        """(library special policy, or None for a subset of the specials, which
        is split in Python; allowed; disallowed)."""
        if allowed_special == "all":
            allowed = self.special_tokens_set
        else:
            allowed = _frozen(allowed_special) & self.special_tokens_set
        if disallowed_special == "all":
            disallowed = self.special_tokens_set - allowed
        else:
            disallowed = _frozen(disallowed_special)
        if not self.special_tokens_set or (not allowed and not disallowed):
            return TEXT, allowed, disallowed
        if allowed == self.special_tokens_set and not disallowed:
            return ALLOW, allowed, disallowed
        if not allowed and disallowed >= self.special_tokens_set:
            return ERROR, allowed, disallowed
        return None, allowed, disallowed

    def _regex(self, tokens, as_bytes):
        key = (tokens, as_bytes)
        r = self._regex_cache.get(key)
        if r is None:
            alts = sorted(tokens, key=len, reverse=True)
            if as_bytes:
                alts = [a.encode("utf-8", "surrogateescape") for a in alts]
                r = re.compile(b"|".join(map(re.escape, alts)))
            else:
                r = re.compile("|".join(map(re.escape, alts)))
            self._regex_cache[key] = r
        return r

    def _special_at(self, text, byte_offset):
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        for tok in sorted(self._special_tokens, key=len, reverse=True):
            if data.startswith(tok.encode("utf-8", "surrogateescape"), byte_offset):
                return tok
        return None

    def _call(self, fn, text, *args):
        try:
            return fn(text, *args)
        except UnicodeEncodeError:
            return fn(fix_surrogates(text), *args)
        except Error as e:
            if e.status == "ERR_SPECIAL_TOKEN":
                raise disallowed_error(self._special_at(text, e.byte_offset),
                                       byte_offset=e.byte_offset) from None
            raise

    def _general(self, text, allowed, disallowed):
        """Some of the specials allowed or disallowed: split in Python."""
        as_bytes = not isinstance(text, str)
        if as_bytes:
            text = bytes(text)
        if disallowed:
            m = self._regex(_frozen(disallowed), as_bytes).search(text)
            if m:
                g = m.group()
                raise disallowed_error(g.decode("utf-8", "surrogateescape") if as_bytes else g)
        if not as_bytes:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = fix_surrogates(text)
        ids = []
        pos = 0
        if allowed:
            for m in self._regex(_frozen(allowed), as_bytes).finditer(text):
                ids += self._model.encode(text[pos:m.start()], TEXT)
                g = m.group()
                ids.append(self._special_tokens[g.decode("utf-8", "surrogateescape")
                                                if as_bytes else g])
                pos = m.end()
        ids += self._model.encode(text[pos:], TEXT)
        return ids

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """Ids of `text` (str or bytes) as tiktoken's Encoding.encode gives them."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            return self._general(text, allowed, disallowed)
        return self._call(self._model.encode, text, mode)

    def encode_ordinary(self, text):
        """Ids of `text` with special tokens treated as ordinary text."""
        return self._call(self._model.encode, text, TEXT)

    def encode_to_buffer(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """As encode, but a simdbpe.Buffer of uint32 (buffer protocol) instead of a list."""
        mode, allowed, disallowed = self._plan(allowed_special, disallowed_special)
        if mode is None:
            return ids_buffer(self._general(text, allowed, disallowed))
        return self._call(self._model.encode, text, mode, STRICT, True)

    def encode_to_numpy(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """tiktoken's encode_to_numpy: a uint32 numpy array (needs numpy)."""
        import numpy as np
        return np.asarray(self.encode_to_buffer(text, allowed_special=allowed_special,
                                                disallowed_special=disallowed_special))

    def _batch(self, texts, mode, num_threads, buffer):
        texts = list(texts)
        try:
            return self._model.encode_batch(texts, mode, STRICT, num_threads, buffer)
        except UnicodeEncodeError:
            texts = [fix_surrogates(t) if isinstance(t, str) else t for t in texts]
            return self._batch(texts, mode, num_threads, buffer)
        except Error as e:
            if e.status == "ERR_SPECIAL_TOKEN":
                raise disallowed_error(self._special_at(texts[e.document], e.byte_offset),
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
        return self._batch(text, TEXT, num_threads, False)

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
        return self._batch(text, TEXT, num_threads, True)

    def encode_with_unstable(self, text, *, allowed_special=frozenset(),
                             disallowed_special="all"):
        """Not provided: tiktoken itself calls it unstable."""
        raise NotImplementedError("simdbpe has no encode_with_unstable (tiktoken calls it "
                                  "unstable); encode the text whole")

    def _not_mergeable(self):
        """The ids that are not BPE tokens: the special tokens, and the added
        tokens that are only their text (not in the BPE vocabulary)."""
        return {i for _, i, f in self._added if f & ADDED_SPECIAL or not f & ADDED_IN_VOCAB}

    def _bytes_to_id(self):
        if self._lookup is None:
            table = self._model.token_table()
            added = self._not_mergeable()
            lookup = {t.encode("utf-8", "surrogateescape"): i
                      for t, i in self._special_tokens.items()}
            # mergeable tokens win over special ones with the same bytes, as in tiktoken
            lookup.update((b, i) for i, b in enumerate(table) if b is not None and i not in added)
            self._lookup = lookup
        return self._lookup

    def encode_single_token(self, text_or_bytes):
        """The id of a text or bytes that is exactly one token (special or not,
        valid UTF-8 or not); KeyError (holding the bytes) if it is none."""
        key = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) \
            else bytes(text_or_bytes)
        try:
            return self._bytes_to_id()[key]
        except KeyError:
            raise KeyError(key) from None

    # ------------------------------------------------------------ decoding
    def decode_bytes(self, tokens):
        """The bytes of a sequence of ids (a list, or any uint32 buffer). An id
        that is no token raises simdbpe.TokenIdError, a KeyError (as tiktoken)
        that is also a simdbpe.Error with its position in `index`."""
        return self._model.decode_bytes(tokens)

    def decode(self, tokens, errors="replace"):
        """The text of a sequence of ids; invalid UTF-8 handled by `errors`."""
        return self._model.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token):
        """The bytes of one token; KeyError (simdbpe.TokenIdError) if it has none."""
        return self._model.token_bytes(token)

    def decode_tokens_bytes(self, tokens):
        """The bytes of each token."""
        return [self._model.token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens):
        """(text, offsets): the text and, for each token, the index in it of
        the first character that holds any of the token's bytes (as
        tiktoken). The bytes must be valid UTF-8 (UnicodeDecodeError)."""
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0  # characters started so far
        for b in parts:
            continues = b and 0x80 <= b[0] < 0xC0  # starts inside the previous character
            offsets.append(max(0, chars - 1) if continues else chars)
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch, *, errors="replace", num_threads=8):
        """decode for each sequence of ids (num_threads is accepted for
        tiktoken's signature; decoding is a copy per token)."""
        return [self.decode(t, errors=errors) for t in batch]

    def decode_bytes_batch(self, batch, *, num_threads=8):
        """decode_bytes for each sequence of ids."""
        return [self.decode_bytes(t) for t in batch]

    # ------------------------------------------------------- miscellaneous
    def token_byte_values(self):
        """The bytes of every token but the special ones, sorted (as tiktoken)."""
        return sorted(self._mergeable_ranks)

    def is_special_token(self, token):
        """Whether the id is one of the special tokens'."""
        return _index(token) in self._special_token_values


_cache = {}
_cache_lock = threading.Lock()


def get_encoding(encoding_name):
    """The named encoding, as tiktoken.get_encoding: gpt2 (= r50k_base),
    r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base. Other names
    raise ValueError; a model file opens with Encoding.from_file."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    with _cache_lock:
        enc = _cache.get(encoding_name)
        if enc is not None:
            return enc
        if encoding_name in _DERIVED:
            base_name, specials = _DERIVED[encoding_name]
            base = get_encoding_locked(base_name)
            model = model_from_tiktoken(ranks_file(base._mergeable_ranks),
                                        pat_str=base._pat_str, specials=list(specials.items()))
        else:
            if encoding_name not in _BUILT_IN:
                raise ValueError(f"Unknown encoding {encoding_name}.\nsimdbpe knows: "
                                 f"{', '.join(list_encoding_names())} (a model file opens with "
                                 "simdbpe.Encoding.from_file or simdbpe.Tokenizer.from_file)")
            model = _models.open_path(encoding_name)
        enc = _cache[encoding_name] = Encoding._over(model, encoding_name,
                                                     ("name", encoding_name))
        return enc


def get_encoding_locked(name):
    """get_encoding with _cache_lock held (for the derived encodings)."""
    enc = _cache.get(name)
    if enc is None:
        enc = _cache[name] = Encoding._over(_models.open_path(name), name, ("name", name))
    return enc


def list_encoding_names():
    """The encodings get_encoding knows (tiktoken's, but o200k_harmony, whose
    special tokens give id 200018 two texts: simdbpe has one text an id)."""
    return ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]


# tiktoken 0.14.0's tiktoken/model.py: which encoding each OpenAI model uses.
MODEL_PREFIX_TO_ENCODING = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base", "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base", "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}

MODEL_TO_ENCODING = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base", "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base", "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base", "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base", "text-ada-001": "r50k_base",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base", "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}


def encoding_name_for_model(model_name):
    """The name of the encoding an OpenAI model uses (tiktoken's table);
    KeyError for a model it does not know."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                   "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you "
                   "expect.") from None


def encoding_for_model(model_name):
    """The encoding an OpenAI model uses (KeyError for an unknown model)."""
    return get_encoding(encoding_name_for_model(model_name))
