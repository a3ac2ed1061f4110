/*
 * ref_bpe.h - a slow, obviously-correct reference BPE encoder for tests.
 *
 * The textbook loop, on byte strings, sharing nothing with the library:
 *
 *     symbols = the word's bytes, one each
 *     repeat:
 *         scan every adjacent pair, look it up in merges.txt's ranks;
 *         take the lowest rank (the leftmost pair among equal ranks);
 *         if none, stop; else replace the pair by its concatenation
 *     ids = vocab.json[symbol] for each symbol
 *
 * vocab.json and merges.txt are parsed here (jansson for the JSON, the
 * byte-level alphabet of test_model.h) into plain hash tables keyed by byte
 * strings. A pair listed twice in merges.txt keeps its last rank, as HF
 * does (it collects the list into a map). O(n^2) per word: for tests only.
 */
#ifndef SIMDBPE_REF_BPE_H
#define SIMDBPE_REF_BPE_H

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_model.h"

typedef struct ref_entry {
    uint8_t *key; /* NULL = empty slot */
    size_t klen;
    uint32_t value;
} ref_entry;

typedef struct ref_table {
    ref_entry *slots;
    size_t mask;
} ref_table;

typedef struct ref_model {
    ref_table vocab;  /* token bytes -> id */
    ref_table merges; /* [u16 left length][left][right] -> rank */
} ref_model;

static inline uint64_t ref_hash(const uint8_t *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

static inline void ref_table_init(ref_table *t, size_t n)
{
    size_t size = 16;
    while (size < 2 * n + 2)
        size *= 2;
    t->slots = calloc(size, sizeof *t->slots);
    t->mask = size - 1;
}

static inline ref_entry *ref_slot(const ref_table *t, const uint8_t *k, size_t n)
{
    size_t i = ref_hash(k, n) & t->mask;
    while (t->slots[i].key &&
           !(t->slots[i].klen == n && memcmp(t->slots[i].key, k, n) == 0))
        i = (i + 1) & t->mask;
    return &t->slots[i];
}

/* Inserts or overwrites (the last value wins). */
static inline void ref_put(ref_table *t, const uint8_t *k, size_t n, uint32_t v)
{
    ref_entry *e = ref_slot(t, k, n);
    if (!e->key) {
        e->key = malloc(n ? n : 1);
        memcpy(e->key, k, n);
        e->klen = n;
    }
    e->value = v;
}

static inline int ref_get(const ref_table *t, const uint8_t *k, size_t n, uint32_t *v)
{
    const ref_entry *e = ref_slot(t, k, n);
    if (!e->key)
        return 0;
    *v = e->value;
    return 1;
}

static inline void ref_table_free(ref_table *t)
{
    for (size_t i = 0; i <= t->mask; i++)
        free(t->slots[i].key);
    free(t->slots);
}

/* Byte-level string -> bytes; returns the length or -1. */
static inline long ref_unspell(const char *s, size_t len, uint8_t *out)
{
    static int16_t inverse[0x144];
    static int ready;
    if (!ready) {
        for (unsigned c = 0; c < 0x144; c++)
            inverse[c] = -1;
        for (unsigned b = 0; b < 256; b++)
            inverse[tm_byte_cp(b)] = (int16_t)b;
        ready = 1;
    }
    long n = 0;
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    while (p < end) {
        uint32_t cp;
        if (*p < 0x80)
            cp = *p++;
        else if ((*p & 0xE0) == 0xC0 && p + 1 < end) {
            cp = (uint32_t)(*p & 0x1F) << 6 | (p[1] & 0x3F);
            p += 2;
        } else
            return -1;
        if (cp >= 0x144 || inverse[cp] < 0)
            return -1;
        out[n++] = (uint8_t)inverse[cp];
    }
    return n;
}

static inline size_t ref_merge_key(uint8_t *key, const uint8_t *l, size_t ll, const uint8_t *r,
                                   size_t rl)
{
    key[0] = (uint8_t)(ll >> 8);
    key[1] = (uint8_t)ll;
    memcpy(key + 2, l, ll);
    memcpy(key + 2 + ll, r, rl);
    return 2 + ll + rl;
}

/*
 * Parses vocab.json and merges.txt texts. Keys that are not byte-level
 * strings (special tokens) are left out. Returns 0, or -1 if the files are
 * malformed (the tests only feed it well-formed files).
 */
static inline int ref_model_load(ref_model *rm, const char *vocab_json, size_t vlen,
                                 const char *merges_txt, size_t mlen)
{
    json_error_t jerr;
    json_t *root = json_loadb(vocab_json, vlen, 0, &jerr);
    if (!root || !json_is_object(root))
        return -1;
    ref_table_init(&rm->vocab, json_object_size(root));
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        uint8_t bytes[1024];
        size_t klen = strlen(key);
        if (klen > sizeof bytes)
            continue;
        long n = ref_unspell(key, klen, bytes);
        if (n > 0)
            ref_put(&rm->vocab, bytes, (size_t)n, (uint32_t)json_integer_value(val));
    }
    json_decref(root);
    size_t lines = 1;
    for (size_t i = 0; i < mlen; i++)
        lines += merges_txt[i] == '\n';
    ref_table_init(&rm->merges, lines);
    uint32_t rank = 0;
    for (size_t i = 0, line = 1; i < mlen; line++) {
        const char *nl = memchr(merges_txt + i, '\n', mlen - i);
        size_t end = nl ? (size_t)(nl - merges_txt) : mlen, e = end;
        if (e > i && merges_txt[e - 1] == '\r')
            e--;
        const char *s = merges_txt + i;
        size_t n = e - i;
        i = end + 1;
        if (n == 0 || (line == 1 && n >= 8 && memcmp(s, "#version", 8) == 0))
            continue;
        const char *sp = memchr(s, ' ', n);
        if (!sp)
            return -1;
        uint8_t l[512], r[512], k[1100];
        long ll = ref_unspell(s, (size_t)(sp - s), l);
        long rl = ref_unspell(sp + 1, (size_t)(s + n - sp - 1), r);
        if (ll <= 0 || rl <= 0)
            return -1;
        ref_put(&rm->merges, k, ref_merge_key(k, l, (size_t)ll, r, (size_t)rl), rank++);
    }
    return 0;
}

