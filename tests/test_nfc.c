/*
 * test_nfc.c - the encoder's NFC (src/encode/nfc.c) cuts text into
 * stretches and sends only some through utf8proc: it must give exactly
 * utf8proc's NFC of the whole text. Checked on every code point alone
 * (and after a letter that composes with many marks), and on random
 * strings over code points chosen for what makes NFC hard: precomposed
 * letters, singletons and exclusions, marks of several combining classes
 * (reordering), starters that compose as the second character (Oriya,
 * Hangul jamo), CJK compatibility ideographs.
 */
#include <criterion/criterion.h>

#include <utf8proc.h>

#include "test_util.h"

#include "../src/encode/encoder.h"

static void expect_nfc(simdbpe_encoder *e, const uint8_t *s, size_t n)
{
    utf8proc_uint8_t *want = NULL;
    utf8proc_ssize_t wn = utf8proc_map(s, (utf8proc_ssize_t)n, &want,
                                       UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    cr_assert_geq(wn, 0);
    const uint8_t *got = s;
    size_t gn = n;
    cr_assert_eq(simdbpe__nfc(e, &got, &gn), SIMDBPE_OK);
    char show[120];
    tu_show(show, sizeof show, (const char *)s, n);
    cr_assert(gn == (size_t)wn && memcmp(got, want, gn) == 0, "NFC differs for \"%s\"", show);
    free(want);
}

Test(nfc, every_code_point_alone_and_after_a_letter)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_encoder *e = tu_encoder(m);
    for (uint32_t cp = 1; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        uint8_t buf[8] = {'e'};
        size_t n = (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, buf + 1);
        expect_nfc(e, buf + 1, n);
        expect_nfc(e, buf, n + 1);
    }
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}

Test(nfc, random_strings_of_hard_cases)
{
    static const uint32_t alphabet[] = {
        'a', 'e', 'A', ' ', 0xE9, 0xC5, 0x212B, 0x2126, 0x301, 0x308, 0x323, 0x327, 0x31B,
        0x344, 0x958, 0x93C, 0xB47, 0xB3E, 0xB56, 0x1100, 0x1161, 0x11A8, 0xAC00, 0xAC01,
        0xF900, 0x2F800, 0x3099, 0x304B, 0x1E0A, 0x1E9B, 0x4E00, 0x5A, 0x05D0, 0x05B4};
    size_t na = sizeof alphabet / sizeof *alphabet;
    simdbpe_model *m = tu_gpt2();
    simdbpe_encoder *e = tu_encoder(m);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int t = 0; t < 200000; t++) {
        uint8_t buf[128];
        size_t n = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int len = 1 + (int)(x % 12);
        for (int k = 0; k < len; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n += (size_t)utf8proc_encode_char((utf8proc_int32_t)alphabet[x % na], buf + n);
        }
        expect_nfc(e, buf, n);
    }
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}
