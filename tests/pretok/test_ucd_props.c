/*
 * test_ucd_props.c - checks the generated Unicode property bits
 * (simdbpe__ucd_props and simdbpe__ucd_props_ascii, src/pretok/ucd.h,
 * ucd_props.c) against the reference tokenizers over every code point.
 *
 * tests/data/ucd_props_reference.txt holds the properties of every code point
 * as HF tokenizers (and tiktoken) match them inside probe regexes written like
 * the cl100k/Qwen2/o200k/DeepSeek-V3 pre-tokenizer regexes; it is made by
 * tools/ucd-gen/reference_props.mjs without reading any Unicode data, so it
 * is an independent check of tools/gen_ucd.mjs. Its lines are
 * "START END PROPS" (hex, inclusive, PROPS = SIMDBPE__UCD_* bits) covering
 * U+0000..U+10FFFF in order, then "FOLD <contraction> <part> CP..." lines
 * listing the code points the case-insensitive contraction group accepts;
 * lines starting with '#' are comments.
 *
 * Build: -DSIMDBPE_TEST_DATA_DIR="\"/path/to/tests/data\"".
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucd.h"

#ifndef SIMDBPE_TEST_DATA_DIR
#error "define SIMDBPE_TEST_DATA_DIR as the tests/data folder, a string"
#endif

#define CP_COUNT (SIMDBPE__UCD_MAX_CP + 1u)
#define REF_PATH SIMDBPE_TEST_DATA_DIR "/ucd_props_reference.txt"
#define LINE_MAX_LEN 4096

/* Reads the runs of the reference file into a newly allocated array of
 * CP_COUNT property bytes; calls `fold(line)` on each FOLD line if non-null. */
static uint8_t *load_reference(void (*fold)(const char *line))
{
    FILE *f = fopen(REF_PATH, "r");
    cr_assert_not_null(f, "cannot open %s", REF_PATH);
    uint8_t *ref = malloc(CP_COUNT);
    cr_assert_not_null(ref);

    static char line[LINE_MAX_LEN];
    unsigned lineno = 0;
    uint32_t next = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        cr_assert(strchr(line, '\n'), "ucd_props_reference.txt line %u is too long", lineno);
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (strncmp(line, "FOLD ", 5) == 0) {
            if (fold)
                fold(line);
            continue;
        }
        unsigned long start, end, props;
        cr_assert_eq(sscanf(line, "%lx %lx %lx", &start, &end, &props), 3,
                     "ucd_props_reference.txt line %u: cannot parse \"%s\"", lineno, line);
        cr_assert(start == next && start <= end && end <= SIMDBPE__UCD_MAX_CP && props <= 0xFF,
                  "ucd_props_reference.txt line %u: run %lX..%lX %lX does not continue at %X",
                  lineno, start, end, props, (unsigned)next);
        memset(ref + start, (int)props, end - start + 1);
        next = (uint32_t)end + 1;
    }
    fclose(f);
    cr_assert_eq(next, CP_COUNT, "ucd_props_reference.txt stops at U+%04X", (unsigned)next);
    return ref;
}

static uint32_t table_count(unsigned bit)
{
    uint32_t n = 0;
    for (uint32_t cp = 0; cp < CP_COUNT; cp++)
        n += (simdbpe__ucd_props(cp) & bit) != 0;
    return n;
}

Test(ucd_props, matches_reference_on_every_code_point)
{
    uint8_t *ref = load_reference(NULL);
    for (uint32_t cp = 0; cp < CP_COUNT; cp++) {
        unsigned got = simdbpe__ucd_props(cp);
        if (got != ref[cp]) {
            unsigned want = ref[cp];
            free(ref);
            cr_assert_fail("first mismatch at U+%04X: tables say %02X, reference says %02X",
                           (unsigned)cp, got, want);
        }
    }
    free(ref);
}

