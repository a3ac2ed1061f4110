/*
 * adv_gen.h - the adversarial inputs, generated the same way here (C, for
 * the tests and bench/adversarial/) and in gen_expected.mjs (JavaScript,
 * which records what HF tokenizers makes of them). The two must stay in
 * step: the tests check the sha256 of every generated input against the
 * one the generator recorded, so a drift is an error, not a wrong answer.
 *
 * An input of a "pool" kind is built by appending atoms until the next one
 * would pass `size` bytes (so multi-byte kinds stop a few bytes short):
 * each atom picks one of the kind's code point ranges, then one code point
 * in it, with xorshift32 (seed = 2463534242 + kind index). A "repeat" kind
 * repeats a fixed byte string; "late_invalid" is `size - 1` letters and a
 * 0xFF byte.
 */
#ifndef SIMDBPE_ADV_GEN_H
#define SIMDBPE_ADV_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/utf8_valid.h"

typedef struct adv_range {
    uint32_t lo, hi;
} adv_range;

typedef struct adv_kind {
    const char *name;
    const adv_range *ranges; /* pool kinds */
    size_t n_ranges;
    const char *repeat; /* repeat kinds: the bytes to repeat */
    size_t repeat_len;
} adv_kind;

#define ADV_RANGES(...) (const adv_range[]){__VA_ARGS__}, sizeof((adv_range[]){__VA_ARGS__}) / sizeof(adv_range)
#define ADV_POOL(name, ...) {name, ADV_RANGES(__VA_ARGS__), NULL, 0}
#define ADV_REPEAT(name, s) {name, NULL, 0, s, sizeof s - 1}

/* The kinds, in the order gen_expected.mjs lists them (the index is part
 * of the seed). */
static const adv_kind adv_kinds[] = {
    ADV_POOL("one_letter", {0x61, 0x61}),
    ADV_POOL("letters", {0x41, 0x5A}, {0x61, 0x7A}),
    ADV_POOL("digits", {0x30, 0x39}),
    ADV_POOL("punctuation", {0x21, 0x2F}, {0x3A, 0x40}, {0x5B, 0x60}, {0x7B, 0x7E}),
    ADV_POOL("spaces", {0x20, 0x20}),
    ADV_POOL("whitespace", {0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x2000, 0x200A},
             {0x3000, 0x3000}),
    ADV_POOL("cjk", {0x4E00, 0x9FFF}),
    ADV_POOL("emoji", {0x1F600, 0x1F64F}),
    ADV_POOL("letters_mixed", {0x61, 0x7A}, {0x430, 0x44F}, {0x3B1, 0x3C9}, {0x4E00, 0x9FFF},
             {0xAC00, 0xD7A3}, {0xE0, 0xF6}),
    ADV_POOL("nul", {0x00, 0x00}),
    ADV_POOL("mixture", {0x61, 0x7A}, {0x41, 0x5A}, {0x30, 0x39}, {0x20, 0x20}, {0x20, 0x20},
             {0x0A, 0x0A}, {0x21, 0x2F}, {0x27, 0x27}, {0xE0, 0xFF}, {0x300, 0x36F},
             {0x4E00, 0x9FFF}, {0x1F600, 0x1F64F}, {0x3000, 0x3000}, {0xA0, 0xA0},
             {0x660, 0x669}, {0xFEFF, 0xFEFF}),
    ADV_REPEAT("overlong", "\xC0\xAF"),
    ADV_REPEAT("surrogates", "\xED\xA0\x80"),
    ADV_REPEAT("late_invalid", ""),
};

#define ADV_N_KINDS (sizeof adv_kinds / sizeof adv_kinds[0])

static inline uint32_t adv_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* Generates kind k with at most `size` bytes into a malloc'ed buffer;
 * returns it (NULL when out of memory) and its length in *len. */
static inline uint8_t *adv_generate(size_t k, size_t size, size_t *len)
{
    const adv_kind *kind = &adv_kinds[k];
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return NULL;
    size_t n = 0;
    if (strcmp(kind->name, "late_invalid") == 0) {
        memset(buf, 'a', size);
        if (size)
            buf[size - 1] = 0xFF;
        *len = size;
        return buf;
    }
    if (kind->repeat) {
        while (n + kind->repeat_len <= size) {
            memcpy(buf + n, kind->repeat, kind->repeat_len);
            n += kind->repeat_len;
        }
        *len = n;
        return buf;
    }
    uint32_t s = 2463534242u + (uint32_t)k;
    for (;;) {
        const adv_range *r = &kind->ranges[adv_next(&s) % kind->n_ranges];
        uint32_t cp = r->lo + adv_next(&s) % (r->hi - r->lo + 1);
        uint8_t tmp[4];
        size_t l = simdbpe__utf8_encode(cp, tmp);
        if (n + l > size)
            break;
        memcpy(buf + n, tmp, l);
        n += l;
    }
    *len = n;
    return buf;
}

#endif
