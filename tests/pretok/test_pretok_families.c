/*
 * test_pretok_families.c - each pre-tokenizer family's scanners
 * (src/pretok/pretok.c, families.c) against its regexes run by PCRE2 (pretok_ref.h)
 * on random texts over an alphabet of every class the regexes ask about,
 * and on the edge-case texts of tests/data/golden/edge.jsonl (where only
 * code points whose classes PCRE2 and simdbpe agree on are kept).
 */
#include <criterion/criterion.h>

#include "pretok_ref.h"
#include "test_util.h"

#include "pretok/ucd.h"
#include "pretok/ucd_ranges.h"

/* Every family of the library's table (family.c), GPT-2's too: a family
 * added there is checked against its own patterns here. */

/* Whether cp is in simdbpe's Script=Han (ucd_ranges.c, Unicode 16). */
static int in_han(uint32_t cp)
{
    for (size_t k = 0; k < simdbpe__ucd_n_range_sets; k++)
        if (strcmp(simdbpe__ucd_range_sets[k].name, "Han") == 0)
            for (size_t r = 0; r < simdbpe__ucd_range_sets[k].n; r++)
                if (cp >= simdbpe__ucd_range_sets[k].ranges[r][0] &&
                    cp <= simdbpe__ucd_range_sets[k].ranges[r][1])
                    return 1;
    return 0;
}

Test(pretok_families, the_alphabet_has_the_same_classes_in_pcre2)
{
    /* Bits as ref_pcre_classes: L N s M P S Lu Ll Lt Lm Lo Han. The L, N
     * and s of simdbpe are its Unicode 16 tables (ucd.h). */
    size_t han = 0;
    for (size_t i = 0; i < REF_ALPHABET_N; i++) {
        uint32_t cp = REF_ALPHABET[i];
        unsigned p = ref_pcre_classes(cp), c = simdbpe__ucd_class(cp);
        cr_assert_eq((p & 1) != 0, c == SIMDBPE__CP_LETTER, "U+%04X letter", cp);
        cr_assert_eq((p & 2) != 0, c == SIMDBPE__CP_NUMBER, "U+%04X number", cp);
        cr_assert_eq((p & 4) != 0, c == SIMDBPE__CP_SPACE, "U+%04X space", cp);
        cr_assert_eq((p >> 11 & 1) != 0, in_han(cp), "U+%04X Han", cp);
        han += in_han(cp);
    }
    cr_assert_geq(han, 8, "the alphabet has Han of every category Kimi K2 tells apart");
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
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        uint64_t x = 0x2545F4914F6CDD1DULL + k;
        uint8_t data[48], text[48 * 4];
        for (int t = 0; t < 10000; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = 1 + (size_t)(x % 40);
            for (size_t i = 0; i < len; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                data[i] = (uint8_t)(x >> 24);
            }
            size_t n = ref_text(data, len, text);
            check(&f, k, text, n);
        }
        ref_close(&f);
    }
}

/* Whether the reference's pieces of s[0..n) start at p and the parts
 * s[0..p) and s[p..n) split alone as they do in the whole. */
static int ref_cut_exact(ref_family *f, const uint8_t *s, size_t n, size_t p, uint8_t *whole,
                         uint8_t *part)
{
    ref_pieces(f, s, n, whole);
    if (!whole[p])
        return 0;
    ref_pieces(f, s, p, part);
    if (memcmp(part, whole, p) != 0)
        return 0;
    ref_pieces(f, s + p, n - p, part);
    return memcmp(part, whole + p, n - p) == 0;
}

/* The cut points of every family with a cut rule (cuts.c: the encoder's
 * and the dataset engine's, inside runs of digits too; the trainer's) are
 * places where the reference's pieces end and the parts split as the
 * whole: random texts over the alphabet, numbers often. */