Test(ucd_props, ascii_table_matches_lookup_and_reference)
{
    uint8_t *ref = load_reference(NULL);
    for (uint32_t cp = 0; cp < 128; cp++) {
        cr_expect_eq(simdbpe__ucd_props_ascii[cp], simdbpe__ucd_props(cp), "U+%04X", (unsigned)cp);
        cr_expect_eq(simdbpe__ucd_props_ascii[cp], ref[cp], "U+%04X", (unsigned)cp);
    }
    free(ref);
}

/* L/N/WS are the GPT-2 classes of the older table. */
Test(ucd_props, agrees_with_gpt2_classes)
{
    static const unsigned bit_of_class[] = {0, SIMDBPE__UCD_L, SIMDBPE__UCD_N, SIMDBPE__UCD_WS};
    for (uint32_t cp = 0; cp < CP_COUNT; cp++) {
        unsigned p = simdbpe__ucd_props(cp) & (SIMDBPE__UCD_L | SIMDBPE__UCD_N | SIMDBPE__UCD_WS);
        cr_assert_eq(p, bit_of_class[simdbpe__ucd_class(cp)], "U+%04X", (unsigned)cp);
    }
}

Test(ucd_props, counts)
{
    cr_expect_eq(table_count(SIMDBPE__UCD_L), 141028u);
    cr_expect_eq(table_count(SIMDBPE__UCD_N), 1911u);
    cr_expect_eq(table_count(SIMDBPE__UCD_WS), 25u);
    cr_expect_eq(table_count(SIMDBPE__UCD_M), 2501u);
    cr_expect_eq(table_count(SIMDBPE__UCD_P), 855u);
    cr_expect_eq(table_count(SIMDBPE__UCD_S), 8514u);
    cr_expect_eq(table_count(SIMDBPE__UCD_UP), 138770u);
    cr_expect_eq(table_count(SIMDBPE__UCD_LO), 139139u);
}

Test(ucd_props, surrogates_have_none)
{
    for (uint32_t cp = 0xD800; cp <= 0xDFFF; cp++)
        cr_assert_eq(simdbpe__ucd_props(cp), 0u, "U+%04X", (unsigned)cp);
}

Test(ucd_props, samples)
{
    cr_expect_eq(simdbpe__ucd_props('A'), SIMDBPE__UCD_L | SIMDBPE__UCD_UP);
    cr_expect_eq(simdbpe__ucd_props('z'), SIMDBPE__UCD_L | SIMDBPE__UCD_LO);
    cr_expect_eq(simdbpe__ucd_props(0x01C5), SIMDBPE__UCD_L | SIMDBPE__UCD_UP); /* Dz, Lt */
    cr_expect_eq(simdbpe__ucd_props(0x02B0), /* modifier h, Lm: both o200k classes */
                 SIMDBPE__UCD_L | SIMDBPE__UCD_UP | SIMDBPE__UCD_LO);
    cr_expect_eq(simdbpe__ucd_props(0x4E00), SIMDBPE__UCD_L | SIMDBPE__UCD_UP | SIMDBPE__UCD_LO);
    cr_expect_eq(simdbpe__ucd_props(0x0301), SIMDBPE__UCD_M);
    cr_expect_eq(simdbpe__ucd_props('_'), SIMDBPE__UCD_P);
    cr_expect_eq(simdbpe__ucd_props('+'), SIMDBPE__UCD_S);
    cr_expect_eq(simdbpe__ucd_props('$'), SIMDBPE__UCD_S);
    cr_expect_eq(simdbpe__ucd_props(0x1F600), SIMDBPE__UCD_S);
    cr_expect_eq(simdbpe__ucd_props(0x2160), SIMDBPE__UCD_N);
    cr_expect_eq(simdbpe__ucd_props(0x3000), SIMDBPE__UCD_WS);
    cr_expect_eq(simdbpe__ucd_props(0x200B), 0u); /* ZERO WIDTH SPACE is Cf */
    cr_expect_eq(simdbpe__ucd_props(0x0378), 0u); /* unassigned */
}

