/*
 * safecut.h - where a long document can be cut so that encoding the two
 * parts separately gives exactly the ids of encoding it whole.
 *
 * The GPT-2 pre-tokenizer regex
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * has no look-behind, so matching from a position where a piece starts
 * depends only on the text after it. A cut at p is therefore exact when a
 * piece ends at p in the whole text *and* in the text truncated at p. We
 * cut only where the characters around p look like  X | W Y  with
 *   X  a character that is not White_Space, ending at p,
 *   W  one White_Space character starting at p,
 *   Y  a character that is not White_Space, right after W.
 * Then:
 *   - the piece holding X ends at p in both texts: no non-whitespace piece
 *     (contraction, letter, number or "other" run) contains a White_Space
 *     character, and all of them are greedy runs or fixed strings that end
 *     at p whether the text goes on or not;
 *   - in the whole text the next piece starts at p: W is a run of one
 *     whitespace character followed by non-whitespace, so either " ?X+"
 *     takes " Y..." (W = U+0020) or "\s+" takes W alone; the part after
 *     the cut starts with the same W Y and matches the same way.
 * Special tokens (when they are matched rather than treated as text) split
 * the text first; a cut next to a whitespace character cannot fall inside
 * a special token unless that token contains whitespace, so callers turn
 * cutting off for such models. UTF-8 errors are never straddled: X, W and Y
 * must be valid sequences, so ill-formed bytes (which "replace" mode turns
 * into U+FFFD) stay whole on one side.
 *
 * White_Space (Unicode 16.0, the class GPT-2's `\s` uses; see
 * ../shared/REFERENCE.md): U+0009-U+000D, U+0020, U+0085, U+00A0, U+1680,
 * U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
 */
#ifndef SIMDBPE_SAFECUT_H
#define SIMDBPE_SAFECUT_H

#include <stddef.h>

#define SAFECUT_NONE ((size_t)-1)

/*
 * The largest p in [lo, hi] where s[0..n) may be cut (see above), or
 * SAFECUT_NONE. Looks at most 4 bytes before p and 8 after it, within
 * s[0..n). `line_breaks`: W may be \r or \n. Only for GPT-2's regex: the
 * other families' pieces take the line breaks after a run of other
 * characters (` ?[^\s\p{L}\p{N}]+[\r\n]*`: ".\n" is one piece), so for
 * them W must be another White_Space character (their other rules end
 * pieces before whitespace or take it, as W Y, only after the cut, as
 * above).
 */
size_t safecut_find(const unsigned char *s, size_t n, size_t lo, size_t hi, int line_breaks);

/* Whether code point `cp` is White_Space (Unicode 16.0). */
int safecut_is_space(unsigned cp);

#endif
