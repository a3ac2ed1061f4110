#!/usr/bin/env python3
"""utf8_cases.py - byte strings with invalid UTF-8, and what Python makes of them.

This is half of the oracle for simdbpe's UTF-8 tests (gen.mjs is the other
half: it encodes the repaired text with the reference tokenizers). For every
case it prints one JSON line

    {"hex": "<input bytes>", "strict_offset": N or null, "replaced": "<text>"}

where
  - strict_offset is UnicodeDecodeError.start of bytes.decode("utf-8"): the
    offset of the first byte of the first ill-formed sequence (null when the
    bytes are valid UTF-8);
  - replaced is bytes.decode("utf-8", errors="replace"): every maximal
    subpart of an ill-formed sequence becomes one U+FFFD (Unicode's
    "substitution of maximal subparts", which Python implements).

The cases are hand-made (overlong forms, UTF-16 surrogates encoded in UTF-8,
truncated sequences, code points above U+10FFFF, stray continuation bytes,
bytes that never occur) placed at the start, middle and end of text and next
to every kind of pre-token, plus seeded random corruptions of valid text.
Deterministic: the same Python gives the same output.
"""
import json
import random
import sys

# Ill-formed sequences, each with what makes it ill-formed.
BAD = [
    b"\x80",              # lone continuation byte
    b"\xbf",
    b"\x80\x80\x80",      # three continuation bytes: three replacements
    b"\xc0\x80",          # overlong NUL (C0, C1 never occur)
    b"\xc1\xbf",          # overlong U+007F
    b"\xe0\x80\x80",      # overlong 3-byte NUL
    b"\xe0\x9f\xbf",      # overlong U+07FF
    b"\xf0\x80\x80\x80",  # overlong 4-byte NUL
    b"\xf0\x8f\xbf\xbf",  # overlong U+FFFF
    b"\xed\xa0\x80",      # U+D800 (high surrogate) encoded in UTF-8
    b"\xed\xbf\xbf",      # U+DFFF (low surrogate)
    b"\xed\xa0\xbd\xed\xb8\x80",  # a surrogate pair (CESU-8 style)
    b"\xf4\x90\x80\x80",  # U+110000, above the Unicode range
    b"\xf5\x80\x80\x80",  # lead byte F5 never occurs
    b"\xf7\xbf\xbf\xbf",  # U+1FFFFF
    b"\xf8\x88\x80\x80\x80",  # 5-byte form
    b"\xfc\x84\x80\x80\x80\x80",  # 6-byte form
    b"\xfe",
    b"\xff",
    b"\xc3",              # truncated 2-byte sequence
    b"\xe2\x82",          # truncated 3-byte sequence (euro sign)
    b"\xe2",
    b"\xf0\x9f\x98",      # truncated 4-byte sequence (emoji)
    b"\xf0\x9f",
    b"\xf0",
    b"\xe2\x82\xe2\x82\xac",  # truncated then valid
    b"\xc3\xc3\xa9",      # lead followed by lead
    b"\xf4\x8f\xbf",      # truncated U+10FFFF
]

# Valid neighbours: one of every kind of pre-token and whitespace.
CONTEXT = [
    b"", b"a", b"abc", b" ", b"  ", b"\n", b" x", b"7", b"42", b"!", b"'s", b"'",
    "é".encode(), "中文".encode(), "😀".encode(), "\u00a0".encode(), "\u3000".encode(),
    "\u0301".encode(), "\ufeff".encode(),
]


def case(data):
    """The JSON record for one byte string."""
    try:
        data.decode("utf-8")
        offset = None
    except UnicodeDecodeError as e:
        offset = e.start
    return {"hex": data.hex(), "strict_offset": offset,
            "replaced": data.decode("utf-8", errors="replace")}


def hand_made():
    out = [b""]  # the empty text is valid and has no ids
    for bad in BAD:
        out.append(bad)
        for left in CONTEXT:
            for right in (b"", b"a", b" b", b"\xff", "é".encode()):
                out.append(left + bad + right)
    return out


def random_valid_text(rng):
    """Short valid text from a mix of scripts, digits, spaces, symbols."""
    pool = ("a b c x y z A Z 0 1 9 ' 's . , ! ? - \n \t é ß ж Ω ع 中 日 한 ไ ० ٣ ½ € "
            "😀 🇫🇷 \u0301 \u00a0 \u2003 \ufeff").split(" ") + [" ", " ", "  "]
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 24))).encode()


def corrupt(rng, data):
    """Flips, truncates, inserts or deletes a few bytes of valid text."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1:
            b.insert(rng.randrange(len(b) + 1), rng.choice([0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed,
                                                           0xef, 0xf0, 0xf4, 0xf5, 0xff,
                                                           rng.randrange(256)]))
        elif op == 2 and b:
            del b[rng.randrange(len(b))]
        elif b:
            del b[rng.randrange(len(b)):]
    return bytes(b)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    rng = random.Random(20241122)
    datas = hand_made()
    while len(datas) < len(hand_made()) + count:
        datas.append(corrupt(rng, random_valid_text(rng)))
    seen = set()
    for d in datas:
        if d in seen:
            continue
        seen.add(d)
        print(json.dumps(case(d), ensure_ascii=True))


if __name__ == "__main__":
    main()
