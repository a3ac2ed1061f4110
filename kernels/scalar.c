/*
 * scalar.c - the portable reference kernels.
 *
 * UTF-8 well-formedness follows Unicode Table 3-7:
 *
 *   code points         byte 1   byte 2   byte 3   byte 4
 *   U+0000..U+007F      00..7F
 *   U+0080..U+07FF      C2..DF   80..BF
 *   U+0800..U+0FFF      E0       A0..BF   80..BF
 *   U+1000..U+CFFF      E1..EC   80..BF   80..BF
 *   U+D000..U+D7FF      ED       80..9F   80..BF
 *   U+E000..U+FFFF      EE..EF   80..BF   80..BF
 *   U+10000..U+3FFFF    F0       90..BF   80..BF   80..BF
 *   U+40000..U+FFFFF    F1..F3   80..BF   80..BF   80..BF
 *   U+100000..U+10FFFF  F4       80..8F   80..BF   80..BF
 */
#include "kernels.h"

/* The allowed range of the second byte for each lead byte, and the
 * sequence length; length 0 marks a byte that cannot start a sequence. */
static void lead_info(uint8_t c, unsigned *len, uint8_t *lo, uint8_t *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c < 0x80)
        *len = 1;
    else if (c < 0xC2)
        *len = 0;
    else if (c < 0xE0)
        *len = 2;
    else if (c < 0xF0) {
        *len = 3;
        if (c == 0xE0)
            *lo = 0xA0;
        else if (c == 0xED)
            *hi = 0x9F;
    } else if (c < 0xF5) {
        *len = 4;
        if (c == 0xF0)
            *lo = 0x90;
        else if (c == 0xF4)
            *hi = 0x8F;
    } else
        *len = 0;
}

/* How many leading bytes of s form a well-formed prefix of one sequence
 * (1..4), and through *complete whether it is a whole sequence. */
static size_t valid_prefix(const uint8_t *s, size_t len, int *complete)
{
    unsigned need;
    uint8_t lo, hi;
    lead_info(s[0], &need, &lo, &hi);
    *complete = 0;
    if (need == 0)
        return 0;
    size_t n = 1;
    while (n < need && n < len) {
        uint8_t c = s[n];
        if (n == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF))
            break;
        n++;
    }
    *complete = n == need;
    return n;
}

size_t simdbpe__utf8_sequence_len(const uint8_t *s, size_t len)
{
    int complete;
    size_t n = valid_prefix(s, len, &complete);
    return complete ? n : 0;
}

size_t simdbpe__utf8_maximal_subpart(const uint8_t *s, size_t len)
{
    int complete;
    size_t n = valid_prefix(s, len, &complete);
    return n ? n : 1;
}

