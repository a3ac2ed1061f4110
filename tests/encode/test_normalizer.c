/*
 * test_normalizer.c - the normalizer chain (src/model/normalizer.c)
 * against HF tokenizers 0.23.2: Lowercase and Strip's whitespace on every
 * code point (tests/data/normalizers/hf_lowercase_strip.txt, recorded from
 * HF by tests/gen/lowercase_strip.mjs), Replace's matches where the regex
 * matches the empty text (the strings HF's Replace normalizer gave, by
 * normalizeString), and chain images that are malformed refused. Whole
 * models with these normalizers are checked against HF itself by
 * tests/hf/unseen_documents.mjs.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

#include "common/utf8_valid.h"
#include "model/normalizer.h"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

Test(normalizer, lowercase_and_white_space_of_every_code_point_are_hf_tokenizers)
{
    char *ref = read_text(SIMDBPE_TEST_DATA_DIR "/normalizers/hf_lowercase_strip.txt");
    char **lower = calloc(0x110000, sizeof *lower);
    uint8_t *white = calloc(0x110000, 1);
    cr_assert(lower && white);
    size_t n_lower = 0, n_white = 0;
    for (char *line = strtok(ref, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned cp;
        int at = 0;
        if (line[0] == 'L') {
            cr_assert_eq(sscanf(line, "L %x %n", &cp, &at), 1, "line %s", line);
            lower[cp] = line + at;
            n_lower++;
        } else {
            cr_assert_eq(sscanf(line, "S %x", &cp), 1, "line %s", line);
            white[cp] = 1;
            n_white++;
        }
    }
    cr_assert_eq(n_lower, 1488);
    cr_assert_eq(n_white, 25);
    size_t bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        uint32_t to[2];
        size_t k = simdbpe__lowercase(cp, to);
        char got[32] = "", want[32] = "";
        int changed = k != 1 || to[0] != cp;
        for (size_t j = 0; changed && j < k; j++) {
            uint8_t u[4];
            size_t len = simdbpe__utf8_encode(to[j], u);
            for (size_t b = 0; b < len; b++)
                sprintf(got + strlen(got), "%02x", u[b]);
        }
        if (lower[cp])
            snprintf(want, sizeof want, "%s", lower[cp]);
        if (strcmp(got, want) != 0 && bad++ < 10)
            cr_log_error("Lowercase U+%04X: got %s, HF %s", cp, got, want);
        if (simdbpe__is_white_space(cp) != white[cp] && bad++ < 10)
            cr_log_error("Strip U+%04X: white space %d, HF %d", cp,
                         simdbpe__is_white_space(cp), white[cp]);
    }
    cr_assert_eq(bad, 0, "%zu code points differ from HF tokenizers", bad);
    free(lower);
    free(white);
    free(ref);
}

/* The chain of one step applied to text. */
static void expect_step(uint8_t kind, uint8_t arg, const char *a, const char *b,
                        const char *text, const char *want)
{
    simdbpe__nz_image im = {0};
    simdbpe__nz_image_step(&im, kind, arg, (const uint8_t *)a, a ? strlen(a) : 0,
                           (const uint8_t *)b, b ? strlen(b) : 0);
    cr_assert(!im.nomem);
    simdbpe__normalizer *nz;
    simdbpe_error err;
    cr_assert_eq(simdbpe__normalizer_new(im.p, im.len, "test", &nz, &err), SIMDBPE_OK, "%s",
                 err.message);
    simdbpe__nz_work w = {0};
    const uint8_t *s = (const uint8_t *)text;
    size_t n = strlen(text);
    cr_assert_eq(simdbpe__normalize(nz, &w, &s, &n), SIMDBPE_OK);
    cr_assert(n == strlen(want) && memcmp(s, want, n) == 0,
              "step %u %s -> %s on \"%s\": got \"%.*s\", HF \"%s\"", kind, a ? a : "",
              b ? b : "", text, (int)n, (const char *)s, want);
    simdbpe__nz_work_free(&w);
    simdbpe__normalizer_free(nz);
    free(im.p);
}

