/*
 * families.c - the pre-tokenizers of the byte-level BPE families other
 * than GPT-2 (whose block scanner is pretok.c's), one piece at a time.
 *
 * Each reproduces what HF tokenizers (Oniguruma: leftmost match, the
 * first alternative that matches wins, backtracking inside it) makes of
 * the family's Split regexes (their texts in the records below):
 *
 *   cl100k  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *   qwen2   the same with \p{N} for \p{N}{1,3}
 *   o200k   [^\r\n\p{L}\p{N}]?U*W+C?|[^\r\n\p{L}\p{N}]?U+W*C?|\p{N}{1,3}
 *           | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *           U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}],
 *           C = (?i:'s|'t|'re|'ve|'m|'ll|'d)
 *   tekken  o200k's without C and with \p{N} for \p{N}{1,3} (Mistral's Tekken,
 *           NVIDIA's Nemotron 3)
 *   kimi    [\p{Han}]+|o200k's with Han taken out of U and W, and [\r\n]*
 *           for [\r\n/]* (Kimi K2)
 *   deepseek_v3  three Isolated Splits, each re-splitting the pieces of
 *           the one before: \p{N}{1,3}; runs of [一-龥぀-ゟ゠-ヿ]; then
 *           [ASCII punctuation][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
 *           | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *           (text where that regex matches nothing is a piece too: a gap)
 *
 * What backtracking comes to, rule by rule:
 *   - \s*[\r\n]+ on a whitespace run ends right after its last \r or \n;
 *   - \s+(?!\S) takes a whitespace run that ends the text (for DeepSeek:
 *     the piece of the earlier Splits), else all of it but its last code
 *     point, unless that leaves nothing (then \s+ takes the one);
 *   - an optional leading character is taken if the rest then matches,
 *     else the alternative is tried without it;
 *   - o200k's U*W+: U* takes the longest run of U, then W+ needs a W: the
 *     run of W after it, else (U* giving back) the match ends after the
 *     last W inside the U run; U+W* is the longest U run and the W run
 *     after it.
 * Case-insensitive contractions also match the case-folded forms the
 * references accept: 'S 'T ... and 'ſ (U+017F LATIN SMALL LETTER LONG S,
 * whose simple case folding is s).
 *
 * All need valid UTF-8. The classes are Unicode 16.0.0's General_Category
 * and White_Space, as the references see them (ucd.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "families.h"
#include "pretok.h"

#include "common.h"
#include "ucd.h"
#include "ucd_ranges.h"
#include "utf8_valid.h"

/* Classes of a code point, as bits: ucd.h's properties, and three more. */
enum {
    C_L = SIMDBPE__UCD_L,   /* \p{L} */
    C_N = SIMDBPE__UCD_N,   /* \p{N} */
    C_WS = SIMDBPE__UCD_WS, /* \s */
    C_M = SIMDBPE__UCD_M,   /* \p{M} */
    C_P = SIMDBPE__UCD_P,   /* \p{P} */
    C_S = SIMDBPE__UCD_S,   /* \p{S} */
    C_UP = SIMDBPE__UCD_UP, /* Lu Lt Lm Lo */
    C_LO = SIMDBPE__UCD_LO, /* Ll Lm Lo */
    C_X = 256,   /* neither \p{L}, \p{N} nor \s: [^\s\p{L}\p{N}] */
    C_CJK = 512, /* DeepSeek-V3's second Split: 一-龥 ぀-ゟ ゠-ヿ (its classes dropped) */
    C_HAN = 1024 /* Kimi K2: \p{Han} (Script=Han), then in no U or W class (K_HAN) */
};

/* The scanners' classes of a code point, from the Unicode 16.0.0
 * property table (ucd.h): the same bits, plus C_X for [^\s\p{L}\p{N}]. */
static inline unsigned props_of(uint32_t cp)
{
    unsigned p = simdbpe__ucd_props(cp);
    return p | (p & (SIMDBPE__UCD_L | SIMDBPE__UCD_N | SIMDBPE__UCD_WS) ? 0 : C_X);
}

