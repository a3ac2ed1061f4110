/*
 * test_nfc.c - the encoder's NFC (src/common/nfc.c) cuts text into
 * stretches and sends only some through utf8proc: on text of code points
 * of Unicode 9.0 (the version of HF tokenizers' normalizer) it must give
 * exactly utf8proc's NFC of the whole text. Checked on every code point
 * alone (and after a letter that composes with many marks), and on random
 * strings over code points chosen for what makes NFC hard: precomposed
 * letters, singletons and exclusions, marks of several combining classes
 * (reordering), starters that compose as the second character (Oriya,
 * Hangul jamo), CJK compatibility ideographs. Code points assigned since
 * 9.0 are to HF's normalizer unassigned ones, which stop reordering: the
 * last test holds what HF tokenizers 0.23.2 gives for such text.
 */
#include <criterion/criterion.h>

#include <utf8proc.h>

#include "test_util.h"

#include "encode/encoder.h"

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

static void expect_bytes(simdbpe_encoder *e, const char *in, const char *want)
{
    const uint8_t *got = (const uint8_t *)in;
    size_t n = strlen(in);
    cr_assert_eq(simdbpe__nfc(e, &got, &n), SIMDBPE_OK);
    cr_assert(n == strlen(want) && memcmp(got, want, n) == 0, "NFC of \"%s\"", in);
}

Test(nfc, marks_hf_does_not_know_are_not_reordered)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_encoder *e = tu_encoder(m);
    /* Measured with npm tokenizers 0.23.2 and Qwen3's tokenizer.json: a
     * mark of Unicode 1.1 (U+0316, class 220) moves before one of 1.1
     * (U+0301, 230) and one of 9.0 (U+08D4, 230), not before one of 10.0
     * (U+1DF6, 232) or 11.0 (U+07FD, 220 after U+08DE, 230). */
    expect_bytes(e, "x\u0301\u0316", "x\u0316\u0301");
    expect_bytes(e, "x\u08D4\u0316", "x\u0316\u08D4");
    expect_bytes(e, "x\u1DF6\u0316", "x\u1DF6\u0316");
    expect_bytes(e, "S\u08DE\u07FD", "S\u08DE\u07FD");
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}
