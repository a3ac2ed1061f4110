/*
 * fuzz_pretok_family.c - each pre-tokenizer family's scanner against its
 * regexes run by PCRE2 (tests/pretok_ref.h). The first input byte picks
 * the family, each further byte a code point of the reference alphabet;
 * the pieces must be the same.
 */
#include "fuzz.h"
#include "pretok_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned kinds[] = {SIMDBPE__PRETOK_CL100K, SIMDBPE__PRETOK_QWEN2,
                                     SIMDBPE__PRETOK_O200K, SIMDBPE__PRETOK_DEEPSEEK_V3};
    static ref_family fam[4];
    static int ready;
    if (!ready) {
        for (int k = 0; k < 4; k++)
            ref_open(&fam[k], kinds[k]);
        ready = 1;
    }
    if (size < 1 || size > 4096)
        return 0;
    unsigned k = data[0] % 4;
    uint8_t *text = malloc(4 * size);
    size_t n = ref_text(data + 1, size - 1, text);
    size_t bad = ref_compare(&fam[k], kinds[k], text, n);
    FUZZ_CHECK(bad == SIZE_MAX, "%s: pieces differ at byte %zu of %zu",
               simdbpe__pretok_kind_name(kinds[k]), bad, n);
    free(text);
    return 0;
}
