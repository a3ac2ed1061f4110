/*
 * test_regex.c - the generic pre-tokenizer (src/pretok/regex.c): Split
 * regexes run by Oniguruma, against HF tokenizers' own pieces.
 *
 * tests/data/pretok/splits.jsonl.zst holds the pieces HF tokenizers 0.23.2
 * makes with 164 Split pre-tokenizers (16 patterns x 5 behaviors x invert,
 * and sequences of two) on 314 texts (tests/gen/pretok_splits.mjs;
 * provenance in tests/data/pretok/PROVENANCE.md). The generic walk must
 * give every piece; where a Removed Split drops text, it must say so
 * instead (the encoder then refuses the text).
 *
 * The Unicode properties are checked on every code point against what HF
 * tokenizers shows (tests/data/ucd_props_reference.txt): Debian's
 * Oniguruma alone (Unicode 14) differs from it on 9,272 letters.
 */
#include <criterion/criterion.h>

#include "pretok/pretok.h"
#include "test_util.h"
#include "zst_util.h"

#define SPLITS_FILE SIMDBPE_TEST_DATA_DIR "/pretok/splits.jsonl.zst"
#define PROPS_FILE SIMDBPE_TEST_DATA_DIR "/ucd_props_reference.txt"

static uint8_t flags_of(const char *behavior, int invert)
{
    static const char *const names[] = {"Isolated", "Contiguous", "MergedWithPrevious",
                                        "MergedWithNext", "Removed"};
    for (uint8_t b = 0; b < 5; b++)
        if (strcmp(behavior, names[b]) == 0)
            return (uint8_t)(b | (invert ? SIMDBPE__SPLIT_INVERT : 0));
    cr_assert_fail("unknown behavior %s", behavior);
    return 0;
}

#define MAX_CASES 256

Test(regex, splits_give_hf_pieces, .timeout = 120)
{
    size_t len;
    char *data = read_zst(SPLITS_FILE, &len);
    simdbpe__regex *rx[MAX_CASES] = {0};
    int removed[MAX_CASES] = {0};
    size_t line = 0, records = 0, bad = 0, dropped = 0;
    size_t *ends = NULL, cap = 0;
    json_t *rec;
    for (size_t i = 0; (rec = tu_jsonl_next(data, len, &i, &line, SPLITS_FILE));) {
        if (json_object_get(rec, "header")) {
            json_decref(rec);
            continue;
        }
        size_t c = (size_t)json_integer_value(json_object_get(rec, "case"));
        cr_assert_lt(c, MAX_CASES);
        json_t *splits = json_object_get(rec, "splits");
        if (splits) {
            const char *pat[SIMDBPE__REGEX_MAX_SPLITS];
            uint8_t fl[SIMDBPE__REGEX_MAX_SPLITS];
            size_t n = json_array_size(splits);
            cr_assert(n >= 1 && n <= SIMDBPE__REGEX_MAX_SPLITS);
            for (size_t k = 0; k < n; k++) {
                json_t *sp = json_array_get(splits, k);
                pat[k] = json_string_value(json_array_get(sp, 0));
                fl[k] = flags_of(json_string_value(json_array_get(sp, 1)),
                                 json_is_true(json_array_get(sp, 2)));
                removed[c] |= (fl[k] & ~SIMDBPE__SPLIT_INVERT) == SIMDBPE__SPLIT_REMOVED;
            }
            simdbpe_error err;
            cr_assert_eq(simdbpe__regex_new(pat, fl, n, "test", &rx[c], &err), SIMDBPE_OK,
                         "case %zu: %s", c, err.message);
            json_decref(rec);
            continue;
        }
        cr_assert(rx[c], "line %zu: case %zu before its Splits", line, c);
        size_t tlen;
        const char *text = tu_json_text(rec, "text", &tlen);
        json_t *pieces = json_object_get(rec, "pieces");
        /* HF's pieces; they cover the text unless a Removed Split dropped some. */
        size_t np = json_array_size(pieces), covered = 0;
        int same_text = 1;
        for (size_t k = 0; k < np; k++) {
            size_t pl;
            const json_t *pj = json_array_get(pieces, k);
            const char *p = json_string_value(pj);
            cr_assert(p, "line %zu: a piece is not a string", line);
            pl = json_string_length(pj);
            same_text &= covered + pl <= tlen && memcmp(text + covered, p, pl) == 0;
            covered += pl;
        }
        int hf_drops = !(same_text && covered == tlen);
        cr_assert(!hf_drops || removed[c], "line %zu: HF dropped text without Removed", line);
        simdbpe__regex_iter it;
        simdbpe__regex_begin(&it, rx[c], (const uint8_t *)text, tlen);
        size_t a, b, n_got = 0, at = 0;
        while (simdbpe__regex_next(&it, &a, &b)) {
            cr_assert(a == at && b > a, "line %zu: pieces do not cover the text", line);
            at = b;
            if (n_got == cap)
                cr_assert(ends = realloc(ends, (cap = cap ? 2 * cap : 64) * sizeof *ends));
            ends[n_got++] = b;
        }
        cr_assert_eq(at, tlen, "line %zu: pieces end at %zu of %zu", line, at, tlen);
        cr_assert(!it.failed);
        records++;
        int ok;
        if (hf_drops)
            ok = it.dropped;
        else {
            ok = !it.dropped && n_got == np;
            covered = 0;
            for (size_t k = 0; ok && k < np; k++) {
                covered += json_string_length(json_array_get(pieces, k));
                ok = ends[k] == covered;
            }
        }
        dropped += it.dropped;
        if (!ok && bad++ < 8) {
            char shown[200];
            tu_show(shown, sizeof shown, text, tlen);
            cr_log_error("case %zu \"%s\": %zu pieces (dropped %d), HF %zu%s", c, shown, n_got,
                         it.dropped, np, hf_drops ? " (text dropped)" : "");
        }
        json_decref(rec);
    }
    for (size_t c = 0; c < MAX_CASES; c++)
        simdbpe__regex_free(rx[c]);
    free(ends);
    free(data);
    fprintf(stderr, "%zu texts checked, %zu where Removed drops text, %zu differ\n", records,
            dropped, bad);
    cr_assert_gt(records, 50000);
    cr_assert_gt(dropped, 1000);
    cr_assert_eq(bad, 0, "%zu of %zu texts differ from HF's pieces", bad, records);
}

