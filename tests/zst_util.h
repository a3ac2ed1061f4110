/*
 * zst_util.h - reading a whole .zst file in a test (the corpora, the
 * pre-tokenizer oracle data). A damaged or truncated file fails the test.
 */
#ifndef SIMDBPE_TESTS_ZST_UTIL_H
#define SIMDBPE_TESTS_ZST_UTIL_H

#include <criterion/criterion.h>

#include <zstd.h>

#include "test_util.h"

/* Decompresses a whole .zst file (NUL-terminated). */
static inline char *read_zst(const char *path, size_t *len)
{
    size_t clen;
    char *comp = tu_read(path, &clen);
    ZSTD_DStream *ds = ZSTD_createDStream();
    cr_assert(ds);
    size_t cap = clen * 8 + (1 << 20), n = 0;
    char *out = malloc(cap + 1);
    cr_assert(out);
    ZSTD_inBuffer in = {comp, clen, 0};
    size_t r = 1;
    while (in.pos < in.size || r != 0) {
        if (cap - n < (1 << 20)) {
            cap *= 2;
            out = realloc(out, cap + 1);
            cr_assert(out);
        }
        ZSTD_outBuffer ob = {out + n, cap - n, 0};
        r = ZSTD_decompressStream(ds, &ob, &in);
        cr_assert(!ZSTD_isError(r), "%s: %s", path, ZSTD_getErrorName(r));
        cr_assert(ob.pos > 0 || in.pos < in.size || r == 0, "%s: truncated", path);
        n += ob.pos;
    }
    ZSTD_freeDStream(ds);
    free(comp);
    out[n] = '\0';
    *len = n;
    return out;
}

#endif
