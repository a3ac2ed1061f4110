/*
 * test_kernels.c - every kernel set this build and CPU support against the
 * scalar reference, and the block pre-tokenizer against the code-point
 * scanner.
 *
 * Lengths cover every block boundary the SIMD code has: 0..130 and the
 * neighbourhood of multiples of 16, 32 and 64 up to 1 KiB. UTF-8 inputs are
 * random valid text (1- to 4-byte characters) with one defect injected at
 * every position in turn (a stray continuation, a bad lead, a truncated
 * character, an overlong form, a surrogate, a code point above U+10FFFF),
 * so the SIMD validator's fallback must find exactly the scalar offset.
 * Each input is copied into a buffer of exactly its size, so a kernel that
 * reads past the end shows up under AddressSanitizer.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "pretok/pretok.h"
#include "pretok/ucd.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

/* The lengths worth testing: every one up to 130, then around multiples
 * of 16 up to 1040. */
static size_t lengths[512];
static size_t n_lengths;
static void init_lengths(void)
{
    n_lengths = 0;
    for (size_t n = 0; n <= 130; n++)
        lengths[n_lengths++] = n;
    for (size_t m = 144; m <= 1040; m += 16)
        for (int d = -2; d <= 2; d++)
            lengths[n_lengths++] = (size_t)((long)m + d);
}

