/*
 * cuts.c - places where a family's pre-tokenizer certainly ends a piece,
 * so that a text cut there and pre-tokenized part by part gives exactly
 * the pieces of the whole: the encoder's long texts (simdbpe_cut_find,
 * encode/cut.c) and the trainer's parts of a batch.
 *
 * Every family's pre-tokenizer is a regex without look-behind (DeepSeek-V3's
 * later splits run on the gaps the earlier ones leave), so matching from
 * a position where a piece starts depends only on the text after it. A cut
 * at p is exact when a piece ends at p in the whole text and in the text
 * truncated at p. With X the character that ends at p and Y the one that
 * starts there, these three shapes are such places in every family:
 *
 *   space  X not White_Space, Y one White_Space character followed by
 *          one that is not; Y is not \r or \n except for GPT-2's regex
 *          (SIMDBPE__CUTS_SHAPES_AT_BREAKS; the other families put line
 *          breaks after a run of punctuation into its piece: ".\n", and
 *          o200k "./");
 *   digit  X not White_Space, Y an ASCII digit; X not \p{N} either, but
 *          in a family that makes each \p{N} a piece (Qwen2's) and, at a
 *          multiple of three characters from the start of their run, in
 *          one that splits runs in groups of three (cl100k's, o200k's and
 *          DeepSeek-V3's \p{N}{1,3}): the family's digit_run;
 *   punct  X a letter (\p{L}), Y ASCII punctuation or a symbol, not '.
 *
 * A piece starts at p in the whole text:
 *   space  no piece that holds a non-whitespace character goes on with
 *          whitespace (but for the line breaks above); a lone whitespace
 *          character before a non-space is taken by `\s+` alone or starts
 *          the next word (" ?\p{L}+", "[^\r\n\p{L}\p{N}]?\p{L}+"...);
 *   digit  a piece that holds a \p{N} holds nothing else, except GPT-2's
 *          " ?\p{N}+" (X is no space); DeepSeek-V3 isolates digit runs
 *          first; the run starts at p in both texts, so cl100k's and
 *          o200k's groups of three fall alike. Inside a run (X \p{N}):
 *          Qwen2's pieces are single characters; the others' groups of
 *          three start where the run does, so a group ends at p exactly
 *          when a multiple of three characters of the run lie before it,
 *          and the part from p is a run that starts on a group. The run's
 *          start is looked for in s[0..p), so s must start where a piece
 *          does (the text, or the part after a cut), and only the search
 *          for the last cut (simdbpe__pretok_cut_last) makes such cuts,
 *          walking each run once (simdbpe__pretok_cut_ok, asked at one
 *          place after another, would walk it again each time);
 *   punct  no piece goes on from a letter to punctuation except o200k's
 *          contraction suffix ('s, 't, ...), and Y is not an apostrophe.
 * The piece holding X ends at p in the truncated text too: every
 * alternative tried from its start reads the character at p only to find
 * that it does not continue a run (or a fixed string), which the end of
 * the text tells alike; the one look-ahead, \s+(?!\S), is about pieces of
 * whitespace, and X is not whitespace.
 *
 * NFC (Qwen): Y is ASCII or White_Space, a starter that never composes
 * with what precedes it, so NFC of the whole is NFC of the parts (inside
 * a run of digits too: 50 MB of them were one part, held whole).
 * Ill-formed UTF-8 is never straddled: X, Y and the character after a
 * White_Space Y must be well-formed, so the bytes that "replace" mode
 * turns into U+FFFD stay whole on one side.
 */
#include <string.h>

#include "../../kernels/kernels.h"
#include "../common/utf8_valid.h"
#include "pretok.h"
#include "ucd.h"

enum { CAND_NONE = 0, CAND_DIGIT, CAND_PUNCT, CAND_SPACE };

/* What the byte at p can start, for the cheap first test. */
static unsigned candidate(uint8_t y)
{
    if (y >= '0' && y <= '9')
        return CAND_DIGIT;
    if (y == ' ' || (y >= 0x09 && y <= 0x0D) || y == 0xC2 || (y >= 0xE1 && y <= 0xE3))
        return CAND_SPACE; /* the leads of every White_Space character */
    int letter = (y | 0x20) >= 'a' && (y | 0x20) <= 'z';
    if (y > 0x20 && y < 0x7F && y != '\'' && !letter)
        return CAND_PUNCT;
    return CAND_NONE;
}

/* Whether none of the eight bytes of w can start a cut (candidate() is
 * NONE for each): every byte is an ASCII letter or a continuation byte
 * 0x80-0xBF, the bytes of long runs of letters in any script (the leads
 * of such characters are rarer; they fall to the exact test). */
static inline int no_candidate(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    /* x | 0x20 is in 'a'..'z' exactly for the ASCII letters; with the top
     * bit cleared, adding 0x1F or 0x05 carries into no other byte. */
    uint64_t x = (w | ones * 0x20) & ~highs;
    uint64_t letter = (x + ones * (0x80 - 'a')) & ~(x + ones * (0x80 - 'z' - 1)) & ~w;
    uint64_t cont = w & ~(w << 1); /* 10xxxxxx: top bit set, the next clear */
    return ((letter | cont) & highs) == highs;
}

