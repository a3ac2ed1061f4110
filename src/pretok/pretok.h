/*
 * pretok.h - the GPT-2 pre-tokenizer (internal).
 *
 * Splits text into the pieces the GPT-2 regex
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * matches, with a hand-written scanner instead of a regex engine. The first
 * alternative that matches at a position wins (not the longest), which the
 * scanner reproduces by testing them in order:
 *
 *   - `'` followed by s, t, m, d, re, ve or ll (lower case only);
 *   - a run of letters, of numbers, or of "other" code points (neither
 *     letter, number nor whitespace; `'` is other), optionally preceded by
 *     one ' ' (U+0020 only);
 *   - a whitespace run: up to the end of the text it is one piece; before a
 *     non-whitespace code point its last code point is left for the next
 *     piece (`\s+(?!\S)` backtracks one), unless the run is one code point.
 *
 * The input must be valid UTF-8 (the encoder validates it first).
 */
#ifndef SIMDBPE_PRETOK_H
#define SIMDBPE_PRETOK_H

#include <stddef.h>
#include <stdint.h>

/* The end (exclusive) of the piece that starts at s[i], i < n. */
size_t simdbpe__pretok_piece_end(const uint8_t *s, size_t n, size_t i);

/* Class of each ASCII byte: SIMDBPE__CP_* from ucd.h. */
extern const uint8_t simdbpe__ascii_class[128];

#endif