/*
 * The FOLD lines: every code point the contraction group accepts in place of
 * a letter is itself a letter (\p{L}), so a scanner never sees a contraction
 * end inside a non-letter run; the apostrophe is only U+0027, and each
 * letter accepts at least its ASCII lower and upper case.
 */
static unsigned fold_lines;

static void check_fold(const char *line)
{
    char contraction[8], part[8];
    int used = 0;
    cr_assert_eq(sscanf(line, "FOLD %7s %7s%n", contraction, part, &used), 2, "bad FOLD line %s",
                 line);
    const char *p = line + used;
    unsigned long cp;
    int n;
    unsigned count = 0, ascii = 0;
    while (sscanf(p, "%lx%n", &cp, &n) == 1) {
        p += n;
        count++;
        cr_assert(cp <= SIMDBPE__UCD_MAX_CP, "FOLD %s %s: bad code point", contraction, part);
        if (strcmp(part, "0") == 0) {
            cr_expect_eq(cp, 0x27ul, "FOLD %s 0: U+%04lX accepted as the apostrophe", contraction,
                         cp);
            continue;
        }
        cr_expect(simdbpe__ucd_props((uint32_t)cp) & SIMDBPE__UCD_L,
                  "FOLD %s %s: U+%04lX is not \\p{L}", contraction, part, cp);
        ascii += cp < 128;
    }
    if (strcmp(part, "12") != 0 && strcmp(part, "0") != 0)
        cr_expect_eq(ascii, 2u, "FOLD %s %s: %u ASCII code points", contraction, part, ascii);
    if (strcmp(part, "0") == 0)
        cr_expect_eq(count, 1u);
    fold_lines++;
}

Test(ucd_props, contraction_folds_are_letters)
{
    fold_lines = 0;
    free(load_reference(check_fold));
    cr_expect_eq(fold_lines, 14u, "expected 14 FOLD lines");
}

/* The class codes of the family scanners: the generated BMP table is
 * simdbpe__ucd_code_of, and each code is the combination of property bits
 * ucd.h says (one class of each code point, L split by case). */
Test(ucd_props, class_codes_are_the_property_bits)
{
    for (uint32_t cp = 0; cp <= SIMDBPE__UCD_MAX_CP; cp++) {
        unsigned code = simdbpe__ucd_code_of(cp), p = simdbpe__ucd_props(cp);
        if (cp < 0x10000)
            cr_assert_eq(simdbpe__ucd_codes[cp >> 3] >> 4 * (cp & 7) & 15, code,
                         "U+%04X: table code differs", cp);
        unsigned c = code & 7;
        cr_assert_eq((c & 4) && (c & 3), (p & SIMDBPE__UCD_L) != 0, "U+%04X: L", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_M, (p & SIMDBPE__UCD_M) != 0, "U+%04X: M", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_N, (p & SIMDBPE__UCD_N) != 0, "U+%04X: N", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_WS, (p & SIMDBPE__UCD_WS) != 0, "U+%04X: WS", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_PS, (p & (SIMDBPE__UCD_P | SIMDBPE__UCD_S)) != 0,
                     "U+%04X: P S", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_UO || c == SIMDBPE__UCD_CODE_B,
                     (p & SIMDBPE__UCD_UP) != 0, "U+%04X: Lu Lt Lm Lo", cp);
        cr_assert_eq(c == SIMDBPE__UCD_CODE_WO || c == SIMDBPE__UCD_CODE_B,
                     (p & SIMDBPE__UCD_LO) != 0, "U+%04X: Ll Lm Lo", cp);
        int cjk = (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF);
        cr_assert_eq((code & SIMDBPE__UCD_CODE_CJK) != 0, cjk, "U+%04X: CJK", cp);
    }
}