size_t simdbpe__utf8_validate_from(const uint8_t *s, size_t len, size_t i)
{
    while (i < len) {
        /* Skip ASCII eight bytes at a time. */
        while (i + 8 <= len) {
            uint64_t w;
            __builtin_memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= len)
            break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = simdbpe__utf8_sequence_len(s + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

static size_t validate_utf8_scalar(const uint8_t *s, size_t len)
{
    return simdbpe__utf8_validate_from(s, len, 0);
}

/* The classes of one byte, as bits in the order of simdbpe__block_masks. */
enum {
    C_LETTER = 1, C_DIGIT = 2, C_WS = 4, C_SPACE = 8, C_APOS = 16, C_HIGH = 32, C_CONT = 64,
    C_BR = 128, C_SLASH = 256, C_LOWER = 512
};

static unsigned ascii_classes(uint8_t c)
{
    if (c >= 0x80)
        return C_HIGH | (c < 0xC0 ? C_CONT : 0);
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
        return C_LETTER;
    if (c >= '0' && c <= '9')
        return C_DIGIT;
    if (c == ' ')
        return C_WS | C_SPACE;
    if (c == '\r' || c == '\n')
        return C_WS | C_BR;
    if (c >= '\t' && c <= '\r')
        return C_WS;
    if (c == '/')
        return C_SLASH;
    return c == '\'' ? C_APOS : 0;
}

static unsigned byte_classes(uint8_t c)
{
    return ascii_classes(c) | (c & 0x20 ? C_LOWER : 0);
}

static void classify_ext_scalar(const uint8_t *s, size_t len, simdbpe__block_masks *out)
{
    for (size_t b = 0; b * 64 < len; b++) {
        simdbpe__block_masks m = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        size_t n = len - b * 64 < 64 ? len - b * 64 : 64;
        for (size_t i = 0; i < n; i++) {
            unsigned c = byte_classes(s[b * 64 + i]);
            uint64_t bit = 1ULL << i;
            m.letter |= (c & C_LETTER) ? bit : 0;
            m.digit |= (c & C_DIGIT) ? bit : 0;
            m.ws |= (c & C_WS) ? bit : 0;
            m.space |= (c & C_SPACE) ? bit : 0;
            m.apos |= (c & C_APOS) ? bit : 0;
            m.high |= (c & C_HIGH) ? bit : 0;
            m.cont |= (c & C_CONT) ? bit : 0;
            m.br |= (c & C_BR) ? bit : 0;
            m.slash |= (c & C_SLASH) ? bit : 0;
            m.lower |= (c & C_LOWER) ? bit : 0;
        }
        out[b] = m;
    }
}

static void classify_scalar(const uint8_t *s, size_t len, simdbpe__block_masks *out)
{
    classify_ext_scalar(s, len, out);
    for (size_t b = 0; b * 64 < len; b++)
        out[b].br = out[b].slash = out[b].lower = 0;
}

static void map_bytes_scalar(const uint8_t *s, size_t len, const uint32_t table[256],
                             uint32_t *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = table[s[i]];
}

int simdbpe__lead_classes_scalar(const uint8_t *s, uint64_t leads, const uint32_t *bmp2,
                                 simdbpe__lead_classes *out)
{
    simdbpe__lead_classes r = {0, 0, 0, 0};
    for (; leads; leads &= leads - 1) {
        unsigned i = (unsigned)__builtin_ctzll(leads);
        uint64_t bit = 1ULL << i;
        uint32_t c = s[i], cp;
        if (c >= 0xF0)
            return 0;
        if (c >= 0xE0) {
            cp = (c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            r.three |= bit;
        } else {
            cp = (c & 0x1F) << 6 | (s[i + 1] & 0x3F);
        }
        unsigned cls = bmp2[cp >> 4] >> 2 * (cp & 15) & 3;
        r.letter |= cls == 1 ? bit : 0;
        r.digit |= cls == 2 ? bit : 0;
        r.ws |= cls == 3 ? bit : 0;
    }
    *out = r;
    return 1;
}

void simdbpe__lead_codes_scalar(const uint8_t *s, uint64_t leads, const uint32_t *codes,
                                simdbpe__lead_codes *out)
{
    simdbpe__lead_codes r = {{0, 0, 0, 0}, 0, 0};
    for (; leads; leads &= leads - 1) {
        unsigned i = (unsigned)__builtin_ctzll(leads);
        uint64_t bit = 1ULL << i;
        uint32_t c = s[i], cp;
        if (c >= 0xF0) {
            r.four |= bit;
            continue;
        }
        if (c >= 0xE0) {
            cp = (c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            r.three |= bit;
        } else {
            cp = (c & 0x1F) << 6 | (s[i + 1] & 0x3F);
        }
        uint64_t code = codes[cp >> 3] >> 4 * (cp & 7) & 15;
        for (int k = 0; k < 4; k++)
            r.bit[k] |= (code >> k & 1) << i;
    }
    *out = r;
}

const simdbpe__kernels simdbpe__kernels_scalar = {
    "scalar",
    validate_utf8_scalar,
    classify_scalar,
    classify_ext_scalar,
    map_bytes_scalar,
    simdbpe__lead_classes_scalar,
    simdbpe__lead_codes_scalar,
};