/* Writes code point cp (not a surrogate) as UTF-8; returns its length. */
static size_t put_cp(uint8_t *p, uint32_t cp)
{
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n == 1)
        p[0] = (uint8_t)cp;
    else if (n == 2) {
        p[0] = (uint8_t)(0xC0 | cp >> 6);
        p[1] = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (n == 3) {
        p[0] = (uint8_t)(0xE0 | cp >> 12);
        p[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        p[2] = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
        p[0] = (uint8_t)(0xF0 | cp >> 18);
        p[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        p[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        p[3] = (uint8_t)(0x80 | (cp & 0x3F));
    }
    return n;
}

/* Writes one random valid character (of `want` bytes if it fits); returns
 * its length. */
static size_t put_char(uint8_t *p, size_t room)
{
    static const uint32_t samples[] = {'a', ' ', '\n', '7', '\'', 0xE9, 0x391, 0x5D0, 0x4E2D,
                                       0x3000, 0xA0, 0x2028, 0xFEFF, 0x1F600, 0x10FFFF, 0x0,
                                       0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0xD7FF,
                                       0xE000};
    uint32_t cp = rnd() % 3 ? (uint32_t)(' ' + rnd() % 95)
                            : samples[rnd() % (sizeof samples / sizeof *samples)];
    if ((cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u) > room)
        cp = 'x';
    return put_cp(p, cp);
}

static void random_text(uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len;)
        i += put_char(p + i, len - i);
}

static uint8_t *exact_copy(const uint8_t *s, size_t len)
{
    uint8_t *c = malloc(len ? len : 1);
    cr_assert(c);
    memcpy(c, s, len);
    return c;
}

static void check_validate(const uint8_t *s, size_t len, const char *what, size_t pos)
{
    uint8_t *c = exact_copy(s, len);
    size_t want = simdbpe__kernels_scalar.validate_utf8(c, len);
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
        size_t got = (*k)->validate_utf8(c, len);
        cr_assert_eq(got, want, "%s validate_utf8, length %zu, %s at %zu: %zu, scalar %zu",
                     (*k)->name, len, what, pos, got, want);
    }
    free(c);
}

Test(kernels, scalar_is_always_available)
{
    const simdbpe__kernels *const *k = simdbpe__kernels_available();
    size_t n = 0;
    while (k[n])
        n++;
    cr_assert(n >= 1);
    cr_assert_eq(k[n - 1], &simdbpe__kernels_scalar, "the scalar set comes last");
    cr_assert_eq(simdbpe__kernels_select("scalar"), &simdbpe__kernels_scalar);
    cr_assert_null(simdbpe__kernels_select("no-such-isa"));
    cr_assert_eq(simdbpe__kernels_select(NULL), k[0], "no choice = the best set");
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(simdbpe__kernels_select(k[i]->name), k[i]);
}

Test(kernels, validate_valid_text_at_block_lengths)
{
    init_lengths();
    uint8_t buf[1100];
    for (size_t li = 0; li < n_lengths; li++) {
        random_text(buf, lengths[li]);
        cr_assert_eq(simdbpe__kernels_scalar.validate_utf8(buf, lengths[li]), lengths[li]);
        check_validate(buf, lengths[li], "nothing wrong", 0);
    }
}

Test(kernels, validate_a_defect_at_every_position)
{
    /* Each defect is a byte string written over the text at `pos`. */
    static const struct {
        const char *what;
        uint8_t bytes[4];
        size_t n;
    } defects[] = {
        {"stray continuation", {0x80}, 1},  {"byte FF", {0xFF}, 1},
        {"lead C0 (overlong)", {0xC0, 0x80}, 2}, {"lead without continuation", {0xE4, 'a'}, 2},
        {"overlong E0", {0xE0, 0x80, 0x80}, 3}, {"surrogate", {0xED, 0xA0, 0x80}, 3},
        {"overlong F0", {0xF0, 0x80, 0x80, 0x80}, 4}, {"above U+10FFFF", {0xF4, 0x90, 0x80, 0x80}, 4},
        {"lead F5", {0xF5, 0x80, 0x80, 0x80}, 4}, {"4-byte cut short", {0xF0, 0x9F, 0x98, 'x'}, 4},
    };
    uint8_t buf[300];
    static const size_t lens[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        size_t len = lens[li];
        for (size_t d = 0; d < sizeof defects / sizeof *defects; d++) {
            for (size_t pos = 0; pos < len; pos++) {
                random_text(buf, len);
                size_t n = defects[d].n < len - pos ? defects[d].n : len - pos;
                memcpy(buf + pos, defects[d].bytes, n);
                check_validate(buf, len, defects[d].what, pos);
            }
        }
    }
}

Test(kernels, validate_truncated_at_the_end)
{
    /* A multi-byte character cut by the end of input, at every length. */
    uint8_t buf[140];
    for (size_t len = 1; len < 140; len++) {
        for (int cut = 1; cut <= 3; cut++) {
            memset(buf, 'a', len);
            static const uint8_t emoji[4] = {0xF0, 0x9F, 0x98, 0x80};
            size_t at = len >= (size_t)cut ? len - (size_t)cut : 0;
            memcpy(buf + at, emoji, len - at);
            check_validate(buf, len, "cut character", at);
        }
    }
}

static void check_classify(const uint8_t *s, size_t len)
{
    size_t nb = (len + 63) / 64;
    simdbpe__block_masks *want = calloc(nb + 1, sizeof *want);
    simdbpe__block_masks *got = calloc(nb + 1, sizeof *got);
    uint8_t *c = exact_copy(s, len);
    for (int ext = 0; ext < 2; ext++) {
        (ext ? simdbpe__kernels_scalar.classify_ext : simdbpe__kernels_scalar.classify)(c, len,
                                                                                        want);
        for (size_t b = 0; b < nb && !ext; b++)
            cr_assert(want[b].br == 0 && want[b].slash == 0 && want[b].lower == 0);
        for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
            memset(got, 0xAB, (nb + 1) * sizeof *got);
            (ext ? (*k)->classify_ext : (*k)->classify)(c, len, got);
            for (size_t b = 0; b < nb; b++)
                cr_assert(memcmp(&got[b], &want[b], sizeof *got) == 0,
                          "%s classify%s, length %zu, block %zu differs", (*k)->name,
                          ext ? "_ext" : "", len, b);
            /* and nothing written past the last block */
            const uint8_t *after = (const uint8_t *)&got[nb];
            for (size_t i = 0; i < sizeof *got; i++)
                cr_assert_eq(after[i], 0xAB, "%s classify wrote past block %zu", (*k)->name, nb);
        }
    }
    free(c);
    free(want);
    free(got);
}