Test(pretok_families, cut_points_are_exact_for_the_regexes, .timeout = 300)
{
    /* Numbers, Han (〇 and 〡 are both), letters, spaces, punctuation. */
    static const uint32_t bias[] = {'1', '9', '0', 0x663, 0xFF11, 0x3007, 0x3021, 0x4E00,
                                    0x3005, 'a', 'A', ' ', '\n', '.', '\'', '/', 0x301};
    uint8_t biased[sizeof bias / sizeof bias[0]]; /* their places in the alphabet */
    for (size_t b = 0; b < sizeof bias / sizeof bias[0]; b++) {
        size_t d = 0;
        while (d < REF_ALPHABET_N && REF_ALPHABET[d] != bias[b])
            d++;
        cr_assert_lt(d, REF_ALPHABET_N, "U+%04X is not in the reference alphabet", bias[b]);
        biased[b] = (uint8_t)d;
    }
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        const simdbpe__pretok_family *fam = simdbpe__pretok_family_of(k);
        if (fam->generic || fam->cuts == SIMDBPE__CUTS_NONE)
            continue;
        ref_family f;
        ref_open(&f, k);
        uint64_t x = 0x9E3779B97F4A7C15ULL + k;
        uint8_t text[64 * 4], whole[64 * 4], part[64 * 4];
        size_t checked = 0;
        for (int t = 0; t < 6000; t++) {
            size_t n = 0;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = 2 + (size_t)(x % 30);
            for (size_t i = 0; i < len; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint8_t d = (uint8_t)(x >> 24);
                if (x >> 40 & 1) /* one time in two from the biased set */
                    d = biased[(x >> 8) % (sizeof bias / sizeof bias[0])];
                n += ref_text(&d, 1, text + n);
            }
            for (size_t p = 1; p < n; p++) {
                if (simdbpe__pretok_cut_ok(k, text, n, p) ||
                    (fam->train_cut && fam->train_cut(text, n, p))) {
                    checked++;
                    cr_assert(ref_cut_exact(&f, text, n, p, whole, part), "%s: cut at %zu of %zu",
                              fam->name, p, n);
                }
            }
            /* The last cut before each: inside runs of digits too. */
            for (size_t hi = n - 1, p; hi >= 1; hi = p - 1) {
                p = simdbpe__pretok_cut_last(k, text, n, 1, hi);
                if (p == SIZE_MAX)
                    break;
                checked++;
                cr_assert(ref_cut_exact(&f, text, n, p, whole, part),
                          "%s: last cut at %zu of %zu", fam->name, p, n);
            }
        }
        cr_assert_gt(checked, 1000, "%s: %zu cut points", fam->name, checked);
        ref_close(&f);
    }
}

/* Texts of fragments that stress the block scanners' rules: mostly ASCII
 * (so that whole 64-byte blocks are), whitespace runs of every kind that
 * cross block ends, digit runs, contractions, and now and then a
 * character whose class only the Unicode tables give. */
static const char *const FRAGMENTS[] = {
    "the", "It", "word", "a", "Zz", "don", "'t", "'s", "'S", "'ll", "'Re", "'ve", "'m", "'d",
    "'x", "'", "''", " ", " ", " ", "  ", "    ", "        ", "\t", "\t\t", "\n", "\n", "\r\n",
    "\n\n", " \n", "\n    ", "\n\t", "\r", "\v", "\f", "1", "12", "123", "2024", "0000000",
    "!", ".", ",", "(", ")", "//", "/", "\"", "#", "==", "->", "{", "}", ";", "-", "_",
    "$", "+", "^", "`", "|", "~", /* \p{S} */
    "\x01", "\x1F", "\x7F",  /* controls: no class */
    /* from here on non-ASCII (NON_ASCII of them) */
    "\xC3\xA9",         /* é, a letter */
    "\xC2\xA0",         /* NBSP, whitespace */
    "\xE2\x80\xA8",     /* LINE SEPARATOR, whitespace, not a line break */
    "\xD9\xA3",         /* ARABIC-INDIC DIGIT THREE */
    "\xE2\x80\x94",     /* EM DASH, other */
    "\xC5\xBF",         /* LONG S: 'ſ is a contraction */
    "\xF0\x9F\x98\x80", /* an emoji, other */
    "\xCC\x81",         /* COMBINING ACUTE, a mark: other for cl100k */
    "\xE4\xB8\x80",     /* CJK 一: a piece of its own for DeepSeek-V3 */
    "\xE3\x81\x82",     /* HIRAGANA A */
};
#define N_FRAGMENTS (sizeof FRAGMENTS / sizeof *FRAGMENTS)
#define NON_ASCII 10

static size_t fragment_text(uint64_t *x, uint8_t *out, size_t cap)
{
    size_t n = 0;
    /* Non-ASCII fragments (the last NON_ASCII): one time in 8, 64 or 512, or never,
     * so that many texts have whole blocks of ASCII. */
    uint64_t rare = (uint64_t)8 << 3 * (*x >> 60 & 3);
    size_t count = 20 + (size_t)(*x % 400);
    for (size_t f = 0; f < count; f++) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        size_t pick = (*x >> 8) % (N_FRAGMENTS - NON_ASCII);
        if (rare < 4096 && (*x >> 40) % rare == 0)
            pick = N_FRAGMENTS - NON_ASCII + (*x >> 20) % NON_ASCII;
        size_t len = strlen(FRAGMENTS[pick]);
        if (n + len > cap)
            break;
        memcpy(out + n, FRAGMENTS[pick], len);
        n += len;
    }
    return n;
}

