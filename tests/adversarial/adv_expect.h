/*
 * adv_expect.h - reading the references' answers for the adversarial
 * inputs (tests/adversarial/long.tsv, written by gen_expected.mjs) and
 * digesting our answers the same way, for the Criterion tests.
 *
 * Requires SIMDBPE_ADV_DIR (the tests/adversarial folder, a string) and
 * linking libcrypto (sha256 through OpenSSL's EVP interface).
 */
#ifndef SIMDBPE_ADV_EXPECT_H
#define SIMDBPE_ADV_EXPECT_H

#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#ifndef SIMDBPE_ADV_DIR
#error "define SIMDBPE_ADV_DIR as the tests/adversarial folder, a string"
#endif

static inline void adv_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[32];
    unsigned int n = 0;
    cr_assert(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) == 1 && n == 32);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* sha256 of ids written as uint32 little-endian, as the generator does. */
static inline void adv_ids_sha256(const uint32_t *ids, size_t n, char hex[65])
{
    uint8_t *buf = malloc(n * 4 + 1);
    cr_assert(buf != NULL);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 4; b++)
            buf[4 * i + (size_t)b] = (uint8_t)(ids[i] >> (8 * b));
    adv_sha256_hex(buf, n * 4, hex);
    free(buf);
}

/* One row of long.tsv. */
typedef struct adv_expected {
    size_t bytes;
    char input_sha[65];
    long long strict_offset; /* -1: the input is valid UTF-8 */
    size_t tokens;
    char ids_sha[65];
} adv_expected;

/* Fills *e with the row of `kind`; returns 0 if there is none. */
static inline int adv_read_expected(const char *kind, adv_expected *e)
{
    const char *path = SIMDBPE_ADV_DIR "/long.tsv";
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "%s: %s", path, strerror(errno));
    char line[512], name[64], off[32];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %zu %64s %31s %zu %64s", name, &e->bytes, e->input_sha, off,
                   &e->tokens, e->ids_sha) == 6 &&
            strcmp(name, kind) == 0) {
            e->strict_offset = strcmp(off, "-") == 0 ? -1 : atoll(off);
            found = 1;
        }
    fclose(f);
    return found;
}

#endif
