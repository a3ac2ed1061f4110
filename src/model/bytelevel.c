/*
 * bytelevel.c - GPT-2's byte-level alphabet.
 *
 * vocab.json and merges.txt spell every byte as one printable code point:
 * bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for themselves; the other
 * 68 bytes (0x00-0x20, 0x7F-0xA0, 0xAD), in ascending order, stand for
 * U+0100, U+0101, ... U+0143. So ' ' (0x20) is U+0120 'Ġ'.
 */
#include "../common/utf8_valid.h"
#include "model.h"

static int prints_as_itself(uint8_t b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

uint32_t simdbpe__bytelevel_cp(uint8_t b)
{
    if (prints_as_itself(b))
        return b;
    /* The bytes that do not print as themselves, in order: 0x00-0x20 (33),
     * 0x7F-0xA0 (34), 0xAD. */
    if (b <= 0x20)
        return 0x100u + b;
    if (b <= 0xA0)
        return 0x100u + 33 + (b - 0x7Fu);
    return 0x143; /* 0xAD */
}

size_t simdbpe__bytelevel_string(const uint8_t *b, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += simdbpe__utf8_encode(simdbpe__bytelevel_cp(b[i]), (uint8_t *)out + k);
    return k;
}

int simdbpe__bytelevel_byte(uint32_t cp)
{
    if (cp < 0x100)
        return prints_as_itself((uint8_t)cp) ? (int)cp : -1;
    if (cp > 0x143)
        return -1;
    uint32_t n = cp - 0x100;
    for (unsigned c = 0; c < 256; c++) {
        if (!prints_as_itself((uint8_t)c)) {
            if (n == 0)
                return (int)c;
            n--;
        }
    }
    return -1;
}