/* The chunk scanner (simdbpe__pretok_next, what the encoder asks) of
 * family k with kernel set ks on s[0..n) (n bytes exactly, so that ASan
 * sees a read past it) against the piece starts want[0..n): the first
 * byte where they differ, or SIZE_MAX. */
static size_t chunk_mismatch(unsigned k, const simdbpe__kernels *ks, const uint8_t *s, size_t n,
                             const uint8_t *want, int *missing)
{
    simdbpe__pretok_state st;
    simdbpe__pretok_begin_kind(&st, k, ks, s, n);
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, seen = 0;
    while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0) {
        cr_assert_eq(base, seen, "chunks out of order");
        for (size_t i = base; i < base + 64 * count && i < n; i++) {
            int got = (int)(starts[(i - base) >> 6] >> ((i - base) & 63) & 1);
            if (got != want[i]) {
                *missing = want[i];
                return i;
            }
        }
        seen = base + 64 * count;
    }
    cr_assert_geq(seen, n);
    return SIZE_MAX;
}

/* Every kernel set's chunk scanner of family k against PCRE2 on text[0..n). */
static void check_chunks(ref_family *f, unsigned k, const uint8_t *text, size_t n,
                         const char *what, long t)
{
    static uint8_t want[1 << 16];
    cr_assert(n <= sizeof want);
    ref_pieces(f, text, n, want);
    const simdbpe__kernels *const *sets = simdbpe__kernels_available();
    uint8_t *exact = malloc(n ? n : 1);
    cr_assert(exact);
    memcpy(exact, text, n);
    for (size_t ks = 0; sets[ks]; ks++) {
        int missing;
        size_t i = chunk_mismatch(k, sets[ks], exact, n, want, &missing);
        if (i != SIZE_MAX) {
            char show[240];
            size_t from = i > 24 ? i - 24 : 0;
            tu_show(show, sizeof show, (const char *)text + from, n - from < 48 ? n - from : 48);
            cr_assert_fail("%s (%s kernels), %s %ld: piece start %s at byte %zu of %zu; from "
                           "byte %zu: \"%s\"",
                           simdbpe__pretok_kind_name(k), sets[ks]->name, what, t,
                           missing ? "missing" : "extra", i, n, from, show);
        }
    }
    free(exact);
}

/* The chunk scanner (simdbpe__pretok_next, what the encoder asks), with
 * every kernel set the CPU has, against PCRE2 on texts of many blocks. */
Test(pretok_families, chunks_of_long_texts_split_as_the_regexes_do, .timeout = 300)
{
    const simdbpe__kernels *const *sets = simdbpe__kernels_available();
    static uint8_t text[8192], want[8192];
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        uint64_t x = 0x9E3779B97F4A7C15ULL + k;
        for (int t = 0; t < 10000; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t n = fragment_text(&x, text, sizeof text);
            ref_pieces(&f, text, n, want);
            /* In a buffer of exactly n bytes, so that ASan sees a read past it. */
            uint8_t *exact = malloc(n ? n : 1);
            cr_assert(exact);
            memcpy(exact, text, n);
            for (size_t ks = 0; sets[ks]; ks++) {
                simdbpe__pretok_state st;
                simdbpe__pretok_begin_kind(&st, k, sets[ks], exact, n);
                uint64_t starts[SIMDBPE__PRETOK_CHUNK];
                size_t base, count, seen = 0;
                while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0) {
                    for (size_t i = base; i < base + 64 * count && i < n; i++) {
                        int got = (int)(starts[(i - base) >> 6] >> ((i - base) & 63) & 1);
                        if (got != want[i]) {
                            char show[200];
                            size_t from = i > 20 ? i - 20 : 0;
                            tu_show(show, sizeof show, (const char *)text + from,
                                    n - from < 40 ? n - from : 40);
                            cr_assert_fail("%s (%s kernels), text %d: piece start %s at byte "
                                           "%zu of %zu; from byte %zu: \"%s\"",
                                           simdbpe__pretok_kind_name(k), sets[ks]->name,
                                           t, want[i] ? "missing" : "extra", i, n, from, show);
                        }
                    }
                    seen = base + 64 * count;
                }
                cr_assert_geq(seen, n);
            }
            free(exact);
        }
        ref_close(&f);
    }
}