Test(kernels, classify_every_byte_value)
{
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    check_classify(all, 256);
    /* The scalar reference itself, on a few bytes, from the definition. */
    simdbpe__block_masks m;
    const uint8_t s[12] = {'a', 'Z', '5', ' ', '\t', '\'', 0xC3, 0xA9, '\n', '/', '\r', 'z'};
    simdbpe__kernels_scalar.classify_ext(s, 12, &m);
    cr_assert_eq(m.letter, 0x803);
    cr_assert_eq(m.digit, 0x04);
    cr_assert_eq(m.ws, 0x518);
    cr_assert_eq(m.space, 0x08);
    cr_assert_eq(m.apos, 0x20);
    cr_assert_eq(m.high, 0xC0);
    cr_assert_eq(m.cont, 0x80);
    cr_assert_eq(m.br, 0x500);
    cr_assert_eq(m.slash, 0x200);
    cr_assert_eq(m.lower, 0xAAD); /* a 5 ' ' ' \xA9 / z: bit 0x20 set */
}

Test(kernels, classify_random_bytes_at_block_lengths)
{
    init_lengths();
    uint8_t buf[1100];
    for (size_t li = 0; li < n_lengths; li++) {
        for (size_t i = 0; i < lengths[li]; i++)
            buf[i] = (uint8_t)rnd();
        check_classify(buf, lengths[li]);
    }
}

Test(kernels, map_bytes_matches_scalar)
{
    init_lengths();
    uint32_t table[256];
    for (int b = 0; b < 256; b++)
        table[b] = rnd() % 100000;
    uint8_t buf[1100];
    uint32_t want[1100], got[1101];
    for (size_t li = 0; li < n_lengths; li++) {
        size_t len = lengths[li];
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rnd();
        uint8_t *c = exact_copy(buf, len);
        simdbpe__kernels_scalar.map_bytes(c, len, table, want);
        for (size_t i = 0; i < len; i++)
            cr_assert_eq(want[i], table[buf[i]]);
        for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
            got[len] = 0xDEADBEEF;
            (*k)->map_bytes(c, len, table, got);
            cr_assert(memcmp(got, want, len * sizeof *got) == 0, "%s map_bytes, length %zu",
                      (*k)->name, len);
            cr_assert_eq(got[len], 0xDEADBEEF, "%s map_bytes wrote past the end", (*k)->name);
        }
        free(c);
    }
}

/* ---- classes of multi-byte characters ---- */

/* The classes of the characters that start in the first 64 bytes of
 * s[0..72), looked up one by one in the two-level tables; whether a
 * 4-byte character starts there. */
static int want_lead_classes(const uint8_t *s, uint64_t *leads, simdbpe__lead_classes *want)
{
    simdbpe__lead_classes w = {0, 0, 0, 0};
    int four = 0;
    *leads = 0;
    for (unsigned i = 0; i < 64; i++) {
        uint8_t c = s[i];
        if (c < 0xC0)
            continue;
        uint64_t bit = 1ULL << i;
        *leads |= bit;
        uint32_t cp;
        if (c >= 0xF0) {
            four = 1;
            continue;
        }
        if (c >= 0xE0) {
            cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            w.three |= bit;
        } else {
            cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
        }
        unsigned cls = simdbpe__ucd_class(cp);
        w.letter |= cls == SIMDBPE__CP_LETTER ? bit : 0;
        w.digit |= cls == SIMDBPE__CP_NUMBER ? bit : 0;
        w.ws |= cls == SIMDBPE__CP_SPACE ? bit : 0;
    }
    *want = w;
    return four;
}

/* Every set on random 72-byte windows of text made of 1-, 2- and 3-byte
 * characters of every class (and sometimes a 4-byte one, which every set
 * must refuse), against the two-level tables. */
