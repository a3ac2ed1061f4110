"""HF tokenizers' interface: Tokenizer, the Encoding it returns (Encoded
here, tiktoken's Encoding being the other class of that name) and
AddedToken.

    tok = simdbpe.Tokenizer.from_file("tokenizer.json")   # as tokenizers.Tokenizer
    tok = simdbpe.Tokenizer.from_pretrained("Qwen/Qwen3-8B")  # the local HF cache only
    enc = tok.encode("Hello world")      # .ids .tokens .offsets .attention_mask ...
    tok.decode(enc.ids)                  # "Hello world"

The same ids, tokens, offsets (in characters) and masks as HF tokenizers
0.23 for the calls below, on every tokenizer.json simdbpe loads; the
tokenizer.json's truncation and padding are applied as HF applies them.
Not provided (they raise NotImplementedError): pairs of sequences,
pre-tokenized input, saving, training through this class (simdbpe.train
trains)."""
import json
import os

from . import _models
from ._encoding import (ADDED_IN_VOCAB, ADDED_NORMALIZED, ADDED_SPECIAL, ALLOW, STRICT, _index,
                        fix_surrogates)
from ._simdbpe import find_pretrained, model_from_buffer, model_from_image

# GPT-2's byte-level alphabet (the library's simdbpe__bytelevel_cp): the
# bytes that print stand for themselves, the 68 others in order for
# U+0100, U+0101, ... U+0143.
_PRINTS = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE]
_BYTE_CHAR = {}
for _b in range(256):
    _BYTE_CHAR[_b] = chr(_b) if _b in _PRINTS else chr(0x100 + len([c for c in range(_b)
                                                                    if c not in _PRINTS]))
_SPELL = str.maketrans({chr(b): c for b, c in _BYTE_CHAR.items()})
_CHAR_BYTE = {c: b for b, c in _BYTE_CHAR.items()}
# What HF's offsets trimming counts as a space: 'Ġ' (the spelling of
# 0x20) and White_Space (Rust's char::is_whitespace).
_TRIMMED = frozenset(_BYTE_CHAR[0x20] + "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002"
                     "\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f"
                     "\u205f\u3000")


def spell(b):
    """The byte-level spelling of token bytes (vocab.json's keys)."""
    return b.decode("latin-1").translate(_SPELL)


def unspell(s):
    """The bytes a byte-level spelling stands for, or None if a character is
    not in the alphabet."""
    try:
        return bytes(_CHAR_BYTE[c] for c in s)
    except KeyError:
        return None


class AddedToken:
    """A token to add (tokenizers.AddedToken). single_word, lstrip and rstrip
    are not supported (simdbpe refuses them in files as well)."""

    def __init__(self, content, single_word=False, lstrip=False, rstrip=False, normalized=None,
                 special=False):
        if not isinstance(content, str):
            raise TypeError(f"AddedToken content is a str, not {type(content).__name__}")
        if single_word or lstrip or rstrip:
            raise ValueError(f"AddedToken {content!r}: single_word, lstrip and rstrip are not "
                             "supported by simdbpe")
        self.content = content
        self.single_word = self.lstrip = self.rstrip = False
        self.special = bool(special)
        self._normalized = normalized

    @property
    def normalized(self):
        return (not self.special) if self._normalized is None else bool(self._normalized)

    def __repr__(self):
        return (f"AddedToken({self.content!r}, rstrip=False, lstrip=False, single_word=False, "
                f"normalized={self.normalized}, special={self.special})")

    def __str__(self):
        return self.content


