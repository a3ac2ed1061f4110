/*
 * pretok_ref.h - a slow, independent reference for the pre-tokenizer
 * families: the families' own regexes (their records' patterns, the
 * texts of their tokenizer.json files) run by PCRE2, a backtracking
 * engine with the same leftmost-first alternation as Oniguruma (HF) and
 * fancy-regex (tiktoken), applied as HF applies Split(Isolated): matches
 * and the gaps between them are pieces, each later Split re-splits the
 * pieces of the one before. Used by test_pretok_families.c and the fuzz
 * target fuzz_pretok_family.c.
 *
 * PCRE2 has Unicode tables of its own version; the texts compared are
 * built from REF_ALPHABET, code points whose classes PCRE2 and simdbpe's
 * tables agree on (ref_check_alphabet checks it), chosen to cover every
 * class the regexes ask about: letters of each case class, marks,
 * numbers of each kind, whitespace of each kind (line breaks included),
 * punctuation, symbols, format and control characters, unassigned and
 * private-use code points, the CJK and kana of DeepSeek's second Split
 * (letters, and the punctuation, symbols, marks and gaps of its ranges),
 * Han characters of every category Kimi K2's [\p{Han}]+ takes, and the
 * letters of the contractions with U+017F (long s).
 *
 * PCRE2 10.42 has no class intersection: Kimi K2's [C&&[^\p{Han}]] is
 * given to it as (?:(?!\p{sc:Han})[C]), the same set, and its \p{Han} as
 * \p{sc:Han}: PCRE2's \p{Han} is Script_Extensions=Han (U+30FB too),
 * Oniguruma's (HF's) Script=Han (ref_pcre2_pattern).
 */
#ifndef SIMDBPE_TESTS_PRETOK_REF_H
#define SIMDBPE_TESTS_PRETOK_REF_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pretok/pretok.h"

static const uint32_t REF_ALPHABET[] = {
    'a', 'b', 's', 't', 'r', 'e', 'v', 'm', 'l', 'd', 'A', 'S', 'T', 'L', 'R', 'E', 'V', 'M', 'D',
    'z', 'Q', '0', '1', '9', ' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\'', '\'', '!', '.',
    '/', '/', '$', '+', '^', '(', '_', '-', '"', 0x00, 0x01, 0x7F, 0xE9, 0xC9, 0xDF, 0x17F,
    0x1C5, 0x2B0, 0x5D0, 0x3B1, 0x391, 0x436, 0x416, 0x301, 0x308, 0x903, 0x20DD, 0x663, 0xBD,
    0x216B, 0xFF11, 0xA0, 0x3000, 0x2028, 0x85, 0x200D, 0xFEFF, 0x2014, 0x2018, 0x2019, 0x2212,
    0x263A, 0x2C2, 0x4E00, 0x4E8C, 0x9FA5, 0x9FA6, 0x3042, 0x30A2, 0x30FC, 0x3007, 0xE000,
    0x1F600, 0x10FFFD, 0xAC00, 0x1100, 0x30FB, 0x309B, 0x30A0, 0x3040, 0x3099, 0x309F,
    /* Han that is no Lo (Kimi K2): Lm, So, Nl, Mc; and of 4 bytes */
    0x3005, 0x2E80, 0x3021, 0x16FF0, 0x20000};
#define REF_ALPHABET_N (sizeof REF_ALPHABET / sizeof REF_ALPHABET[0])

typedef struct ref_family {
    pcre2_code *re[3];
    size_t n;
    pcre2_match_data *md;
} ref_family;

static inline void ref_die(const char *what)
{
    fprintf(stderr, "pretok_ref: %s\n", what);
    abort();
}

/* `pat` with each class [C&&[^\p{Han}]] (C without brackets) written
 * (?:(?!\p{sc:Han})[C]) and every other \p{Han} \p{sc:Han}; malloc'd.
 * Any other && aborts. */
static inline char *ref_pcre2_pattern(const char *pat)
{
    static const char inter[] = "&&[^\\p{Han}]]";
    char *out = malloc(4 * strlen(pat) + 1);
    size_t o = 0;
    for (const char *p = pat; *p;) {
        const char *hit = strstr(p, inter);
        if (!hit) {
            strcpy(out + o, p);
            o += strlen(p);
            break;
        }
        const char *open = hit;
        while (open > p && *open != '[')
            open--;
        if (*open != '[' || (open > pat && open[-1] == '\\'))
            ref_die("a class intersection pretok_ref.h cannot rewrite");
        memcpy(out + o, p, (size_t)(open - p));
        o += (size_t)(open - p);
        o += (size_t)sprintf(out + o, "(?:(?!\\p{sc:Han})%.*s])", (int)(hit - open), open);
        p = hit + strlen(inter);
    }
    out[o] = '\0';
    if (strstr(out, "&&"))
        ref_die("a class intersection pretok_ref.h cannot rewrite");
    for (char *h; (h = strstr(out, "\\p{Han}")) != NULL;) {
        memmove(h + 6, h + 3, strlen(h + 3) + 1); /* \p{Han} -> \p{sc:Han} */
        memcpy(h + 3, "sc:", 3);
    }
    return out;
}

