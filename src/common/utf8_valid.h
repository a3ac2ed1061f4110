/*
 * utf8_valid.h - decoding one code point of text already known to be valid
 * UTF-8 (the kernels' validate_utf8 checks it first): the library's one
 * decoder for the scanners and the normalizer. No bounds or validity
 * checks: a valid sequence never runs past its text.
 */
#ifndef SIMDBPE_UTF8_VALID_H
#define SIMDBPE_UTF8_VALID_H

#include <stddef.h>
#include <stdint.h>

/* The code point at s[i] and, in *len, its length in bytes (1-4). */
static inline uint32_t simdbpe__utf8_decode(const uint8_t *s, size_t i, size_t *len)
{
    uint8_t c = s[i];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
    }
    if (c < 0xF0) {
        *len = 3;
        return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
    }
    *len = 4;
    return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
           (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
}

#endif