class Encoded:
    """The result of Tokenizer.encode (tokenizers' Encoding): ids, type_ids,
    tokens, offsets (character offsets in the text, (0, 0) for the tokens
    the post-processor or padding add), attention_mask,
    special_tokens_mask, overflowing (the parts truncation cut off, each an
    Encoded), sequence_ids, n_sequences."""

    __slots__ = ("ids", "type_ids", "offsets", "attention_mask", "special_tokens_mask",
                 "overflowing", "word_ids", "_tokens", "_tok")

    def __init__(self, tok, ids, offsets, special, words, tokens=None):
        self._tok = tok
        self.ids = ids
        self.offsets = offsets
        self.special_tokens_mask = special
        self.word_ids = words
        self.type_ids = [0] * len(ids)
        self.attention_mask = [1] * len(ids)
        self.overflowing = []
        self._tokens = tokens

    @property
    def tokens(self):
        if self._tokens is None:
            self._tokens = [self._tok.id_to_token(i) for i in self.ids]
        return self._tokens

    @property
    def words(self):
        """word_ids (HF's older name): each token's pre-token (or added token)
        index in the text, None for the tokens the post-processor or padding
        add."""
        return self.word_ids

    @property
    def n_sequences(self):
        return 1

    @property
    def sequence_ids(self):
        return [None if s else 0 for s in self.special_tokens_mask]

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return (f"Encoding(num_tokens={len(self.ids)}, attributes=[ids, type_ids, tokens, "
                "offsets, attention_mask, special_tokens_mask, overflowing])")

    def _slice(self, a, b):
        out = Encoded(self._tok, self.ids[a:b], self.offsets[a:b], self.special_tokens_mask[a:b],
                      self.word_ids[a:b], None if self._tokens is None else self._tokens[a:b])
        out.type_ids = self.type_ids[a:b]
        out.attention_mask = self.attention_mask[a:b]
        return out

    def _truncate(self, max_len, stride, direction):
        """HF's Encoding.truncate: the first part stays, the others (each
        max_len long, `stride` tokens shared with the one before) go to
        overflowing."""
        n = len(self.ids)
        if max_len >= n:
            return self
        if max_len == 0:
            empty = Encoded(self._tok, [], [], [], [], [])
            empty.overflowing = [self]
            return empty
        if stride >= max_len:
            raise ValueError(f"truncation stride ({stride}) must be below max_length "
                             f"({max_len})")
        step = max_len - stride
        parts = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_len, n)
                parts.append((start, stop))
                if stop == n:
                    break
        else:
            for stop in range(n, 0, -step):
                start = max(0, stop - max_len)
                parts.append((start, stop))
                if start == 0:
                    break
        first = self._slice(*parts[0])
        first.overflowing = [self._slice(a, b) for a, b in parts[1:]]
        return first

    def _pad(self, length, pad_id, pad_type_id, pad_token, direction):
        for o in self.overflowing:
            o._pad(length, pad_id, pad_type_id, pad_token, direction)
        k = length - len(self.ids)
        if k <= 0:
            return
        tokens = self.tokens
        if direction == "left":
            self.ids = [pad_id] * k + self.ids
            self.type_ids = [pad_type_id] * k + self.type_ids
            self._tokens = [pad_token] * k + tokens
            self.attention_mask = [0] * k + self.attention_mask
            self.special_tokens_mask = [1] * k + self.special_tokens_mask
            self.offsets = [(0, 0)] * k + self.offsets
            self.word_ids = [None] * k + self.word_ids
        else:
            self.ids = self.ids + [pad_id] * k
            self.type_ids = self.type_ids + [pad_type_id] * k
            self._tokens = tokens + [pad_token] * k
            self.attention_mask = self.attention_mask + [0] * k
            self.special_tokens_mask = self.special_tokens_mask + [1] * k
            self.offsets = self.offsets + [(0, 0)] * k
            self.word_ids = self.word_ids + [None] * k


def _direction(value, what):
    v = str(value).lower()
    if v not in ("left", "right"):
        raise ValueError(f"{what} direction is 'left' or 'right', not {value!r}")
    return v