static inline void ref_model_free(ref_model *rm)
{
    ref_table_free(&rm->vocab);
    ref_table_free(&rm->merges);
}

/*
 * Encodes one word (any bytes, len >= 1) into ids[] (room for len ids);
 * returns the number of ids, or -1 if a final symbol is not in the vocab.
 */
static inline long ref_encode(const ref_model *rm, const uint8_t *w, size_t len, uint32_t *ids)
{
    size_t *start = malloc(len * sizeof *start), *slen = malloc(len * sizeof *slen);
    uint8_t *key = malloc(2 * len + 2);
    size_t n = len;
    for (size_t i = 0; i < len; i++) {
        start[i] = i;
        slen[i] = 1;
    }
    for (;;) {
        uint32_t best = UINT32_MAX, rank;
        size_t at = SIZE_MAX;
        for (size_t i = 0; i + 1 < n; i++) {
            size_t k = ref_merge_key(key, w + start[i], slen[i], w + start[i + 1], slen[i + 1]);
            if (ref_get(&rm->merges, key, k, &rank) && rank < best) {
                best = rank;
                at = i;
            }
        }
        if (at == SIZE_MAX)
            break;
        slen[at] += slen[at + 1];
        memmove(start + at + 1, start + at + 2, (n - at - 2) * sizeof *start);
        memmove(slen + at + 1, slen + at + 2, (n - at - 2) * sizeof *slen);
        n--;
    }
    long out = (long)n;
    for (size_t i = 0; i < n; i++) {
        if (!ref_get(&rm->vocab, w + start[i], slen[i], &ids[i])) {
            out = -1;
            break;
        }
    }
    free(start);
    free(slen);
    free(key);
    return out;
}

#endif