/* The scanners' classes of the ASCII characters (C_X added to the
 * generated simdbpe__ucd_props_ascii), filled once: the ASCII paths read
 * them with one load. */
static uint16_t ascii_props[128];
static pthread_once_t ascii_once = PTHREAD_ONCE_INIT;
/* Script=Han (Unicode 16.0.0), the generic path's ranges (ucd_ranges.c). */
static const simdbpe__ucd_range_set *han_ranges;

static void init_ascii(void)
{
    for (size_t k = 0; k < simdbpe__ucd_n_range_sets; k++)
        if (strcmp(simdbpe__ucd_range_sets[k].name, "Han") == 0)
            han_ranges = &simdbpe__ucd_range_sets[k];
    for (uint32_t c = 0; c < 128; c++) {
        unsigned p = simdbpe__ucd_props_ascii[c];
        ascii_props[c] =
            (uint16_t)(p | (p & (SIMDBPE__UCD_L | SIMDBPE__UCD_N | SIMDBPE__UCD_WS) ? 0 : C_X));
    }
}

/*
 * The end of the run from s[i] of ASCII letters of either case (fold
 * 0x20) or of ASCII lower-case letters (fold 0), eight bytes at a time. In
 * each byte x = (byte | fold) & 0x7F, x + 0x1F has its top bit set iff
 * x >= 'a' (0x61) and x + 0x05 iff x > 'z' (0x7A); neither sum carries
 * into the next byte. A byte >= 0x80 is never a letter here.
 */
static inline size_t ascii_run(const uint8_t *s, size_t n, size_t i, uint8_t fold)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    while (i + 8 <= n) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        uint64_t x = (v | fold * ones) & 0x7F7F7F7F7F7F7F7FULL;
        uint64_t letters = (x + 0x1F * ones) & ~(x + 0x05 * ones) & ~v & high;
        uint64_t stop = ~letters & high;
        if (stop)
            return i + ((size_t)__builtin_ctzll(stop) >> 3);
        i += 8;
    }
#endif
    while (i < n && (uint8_t)((s[i] | fold) - 'a') < 26)
        i++;
    return i;
}

