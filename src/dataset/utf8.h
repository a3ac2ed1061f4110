/*
 * utf8.h - decoding and encoding one UTF-8 sequence, for the JSON Lines
 * reader, which checks text that is not known to be valid.
 *
 * Well-formed means Unicode's table 3-7: no overlong forms, no surrogates
 * (U+D800-U+DFFF), nothing above U+10FFFF. The encoder's validator
 * (kernels/) checks whole texts; utf8_valid.h decodes text already checked.
 */
#ifndef SIMDBPE_DATASET_UTF8_H
#define SIMDBPE_DATASET_UTF8_H

#include <stddef.h>

/* Length of the well-formed sequence at s[i] (i < n), with its code point
 * in *cp; 0 if none starts there. */
static inline size_t utf8_decode(const unsigned char *s, size_t n, size_t i, unsigned *cp)
{
    unsigned b = s[i];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xBF, v;
    if (b >= 0xC2 && b <= 0xDF) {
        len = 2;
        v = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        v = b & 0x0F;
        lo = b == 0xE0 ? 0xA0 : 0x80; /* E0 80..9F would be overlong */
        hi = b == 0xED ? 0x9F : 0xBF; /* ED A0..BF would be a surrogate */
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        v = b & 0x07;
        lo = b == 0xF0 ? 0x90 : 0x80; /* F0 80..8F would be overlong */
        hi = b == 0xF4 ? 0x8F : 0xBF; /* F4 90.. would be above U+10FFFF */
    } else {
        return 0;
    }
    if (n - i < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        unsigned c = s[i + k];
        if (c < (k == 1 ? lo : 0x80u) || c > (k == 1 ? hi : 0xBFu))
            return 0;
        v = v << 6 | (c & 0x3F);
    }
    *cp = v;
    return len;
}

/* Writes code point cp (<= U+10FFFF, not a surrogate) as UTF-8; returns
 * the length (1-4). */
static inline size_t utf8_encode(unsigned cp, unsigned char *out)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
