/*
 * corpus_util.h - what the tests over the large public corpora share:
 * finding them (and skipping, saying so, when they are not there),
 * reading .zst files, golden .tsv rows and the sha256 of ids.
 *
 * The corpora are looked for in $SIMDBPE_CORPUS_DIR, else <project
 * root>/../shared, as DIR/corpus/ + DIR/golden/ (a directory laid out like
 * shared/), or, if DIR has no corpus/ folder, as DIR itself +
 * DIR/../golden. Included by one test file each (its functions are
 * static).
 */
#ifndef SIMDBPE_TESTS_CORPUS_UTIL_H
#define SIMDBPE_TESTS_CORPUS_UTIL_H

#include <criterion/criterion.h>

#include <errno.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "test_util.h"
#include "zst_util.h"

#define SKIP_LINE "SIMDBPE CORPUS PARITY SKIPPED"

typedef struct dirs {
    char corpus[1024];
    char golden[1024];
} dirs;

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Finds the corpus and golden folders for `corpus_file` / `golden_file`;
 * skips the test (saying why) when they are not there. */
static void find_dirs(dirs *d, const char *corpus_file, const char *golden_file)
{
    const char *env = getenv("SIMDBPE_CORPUS_DIR");
    char root[900];
    snprintf(root, sizeof root, "%s", env && *env ? env : SIMDBPE_SOURCE_DIR "/../shared");
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/corpus", root);
    if (is_dir(probe)) {
        snprintf(d->corpus, sizeof d->corpus, "%s/corpus", root);
        snprintf(d->golden, sizeof d->golden, "%s/golden", root);
    } else {
        snprintf(d->corpus, sizeof d->corpus, "%s", root);
        snprintf(d->golden, sizeof d->golden, "%s/../golden", root);
    }
    char c[1200], g[1200];
    snprintf(c, sizeof c, "%s/%s", d->corpus, corpus_file);
    snprintf(g, sizeof g, "%s/%s", d->golden, golden_file);
    if (!is_file(c) || !is_file(g)) {
        fprintf(stderr,
                SKIP_LINE ": %s or %s not found (looked in %s; set SIMDBPE_CORPUS_DIR to a "
                "folder with corpus/ and golden/)\n",
                c, g, env && *env ? "$SIMDBPE_CORPUS_DIR" : "<project>/../shared");
        cr_skip_test("corpus not available: %s", c);
    }
}

/* One row of a golden .tsv. */
typedef struct golden_row {
    uint64_t doc, offset, length, tokens;
    char sha[65];
} golden_row;

/* Parses golden NAME.tsv (header line, then one row per document). */
static golden_row *read_golden(const char *path, size_t *n_rows)
{
    size_t len;
    char *data = tu_read(path, &len);
    size_t cap = 1024, n = 0;
    golden_row *rows = malloc(cap * sizeof *rows);
    char *save = NULL;
    char *line = strtok_r(data, "\n", &save);
    cr_assert(line && strncmp(line, "doc\tbyte_offset", 15) == 0, "%s: unexpected header", path);
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        if (n == cap)
            rows = realloc(rows, (cap *= 2) * sizeof *rows);
        golden_row *r = &rows[n];
        unsigned long long doc, off, blen, tok;
        char sha[65] = "";
        int k = sscanf(line, "%llu\t%llu\t%llu\t%llu\t%64s", &doc, &off, &blen, &tok, sha);
        cr_assert_eq(k, 5, "%s row %zu: cannot parse \"%s\"", path, n + 1, line);
        cr_assert_eq(strlen(sha), 64, "%s row %zu: bad sha256", path, n + 1);
        cr_assert_eq(doc, n, "%s: rows out of order at %zu", path, n);
        *r = (golden_row){doc, off, blen, tok, {0}};
        memcpy(r->sha, sha, sizeof sha);
        n++;
    }
    free(data);
    *n_rows = n;
    return rows;
}

/* The lowercase hex sha256 of ids as little-endian u32. */
static void sha256_ids(const uint32_t *ids, size_t n, char hex[65])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    cr_assert(ctx);
    cr_assert(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL));
    uint8_t buf[4096];
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        buf[b++] = (uint8_t)ids[i];
        buf[b++] = (uint8_t)(ids[i] >> 8);
        buf[b++] = (uint8_t)(ids[i] >> 16);
        buf[b++] = (uint8_t)(ids[i] >> 24);
        if (b == sizeof buf) {
            EVP_DigestUpdate(ctx, buf, b);
            b = 0;
        }
    }
    EVP_DigestUpdate(ctx, buf, b);
    unsigned char md[32];
    unsigned int md_len = 0;
    cr_assert(EVP_DigestFinal_ex(ctx, md, &md_len) && md_len == 32);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}


#endif
