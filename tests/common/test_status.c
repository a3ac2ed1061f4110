/*
 * test_status.c - status codes, their names and descriptions, and the
 * version.
 *
 * The status list is an X-macro (SIMDBPE_STATUS_LIST); these tests check the
 * promises made in simdbpe.h: values are the documented ones and never
 * renumbered, every status has its own name and description, and unknown
 * values get a fallback instead of NULL.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "simdbpe.h"

/* The values simdbpe.h documents; renumbering one breaks callers. */
Test(status, values_are_stable)
{
    cr_assert_eq(SIMDBPE_OK, 0);
    cr_assert_eq(SIMDBPE_ERR_NOMEM, 1);
    cr_assert_eq(SIMDBPE_ERR_INVALID_ARG, 2);
    cr_assert_eq(SIMDBPE_ERR_IO, 3);
    cr_assert_eq(SIMDBPE_ERR_INVALID_UTF8, 4);
    cr_assert_eq(SIMDBPE_ERR_SPECIAL_TOKEN, 5);
    cr_assert_eq(SIMDBPE_ERR_TOKEN_ID, 6);
    cr_assert_eq(SIMDBPE_ERR_BUFFER_TOO_SMALL, 7);
    cr_assert_eq(SIMDBPE_ERR_VOCAB, 8);
    cr_assert_eq(SIMDBPE_ERR_MERGES, 9);
    cr_assert_eq(SIMDBPE_ERR_SPECIALS, 10);
    cr_assert_eq(SIMDBPE_ERR_MODEL_FILE, 11);
    cr_assert_eq(SIMDBPE_ERR_TOO_LARGE, 12);
    cr_assert_eq(SIMDBPE_ERR_UNSUPPORTED, 13);
    cr_assert_eq(SIMDBPE_ERR_CANCELLED, 14);
}

/* Expanding the list here, independently of the library, checks that
 * names and texts come from the same list. */
typedef struct expected {
    simdbpe_status status;
    const char *name;
    const char *text;
} expected;

static const expected all[] = {
#define ROW(name, value, text) {SIMDBPE_##name, #name, text},
    SIMDBPE_STATUS_LIST(ROW)
#undef ROW
};

#define N_STATUS (sizeof all / sizeof all[0])

Test(status, every_status_has_its_name_and_text)
{
    for (size_t i = 0; i < N_STATUS; i++) {
        cr_assert_str_eq(simdbpe_status_name(all[i].status), all[i].name);
        cr_assert_str_eq(simdbpe_strerror(all[i].status), all[i].text);
        cr_assert_gt(strlen(all[i].text), 3, "%s has an empty description", all[i].name);
    }
}

Test(status, names_and_texts_are_distinct)
{
    for (size_t i = 0; i < N_STATUS; i++) {
        for (size_t j = i + 1; j < N_STATUS; j++) {
            cr_assert_neq(all[i].status, all[j].status, "%s and %s share a value", all[i].name,
                          all[j].name);
            cr_assert_str_neq(simdbpe_strerror(all[i].status), simdbpe_strerror(all[j].status));
            cr_assert_str_neq(simdbpe_status_name(all[i].status),
                              simdbpe_status_name(all[j].status));
        }
    }
}

Test(status, specific_texts)
{
    cr_assert_str_eq(simdbpe_strerror(SIMDBPE_OK), "success");
    cr_assert_str_eq(simdbpe_status_name(SIMDBPE_ERR_INVALID_UTF8), "ERR_INVALID_UTF8");
    cr_assert(strstr(simdbpe_strerror(SIMDBPE_ERR_INVALID_UTF8), "UTF-8"));
    cr_assert(strstr(simdbpe_strerror(SIMDBPE_ERR_TOKEN_ID), "token id"));
}

Test(status, unknown_values_have_a_fallback)
{
    simdbpe_status bogus[] = {(simdbpe_status)15, (simdbpe_status)999, (simdbpe_status)-1};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        cr_assert_not_null(simdbpe_strerror(bogus[i]));
        cr_assert_not_null(simdbpe_status_name(bogus[i]));
        cr_assert_str_eq(simdbpe_strerror(bogus[i]), "unknown status");
        cr_assert_str_eq(simdbpe_status_name(bogus[i]), "UNKNOWN");
    }
}

Test(version, runtime_matches_macros)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", SIMDBPE_VERSION_MAJOR, SIMDBPE_VERSION_MINOR,
             SIMDBPE_VERSION_PATCH);
    cr_assert_str_eq(SIMDBPE_VERSION_STRING, want);
    cr_assert_str_eq(simdbpe_version(), want);
}
