/*
 * fuzz_pretok_family.c - each pre-tokenizer family's scanners against its
 * regexes run by PCRE2 (tests/pretok_ref.h). The first input byte picks
 * the family, each further byte a code point of the reference alphabet;
 * the pieces must be the same, one piece at a time
 * (simdbpe__pretok_family_piece_end) and by the chunk scanner the encoder
 * runs (simdbpe__pretok_next, every kernel set of this CPU; texts of up to
 * 16 KB, many blocks).
 */
#include "fuzz.h"
#include "pretok_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Every family of the library's table with patterns of its own (the
     * generic one has none). */
    static ref_family fam[32];
    static unsigned kinds[32], n_fams;
    if (!n_fams)
        for (unsigned k = 0; k < 32 && simdbpe__pretok_family_of(k); k++)
            if (!simdbpe__pretok_family_of(k)->generic) {
                kinds[n_fams] = k;
                ref_open(&fam[n_fams++], k);
            }
    if (size < 1 || size > 4096)
        return 0;
    unsigned f = data[0] % n_fams, k = kinds[f];
    uint8_t *text = malloc(4 * size);
    size_t n = ref_text(data + 1, size - 1, text);
    size_t bad = ref_compare(&fam[f], k, text, n);
    FUZZ_CHECK(bad == SIZE_MAX, "%s: pieces differ at byte %zu of %zu",
               simdbpe__pretok_kind_name(k), bad, n);

    uint8_t *want = malloc(n + 1);
    ref_pieces(&fam[f], text, n, want);
    for (const simdbpe__kernels *const *ks = simdbpe__kernels_available(); *ks; ks++) {
        simdbpe__pretok_state st;
        simdbpe__pretok_begin_kind(&st, k, *ks, text, n);
        uint64_t starts[SIMDBPE__PRETOK_CHUNK];
        size_t base, count;
        while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0)
            for (size_t i = base; i < base + 64 * count && i < n; i++)
                FUZZ_CHECK((starts[(i - base) >> 6] >> ((i - base) & 63) & 1) == want[i],
                           "%s (%s kernels): chunk scanner's piece start %s at byte %zu of %zu",
                           simdbpe__pretok_kind_name(k), (*ks)->name,
                           want[i] ? "missing" : "extra", i, n);
    }
    free(want);
    free(text);
    return 0;
}
