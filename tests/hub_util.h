/*
 * hub_util.h - a Hugging Face cache laid out as huggingface_hub writes it,
 * in a test's temporary directory:
 *
 *   CACHE/models--ORG--NAME/blobs/ETAG                 the file's bytes
 *   CACHE/models--ORG--NAME/snapshots/COMMIT/tokenizer.json -> ../../blobs/ETAG
 *   CACHE/models--ORG--NAME/refs/REF                   COMMIT (no newline)
 *
 * The tokenizer.json is tests/data/api/hf_small.tokenizer.json.gz (written
 * by HF tokenizers 0.23.2), decompressed through the library's reader.
 */
#ifndef SIMDBPE_HUB_UTIL_H
#define SIMDBPE_HUB_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simdbpe_dataset.h"
#include "test_util.h"

#define HUB_SMALL_GZ SIMDBPE_TEST_DATA_DIR "/api/hf_small.tokenizer.json.gz"
#define HUB_COMMIT "0123456789abcdef0123456789abcdef01234567"
#define HUB_COMMIT2 "89abcdef0123456789abcdef0123456789abcdef"

/* mkdir -p */
static inline void hub_mkdirs(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        cr_assert(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
        *s = '/';
    }
    cr_assert(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
}

/* The small tokenizer.json's bytes (decompressed). */
static inline char *hub_small_json(size_t *len)
{
    simdbpe_dataset_input *in;
    simdbpe_error err;
    cr_assert_eq(simdbpe_dataset_input_open(HUB_SMALL_GZ, &in, &err), SIMDBPE_OK, "%s",
                 err.message);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    long got;
    while ((got = simdbpe_dataset_input_read(in, buf + n, cap - n, &err)) > 0) {
        n += (size_t)got;
        if (n == cap)
            cr_assert(buf = realloc(buf, cap *= 2));
    }
    cr_assert_eq(got, 0, "%s", err.message);
    simdbpe_dataset_input_close(in);
    *len = n;
    return buf;
}

/* CACHE/models--ORG--NAME with the small tokenizer.json as blob "e1" in
 * snapshot `commit`, and refs/`ref` naming it (ref NULL: no ref). Writes the
 * repo's folder into `folder` (256 bytes). */
static inline void hub_make_repo(const char *cache, const char *org, const char *name,
                                 const char *commit, const char *ref, char *folder)
{
    char p[4096], q[4096];
    int n = snprintf(folder, 256, "%s/models--%s--%s", cache, org, name);
    cr_assert(n > 0 && n < 256);
    snprintf(p, sizeof p, "%s/blobs", folder);
    hub_mkdirs(p);
    snprintf(p, sizeof p, "%s/blobs/e1", folder);
    size_t len;
    char *json = hub_small_json(&len);
    tu_write(p, json, len);
    free(json);
    snprintf(p, sizeof p, "%s/snapshots/%s", folder, commit);
    hub_mkdirs(p);
    snprintf(p, sizeof p, "%s/snapshots/%s/tokenizer.json", folder, commit);
    cr_assert(symlink("../../blobs/e1", p) == 0 || errno == EEXIST, "symlink %s", p);
    if (ref) {
        snprintf(p, sizeof p, "%s/refs/%s", folder, ref);
        snprintf(q, sizeof q, "%s", p);
        *strrchr(q, '/') = '\0';
        hub_mkdirs(q);
        tu_write(p, commit, strlen(commit));
    }
}

/* Empties the variables that choose the cache, so a test sets the one it
 * means and the machine's own settings play no part. */
static inline void hub_clear_env(void)
{
    static const char *const vars[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME",
                                       "XDG_CACHE_HOME"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

#endif