Test(kernels, lead_classes_match_the_tables)
{
    static const uint32_t pool[] = {0xE9,   0x301,  0x391,  0x3C9,  0x410,  0x44F,  0x5D0,
                                    0x661,  0x6F0,  0x915,  0x93F,  0x966,  0xE01,  0xE31,
                                    0x85,   0xA0,   0xB2,   0xD7,   0x1680, 0x2003, 0x2028,
                                    0x200B, 0x3000, 0x3042, 0x3099, 0x4E2D, 0x3007, 0xAC00,
                                    0xFEFF, 0xFF10, 0xFF21, 0x7FF,  0x800,  0xFFFD, 0xFFFF};
    uint8_t buf[200];
    int refused = 0, checked = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = 0;
        while (n < sizeof buf - 4) {
            uint32_t r = rnd() % 100, cp;
            if (r < 15)
                cp = ' ' + rnd() % 95;
            else if (r < 17 && round % 4 == 0)
                cp = 0x1F600 + rnd() % 64;
            else if (r < 40)
                cp = 0x80 + rnd() % (0x10000 - 0x80); /* anything in the BMP */
            else
                cp = pool[rnd() % (sizeof pool / sizeof *pool)];
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0x4E00;
            n += put_cp(buf + n, cp);
        }
        size_t at = rnd() % (n - 72 + 1); /* the window may start inside a character */
        uint8_t *c = exact_copy(buf + at, 72);
        uint64_t leads;
        simdbpe__lead_classes want, got;
        int four = want_lead_classes(c, &leads, &want);
        for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
            memset(&got, 0xA5, sizeof got);
            int ok = (*k)->lead_classes(c, leads, simdbpe__ucd_bmp2, &got);
            cr_assert_eq(ok, !four, "%s: returned %d with%s a 4-byte character", (*k)->name, ok,
                         four ? "" : "out");
            if (!ok)
                continue;
            cr_assert(got.letter == want.letter && got.digit == want.digit &&
                          got.ws == want.ws && got.three == want.three,
                      "%s: letter %016llx/%016llx digit %016llx/%016llx ws %016llx/%016llx "
                      "three %016llx/%016llx",
                      (*k)->name, (unsigned long long)got.letter,
                      (unsigned long long)want.letter, (unsigned long long)got.digit,
                      (unsigned long long)want.digit, (unsigned long long)got.ws,
                      (unsigned long long)want.ws, (unsigned long long)got.three,
                      (unsigned long long)want.three);
        }
        refused += four;
        checked += !four;
        free(c);
    }
    cr_assert(refused > 100 && checked > 10000, "refused %d, checked %d", refused, checked);
}

/* ---- the block pre-tokenizer against the code-point scanner ---- */

static void check_pieces(const uint8_t *s, size_t len)
{
    uint8_t *c = exact_copy(s, len);
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
        simdbpe__pretok_state ps;
        uint64_t starts[SIMDBPE__PRETOK_CHUNK];
        size_t base, count, want = 0; /* the next start the reference gives */
        simdbpe__pretok_begin(&ps, *k, c, len);
        while ((count = simdbpe__pretok_next(&ps, starts, &base)) != 0) {
            for (size_t j = 0; j < count; j++) {
                for (uint64_t bits = starts[j]; bits; bits &= bits - 1) {
                    size_t at = base + 64 * j + (size_t)__builtin_ctzll(bits);
                    cr_assert_eq(at, want, "%s: piece start %zu, reference %zu (length %zu)",
                                 (*k)->name, at, want, len);
                    want = simdbpe__pretok_piece_end(c, len, at);
                }
            }
        }
        cr_assert_eq(want, len, "%s: pieces stop at %zu of %zu", (*k)->name, want, len);
    }
    free(c);
}

/* Characters that meet every rule of the GPT-2 regex: letters, digits,
 * each kind of whitespace (1-, 2- and 3-byte), apostrophes and the letters
 * of contractions, other symbols, marks, emoji. */
static size_t put_piece_char(uint8_t *p, size_t room)
{
    static const char *const samples[] = {
        "a", "s", "t", "m", "d", "r", "e", "v", "l", "Z", "7", "0", " ", " ", " ", "\n", "\t",
        "\r", "'", "'", ".", "-", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\xA8", "\xC2\x85",
        "\xC3\xA9", "\xCC\x81", "\xE4\xB8\xAD", "\xD9\xA1", "\xF0\x9F\x98\x80", "\xEF\xBB\xBF",
        "\xE1\x9A\x80", "\xE2\x80\x8B"};
    const char *smp = samples[rnd() % (sizeof samples / sizeof *samples)];
    size_t n = strlen(smp);
    if (n > room) {
        smp = "x";
        n = 1;
    }
    memcpy(p, smp, n);
    return n;
}

Test(pretok_blocks, random_mixtures_match_the_reference)
{
    init_lengths();
    uint8_t buf[1100];
    for (int round = 0; round < 4; round++) {
        for (size_t li = 0; li < n_lengths; li++) {
            size_t len = lengths[li];
            for (size_t i = 0; i < len;)
                i += put_piece_char(buf + i, len - i);
            check_pieces(buf, len);
        }
    }
}