/* The properties of the well-formed character ending at p (p >= 1), or 0
 * with *ok = 0 if none ends there. */
static unsigned props_before(const uint8_t *s, size_t p, int *ok)
{
    size_t back = 1;
    while (back < 4 && back < p && (s[p - back] & 0xC0) == 0x80)
        back++;
    size_t len;
    *ok = simdbpe__utf8_sequence_len(s + p - back, back) == back;
    return *ok ? simdbpe__ucd_props(simdbpe__utf8_decode(s, p - back, &len)) : 0;
}

/* Whether the character shapes around p are one of the three above;
 * `digit_run` is the family's (pretok.h), 0 for the shapes alone. */
static int shape_ok(const uint8_t *s, size_t n, size_t p, int line_breaks, unsigned digit_run)
{
    unsigned kind = candidate(s[p]);
    int ok;
    unsigned x = props_before(s, p, &ok);
    if (!ok || (x & SIMDBPE__UCD_WS))
        return 0;
    if (kind == CAND_DIGIT) /* inside a run of groups of three: cut_in_run */
        return !(x & SIMDBPE__UCD_N) || digit_run == 1;
    if (kind == CAND_PUNCT)
        return (x & SIMDBPE__UCD_L) != 0;
    size_t wl = simdbpe__utf8_sequence_len(s + p, n - p), zl;
    if (wl == 0 || p + wl >= n)
        return 0;
    uint32_t w = simdbpe__utf8_decode(s, p, &zl);
    if (!(simdbpe__ucd_props(w) & SIMDBPE__UCD_WS) || (!line_breaks && (w == '\r' || w == '\n')))
        return 0;
    zl = simdbpe__utf8_sequence_len(s + p + wl, n - p - wl);
    return zl && !(simdbpe__ucd_props(simdbpe__utf8_decode(s, p + wl, &zl)) & SIMDBPE__UCD_WS);
}

/* For the families of groups of three: the last cut in [lo, p] inside
 * the run of \p{N} that ends at p (whose character before p is \p{N}),
 * or SIZE_MAX; *start gets where the run starts. One walk back over the
 * run, then back from p to the last group boundary with an ASCII digit
 * after it (candidate()'s digits), three characters at a time. */
static size_t cut_in_run(const uint8_t *s, size_t p, size_t lo, size_t *start)
{
    size_t r = p, chars = 0;
    for (;;) {
        int ok;
        if (r == 0 || !(props_before(s, r, &ok) & SIMDBPE__UCD_N))
            break;
        while ((s[--r] & 0xC0) == 0x80)
            ;
        chars++;
    }
    *start = r;
    size_t q = p;
    for (size_t back = chars % 3;; back = 3) {
        for (; back && q > r; back--)
            while ((s[--q] & 0xC0) == 0x80)
                ;
        if (back || q <= r || q < lo)
            return SIZE_MAX;
        if (s[q] >= '0' && s[q] <= '9')
            return q;
    }
}

int simdbpe__pretok_cut_shapes(const uint8_t *s, size_t n, size_t p)
{
    return p > 0 && p < n && candidate(s[p]) != CAND_NONE && shape_ok(s, n, p, 0, 0);
}

int simdbpe__pretok_cut_ok(unsigned kind, const uint8_t *s, size_t n, size_t p)
{
    const simdbpe__pretok_family *f = simdbpe__pretok_family_of(kind);
    return f->cuts != SIMDBPE__CUTS_NONE && p > 0 && p < n && candidate(s[p]) != CAND_NONE &&
           shape_ok(s, n, p, f->cuts == SIMDBPE__CUTS_SHAPES_AT_BREAKS, f->digit_run);
}

size_t simdbpe__pretok_cut_last(unsigned kind, const uint8_t *s, size_t n, size_t lo, size_t hi)
{
    const simdbpe__pretok_family *f = simdbpe__pretok_family_of(kind);
    int line_breaks = f->cuts == SIMDBPE__CUTS_SHAPES_AT_BREAKS;
    if (n < 2 || f->cuts == SIMDBPE__CUTS_NONE)
        return SIZE_MAX;
    if (hi > n - 1)
        hi = n - 1;
    if (lo < 1)
        lo = 1;
    for (size_t p = hi + 1; p-- > lo;) {
        /* Eight bytes at a time past words of letters (and other bytes
         * that start nothing: below is the exact test). */
        while (p >= lo + 8 && p >= 7) {
            uint64_t w;
            memcpy(&w, s + p - 7, 8);
            if (no_candidate(w))
                p -= 8;
            else
                break;
        }
        unsigned c = candidate(s[p]);
        if (c == CAND_DIGIT && f->digit_run == 3) {
            int ok;
            if (props_before(s, p, &ok) & SIMDBPE__UCD_N) {
                size_t start, q = cut_in_run(s, p, lo, &start);
                if (q != SIZE_MAX)
                    return q;
                p = start + 1; /* the run's start is tried next */
                continue;
            }
        }
        if (c != CAND_NONE && shape_ok(s, n, p, line_breaks, f->digit_run))
            return p;
    }
    return SIZE_MAX;
}