def _json_settings(tj):
    """What simdbpe.Tokenizer takes from a tokenizer.json besides the model:
    truncation, padding, the offsets trimming of a ByteLevel or
    RobertaProcessing post-processor, and the decoder's type."""
    out = {"truncation": None, "padding": None, "trim_offsets": False,
           "add_prefix_space": False, "decoder": "ByteLevel"}
    t = tj.get("truncation")
    if t:
        out["truncation"] = {"max_length": t.get("max_length", 512),
                             "stride": t.get("stride", 0),
                             "strategy": {"LongestFirst": "longest_first",
                                          "OnlyFirst": "only_first",
                                          "OnlySecond": "only_second"}.get(
                                              t.get("strategy", "LongestFirst"), "longest_first"),
                             "direction": _direction(t.get("direction", "Right"), "truncation")}
    p = tj.get("padding")
    if p:
        strategy = p.get("strategy", "BatchLongest")
        out["padding"] = {"length": strategy.get("Fixed") if isinstance(strategy, dict) else None,
                          "pad_to_multiple_of": p.get("pad_to_multiple_of"),
                          "pad_id": p.get("pad_id", 0), "pad_token": p.get("pad_token", "[PAD]"),
                          "pad_type_id": p.get("pad_type_id", 0),
                          "direction": _direction(p.get("direction", "Right"), "padding")}
    pp = tj.get("post_processor") or {}
    for proc in (pp.get("processors") or []) if pp.get("type") == "Sequence" else [pp]:
        if proc.get("type") in ("ByteLevel", "RobertaProcessing") and \
                proc.get("trim_offsets", proc.get("type") == "RobertaProcessing"):
            out["trim_offsets"] = True
            out["add_prefix_space"] = bool(proc.get("add_prefix_space", True))
    dec = tj.get("decoder")
    out["decoder"] = dec.get("type") if isinstance(dec, dict) else None
    return out


def _is_json(data):
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


