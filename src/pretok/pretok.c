/*
 * pretok.c - the GPT-2 pre-tokenizer scanner; see pretok.h for the rules.
 */
#include "pretok.h"

#include "ucd.h"

#define L SIMDBPE__CP_LETTER
#define N SIMDBPE__CP_NUMBER
#define S SIMDBPE__CP_SPACE
#define O SIMDBPE__CP_OTHER

/* \t \n \v \f \r and ' ' are whitespace; A-Z a-z letters; 0-9 numbers. */
const uint8_t simdbpe__ascii_class[128] = {
    O, O, O, O, O, O, O, O, O, S, S, S, S, S, O, O, /* 0x00 */
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, /* 0x10 */
    S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, /* 0x20 */
    N, N, N, N, N, N, N, N, N, N, O, O, O, O, O, O, /* 0x30 */
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* 0x40 */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, /* 0x50 */
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* 0x60 */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, /* 0x70 */
};

/* Decodes the (valid) code point at s[i]; returns its class and sets
 * *len to its length in bytes. */
static inline unsigned class_at(const uint8_t *s, size_t i, size_t *len)
{
    uint8_t c = s[i];
    uint32_t cp;
    if (c < 0x80) {
        *len = 1;
        return simdbpe__ascii_class[c];
    }
    if (c < 0xE0) {
        *len = 2;
        cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
    } else if (c < 0xF0) {
        *len = 3;
        cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
    } else {
        *len = 4;
        cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
             (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
    }
    return simdbpe__ucd_class(cp);
}

/* The end of the run of code points of class `cls` starting at s[i]. For
 * `O` the run is of code points that are neither L, N nor S, which is
 * exactly class O. */
static inline size_t run_end(const uint8_t *s, size_t n, size_t i, unsigned cls)
{
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            if (simdbpe__ascii_class[c] != cls)
                break;
            i++;
            continue;
        }
        size_t len;
        if (class_at(s, i, &len) != cls)
            break;
        i += len;
    }
    return i;
}

/* The length of a contraction ('s 't 'm 'd 're 've 'll) at s[i] == '\'',
 * or 0. */
static inline size_t contraction_len(const uint8_t *s, size_t n, size_t i)
{
    if (i + 1 >= n)
        return 0;
    uint8_t a = s[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (i + 2 >= n)
        return 0;
    uint8_t b = s[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

/* The start of the last code point before s[j] (j > 0). */
static inline size_t last_cp_start(const uint8_t *s, size_t j)
{
    do
        j--;
    while ((s[j] & 0xC0) == 0x80);
    return j;
}

size_t simdbpe__pretok_piece_end(const uint8_t *s, size_t n, size_t i)
{
    size_t len;
    if (s[i] == '\'') {
        size_t c = contraction_len(s, n, i);
        if (c)
            return i + c;
    }
    unsigned cls = class_at(s, i, &len);
    if (s[i] == ' ' && i + 1 < n) {
        size_t len2;
        unsigned next = class_at(s, i + 1, &len2);
        if (next != S)
            return run_end(s, n, i + 1 + len2, next);
    }
    if (cls != S)
        return run_end(s, n, i + len, cls);
    size_t j = run_end(s, n, i + len, S);
    if (j == n)
        return n;
    size_t last = last_cp_start(s, j);
    return last > i ? last : j;
}