/* What HF tokenizers 0.23.2's Replace normalizer gave (normalizeString):
 * a regex that matches the empty text inserts the content there, except
 * right after a match, and nothing in an empty text; a String is matched
 * literally, the empty one as the empty regex. */
Test(normalizer, replace_matches_as_hf_tokenizers)
{
    const uint8_t R = SIMDBPE__NZ_REPLACE_REGEX;
    expect_step(R, 0, "", "X", "abab", "XaXbXaXbX");
    expect_step(R, 0, "", "X", "", "");
    expect_step(R, 0, "a*", "X", "abab", "XbXbX");
    expect_step(R, 0, "a*", "X", "baab", "XbXbX");
    expect_step(R, 0, "a*", "X", "  x  ", "X X XxX X X");
    expect_step(R, 0, "(?=b)", "X", "abab", "aXbaXb");
    expect_step(R, 0, "(?=b)", "X", "baab", "XbaaXb");
    expect_step(R, 0, "^\\s+|\\s+$", "", "  x  ", "x");
    expect_step(R, 0, "[0-9]+|\\p{Lu}", "", "A1b", "b");
    expect_step(SIMDBPE__NZ_REPLACE, 0, "ab", "[]", "baab", "ba[]");
    expect_step(SIMDBPE__NZ_REPLACE, 0, "ab", "[]", "abab", "[][]");
    expect_step(SIMDBPE__NZ_STRIP, SIMDBPE__NZ_STRIP_LEFT | SIMDBPE__NZ_STRIP_RIGHT, NULL, NULL,
                "\xE3\x80\x80 x\xE2\x80\x8B \n", "x\xE2\x80\x8B");
    expect_step(SIMDBPE__NZ_STRIP, SIMDBPE__NZ_STRIP_RIGHT, NULL, NULL, " \t", "");
    expect_step(SIMDBPE__NZ_PREPEND, 0, "\xE2\x96\x81", NULL, "", "");
    expect_step(SIMDBPE__NZ_LOWERCASE, 0, NULL, NULL, "\xC4\xB0\xCE\xA3", "i\xCC\x87\xCF\x83");
}

Test(normalizer, malformed_images_are_refused)
{
    simdbpe__nz_image im = {0};
    simdbpe__nz_image_step(&im, SIMDBPE__NZ_REPLACE, 0, (const uint8_t *)"a", 1,
                           (const uint8_t *)"b", 1);
    simdbpe__normalizer *nz;
    simdbpe_error err;
    for (size_t cut = 0; cut < im.len; cut++)
        cr_assert_eq(simdbpe__normalizer_new(im.p, cut, "test", &nz, &err),
                     SIMDBPE_ERR_MODEL_FILE, "image cut at %zu", cut);
    uint8_t bad = im.p[4];
    im.p[4] = SIMDBPE__NZ_LAST + 1;
    cr_assert_eq(simdbpe__normalizer_new(im.p, im.len, "test", &nz, &err),
                 SIMDBPE_ERR_MODEL_FILE);
    im.p[4] = bad;
    im.p[8] = 0; /* a's length: 0, an empty Replace string */
    cr_assert_eq(simdbpe__normalizer_new(im.p, im.len, "test", &nz, &err),
                 SIMDBPE_ERR_MODEL_FILE);
    free(im.p);
    /* A regex whose meaning comes from Unicode data Oniguruma's tables
     * would answer otherwise: refused, as a Split's is. */
    simdbpe__nz_image re = {0};
    simdbpe__nz_image_step(&re, SIMDBPE__NZ_REPLACE_REGEX, 0, (const uint8_t *)"\\w+", 3, NULL,
                           0);
    cr_assert_eq(simdbpe__normalizer_new(re.p, re.len, "test", &nz, &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    free(re.p);
}
