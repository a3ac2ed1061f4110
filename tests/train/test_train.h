/*
 * test_train.h - helpers shared by the trainer's tests (test_train*.c).
 *
 * Header-only. Helpers that can fail stop the current test with a Criterion
 * assertion naming what failed.
 *
 * Build definitions (tests/train.cmake):
 *   SIMDBPE_TEST_DATA_DIR  "<source>/tests/data"
 *   SIMDBPE_SOURCE_DIR     "<source>"
 *   SIMDBPE_CLI_PATH       the built simdbpe binary
 */
#ifndef SIMDBPE_TEST_TRAIN_H
#define SIMDBPE_TEST_TRAIN_H

#include <criterion/criterion.h>

#include <openssl/evp.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe.h"
#include "simdbpe_train.h"

#define TT_DIR SIMDBPE_TEST_DATA_DIR "/train"
#define TT_CORPUS(name) TT_DIR "/corpus/" name ".txt"
#define TT_GOLDEN(name, file) TT_DIR "/golden/" name "/" file

/* A whole file, NUL-terminated; fails the test if it cannot be read. */
static inline char *tt_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    cr_assert(buf != NULL);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            cr_assert(buf != NULL);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Options for HF-style training: lines mode, the given vocab size and
 * threads, "<|endoftext|>" as the one special token. */
static inline simdbpe_train_options tt_hf_options(uint32_t vocab_size, unsigned threads)
{
    static const char *const eot[] = {"<|endoftext|>"};
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = vocab_size;
    o.threads = threads;
    o.specials = eot;
    o.n_specials = 1;
    return o;
}

/* Trains on `data` fed in pieces of `chunk` bytes (one stream); the
 * trainer must succeed. */
static inline simdbpe_trainer *tt_train(const simdbpe_train_options *o, const char *data,
                                        size_t len, size_t chunk)
{
    simdbpe_error err;
    simdbpe_trainer *t = NULL;
    simdbpe_status st = simdbpe_trainer_new(o, &t, &err);
    cr_assert_eq(st, SIMDBPE_OK, "trainer_new: %s", err.message);
    for (size_t i = 0; i < len; i += chunk) {
        size_t n = len - i < chunk ? len - i : chunk;
        st = simdbpe_trainer_feed(t, data + i, n, &err);
        cr_assert_eq(st, SIMDBPE_OK, "feed at %zu: %s", i, err.message);
    }
    st = simdbpe_trainer_train(t, &err);
    cr_assert_eq(st, SIMDBPE_OK, "train: %s", err.message);
    return t;
}

typedef simdbpe_status (*tt_render_fn)(const simdbpe_trainer *, char *, size_t, size_t *);

/* vocab.json or merges.txt of a trained trainer, NUL-terminated. */
static inline char *tt_render(const simdbpe_trainer *t, tt_render_fn fn, size_t *len)
{
    size_t need = 0;
    simdbpe_status st = fn(t, NULL, 0, &need);
    cr_assert(st == SIMDBPE_ERR_BUFFER_TOO_SMALL || st == SIMDBPE_OK);
    char *buf = malloc(need + 1);
    cr_assert(buf != NULL);
    cr_assert_eq(fn(t, buf, need, len), SIMDBPE_OK);
    cr_assert_eq(*len, need);
    buf[need] = '\0';
    return buf;
}

/* Asserts two byte strings are equal, naming the first difference. */
static inline void tt_assert_same(const char *what, const char *got, size_t got_len,
                                  const char *want, size_t want_len)
{
    size_t i = 0;
    while (i < got_len && i < want_len && got[i] == want[i])
        i++;
    if (i == got_len && i == want_len)
        return;
    size_t from = i > 40 ? i - 40 : 0;
    cr_assert_fail("%s differs at byte %zu (got %zu bytes, want %zu)\n got: ...%.80s\nwant: ...%.80s",
                   what, i, got_len, want_len, got + from, want + from);
}

/* The sha256 of `n` ids as little-endian uint32, in hex. */
static inline void tt_sha256_ids(const uint32_t *ids, size_t n, char hex[65])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    cr_assert(ctx != NULL);
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    uint8_t buf[4096];
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++)
            buf[b++] = (uint8_t)(ids[i] >> (8 * k));
        if (b == sizeof buf) {
            EVP_DigestUpdate(ctx, buf, b);
            b = 0;
        }
    }
    EVP_DigestUpdate(ctx, buf, b);
    uint8_t md[32];
    unsigned mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* The sha256 of bytes, in hex. */
static inline void tt_sha256(const void *data, size_t len, char hex[65])
{
    uint8_t md[32];
    unsigned mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* A fresh empty directory under /tmp; the caller removes it with
 * tt_rmdir(). */
static inline void tt_tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/simdbpe-train-test.XXXXXX");
    cr_assert(mkdtemp(out) != NULL, "mkdtemp");
}

static inline void tt_rmdir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