/* Every fragment between two others, placed so that it ends right at or
 * near a block boundary: what the block scanners read of the text before
 * a block (the classes of the code points before it, an X-run's tail)
 * and of the block after (the end of a whitespace run). */
Test(pretok_families, fragments_at_block_boundaries_split_as_the_regexes_do, .timeout = 300)
{
    const simdbpe__kernels *const *sets = simdbpe__kernels_available();
    uint8_t text[256], want[256];
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        for (size_t a = 0; a < N_FRAGMENTS; a++)
            for (size_t b = 0; b < N_FRAGMENTS; b++)
                for (size_t c = 0; c < N_FRAGMENTS; c += 7)
                    for (size_t end = 62; end <= 66; end++) {
                        size_t la = strlen(FRAGMENTS[a]), lb = strlen(FRAGMENTS[b]);
                        size_t lc = strlen(FRAGMENTS[c]);
                        if (la + lb > end)
                            continue;
                        /* "x" words before, then a and b, b ending at `end`. */
                        size_t n = end - la - lb;
                        for (size_t i = 0; i < n; i++)
                            text[i] = i % 4 == 3 ? ' ' : 'x';
                        memcpy(text + n, FRAGMENTS[a], la);
                        memcpy(text + n + la, FRAGMENTS[b], lb);
                        memcpy(text + end, FRAGMENTS[c], lc);
                        memcpy(text + end + lc, " tail", 5);
                        n = end + lc + 5;
                        ref_pieces(&f, text, n, want);
                        for (size_t ks = 0; sets[ks]; ks++) {
                            simdbpe__pretok_state st;
                            simdbpe__pretok_begin_kind(&st, k, sets[ks], text, n);
                            uint64_t starts[SIMDBPE__PRETOK_CHUNK];
                            size_t base, count;
                            while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0)
                                for (size_t i = base; i < base + 64 * count && i < n; i++) {
                                    int got = (int)(starts[(i - base) >> 6] >> ((i - base) & 63) & 1);
                                    if (got != want[i]) {
                                        char show[200];
                                        tu_show(show, sizeof show, (const char *)text + 50, n - 50);
                                        cr_assert_fail("%s (%s kernels): piece start %s at byte %zu; "
                                                       "from byte 50: \"%s\"",
                                                       simdbpe__pretok_kind_name(k),
                                                       sets[ks]->name, want[i] ? "missing" : "extra",
                                                       i, show);
                                    }
                                }
                        }
                    }
        ref_close(&f);
    }
}

/* Fragments of text in other scripts, for the block scanners' classes of
 * multi-byte characters: letters of each case class (o200k's U and W),
 * marks after letters and after X, CJK and kana with the edges of
 * DeepSeek-V3's ranges, numbers of 2-4 bytes, whitespace of 2 and 3
 * bytes, format and private-use characters, emoji with variation
 * selectors (marks after X), characters of 4 bytes, contractions after
 * non-ASCII letters. */
static const char *const MULTI[] = {
    "привет", "Привет", "ПРИВЕТ", "мир", "Ωμέγα", "ΑΒΓ", "αβγ", "ΣΊΣΥΦΟΣ", "Straße", "İstanbul",
    "नमस्ते", "हिन्दी", "कि", "\u0901", "\u0903", "العربية", "مرحبا", "\u064E", "١٢٣", "٤",
    "٥٦٧٨", "中文", "日本語", "漢字", "\u9FA5", "\u9FA6", "\u4E00", "ひらがな", "カタカナ", "ー",
    "゠", "・", "゛", "\u3099", "\u3040", "\u30FF", "한국어", "ǅ", "ǅungla", "ʰ", "Aʰb", "e\u0301",
    "\u0301", "\u20DD", "😀", "❤\uFE0F", "!\uFE0F", "👍🏽", "1\uFE0F\u20E3", "🇫🇷", "\u00A0",
    "\u3000", "\u2028", "\xC2\x85", "\u2009", " \u00A0", "\u00A0\u00A0", "\n\u00A0", "\u200B",
    "\u00AD", "\uFEFF", "\u200D", "\uE000", "\U0010FFFD", "\U0001D400", "\U0001D41A",
    "\U00020000", "\U0001D7CF", "—", "«", "»", "“", "”", "’", "…", "¿", "¡", "€", "×", "é's",
    "É'S", "中'll", "ß'ſ", "\u0301's", "x'ſ", "½", "²", "①", "Ⅻ", "A中", "中A", "a中B", "ʰA",
    "AʰBc", "ǅA", "!\u0301", "!!\u0301", " !\u0301a", "\n/\u0301", "!\n//\u0301", "—\u0301",
};
#define N_MULTI (sizeof MULTI / sizeof *MULTI)