class Tokenizer:
    """A tokenizer with HF tokenizers' Tokenizer interface over one simdbpe
    model. Tokenizer.from_file opens any model simdbpe opens (a
    tokenizer.json, gzip or zstd compressed too; a .tiktoken or .sbpe file;
    a model directory; a built-in name such as "cl100k_base"; ORG/NAME in
    the local Hugging Face cache); Tokenizer.from_pretrained a repo in that
    cache."""

    def __init__(self, model):
        if isinstance(model, Tokenizer):
            model = model._model
        self._setup(model, ("image", None), {})

    # ------------------------------------------------------------ loading
    @staticmethod
    def from_file(path):
        """The model at `path` (see the class), with its tokenizer.json's
        truncation and padding."""
        path = _models.locate(path)  # TypeError for None
        model = _models.open_path(path)
        json_path = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        settings = {}
        if os.path.isfile(json_path):
            data = _models.read_input(json_path) if _models._is_compressed(json_path) else None
            if data is None:
                with open(json_path, "rb") as f:
                    data = f.read()
            if _is_json(data):
                settings = _json_settings(json.loads(data))
        tok = Tokenizer.__new__(Tokenizer)
        tok._setup(model, ("path", path), settings)
        return tok

    @staticmethod
    def from_str(json_str):
        """A tokenizer from the text of a tokenizer.json."""
        return Tokenizer.from_buffer(json_str.encode("utf-8"))

    @staticmethod
    def from_buffer(buffer):
        """A tokenizer from the bytes of a model file (tokenizer.json, .tiktoken, .sbpe)."""
        data = bytes(buffer)
        tok = Tokenizer.__new__(Tokenizer)
        tok._setup(model_from_buffer(data, name="tokenizer.json" if _is_json(data) else None),
                   ("image", None), _json_settings(json.loads(data)) if _is_json(data) else {})
        return tok

    @staticmethod
    def from_pretrained(identifier, revision="main", token=None):
        """The tokenizer.json of the Hugging Face repo `identifier` ("ORG/NAME"
        or "NAME") at `revision` (a branch, tag or commit), from the local
        Hugging Face cache as huggingface_hub lays it out ($HF_HUB_CACHE, else
        $HF_HOME/hub, else ~/.cache/huggingface/hub). Nothing is downloaded
        (`token` is not used): a repo, revision or file that is not cached
        raises simdbpe.Error naming where it looked."""
        del token  # nothing is downloaded
        if not isinstance(identifier, str) or not isinstance(revision, (str, type(None))):
            raise TypeError("from_pretrained(identifier: str, revision: str = 'main')")
        return Tokenizer.from_file(find_pretrained(identifier, revision))

    def as_encoding(self):
        """A tiktoken-shaped simdbpe.Encoding over the same model (shared, not
        loaded again): its buffer and batch calls for bulk encoding."""
        from ._encoding import Encoding
        kind, value = self._source
        if kind == "path" and self._runtime_added:
            kind, value = "image", None
        name = os.path.basename(value) if kind == "path" else "tokenizer"
        return Encoding._over(self._model, name, (kind, value))

    def _setup(self, model, source, settings, added=()):
        self._model = model
        self._source = source
        self._settings = dict(settings)
        self._truncation = settings.get("truncation")
        self._padding = settings.get("padding")
        self._runtime_added = list(added)
        self._tables = None
        self._sentencepiece = not model.decodes_per_token()
        self._affixes = (model.encode("", ALLOW, STRICT, False, 2),
                         model.encode("", ALLOW, STRICT, False, 4))

    def _t(self):
        """The token tables, made on first use: (id -> token string, token
        string -> id, added tokens by id, special ids, ids whose decoding
        is not their bytes)."""
        if self._tables is None:
            table = self._model.token_table()
            added = {i: (t.decode("utf-8", "surrogateescape"), f)
                     for t, i, f in self._model.specials()}
            # A SentencePiece-style model's tokens are their vocabulary
            # strings ("\u2581the", "<0x41>"); a byte-level one's, bytes.
            sp = self._sentencepiece
            id_to_token = [None if b is None else
                           b.decode("utf-8", "surrogateescape") if sp else spell(b)
                           for b in table]
            for i, (content, _) in added.items():
                id_to_token[i] = content
            # An added token that is also in model.vocab has its content as
            # its key there (that is how it was found).
            vocab = {s: i for i, s in enumerate(id_to_token)
                     if s is not None and (i not in added or added[i][1] & ADDED_IN_VOCAB)}
            with_added = dict(vocab)
            with_added.update((content, i) for i, (content, _) in added.items())
            special = frozenset(i for i, (_, f) in added.items() if f & ADDED_SPECIAL)
            # HF's ByteLevel decoder reads an added token's text as byte-level
            # spelling when every character of it is in the alphabet.
            decoded = {}
            for i, (content, _) in added.items():
                b = unspell(content)
                decoded[i] = b if b is not None else content.encode("utf-8", "surrogateescape")
            odd = {i: b for i, b in decoded.items() if b != table[i]}
            self._tables = (id_to_token, vocab, with_added, added, special, odd, table)
        return self._tables

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        kind, value = self._source
        state = {"settings": self._settings, "truncation": self._truncation,
                 "padding": self._padding}
        if kind == "path":
            state.update(path=value, added=self._runtime_added)
        else:
            state.update(image=self._model.image(), added=[])
        return state

    def __setstate__(self, state):
        if "path" in state:
            model = _models.open_path(state["path"])
            source = ("path", state["path"])
            if state["added"]:
                model, _ = model.add_tokens(state["added"])
        else:
            model, source = model_from_image(state["image"]), ("image", None)
        self._setup(model, source, state["settings"], state["added"])
        self._truncation = state["truncation"]
        self._padding = state["padding"]

    # ------------------------------------------------------------ vocabulary
    def get_vocab(self, with_added_tokens=True):
        """token string -> id: the BPE vocabulary (byte-level spellings) and,
        with_added_tokens, the added tokens' texts."""
        t = self._t()
        return dict(t[2] if with_added_tokens else t[1])

    def get_vocab_size(self, with_added_tokens=True):
        t = self._t()
        return len(t[2] if with_added_tokens else t[1])

    def token_to_id(self, token):
        return self._t()[2].get(token)

    def id_to_token(self, id):
        id = _index(id)
        table = self._t()[0]
        return table[id] if 0 <= id < len(table) else None

    def get_added_tokens_decoder(self):
        """id -> AddedToken of every added token."""
        return {i: AddedToken(c, normalized=bool(f & ADDED_NORMALIZED),
                              special=bool(f & ADDED_SPECIAL))
                for i, (c, f) in sorted(self._t()[3].items())}

    def _add(self, tokens, special):
        wanted = []
        for t in tokens:
            if isinstance(t, str):
                t = AddedToken(t, special=special)
            elif not isinstance(t, AddedToken):
                raise TypeError(f"tokens are str or AddedToken, not {type(t).__name__}")
            else:
                t = AddedToken(t.content, normalized=t._normalized, special=special)
            wanted.append((t.content, (ADDED_SPECIAL if t.special else 0) |
                           (ADDED_NORMALIZED if t.normalized else 0)))
        model, count = self._model.add_tokens(wanted)
        runtime = self._runtime_added + wanted
        self._setup(model, self._source, self._settings, runtime)
        return count

    def add_tokens(self, tokens):
        """Adds tokens (str or AddedToken; not special, matched in the
        normalized text unless normalized=False): HF's ids and count."""
        return self._add(tokens, False)

    def add_special_tokens(self, tokens):
        """Adds special tokens (skipped by decode with skip_special_tokens)."""
        return self._add(tokens, True)

    def num_special_tokens_to_add(self, is_pair=False):
        if is_pair:
            raise NotImplementedError("simdbpe encodes single sequences, not pairs")
        return len(self._affixes[0]) + len(self._affixes[1])

    # ------------------------------------------------------ truncation, padding
    @property
    def truncation(self):
        return None if self._truncation is None else dict(self._truncation)

    @property
    def padding(self):
        return None if self._padding is None else dict(self._padding)

    def enable_truncation(self, max_length, stride=0, strategy="longest_first",
                          direction="right"):
        if strategy not in ("longest_first", "only_first", "only_second"):
            raise ValueError("strategy is 'longest_first', 'only_first' or 'only_second'")
        if _index(max_length) < 0 or _index(stride) < 0:
            raise ValueError("max_length and stride are not negative")
        self._truncation = {"max_length": _index(max_length), "stride": _index(stride),
                            "strategy": strategy, "direction": _direction(direction, "truncation")}

    def no_truncation(self):
        self._truncation = None

    def enable_padding(self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]",
                       length=None, pad_to_multiple_of=None):
        self._padding = {"length": None if length is None else _index(length),
                         "pad_to_multiple_of": pad_to_multiple_of, "pad_id": _index(pad_id),
                         "pad_token": pad_token, "pad_type_id": _index(pad_type_id),
                         "direction": _direction(direction, "padding")}

    def no_padding(self):
        self._padding = None

    # ------------------------------------------------------------ encoding
    def _encode_one(self, sequence, pair, is_pretokenized, add_special_tokens):
        if pair is not None:
            raise NotImplementedError("simdbpe encodes single sequences, not pairs")
        if is_pretokenized:
            raise NotImplementedError("simdbpe does not take pre-tokenized input")
        if not isinstance(sequence, str):
            raise TypeError(f"the text to encode is a str, not {type(sequence).__name__}")
        try:
            ids, offsets, words = self._model.encode_offsets(sequence, ALLOW, STRICT, 0)
        except UnicodeEncodeError:
            ids, offsets, words = self._model.encode_offsets(fix_surrogates(sequence), ALLOW,
                                                             STRICT, 0)
        prefix, suffix = self._affixes if add_special_tokens else ((), ())
        t = self._truncation
        if t is not None:
            if t["strategy"] == "only_second":
                raise ValueError("truncation strategy only_second needs a pair of sequences")
            a, b = self._early_exit(ids, words, t["max_length"], t["direction"])
            # the pieces left out at the start are not counted (HF drops them)
            ids, offsets, words = ids[a:b], offsets[a:b], [w - words[a] for w in words[a:b]]
        enc = Encoded(self, ids, offsets, [0] * len(ids), words)
        if t is not None:
            n_added = len(prefix) + len(suffix)
            if n_added > t["max_length"]:
                raise ValueError(f"truncation max_length {t['max_length']} is below the "
                                 f"{n_added} special tokens added")
            enc = enc._truncate(t["max_length"] - n_added, t["stride"], t["direction"])
        for e in [enc] + enc.overflowing:
            if self._settings.get("trim_offsets"):
                self._trim(e)
            if prefix or suffix:
                e.ids = list(prefix) + e.ids + list(suffix)
                e.offsets = [(0, 0)] * len(prefix) + e.offsets + [(0, 0)] * len(suffix)
                e.special_tokens_mask = [1] * len(prefix) + e.special_tokens_mask + \
                    [1] * len(suffix)
                e.word_ids = [None] * len(prefix) + e.word_ids + [None] * len(suffix)
                e.type_ids = [0] * len(e.ids)
                e.attention_mask = [1] * len(e.ids)
                e._tokens = None
        if self._padding is not None:
            self._pad([enc])
        return enc

    def _early_exit(self, ids, words, max_tokens, direction):
        """The tokens HF's model stage keeps when truncation is set (it stops
        tokenizing once the pieces so far hold max_tokens tokens, counting
        from the end for left truncation; an added token's piece never stops
        it): the range [a, b) of the encoding."""
        n = len(ids)
        if n <= max_tokens:
            return 0, n
        added = self._t()[3]
        # the pieces as [start, end) runs of tokens
        runs = []
        i = 0
        while i < n:
            j = i + 1
            while j < n and words[j] == words[i]:
                j += 1
            runs.append((i, j))
            i = j
        if direction == "left":
            runs.reverse()
        total = 0
        kept = 0
        for a, b in runs:
            total += b - a
            kept += 1
            if b - a == 1 and ids[a] in added:
                continue
            if total >= max_tokens:
                break
        if direction == "left":
            return runs[kept - 1][0], n
        return 0, runs[kept - 1][1]

    def _trim(self, e):
        """HF's offsets trimming (ByteLevel / RobertaProcessing with
        trim_offsets): a token's offsets leave out its leading and trailing
        spaces."""
        add_prefix_space = self._settings.get("add_prefix_space")
        tokens = e.tokens
        for i, (tok, (a, b)) in enumerate(zip(tokens, e.offsets)):
            lead = next((k for k, c in enumerate(tok) if c not in _TRIMMED), len(tok))
            trail = next((k for k, c in enumerate(reversed(tok)) if c not in _TRIMMED), len(tok))
            if lead:
                if (i == 0 or a == 0) and add_prefix_space and lead == 1:
                    lead = 0
                a = min(a + lead, b)
            if trail and b >= trail:
                b = max(b - trail, a)
            e.offsets[i] = (a, b)

    def _pad(self, encodings):
        p = self._padding
        length = p["length"]
        if length is None:
            length = max((len(e.ids) for e in encodings), default=0)
        m = p["pad_to_multiple_of"]
        if m and length % m:
            length += m - length % m
        for e in encodings:
            e._pad(length, p["pad_id"], p["pad_type_id"], p["pad_token"], p["direction"])

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        """The Encoded of one text: added and special tokens in it are
        recognised (as HF does), the post-processor's tokens added with
        add_special_tokens, then truncation and padding as set."""
        return self._encode_one(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        """encode for each text; padding (if set) to the longest of the batch."""
        out = [self._encode_one(s, None, is_pretokenized, add_special_tokens) for s in input]
        if self._padding is not None:
            self._pad(out)
        return out

    # ------------------------------------------------------------ decoding
    def decode(self, ids, skip_special_tokens=True):
        """The text of ids, as HF's decoder gives it: special tokens left out
        with skip_special_tokens, ids that are no token skipped, invalid
        UTF-8 replaced by U+FFFD."""
        id_to_token, _, _, _, special, odd, table = self._t()
        ids = [_index(i) for i in ids]
        n = len(table)
        keep = [i for i in ids if 0 <= i < n and table[i] is not None and
                not (skip_special_tokens and i in special)]
        if self._sentencepiece:  # the model's own decoder chain, as HF's
            return self._model.decode_bytes(keep).decode("utf-8", "replace")
        decoder = self._settings.get("decoder", "ByteLevel")
        if decoder is None:  # HF without a decoder joins the tokens with spaces
            return " ".join(id_to_token[i] for i in keep)
        if decoder != "ByteLevel":
            raise NotImplementedError(f"decoder {decoder!r} is not supported (ByteLevel only)")
        if odd and any(i in odd for i in keep):
            data = b"".join(odd[i] if i in odd else table[i] for i in keep)
        else:
            data = self._model.decode_bytes(keep)
        return data.decode("utf-8", "replace")

    def decode_batch(self, sequences, skip_special_tokens=True):
        return [self.decode(s, skip_special_tokens) for s in sequences]
