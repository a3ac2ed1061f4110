"""simdbpe: exact, fast byte-level BPE tokenization, shaped like tiktoken and
like HF tokenizers.

    import simdbpe                               # instead of: import tiktoken
    enc = simdbpe.get_encoding("gpt2")           # as tiktoken.get_encoding
    enc.encode("hello world")                    # [31373, 995]
    enc.encode_batch(texts, num_threads=4)       # list of id lists
    ids, offsets = enc.encode_batch_to_buffer(texts, num_threads=4)  # uint32 + offsets

    tok = simdbpe.Tokenizer.from_file("tokenizer.json")   # as tokenizers.Tokenizer
    tok = simdbpe.Tokenizer.from_pretrained("Qwen/Qwen3-8B")  # from the local HF cache
    out = tok.encode("Hello world")              # out.ids, out.tokens, out.offsets, ...
    tok.decode(out.ids)

Every call of tiktoken's Encoding and of the HF Tokenizer that simdbpe
provides has the same name, arguments, defaults, answers and exceptions
(the module docstrings of _encoding and _tokenizer list what is not
provided). Encoding runs in C with the GIL released, on encoders kept per
calling thread, so many Python threads can encode at once. Encodings and
Tokenizers pickle (by name, or by the path of their model file), so they
work in multiprocessing pools. Library failures raise simdbpe.Error, a
ValueError with `status`, `byte_offset`, `document` and `index` attributes.

    tok = simdbpe.train(["corpus.txt"], vocab_size=32000, output="my-bpe")

    # a dataset to nanoGPT's train.bin, as `simdbpe encode` writes it
    simdbpe.encode_files(["a.jsonl.zst"], "train.bin", input_format="jsonl",
                         format="u16", eot="append")
"""
from ._datasets import encode_files, train
from ._encoding import (Encoding, encoding_for_model, encoding_name_for_model, get_encoding,
                        list_encoding_names)
from ._models import open_input
from ._simdbpe import Buffer, Error, TokenIdError, version
from ._tokenizer import AddedToken, Encoded, Tokenizer

__version__ = version()

__all__ = ["AddedToken", "Buffer", "Encoded", "Encoding", "EncodeError", "Error", "TokenIdError",
           "Tokenizer", "__version__", "encode_files", "encoding_for_model",
           "encoding_name_for_model", "get_encoding", "list_encoding_names", "open_input",
           "train", "version"]

EncodeError = Error