static inline void ref_open(ref_family *f, unsigned kind)
{
    const simdbpe__pretok_family *fam = simdbpe__pretok_family_of(kind);
    const char *const *pats = fam->patterns;
    f->n = fam->n_patterns;
    if (f->n > sizeof f->re / sizeof f->re[0])
        ref_die("a family has more patterns than ref_family holds");
    for (size_t i = 0; i < f->n; i++) {
        int code;
        PCRE2_SIZE off;
        char *pat = ref_pcre2_pattern(pats[i]);
        f->re[i] = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &code, &off, NULL);
        free(pat);
        if (!f->re[i])
            ref_die("a family pattern does not compile");
    }
    f->md = pcre2_match_data_create(4, NULL);
}

static inline void ref_close(ref_family *f)
{
    for (size_t i = 0; i < f->n; i++)
        pcre2_code_free(f->re[i]);
    pcre2_match_data_free(f->md);
}

/* Marks in start[] (one byte per text byte) the starts of the pieces that
 * Split(Isolated) with regex `re` makes of s[a..b). */
static inline void ref_split(ref_family *f, pcre2_code *re, const uint8_t *s, size_t a, size_t b,
                      uint8_t *start)
{
    size_t at = a;
    while (at < b) {
        int rc = pcre2_match(re, s + a, b - a, at - a, PCRE2_NO_UTF_CHECK, f->md, NULL);
        if (rc < 0) {
            start[at] = 1; /* the rest is a gap */
            return;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(f->md);
        size_t m0 = a + ov[0], m1 = a + ov[1];
        if (m0 > at)
            start[at] = 1; /* a gap before the match */
        if (m1 == m0) { /* an empty match: none of the families has one */
            if (m0 >= b)
                return;
            at = m0 + 1;
            while (at < b && (s[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        start[m0] = 1;
        at = m1;
    }
}

/* The piece starts of the whole text s[0..n), into start[0..n). */
static inline void ref_pieces(ref_family *f, const uint8_t *s, size_t n, uint8_t *start)
{
    memset(start, 0, n);
    if (n == 0)
        return;
    start[0] = 1;
    uint8_t *prev = malloc(n + 1);
    for (size_t k = 0; k < f->n; k++) {
        memcpy(prev, start, n);
        prev[n] = 1;
        memset(start, 0, n);
        for (size_t a = 0; a < n;) {
            size_t b = a + 1;
            while (!prev[b])
                b++;
            ref_split(f, f->re[k], s, a, b, start);
            a = b;
        }
    }
    free(prev);
}

/* The classes a regex asks about, as PCRE2 sees code point cp. */
static inline unsigned ref_pcre_classes(uint32_t cp)
{
    static const char *const cls[] = {"\\p{L}", "\\p{N}", "\\s", "\\p{M}", "\\p{P}",
                                      "\\p{S}", "\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}",
                                      "\\p{Lo}", "\\p{sc:Han}"};
    unsigned bits = 0;
    uint8_t buf[4];
    size_t len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (len == 1)
        buf[0] = (uint8_t)cp;
    else if (len == 2)
        buf[0] = (uint8_t)(0xC0 | cp >> 6), buf[1] = (uint8_t)(0x80 | (cp & 0x3F));
    else if (len == 3)
        buf[0] = (uint8_t)(0xE0 | cp >> 12), buf[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)),
        buf[2] = (uint8_t)(0x80 | (cp & 0x3F));
    else
        buf[0] = (uint8_t)(0xF0 | cp >> 18), buf[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F)),
        buf[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)), buf[3] = (uint8_t)(0x80 | (cp & 0x3F));
    for (unsigned i = 0; i < sizeof cls / sizeof *cls; i++) {
        int code;
        PCRE2_SIZE off;
        char pat[32];
        snprintf(pat, sizeof pat, "^%s$", cls[i]);
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                       PCRE2_UTF | PCRE2_UCP, &code, &off, NULL);
        pcre2_match_data *md = pcre2_match_data_create(1, NULL);
        if (pcre2_match(re, buf, len, 0, 0, md, NULL) >= 0)
            bits |= 1u << i;
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    return bits;
}

/* Encodes REF_ALPHABET[data[i] % N] for each input byte into out (4 bytes
 * a byte at most); returns the length. */
static inline size_t ref_text(const uint8_t *data, size_t n, uint8_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = REF_ALPHABET[data[i] % REF_ALPHABET_N];
        if (cp < 0x80) {
            out[k++] = (uint8_t)cp;
        } else if (cp < 0x800) {
            out[k++] = (uint8_t)(0xC0 | cp >> 6);
            out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out[k++] = (uint8_t)(0xE0 | cp >> 12);
            out[k++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else {
            out[k++] = (uint8_t)(0xF0 | cp >> 18);
            out[k++] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
            out[k++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
        }
    }
    return k;
}

/* The first byte offset where the family's scanner and the reference
 * disagree on s[0..n), or SIZE_MAX. */
static inline size_t ref_compare(ref_family *f, unsigned kind, const uint8_t *s, size_t n)
{
    uint8_t *want = malloc(n + 1), *got = calloc(n + 1, 1);
    ref_pieces(f, s, n, want);
    for (size_t i = 0; i < n;) {
        got[i] = 1;
        size_t e = simdbpe__pretok_family_piece_end((simdbpe__pretok_kind)kind, s, n, i);
        if (e <= i || e > n) {
            free(want);
            free(got);
            return i;
        }
        i = e;
    }
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < n && bad == SIZE_MAX; i++)
        if (want[i] != got[i])
            bad = i;
    free(want);
    free(got);
    return bad;
}

#endif
