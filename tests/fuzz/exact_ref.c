/*
 * exact_ref.c - the reference BPE of fuzz_exact (see exact_ref.h).
 *
 * The textbook loop of ref_bpe.h looks up every adjacent pair after every
 * merge, so a word of n bytes costs O(n^2) hash lookups, which made long
 * pre-tokens take most of the fuzzer's time. Here the rank of each
 * adjacent pair is kept in an array: a merge at `at` changes only the
 * pairs that touch the new symbol, (at-1, at) and (at, at+1), so only
 * those are looked up again, and the scan for the lowest rank (the
 * leftmost among equal ones) is the textbook's, over the array. On every
 * word of up to 64 bytes it computes, the result is checked against
 * ref_encode itself.
 *
 * Fuzzed inputs are mostly their parent
 * with a few bytes changed, so most pre-tokens are ones the reference has
 * answered before. Answers are remembered in a table of fixed size,
 * allocated once and emptied whole when full (nothing is allocated per
 * input, so libFuzzer's leak check has nothing to chase). The remembered
 * answer for a byte string is the one the textbook loop gave for the same
 * bytes, and it is compared byte for byte, not by hash alone, so the
 * property is the same as without the table.
 */
#include "exact_ref.h"

#include <stdio.h>

#include "fuzz.h"
#include "ref_bpe.h"

#define MEMO_BITS 16
#define MEMO_SLOTS ((size_t)1 << MEMO_BITS)
#define MEMO_ARENA ((size_t)32 << 20)

typedef struct memo_slot {
    uint64_t hash;
    size_t at;    /* key bytes at arena + at, then n_ids ids (4-aligned) */
    uint32_t len; /* 0 = empty */
    uint32_t n_ids;
} memo_slot;

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    FUZZ_CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The reference model, loaded once for the process (the model files are
 * the ones the embedded GPT-2 model is built from). */
static const ref_model *reference(void)
{
    static ref_model rm;
    static int loaded;
    if (!loaded) {
        size_t vlen, mlen;
        char *v = read_all(SIMDBPE_GPT2_DIR "/vocab.json", &vlen);
        char *m = read_all(SIMDBPE_GPT2_DIR "/merges.txt", &mlen);
        FUZZ_CHECK(ref_model_load(&rm, v, vlen, m, mlen) == 0, "reference load");
        free(v);
        free(m);
        loaded = 1;
    }
    return &rm;
}

#define MAX_WORD 4096 /* fuzz_exact's inputs are at most 4 KB */

/* The rank of the pair of symbols w[s1, s1 + l1) w[s2, s2 + l2), or
 * UINT32_MAX if merges.txt does not have it. */
static uint32_t pair_rank(const ref_model *rm, const uint8_t *w, size_t s1, size_t l1, size_t s2,
                          size_t l2)
{
    static uint8_t key[2 * MAX_WORD + 2];
    uint32_t rank;
    size_t k = ref_merge_key(key, w + s1, l1, w + s2, l2);
    return ref_get(&rm->merges, key, k, &rank) ? rank : UINT32_MAX;
}

static long encode_ranks(const ref_model *rm, const uint8_t *w, size_t len, uint32_t *ids)
{
    static size_t start[MAX_WORD], slen[MAX_WORD];
    static uint32_t rank[MAX_WORD];
    FUZZ_CHECK(len >= 1 && len <= MAX_WORD, "pre-token of %zu bytes", len);
    size_t n = len;
    for (size_t i = 0; i < len; i++) {
        start[i] = i;
        slen[i] = 1;
    }
    for (size_t i = 0; i + 1 < n; i++)
        rank[i] = pair_rank(rm, w, i, 1, i + 1, 1);
    for (;;) {
        uint32_t best = UINT32_MAX;
        size_t at = SIZE_MAX;
        for (size_t i = 0; i + 1 < n; i++)
            if (rank[i] < best) {
                best = rank[i];
                at = i;
            }
        if (at == SIZE_MAX)
            break;
        /* Symbols at and at+1 become one; the pairs after it move down. */
        slen[at] += slen[at + 1];
        memmove(start + at + 1, start + at + 2, (n - at - 2) * sizeof *start);
        memmove(slen + at + 1, slen + at + 2, (n - at - 2) * sizeof *slen);
        if (at + 2 < n)
            memmove(rank + at + 1, rank + at + 2, (n - at - 2) * sizeof *rank);
        n--;
        if (at > 0)
            rank[at - 1] = pair_rank(rm, w, start[at - 1], slen[at - 1], start[at], slen[at]);
        if (at + 1 < n)
            rank[at] = pair_rank(rm, w, start[at], slen[at], start[at + 1], slen[at + 1]);
    }
    for (size_t i = 0; i < n; i++)
        if (!ref_get(&rm->vocab, w + start[i], slen[i], &ids[i]))
            return -1;
    return (long)n;
}

static memo_slot *slots;
static uint8_t *arena;
static size_t used, filled;

static void memo_clear(void)
{
    memset(slots, 0, MEMO_SLOTS * sizeof *slots);
    used = filled = 0;
}

long exact_ref_encode(const uint8_t *w, size_t len, uint32_t *ids)
{
    if (!slots) {
        slots = malloc(MEMO_SLOTS * sizeof *slots);
        arena = malloc(MEMO_ARENA);
        FUZZ_CHECK(slots && arena, "out of memory");
        memo_clear();
    }
    uint64_t h = ref_hash(w, len);
    size_t i = h & (MEMO_SLOTS - 1);
    for (; slots[i].len; i = (i + 1) & (MEMO_SLOTS - 1)) {
        const memo_slot *s = &slots[i];
        if (s->hash == h && s->len == len && memcmp(arena + s->at, w, len) == 0) {
            memcpy(ids, arena + ((s->at + len + 3) & ~(size_t)3), s->n_ids * sizeof *ids);
            return s->n_ids;
        }
    }
    long n = encode_ranks(reference(), w, len, ids);
    if (len <= 64) {
        uint32_t again[64];
        long k = ref_encode(reference(), w, len, again);
        FUZZ_CHECK(k == n && (n < 0 || memcmp(again, ids, (size_t)n * sizeof *ids) == 0),
                   "the reference's two loops disagree on a word of %zu bytes", len);
    }
    if (n < 0)
        return n;
    size_t need = len + 3 + (size_t)n * sizeof *ids;
    if (used + need > MEMO_ARENA || 2 * (filled + 1) > MEMO_SLOTS) {
        memo_clear();
        for (i = h & (MEMO_SLOTS - 1); slots[i].len; i = (i + 1) & (MEMO_SLOTS - 1))
            ;
    }
    if (need > MEMO_ARENA)
        return n; /* never: inputs are at most 4 KB */
    slots[i] = (memo_slot){h, used, (uint32_t)len, (uint32_t)n};
    memcpy(arena + used, w, len);
    size_t at_ids = (used + len + 3) & ~(size_t)3;
    memcpy(arena + at_ids, ids, (size_t)n * sizeof *ids);
    used = at_ids + (size_t)n * sizeof *ids;
    filled++;
    return n;
}