int simdbpe__fam_is_han(uint32_t cp)
{
    if (cp < 0x2E80)
        return 0;
    if (cp >= 0x4E00 && cp <= 0x9FFF) /* the most common of the ranges */
        return 1;
    size_t lo = 0, hi = han_ranges->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < han_ranges->ranges[mid][0])
            hi = mid;
        else if (cp > han_ranges->ranges[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static inline int is_cjk(uint32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF);
}

/* DeepSeek-V3's third Split sees the pieces of its second one, runs of
 * CJK characters and what is between them; its classes then mark where
 * such a piece ends with C_CJK (a number ends one too, and is in no class
 * it runs over): */
enum {
    K_PLAIN = 0,   /* no such pieces (every other family) */
    K_OUTSIDE = 1, /* in a piece between CJK runs: CJK characters are C_CJK only */
    K_INSIDE = 2,  /* in a CJK run: every other character is C_CJK only */
    /* Kimi K2's classes: Han characters are C_HAN and in no U or W class
     * (C_UP, C_LO, C_M dropped; \p{L}, \p{N} and C_X as they are) */
    K_HAN = 3
};

/* The classes of the code point at s[i] and its length; 0 classes past n.
 * `k` is K_*. */
static inline unsigned cls_at_k(const uint8_t *s, size_t n, size_t i, size_t *len, int k)
{
    if (i >= n) {
        *len = 0;
        return 0;
    }
    if (s[i] < 0x80) {
        *len = 1;
        return k == K_INSIDE ? C_CJK : ascii_props[s[i]];
    }
    uint32_t cp = simdbpe__utf8_decode(s, i, len);
    if (k == K_PLAIN)
        return props_of(cp);
    if (k == K_HAN) {
        unsigned p = props_of(cp);
        return simdbpe__fam_is_han(cp) ? (p & ~(unsigned)(C_UP | C_LO | C_M)) | C_HAN : p;
    }
    if (k == K_OUTSIDE)
        return is_cjk(cp) ? C_CJK : props_of(cp);
    return is_cjk(cp) ? props_of(cp) : C_CJK;
}

static inline unsigned cls_at(const uint8_t *s, size_t n, size_t i, size_t *len)
{
    return cls_at_k(s, n, i, len, 0);
}

/* The end of the run from i of code points whose classes meet `mask`,
 * stopping at `lim` (`cjk` as for cls_at_k). */
static inline size_t run_k(const uint8_t *s, size_t lim, size_t i, unsigned mask, int cjk)
{
    while (i < lim) {
        if (s[i] < 0x80 && cjk != K_INSIDE) {
            if (!(ascii_props[s[i]] & mask))
                break;
            i++;
            continue;
        }
        size_t len;
        if (!(cls_at_k(s, lim, i, &len, cjk) & mask))
            break;
        i += len;
    }
    return i;
}

static inline size_t run(const uint8_t *s, size_t lim, size_t i, unsigned mask)
{
    return run_k(s, lim, i, mask, 0);
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i] == '\'': its length, or 0. */
static size_t contraction(const uint8_t *s, size_t n, size_t i)
{
    if (i >= n || s[i] != '\'' || i + 1 >= n)
        return 0;
    uint8_t a = s[i + 1] | 0x20; /* ASCII letters to lower case */
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (s[i + 1] == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) /* U+017F */
        return 3;
    if (i + 2 >= n)
        return 0;
    uint8_t b = s[i + 2] | 0x20;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

static inline int is_break(uint8_t c)
{
    return c == '\r' || c == '\n';
}

/* A whitespace run from i (s[i] whitespace): \s*[\r\n]+, else
 * \s+(?!\S), else \s+. The text the regex sees ends at n or, with `cjk`
 * (DeepSeek-V3's third Split), at a number or CJK character (the earlier
 * Splits' piece ends there). */
static size_t whitespace(const uint8_t *s, size_t n, size_t i, int cjk)
{
    size_t e = run(s, n, i, C_WS);
    for (size_t j = e; j > i; j--)
        if (is_break(s[j - 1]))
            return j; /* after the last line break */
    size_t len;
    if (e == n || (cjk && (cls_at_k(s, n, e, &len, cjk) & (C_N | C_CJK))))
        return e;
    size_t last = e - 1;
    while ((s[last] & 0xC0) == 0x80)
        last--;
    return last > i ? last : e;
}

/* The ASCII classes, for the ASCII paths below. */
#define A_L(c) ((c) < 0x80 && (ascii_props[c] & C_L))
#define A_X(c) ((c) < 0x80 && (ascii_props[c] & C_X))
#define A_WS(c) ((c) < 0x80 && (ascii_props[c] & C_WS))

/* The common case of cl100k's [^\r\n\p{L}\p{N}]?\p{L}+ all in ASCII: a
 * run of ASCII letters, maybe after one other ASCII character (no
 * apostrophe: it may begin a contraction). Its end, 0 when the text is
 * not that, DEFER when the run may go on in non-ASCII letters (then only
 * the general path can tell). */
#define DEFER SIZE_MAX
static inline size_t ascii_word(const uint8_t *s, size_t n, size_t i)
{
    uint8_t c = s[i];
    size_t j;
    if (ascii_props[c & 0x7F] & C_L && c < 0x80)
        j = i + 1;
    else if (i + 1 < n && A_L(s[i + 1]) &&
             (c == ' ' || (c < 0x80 && !(ascii_props[c] & (C_L | C_N)) && !is_break(c) &&
                           c != '\'')))
        j = i + 2; /* most often " word" */
    else
        return 0;
    j = ascii_run(s, n, j, 0x20);
    return j < n && s[j] >= 0x80 ? DEFER : j;
}

/* cl100k's pieces other than letters when all they look at is ASCII: a
 * run of "other" characters (after one space) and its line breaks, or a
 * whitespace run. 0 for the general path. `breaks` also takes '/' after
 * the run (o200k). */
static inline size_t ascii_other(const uint8_t *s, size_t n, size_t i, int slash)
{
    uint8_t c = s[i];
    size_t j = i;
    if (c == ' ' && i + 1 < n && A_X(s[i + 1]))
        j = i + 1;
    if (j > i || A_X(c)) {
        while (j < n && A_X(s[j]))
            j++;
        if (j < n && s[j] >= 0x80)
            return 0;
        while (j < n && (is_break(s[j]) || (slash && s[j] == '/')))
            j++;
        return j;
    }
    if (!A_WS(c))
        return 0;
    size_t e = i + 1;
    while (e < n && A_WS(s[e]))
        e++;
    if (e < n && s[e] >= 0x80)
        return 0; /* the run may go on in non-ASCII whitespace */
    for (size_t k = e; k > i; k--)
        if (is_break(s[k - 1]))
            return k;
    if (e == n || e - i == 1)
        return e;
    return e - 1;
}

/* \p{N}{1,max} at s[i], a number. */
static size_t numbers(const uint8_t *s, size_t n, size_t i, unsigned max)
{
    size_t j = i, len;
    for (unsigned d = 0; d < max && (cls_at(s, n, j, &len) & C_N); d++)
        j += len;
    return j;
}

/* At s[i] (classes c), which is no letter or number (or a letter
 * alternative did not match): " ?[^\s\p{L}\p{N}]+[\r\n]*" (with `slash`,
 * o200k's "[\r\n/]*"), else a whitespace run. */
static size_t other_or_whitespace(const uint8_t *s, size_t n, size_t i, unsigned c, int slash)
{
    size_t j = i, l2;
    if (s[i] == ' ' && (cls_at(s, n, i + 1, &l2) & C_X))
        j = i + 1;
    if (j > i || !(c & C_WS)) {
        j = run(s, n, j, C_X);
        while (j < n && (is_break(s[j]) || (slash && s[j] == '/')))
            j++;
        return j;
    }
    return whitespace(s, n, i, 0);
}

/* cl100k's pieces that the ASCII paths tell: the end, or 0. */
static inline size_t cl100k_fast(const uint8_t *s, size_t n, size_t i)
{
    size_t w = ascii_word(s, n, i);
    if (w)
        return w == DEFER ? 0 : w;
    return s[i] != '\'' ? ascii_other(s, n, i, 0) : 0;
}

/* cl100k and qwen2; `digits` is the most numbers in a piece (3 or 1).
 * The general path: any text. */
static size_t cl100k_slow(const uint8_t *s, size_t n, size_t i, unsigned digits)
{
    size_t len;
    unsigned c = cls_at(s, n, i, &len);
    size_t k = contraction(s, n, i);
    if (k)
        return i + k;
    if (c & C_L)
        return run(s, n, i + len, C_L);
    if (!(c & C_N) && !is_break(s[i])) {
        size_t len2;
        if (cls_at(s, n, i + len, &len2) & C_L)
            return run(s, n, i + len + len2, C_L);
    }
    if (c & C_N)
        return numbers(s, n, i, digits);
    return other_or_whitespace(s, n, i, c, 0);
}

/* What sets o200k's relatives apart from it. */
typedef struct o200k_variant {
    unsigned digits; /* \p{N}{1,digits} */
    uint8_t cx;      /* the contraction suffix C after letters */
    uint8_t slash;   /* [\r\n/]* after punctuation, else [\r\n]* */
    uint8_t han;     /* [\p{Han}]+ first, and Han in no letter class (K_HAN) */
} o200k_variant;
static const o200k_variant O200K = {3, 1, 1, 0}, TEKKEN = {1, 0, 1, 0}, KIMI = {3, 1, 0, 1};

/* o200k's U*W+ (w_plus) or U+W* (!w_plus) from p, then C if v->cx: the
 * end, or 0. */
static size_t o200k_letters(const uint8_t *s, size_t n, size_t p, int w_plus,
                            const o200k_variant *v)
{
    const unsigned U = C_UP | C_M, W = C_LO | C_M;
    const int k = v->han ? K_HAN : K_PLAIN;
    size_t u = run_k(s, n, p, U, k);
    size_t e;
    if (w_plus) {
        size_t len;
        if (cls_at_k(s, n, u, &len, k) & W) {
            e = run_k(s, n, u, W, k);
        } else {
            /* U* gives back to the last W inside the run. */
            e = 0;
            for (size_t q = p; q < u; q += len) {
                unsigned c = cls_at_k(s, n, q, &len, k);
                if (c & W)
                    e = q + len;
            }
            if (!e)
                return 0;
        }
    } else {
        if (u == p)
            return 0;
        e = run_k(s, n, u, W, k);
    }
    return v->cx ? e + contraction(s, n, e) : e;
}

/* o200k's letter alternatives all in ASCII ([A-Z]*[a-z]+ or [A-Z]+, maybe
 * after one other ASCII character, then a contraction if `cx`): the end,
 * 0 for other text, DEFER for runs that may go on in non-ASCII. */
static inline size_t ascii_cased_word(const uint8_t *s, size_t n, size_t i, int cx)
{
    uint8_t c = s[i];
    size_t p;
    if (c >= 0x80)
        return 0;
    if (ascii_props[c] & C_L)
        p = i;
    else if (i + 1 < n && A_L(s[i + 1]) && (c == ' ' || (!(ascii_props[c] & C_N) && !is_break(c))))
        p = i + 1; /* most often " word" */
    else
        return 0;
    size_t u = p;
    while (u < n && s[u] >= 'A' && s[u] <= 'Z')
        u++;
    size_t e = ascii_run(s, n, u, 0);
    if (e < n && s[e] >= 0x80)
        return DEFER;
    return cx && e < n && s[e] == '\'' ? e + contraction(s, n, e) : e;
}

/* o200k's pieces that the ASCII paths tell: the end, or 0. They never
 * decide before a non-ASCII character (no Han among ASCII). */
static inline size_t o200k_fast(const uint8_t *s, size_t n, size_t i, const o200k_variant *v)
{
    size_t w = ascii_cased_word(s, n, i, v->cx);
    if (w)
        return w == DEFER ? 0 : w;
    /* Not one other character before non-ASCII, which may be letters
     * (the letter alternatives come first and take it as their prefix). */
    if (A_X(s[i]) && i + 1 < n && s[i + 1] >= 0x80)
        return 0;
    return ascii_other(s, n, i, v->slash);
}

/* o200k and its relatives: the general path. */
static size_t o200k_slow(const uint8_t *s, size_t n, size_t i, const o200k_variant *v)
{
    size_t len;
    unsigned c = cls_at_k(s, n, i, &len, v->han ? K_HAN : K_PLAIN);
    if (c & C_HAN)
        return run_k(s, n, i + len, C_HAN, K_HAN);
    int prefix = !(c & (C_L | C_N)) && !is_break(s[i]);
    for (int w_plus = 1; w_plus >= 0; w_plus--) {
        size_t e;
        if (prefix && (e = o200k_letters(s, n, i + len, w_plus, v)) != 0)
            return e;
        if ((e = o200k_letters(s, n, i, w_plus, v)) != 0)
            return e;
    }
    if (c & C_N)
        return numbers(s, n, i, v->digits);
    return other_or_whitespace(s, n, i, c, v->slash);
}

/* ---- DeepSeek-V3 ---- */

/* The third regex at s[i], in a piece of the second Split (k: K_OUTSIDE
 * or K_INSIDE a CJK run): where its match ends, or 0 if none starts here.
 * No run crosses the piece's end (C_CJK, see cls_at_k). */
static size_t ds_match(const uint8_t *s, size_t n, size_t i, int k)
{
    size_t len, len2;
    unsigned c = cls_at_k(s, n, i, &len, k);
    uint8_t b = s[i];
    /* [!-/:-@[-`{-~][A-Za-z]+ (ASCII: never inside a CJK run) */
    int ascii_punct = (b >= '!' && b <= '/') || (b >= ':' && b <= '@') ||
                      (b >= '[' && b <= '`') || (b >= '{' && b <= '~');
    if (ascii_punct && i + 1 < n && (s[i + 1] | 0x20) >= 'a' && (s[i + 1] | 0x20) <= 'z') {
        size_t j = i + 1;
        while (j < n && (s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'z')
            j++;
        return j;
    }
    /* [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ */
    if (!(c & (C_L | C_P | C_S | C_CJK)) && !is_break(b) &&
        (cls_at_k(s, n, i + len, &len2, k) & (C_L | C_M)))
        return run_k(s, n, i + len, C_L | C_M, k);
    if (c & (C_L | C_M))
        return run_k(s, n, i, C_L | C_M, k);
    /*  ?[\p{P}\p{S}]+[\r\n]* */
    size_t j = i;
    if (b == ' ' && (cls_at_k(s, n, i + 1, &len2, k) & (C_P | C_S)))
        j = i + 1;
    if (j > i || (c & (C_P | C_S))) {
        j = run_k(s, n, j, C_P | C_S, k);
        while (k != K_INSIDE && j < n && is_break(s[j])) /* line breaks end a CJK run */
            j++;
        return j;
    }
    if (c & C_WS)
        return whitespace(s, n, i, k);
    return 0;
}

/* The third regex's piece at s[i] (k as for ds_match): its match, or the
 * gap up to where one starts or the second Split's piece ends. */
static size_t ds_piece(const uint8_t *s, size_t n, size_t i, size_t len, int k)
{
    size_t e = ds_match(s, n, i, k);
    if (e)
        return e;
    size_t j = i + len;
    while (j < n) {
        size_t l2;
        if ((cls_at_k(s, n, j, &l2, k) & (C_N | C_CJK)) || ds_match(s, n, j, k))
            break;
        j += l2;
    }
    return j;
}

static size_t deepseek_end(const uint8_t *s, size_t n, size_t i)
{
    size_t len;
    unsigned c = cls_at_k(s, n, i, &len, K_OUTSIDE);
    if (c & C_N)
        return numbers(s, n, i, 3);
    return ds_piece(s, n, i, len, c & C_CJK ? K_INSIDE : K_OUTSIDE);
}

static size_t cl100k_piece(const uint8_t *s, size_t n, size_t i)
{
    size_t e = cl100k_fast(s, n, i);
    return e ? e : cl100k_slow(s, n, i, 3);
}

static size_t qwen2_piece(const uint8_t *s, size_t n, size_t i)
{
    size_t e = cl100k_fast(s, n, i);
    return e ? e : cl100k_slow(s, n, i, 1);
}

static size_t o200k_end(const uint8_t *s, size_t n, size_t i)
{
    size_t e = o200k_fast(s, n, i, &O200K);
    return e ? e : o200k_slow(s, n, i, &O200K);
}

static size_t tekken_end(const uint8_t *s, size_t n, size_t i)
{
    size_t e = o200k_fast(s, n, i, &TEKKEN);
    return e ? e : o200k_slow(s, n, i, &TEKKEN);
}

static size_t kimi_end(const uint8_t *s, size_t n, size_t i)
{
    size_t e = o200k_fast(s, n, i, &KIMI);
    return e ? e : o200k_slow(s, n, i, &KIMI);
}

/* ------------------------------------------------------------ the records */

size_t simdbpe__fam_piece_end(int fam, const uint8_t *s, size_t n, size_t i)
{
    switch (fam) {
    case SIMDBPE__FAM_CL100K:
        return cl100k_piece(s, n, i);
    case SIMDBPE__FAM_QWEN2:
        return qwen2_piece(s, n, i);
    case SIMDBPE__FAM_O200K:
        return o200k_end(s, n, i);
    case SIMDBPE__FAM_TEKKEN:
        return tekken_end(s, n, i);
    case SIMDBPE__FAM_KIMI:
        return kimi_end(s, n, i);
    default:
        return deepseek_end(s, n, i);
    }
}

size_t simdbpe__fam_contraction(const uint8_t *s, size_t n, size_t i)
{
    return contraction(s, n, i);
}

/* The entry points the records give out, which fill the piece scanners'
 * ASCII classes on first use. */
#define ENTRY_POINTS(fam, flag, piece)                                                             \
    static void fam##_scan(simdbpe__pretok_state *st, size_t lo, size_t hi, uint64_t *starts)      \
    {                                                                                              \
        pthread_once(&ascii_once, init_ascii);                                                     \
        simdbpe__fam_scan(flag, st, lo, hi, starts);                                               \
    }                                                                                              \
    static size_t fam##_piece_end(const uint8_t *s, size_t n, size_t i)                           \
    {                                                                                              \
        pthread_once(&ascii_once, init_ascii);                                                     \
        return piece(s, n, i);                                                                     \
    }
ENTRY_POINTS(cl100k, SIMDBPE__FAM_CL100K, cl100k_piece)
ENTRY_POINTS(qwen2, SIMDBPE__FAM_QWEN2, qwen2_piece)
ENTRY_POINTS(o200k, SIMDBPE__FAM_O200K, o200k_end)
ENTRY_POINTS(deepseek_v3, SIMDBPE__FAM_DEEPSEEK, deepseek_end)
ENTRY_POINTS(tekken, SIMDBPE__FAM_TEKKEN, tekken_end)
ENTRY_POINTS(kimi, SIMDBPE__FAM_KIMI, kimi_end)

/* The Split patterns of each family, exactly as their tokenizer.json
 * files spell them (escapes resolved: "\\p" is backslash-p; DeepSeek-V3's
 * third pattern holds a real CR and LF). */
static const char *const CL100K_PATTERNS[] = {
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
static const char *const QWEN2_PATTERNS[] = {
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
static const char *const O200K_PATTERNS[] = {
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
static const char *const TEKKEN_PATTERNS[] = {
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
static const char *const KIMI_PATTERNS[] = {
    "[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?"
    "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+"};
static const char *const DEEPSEEK_PATTERNS[] = {
    "\\p{N}{1,3}",
    "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"};

/* tiktoken's cl100k_base pat_str (o200k_base's is the HF pattern). */
static const simdbpe__pretok_spelling CL100K_SPELLINGS[] = {
    {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++"
     "[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s",
     1},
};

/* Their pieces, read one way or the other, start anew at the cuts.c
 * shapes, but for line breaks (".\n" is one piece); runs of \p{N} are
 * split into single characters (Qwen2, Tekken) or groups of three
 * (digits). */
#define FAMILY(fam, title, pats, spelled, n_spelled, digits)                                       \
    const simdbpe__pretok_family simdbpe__pretok_##fam = {                                         \
        .name = title,                                                                             \
        .patterns = pats,                                                                          \
        .n_patterns = sizeof pats / sizeof pats[0],                                                \
        .bytelevel_regex = 0,                                                                      \
        .spellings = spelled,                                                                      \
        .n_spellings = n_spelled,                                                                  \
        .piece_end = fam##_piece_end,                                                              \
        .scan = fam##_scan,                                                                        \
        .cuts = SIMDBPE__CUTS_SHAPES,                                                              \
        .digit_run = digits,                                                                       \
        .train_cut = simdbpe__pretok_cut_shapes,                                                   \
        .train_lines_joined = 0,                                                                   \
        .normalizer = SIMDBPE__NORM_NONE,                                                          \
    };
FAMILY(cl100k, "cl100k", CL100K_PATTERNS, CL100K_SPELLINGS, 1, 3)
FAMILY(qwen2, "qwen2", QWEN2_PATTERNS, NULL, 0, 1)
FAMILY(o200k, "o200k", O200K_PATTERNS, NULL, 0, 3)
FAMILY(deepseek_v3, "deepseek_v3", DEEPSEEK_PATTERNS, NULL, 0, 3)
FAMILY(tekken, "tekken", TEKKEN_PATTERNS, NULL, 0, 1)
/* Kimi K2's \p{N}{1,3} counts its groups from where a piece starts, but
 * a Han number (〇) starting a run is [\p{Han}]+'s: no cuts inside runs. */
FAMILY(kimi, "kimi", KIMI_PATTERNS, NULL, 0, 0)