/* A text of MULTI and ASCII fragments (the first N_FRAGMENTS - NON_ASCII
 * of FRAGMENTS), up to cap bytes. */
static size_t multi_text(uint64_t *x, uint8_t *out, size_t cap)
{
    size_t n = 0, count = 10 + (size_t)(*x % 600);
    unsigned ascii_share = (unsigned)(*x >> 32) % 8; /* in eighths */
    for (size_t f = 0; f < count; f++) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        const char *frag = (*x >> 20) % 8 < ascii_share
                               ? FRAGMENTS[(*x >> 8) % (N_FRAGMENTS - NON_ASCII)]
                               : MULTI[(*x >> 8) % N_MULTI];
        size_t len = strlen(frag);
        if (n + len > cap)
            break;
        memcpy(out + n, frag, len);
        n += len;
    }
    return n;
}

Test(pretok_families, chunks_of_multilingual_texts_split_as_the_regexes_do, .timeout = 600)
{
    static uint8_t text[8192];
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        uint64_t x = 0x51AB3C0FFEE1234ULL + k;
        for (int t = 0; t < 3000; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t n = multi_text(&x, text, sizeof text);
            check_chunks(&f, k, text, n, "text", t);
        }
        ref_close(&f);
    }
}

/* Random code points of the reference alphabet (every class the regexes
 * ask about), texts of many blocks through the chunk scanner. */
Test(pretok_families, chunks_of_random_alphabet_texts_split_as_the_regexes_do, .timeout = 600)
{
    static uint8_t data[2048], text[2048 * 4];
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        uint64_t x = 0xC0DEC0DE12345ULL + k;
        for (int t = 0; t < 2000; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = 1 + (size_t)(x % sizeof data);
            /* a narrower alphabet now and then, so that runs grow long */
            size_t span = (x >> 40) % 4 == 0 ? 1 + (x >> 44) % 16 : REF_ALPHABET_N;
            size_t first = (x >> 50) % REF_ALPHABET_N;
            for (size_t i = 0; i < len; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                data[i] = (uint8_t)((first + (x >> 24) % span) % REF_ALPHABET_N);
            }
            size_t n = ref_text(data, len, text);
            check_chunks(&f, k, text, n, "text", t);
        }
        ref_close(&f);
    }
}

/* Every pair of MULTI fragments after a filler (ASCII words, Cyrillic
 * words or CJK), the second beginning at each byte from 58 to 66 so that
 * its characters straddle the first block's end at every byte, then a
 * third fragment and more text. */
Test(pretok_families, multibyte_characters_across_block_edges_split_as_the_regexes_do,
     .timeout = 600)
{
    static const char *const FILLERS[] = {"xxx ", "\xD0\xBC\xD0\xB8\xD1\x80 " /* мир */,
                                          "\xE4\xB8\xAD\xE6\x96\x87" /* 中文 */};
    uint8_t text[256];
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++) {
        if (simdbpe__pretok_family_of(k)->generic)
            continue; /* no patterns of its own: test_regex */
        ref_family f;
        ref_open(&f, k);
        long t = 0;
        for (size_t fi = 0; fi < 3; fi++)
            for (size_t a = 0; a < N_MULTI; a++)
                for (size_t b = 0; b < N_MULTI; b++)
                    for (size_t at = 58; at <= 66; at++, t++) {
                        size_t la = strlen(MULTI[a]), lb = strlen(MULTI[b]);
                        if (la > at)
                            continue;
                        const char *c = MULTI[(a + b + at) % N_MULTI];
                        size_t lc = strlen(c), lf = strlen(FILLERS[fi]), n = 0;
                        /* the filler (whole characters) up to at - la */
                        while (n + lf <= at - la) {
                            memcpy(text + n, FILLERS[fi], lf);
                            n += lf;
                        }
                        while (n < at - la)
                            text[n++] = ' ';
                        memcpy(text + n, MULTI[a], la);
                        memcpy(text + at, MULTI[b], lb);
                        memcpy(text + at + lb, c, lc);
                        n = at + lb + lc;
                        memcpy(text + n, " tail\xC3\xA9", 7);
                        n += 7;
                        check_chunks(&f, k, text, n, "pair", t);
                    }
        ref_close(&f);
    }
}
