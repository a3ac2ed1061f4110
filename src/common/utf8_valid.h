/*
 * utf8_valid.h - decoding one code point of text already known to be valid
 * UTF-8 (the kernels' validate_utf8 checks it first), and encoding one: the
 * library's one decoder for the scanners and the normalizer, and its one
 * encoder. No bounds or validity checks: a valid sequence never runs past
 * its text. (Text not known to be valid: simdbpe__utf8_sequence_len in
 * kernels.h tells the length of the valid sequence at a byte, or 0.)
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

/* Writes code point cp (at most U+10FFFF, no surrogate) as UTF-8 at out;
 * returns its length (1-4). */
static inline size_t simdbpe__utf8_encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
