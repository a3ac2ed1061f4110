/*
 * test_ucd.c - checks the generated Unicode class tables (src/pretok/ucd.h,
 * ucd_tables.c) against the reference tokenizers over every code point.
 *
 * tests/data/ucd_reference.txt holds the class of every code point as HF
 * tokenizers (and tiktoken) split probe strings; it is made by
 * tools/ucd-gen/reference_classes.mjs without reading any Unicode data, so it
 * is an independent check of tools/gen_ucd.mjs. Its lines are
 * "START END CLASS" (hex, inclusive), covering U+0000..U+10FFFF in order;
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
#define NO_CLASS 0xFFu

static const char *const class_names[] = {"OTHER", "LETTER", "NUMBER", "SPACE"};

static const uint32_t white_space[] = {
    0x0009, 0x000A, 0x000B, 0x000C, 0x000D, 0x0020, 0x0085, 0x00A0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
    0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
};

/* The class number of a name in the reference file, or NO_CLASS. */
static unsigned class_from_name(const char *name)
{
    for (unsigned c = 0; c < sizeof class_names / sizeof class_names[0]; c++) {
        if (strcmp(name, class_names[c]) == 0)
            return c;
    }
    return NO_CLASS;
}

static const char *class_name(unsigned c)
{
    return c < 4 ? class_names[c] : "(invalid)";
}

/*
 * Applies one "START END CLASS" line to `ref`; `next` is the first code point
 * not yet covered, so runs must be contiguous and in order.
 */
static void apply_run(uint8_t *ref, uint32_t *next, const char *line, unsigned lineno)
{
    unsigned long start, end;
    char name[16];

    cr_assert_eq(sscanf(line, "%lx %lx %15s", &start, &end, name), 3,
                 "ucd_reference.txt line %u: cannot parse \"%s\"", lineno, line);
    cr_assert(start == *next && start <= end && end <= SIMDBPE__UCD_MAX_CP,
              "ucd_reference.txt line %u: run %lX..%lX does not continue at %X", lineno, start,
              end, (unsigned)*next);
    unsigned c = class_from_name(name);
    cr_assert_neq(c, NO_CLASS, "ucd_reference.txt line %u: unknown class %s", lineno, name);
    memset(ref + start, (int)c, end - start + 1);
    *next = (uint32_t)end + 1;
}

/* Reads the reference file into a newly allocated array of CP_COUNT classes. */
static uint8_t *load_reference(void)
{
    const char *path = SIMDBPE_TEST_DATA_DIR "/ucd_reference.txt";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    uint8_t *ref = malloc(CP_COUNT);
    cr_assert_not_null(ref);

    char line[256];
    unsigned lineno = 0;
    uint32_t next = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] != '#' && line[0] != '\n')
            apply_run(ref, &next, line, lineno);
    }
    fclose(f);
    cr_assert_eq(next, CP_COUNT, "ucd_reference.txt stops at U+%04X", (unsigned)next);
    return ref;
}

/* Number of code points of class `c` in the tables. */
static uint32_t table_count(unsigned c)
{
    uint32_t n = 0;
    for (uint32_t cp = 0; cp < CP_COUNT; cp++)
        n += simdbpe__ucd_class(cp) == c;
    return n;
}

Test(ucd, matches_reference_on_every_code_point)
{
    uint8_t *ref = load_reference();
    for (uint32_t cp = 0; cp < CP_COUNT; cp++) {
        unsigned got = simdbpe__ucd_class(cp);
        unsigned want = ref[cp];
        if (got != want) {
            free(ref);
            cr_assert_fail("first mismatch at U+%04X: tables say %s, reference says %s",
                           (unsigned)cp, class_name(got), class_name(want));
        }
    }
    free(ref);
}

/* The packed copy of the Basic Multilingual Plane (the multi-byte
 * kernel's table) agrees with the reference on each of its code points. */
Test(ucd, packed_bmp_matches_reference)
{
    uint8_t *ref = load_reference();
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        unsigned got = simdbpe__ucd_bmp2[cp >> 4] >> 2 * (cp & 15) & 3;
        if (got != ref[cp]) {
            free(ref);
            cr_assert_fail("first mismatch at U+%04X: packed table says %s, reference says %s",
                           (unsigned)cp, class_name(got), class_name(ref[cp]));
        }
    }
    free(ref);
}

Test(ucd, class_counts)
{
    cr_expect_eq(table_count(SIMDBPE__CP_LETTER), 141028u);
    cr_expect_eq(table_count(SIMDBPE__CP_NUMBER), 1911u);
    cr_expect_eq(table_count(SIMDBPE__CP_SPACE), 25u);
    cr_expect_eq(table_count(SIMDBPE__CP_OTHER), CP_COUNT - 141028u - 1911u - 25u);
}

Test(ucd, exact_white_space_list)
{
    size_t n = sizeof white_space / sizeof white_space[0];
    cr_assert_eq(n, 25u);
    size_t i = 0;
    for (uint32_t cp = 0; cp < CP_COUNT; cp++) {
        if (simdbpe__ucd_class(cp) != SIMDBPE__CP_SPACE)
            continue;
        cr_assert(i < n, "unexpected SPACE U+%04X", (unsigned)cp);
        cr_assert_eq(cp, white_space[i], "SPACE U+%04X, expected U+%04X next", (unsigned)cp,
                     (unsigned)white_space[i]);
        i++;
    }
    cr_assert_eq(i, n, "only %zu SPACE code points", i);
}

Test(ucd, format_characters_are_not_space)
{
    /* V8's \s includes U+FEFF; older Unicode had U+180E as a space. */
    cr_expect_eq(simdbpe__ucd_class(0xFEFF), SIMDBPE__CP_OTHER);
    cr_expect_eq(simdbpe__ucd_class(0x180E), SIMDBPE__CP_OTHER);
    cr_expect_eq(simdbpe__ucd_class(0x200B), SIMDBPE__CP_OTHER);
}

Test(ucd, surrogates_and_unassigned_are_other)
{
    for (uint32_t cp = 0xD800; cp <= 0xDFFF; cp++)
        cr_assert_eq(simdbpe__ucd_class(cp), SIMDBPE__CP_OTHER, "U+%04X", (unsigned)cp);
    cr_expect_eq(simdbpe__ucd_class(0x0378), SIMDBPE__CP_OTHER); /* unassigned */
    cr_expect_eq(simdbpe__ucd_class(0x10FFFF), SIMDBPE__CP_OTHER); /* noncharacter */
}

Test(ucd, sample_letters_and_numbers)
{
    cr_expect_eq(simdbpe__ucd_class('A'), SIMDBPE__CP_LETTER);
    cr_expect_eq(simdbpe__ucd_class(0x4E00), SIMDBPE__CP_LETTER); /* CJK */
    cr_expect_eq(simdbpe__ucd_class('7'), SIMDBPE__CP_NUMBER);
    cr_expect_eq(simdbpe__ucd_class(0x00BD), SIMDBPE__CP_NUMBER); /* 1/2, No */
    cr_expect_eq(simdbpe__ucd_class(0x2160), SIMDBPE__CP_NUMBER); /* Roman I, Nl */
    cr_expect_eq(simdbpe__ucd_class('_'), SIMDBPE__CP_OTHER);
    cr_expect_eq(simdbpe__ucd_class(0x0301), SIMDBPE__CP_OTHER); /* combining mark */
}
