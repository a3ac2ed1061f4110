/*
 * mph.c - building minimal perfect hashes (see simdbpe__mph in model.h).
 *
 * Keys are spread over about n/2 buckets; buckets are placed largest
 * first, each by trying pilots 0, 1, 2, ... until every key of the bucket
 * lands on a free slot of 0..n-1 and no two on the same one. A bucket of k
 * keys placed when a fraction f of the table is free needs about f^-k
 * tries, so buckets must stay small for a minimal (full) table: with 4 keys
 * per bucket the last pairs and triples took millions of tries, with 2
 * very few (bench/README.md). The last, single-key buckets need about
 * n / (free slots) tries each. If a bucket finds no pilot (which only
 * happens in practice when two keys are equal) the build starts again with
 * another seed, a few times, then gives up.
 */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "model.h"

void *simdbpe__model_alloc(size_t bytes)
{
    if (bytes < (256u << 10))
        return malloc(bytes ? bytes : 1);
    size_t align = 2u << 20;
    size_t rounded = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded);
#if defined(MADV_HUGEPAGE)
    if (p)
        madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

void *simdbpe__model_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = simdbpe__model_alloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

#define MAX_PILOT (1u << 24)
#define SEEDS 16

/* Places every bucket; returns 0, or -1 if some bucket found no pilot. */
static int place_all(simdbpe__mph *h, uint32_t *pilots, const uint64_t *x, uint32_t n,
                     const uint32_t *order, const uint32_t *first, uint64_t *taken,
                     uint32_t *spots)
{
    for (uint32_t bi = 0; bi < h->n_buckets; bi++) {
        uint32_t b = order[bi];
        uint32_t size = first[b + 1] - first[b];
        if (size == 0)
            break; /* buckets are in decreasing size */
        const uint64_t *keys = x + first[b];
        uint32_t p = 0;
        for (; p < MAX_PILOT; p++) {
            uint32_t k = 0;
            for (; k < size; k++) {
                uint32_t s = simdbpe__mph_place(h, keys[k], p);
                if (taken[s / 64] >> (s % 64) & 1)
                    break;
                taken[s / 64] |= 1ULL << (s % 64);
                spots[k] = s;
            }
            if (k == size)
                break;
            for (uint32_t j = 0; j < k; j++) /* undo this try */
                taken[spots[j] / 64] &= ~(1ULL << (spots[j] % 64));
        }
        if (p == MAX_PILOT)
            return -1;
        pilots[b] = p;
    }
    (void)n;
    return 0;
}

int simdbpe__mph_build(simdbpe__mph *h, uint32_t **pilots_out, const uint64_t *keys, uint32_t n)
{
    *pilots_out = NULL;
    h->n_keys = n;
    h->n_buckets = simdbpe__mph_buckets_for(n);
    h->pilots = NULL;
    if (n == 0)
        return 0;
    uint32_t nb = h->n_buckets;
    uint32_t *pilots = simdbpe__model_calloc(nb, sizeof *pilots);
    uint64_t *x = simdbpe__model_alloc((size_t)n * sizeof *x);       /* mixed keys, by bucket */
    uint32_t *bucket = simdbpe__model_alloc((size_t)n * sizeof *bucket);
    uint32_t *first = simdbpe__model_calloc((size_t)nb + 2, sizeof *first); /* bucket -> first key */
    uint32_t *order = simdbpe__model_alloc((size_t)nb * sizeof *order);
    uint32_t *by_size = NULL;
    uint64_t *taken = malloc(((size_t)n + 63) / 64 * sizeof *taken);
    uint32_t spots[256];
    int rc = -1;
    if (!pilots || !x || !bucket || !first || !order || !taken)
        goto done;
    for (uint64_t seed = 0; seed < SEEDS && rc != 0; seed++) {
        h->seed = 0x6A09E667F3BCC908ULL * (seed + 1);
        /* Counting sort of the mixed keys by bucket. */
        memset(first, 0, ((size_t)nb + 2) * sizeof *first);
        uint32_t max_size = 0;
        for (uint32_t i = 0; i < n; i++) {
            bucket[i] = simdbpe__mph_bucket(h, simdbpe__mph_mix(h, keys[i]));
            first[bucket[i] + 2]++;
        }
        for (uint32_t b = 0; b < nb; b++) {
            if (first[b + 2] > max_size)
                max_size = first[b + 2];
            first[b + 2] += first[b + 1];
        }
        if (max_size > sizeof spots / sizeof *spots)
            continue; /* a degenerate seed */
        for (uint32_t i = 0; i < n; i++)
            x[first[bucket[i] + 1]++] = simdbpe__mph_mix(h, keys[i]);
        /* Buckets by decreasing size (counting sort on size). */
        free(by_size);
        by_size = calloc((size_t)max_size + 2, sizeof *by_size);
        if (!by_size)
            goto done;
        for (uint32_t b = 0; b < nb; b++)
            by_size[max_size - (first[b + 1] - first[b]) + 1]++;
        for (uint32_t s = 0; s <= max_size; s++)
            by_size[s + 1] += by_size[s];
        for (uint32_t b = 0; b < nb; b++)
            order[by_size[max_size - (first[b + 1] - first[b])]++] = b;
        memset(taken, 0, ((size_t)n + 63) / 64 * sizeof *taken);
        memset(pilots, 0, nb * sizeof *pilots);
        rc = place_all(h, pilots, x, n, order, first, taken, spots);
    }
done:
    free(x);
    free(bucket);
    free(first);
    free(order);
    free(by_size);
    free(taken);
    if (rc != 0) {
        free(pilots);
        return -1;
    }
    h->pilots = pilots;
    *pilots_out = pilots;
    return 0;
}
