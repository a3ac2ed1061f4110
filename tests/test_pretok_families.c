/*
 * test_pretok_families.c - each pre-tokenizer family's scanner
 * (src/pretok/families.c) against its regexes run by PCRE2 (pretok_ref.h)
 * on random texts over an alphabet of every class the regexes ask about,
 * and on the edge-case texts of tests/data/golden/edge.jsonl (where only
 * code points whose classes PCRE2 and simdbpe agree on are kept).
 */
#include <criterion/criterion.h>

#include "pretok_ref.h"
#include "test_util.h"

#include "pretok/ucd.h"

static const unsigned KINDS[] = {SIMDBPE__PRETOK_CL100K, SIMDBPE__PRETOK_QWEN2,
                                 SIMDBPE__PRETOK_O200K, SIMDBPE__PRETOK_DEEPSEEK_V3};

Test(pretok_families, the_alphabet_has_the_same_classes_in_pcre2)
{
    /* Bits as ref_pcre_classes: L N s M P S Lu Ll Lt Lm Lo. The L, N and
     * s of simdbpe are its Unicode 16 tables (ucd.h). */
    for (size_t i = 0; i < REF_ALPHABET_N; i++) {
        uint32_t cp = REF_ALPHABET[i];
        unsigned p = ref_pcre_classes(cp), c = simdbpe__ucd_class(cp);
        cr_assert_eq((p & 1) != 0, c == SIMDBPE__CP_LETTER, "U+%04X letter", cp);
        cr_assert_eq((p & 2) != 0, c == SIMDBPE__CP_NUMBER, "U+%04X number", cp);
        cr_assert_eq((p & 4) != 0, c == SIMDBPE__CP_SPACE, "U+%04X space", cp);
    }
}

static void check(ref_family *f, unsigned kind, const uint8_t *s, size_t n)
{
    size_t bad = ref_compare(f, kind, s, n);
    if (bad != SIZE_MAX) {
        char show[200];
        tu_show(show, sizeof show, (const char *)s, n < 60 ? n : 60);
        cr_assert_fail("%s: pieces differ at byte %zu of \"%s\" (%zu bytes)",
                       simdbpe__pretok_kind_name(kind), bad, show, n);
    }
}

Test(pretok_families, random_texts_split_as_the_regexes_do, .timeout = 300)
{
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++) {
        ref_family f;
        ref_open(&f, KINDS[k]);
        uint64_t x = 0x2545F4914F6CDD1DULL + k;
        uint8_t data[48], text[48 * 4];
        for (int t = 0; t < 40000; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = 1 + (size_t)(x % 40);
            for (size_t i = 0; i < len; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                data[i] = (uint8_t)(x >> 24);
            }
            size_t n = ref_text(data, len, text);
            check(&f, KINDS[k], text, n);
        }
        ref_close(&f);
    }
}