/* Whether a one-Split Removed regex drops code point cp (it matches it). */
static int matches(const simdbpe__regex *rx, uint32_t cp)
{
    uint8_t s[4];
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n == 1)
        s[0] = (uint8_t)cp;
    else {
        for (size_t k = n - 1; k > 0; k--, cp >>= 6)
            s[k] = (uint8_t)(0x80 | (cp & 0x3F));
        s[0] = (uint8_t)((0xF00 >> n) | cp);
    }
    simdbpe__regex_iter it;
    size_t a, b;
    simdbpe__regex_begin(&it, rx, s, n);
    while (simdbpe__regex_next(&it, &a, &b))
        ;
    return it.dropped;
}

Test(regex, properties_are_hf_on_every_code_point, .timeout = 300)
{
    static const char *const props[8] = {"\\p{L}", "\\p{N}", "\\s", "\\p{M}", "\\p{P}", "\\p{S}",
                                         "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}]",
                                         "[\\p{Ll}\\p{Lm}\\p{Lo}]"};
    simdbpe__regex *rx[8];
    for (int k = 0; k < 8; k++) {
        uint8_t fl = SIMDBPE__SPLIT_REMOVED;
        simdbpe_error err;
        cr_assert_eq(simdbpe__regex_new(&props[k], &fl, 1, "test", &rx[k], &err), SIMDBPE_OK,
                     "%s", err.message);
    }
    FILE *f = fopen(PROPS_FILE, "r");
    cr_assert(f, "%s", PROPS_FILE);
    char line[256];
    size_t checked = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, bits;
        if (line[0] == '#' || sscanf(line, "%lx %lx %lx", &lo, &hi, &bits) != 3)
            continue;
        for (unsigned long cp = lo; cp <= hi; cp++) {
            if (cp >= 0xD800 && cp <= 0xDFFF)
                continue;
            for (int k = 0; k < 8; k++)
                if (matches(rx[k], (uint32_t)cp) != (int)((bits >> k) & 1) && bad++ < 8)
                    cr_log_error("U+%04lX: %s %s, HF says %s", cp, props[k],
                                 matches(rx[k], (uint32_t)cp) ? "matches" : "does not match",
                                 (bits >> k) & 1 ? "it does" : "it does not");
            checked++;
        }
    }
    fclose(f);
    for (int k = 0; k < 8; k++)
        simdbpe__regex_free(rx[k]);
    cr_assert_eq(checked, 0x110000 - 0x800);
    cr_assert_eq(bad, 0, "%zu differences from HF", bad);
}

static void expect_refused(const char *pattern, const char *needle)
{
    simdbpe__regex *rx = NULL;
    simdbpe_error err;
    uint8_t fl = SIMDBPE__SPLIT_ISOLATED;
    simdbpe_status st = simdbpe__regex_new(&pattern, &fl, 1, "tokenizer.json", &rx, &err);
    cr_assert_eq(st, SIMDBPE_ERR_UNSUPPORTED, "%s: %s", pattern, simdbpe_status_name(st));
    cr_assert_null(rx);
    cr_assert(strstr(err.message, needle), "%s: message \"%s\" lacks \"%s\"", pattern,
              err.message, needle);
}

/* What the two Unicode versions (or the search's start) would tell apart
 * is refused, with the reason; a pattern the engine rejects, with its
 * message. */
Test(regex, what_cannot_match_as_hf_is_refused)
{
    expect_refused("\\w+", "depends on other Unicode data");
    expect_refused("\\d", "depends on other Unicode data");
    expect_refused("a\\b", "depends on other Unicode data");
    expect_refused("\\Ga", "where the search starts");
    expect_refused("[[:alpha:]]", "POSIX bracket");
    expect_refused("(?i)ab", "runs to the end of its group");
    expect_refused("(?i:\u00e9)", "more than ASCII literals");
    expect_refused("(?i:[a-z])", "more than ASCII literals");
    expect_refused("\\p{Greek}", "other than a General_Category or Han");
    expect_refused("(a", "does not compile (Oniguruma: ");
    expect_refused("\\p{NoSuchProperty}", "does not compile");
}

/* Kimi K2's pattern, as its tokenizer.json spells it, compiles. */
Test(regex, long_names_and_aliases_are_accepted)
{
    const char *pats[] = {"\\p{Letter}+", "\\p{Uppercase_Letter}", "\\p{lu}", "\\p{Hani}",
                          "[\\p{L}&&[^\\p{Han}]]", "\\P{N}", "\\p{^Cased_Letter}"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        simdbpe__regex *rx;
        simdbpe_error err;
        uint8_t fl = 0;
        cr_assert_eq(simdbpe__regex_new(&pats[i], &fl, 1, "t", &rx, &err), SIMDBPE_OK, "%s: %s",
                     pats[i], err.message);
        simdbpe__regex_free(rx);
    }
}