Test(pretok_blocks, runs_across_blocks)
{
    /* Long runs of each class crossing several blocks, with a contraction
     * and a multi-byte space right at block ends. */
    static const char *const fills[] = {"a", " ", "\n", "7", ".", "\xC2\xA0", "\xE3\x80\x80",
                                        "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
    uint8_t buf[600];
    for (size_t f = 0; f < sizeof fills / sizeof *fills; f++) {
        for (size_t cut = 50; cut < 140; cut++) {
            size_t n = 0, fl = strlen(fills[f]);
            while (n + fl <= cut) {
                memcpy(buf + n, fills[f], fl);
                n += fl;
            }
            static const char tail[] = "'re x\xC2\xA0y  z's\n\n";
            memcpy(buf + n, tail, sizeof tail - 1);
            n += sizeof tail - 1;
            check_pieces(buf, n);
        }
    }
}

/* lead_codes: every set on the same kind of windows (4-byte characters
 * marked, not looked up), against simdbpe__ucd_code_of. */
Test(kernels, lead_codes_match_the_tables)
{
    static const uint32_t pool[] = {0xE9,   0x301,  0x391,  0x3C9,  0x410,  0x44F,  0x1C5,
                                    0x2B0,  0x5D0,  0x661,  0x915,  0x93F,  0x966,  0xE31,
                                    0x85,   0xA0,   0xB2,   0xD7,   0x1680, 0x2003, 0x2028,
                                    0x200B, 0x3000, 0x3042, 0x3099, 0x309B, 0x30FB, 0x30FC,
                                    0x3040, 0x4E2D, 0x9FA5, 0x9FA6, 0x3007, 0xAC00, 0xFEFF,
                                    0xFF10, 0xFF21, 0x7FF,  0x800,  0xE000, 0xFFFD, 0xFFFF};
    uint8_t buf[200];
    int fours = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = 0;
        while (n < sizeof buf - 4) {
            uint32_t r = rnd() % 100, cp;
            if (r < 15)
                cp = ' ' + rnd() % 95;
            else if (r < 18)
                cp = 0x10000 + rnd() % 0x100000; /* 4 bytes */
            else if (r < 40)
                cp = 0x80 + rnd() % (0x10000 - 0x80); /* anything in the BMP */
            else
                cp = pool[rnd() % (sizeof pool / sizeof *pool)];
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0x4E00;
            n += put_cp(buf + n, cp);
        }
        size_t at = rnd() % (n - 72 + 1); /* the window may start inside a character */
        uint8_t *c = exact_copy(buf + at, 72);
        uint64_t leads = 0;
        simdbpe__lead_codes want = {{0, 0, 0, 0}, 0, 0};
        for (unsigned i = 0; i < 64; i++) {
            if (c[i] < 0xC0)
                continue;
            uint64_t bit = 1ULL << i;
            leads |= bit;
            if (c[i] >= 0xF0) {
                want.four |= bit;
                continue;
            }
            uint32_t cp;
            if (c[i] >= 0xE0) {
                cp = (uint32_t)(c[i] & 0x0F) << 12 | (uint32_t)(c[i + 1] & 0x3F) << 6 |
                     (c[i + 2] & 0x3F);
                want.three |= bit;
            } else {
                cp = (uint32_t)(c[i] & 0x1F) << 6 | (c[i + 1] & 0x3F);
            }
            unsigned code = simdbpe__ucd_code_of(cp);
            for (int k = 0; k < 4; k++)
                want.bit[k] |= (uint64_t)(code >> k & 1) << i;
        }
        fours += want.four != 0;
        for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
            simdbpe__lead_codes got;
            memset(&got, 0xA5, sizeof got);
            (*k)->lead_codes(c, leads, simdbpe__ucd_codes, &got);
            cr_assert(memcmp(&got, &want, sizeof got) == 0, "%s: round %d differs", (*k)->name,
                      round);
        }
        free(c);
    }
    cr_assert(fours > 1000, "%d windows with a 4-byte character", fours);
}
