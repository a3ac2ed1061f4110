/*
 * bench_bpe.c - the cost of one BPE call, alone.
 *
 *   bench_bpe [-r RUNS] [-m MODEL] [--cpu] [--by-length] NAME FILE...
 *
 * Reads every FILE (each one document), pre-tokenizes it and keeps the
 * pieces that are not whole tokens of the model, each distinct piece once
 * (the encoder's caches answer repeats; what reaches BPE in a real run is
 * mostly such first sightings). Then runs simdbpe__bpe_word over all of
 * them RUNS times (default 5) with one scratch, set up as an encoder sets
 * up its own (with the byte-pair table), and prints the median time
 * per piece, so a change to src/model/bpe.c can be timed without the rest
 * of the encoder around it (bench/README.md).
 * Prints a checksum of the ids so two builds can be checked to agree.
 *
 * The pieces are copied, in order, into one array before they are timed:
 * left where they were, scattered over a 100 MB corpus, each call began
 * with a cache miss on its own bytes that the encoder (whose piece is in
 * the chunk it has just scanned) never pays; perf put a sixth of the time
 * in bpe_short on that load. --by-length adds the time per piece for
 * pieces of 1-4, 5-8, 9-12, 13-16, 17-24, 25-32, 33-48, 49-64 and more
 * bytes (one run each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe.h"

#include "../kernels/kernels.h"
#include "../src/model/model.h"
#include "../src/pretok/pretok.h"
#include "docs.h"
#include "timing.h"

typedef struct piece {
    const uint8_t *s;
    size_t len;
} piece;

typedef struct piece_set {
    piece *v;          /* the distinct pieces, in order of first sighting */
    size_t n, cap;
    uint64_t *hash;    /* open addressing: hash + 1, 0 = empty */
    size_t *at;        /* index into v */
    size_t slots;      /* a power of two, kept at most half full */
} piece_set;

static void *xrealloc(void *p, size_t bytes)
{
    p = realloc(p, bytes);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void set_rehash(piece_set *ps, size_t slots)
{
    free(ps->hash);
    free(ps->at);
    ps->slots = slots;
    ps->hash = xrealloc(NULL, slots * sizeof *ps->hash);
    ps->at = xrealloc(NULL, slots * sizeof *ps->at);
    memset(ps->hash, 0, slots * sizeof *ps->hash);
    for (size_t i = 0; i < ps->n; i++) {
        uint64_t h = simdbpe__piece_hash(ps->v[i].s, ps->v[i].len) + 1;
        size_t j = (size_t)h & (slots - 1);
        while (ps->hash[j])
            j = (j + 1) & (slots - 1);
        ps->hash[j] = h;
        ps->at[j] = i;
    }
}

static void set_add(piece_set *ps, const uint8_t *s, size_t len)
{
    if (2 * (ps->n + 1) > ps->slots)
        set_rehash(ps, ps->slots ? 2 * ps->slots : 1024);
    uint64_t h = simdbpe__piece_hash(s, len) + 1;
    size_t j = (size_t)h & (ps->slots - 1);
    for (; ps->hash[j]; j = (j + 1) & (ps->slots - 1)) {
        const piece *p = &ps->v[ps->at[j]];
        if (ps->hash[j] == h && p->len == len && memcmp(p->s, s, len) == 0)
            return;
    }
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 1024;
        ps->v = xrealloc(ps->v, ps->cap * sizeof *ps->v);
    }
    ps->hash[j] = h;
    ps->at[j] = ps->n;
    ps->v[ps->n++] = (piece){s, len};
}

/* Whether s[0..len) is one of the model's whole tokens (no BPE needed). */
static int is_whole(const simdbpe_model *m, const uint8_t *s, size_t len)
{
    if (m->n_whole == 0)
        return 0;
    uint64_t lo, hi;
    simdbpe__short_words(s, len < 16 ? len : 16, &lo, &hi);
    const simdbpe__whole_slot *w = simdbpe__whole_slot_of(m, simdbpe__piece_hash(s, len));
    return simdbpe__whole_match(m, w, s, len, lo, hi) != SIMDBPE__NO_ID;
}

/* Copies the pieces into one array, in order, and points them there. */
static uint8_t *pack(piece_set *ps)
{
    size_t bytes = 0;
    for (size_t i = 0; i < ps->n; i++)
        bytes += ps->v[i].len;
    uint8_t *arena = xrealloc(NULL, bytes ? bytes : 1), *at = arena;
    for (size_t i = 0; i < ps->n; i++) {
        memcpy(at, ps->v[i].s, ps->v[i].len);
        ps->v[i].s = at;
        at += ps->v[i].len;
    }
    return arena;
}

/* One run over the pieces of lo+1..hi bytes; returns the seconds taken and
 * adds the number of pieces, ids and the checksum. */
static double run_pieces(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                         const piece_set *ps, size_t lo, size_t hi, clockid_t clock_used,
                         uint32_t *out, size_t *count, uint64_t *ids, uint64_t *sum)
{
    double t0 = clock_s(clock_used);
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->v[i].len <= lo || ps->v[i].len > hi)
            continue;
        size_t n = 0;
        if (simdbpe__bpe_word(m, scratch, ps->v[i].s, ps->v[i].len, out, &n) != SIMDBPE_OK) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        for (size_t j = 0; j < n; j++)
            *sum = *sum * 31 + out[j];
        *ids += n;
        ++*count;
    }
    return clock_s(clock_used) - t0;
}

static void collect(const simdbpe_model *m, const simdbpe__kernels *k, const uint8_t *s,
                    size_t n, piece_set *ps)
{
    simdbpe__pretok_state st;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, a = 0;
    simdbpe__pretok_begin(&st, k, s, n);
    while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0) {
        for (size_t j = 0; j < count; j++) {
            for (uint64_t bits = starts[j]; bits; bits &= bits - 1) {
                size_t b = base + 64 * j + (size_t)__builtin_ctzll(bits);
                if (b == 0)
                    continue;
                if (!is_whole(m, s + a, b - a))
                    set_add(ps, s + a, b - a);
                a = b;
            }
        }
    }
    if (n > a && !is_whole(m, s + a, n - a))
        set_add(ps, s + a, n - a);
}

int main(int argc, char **argv)
{
    int runs = 5, a = 1, by_length = 0;
    clockid_t clock_used = CLOCK_MONOTONIC;
    const char *model_name = "gpt2";
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-r") && a + 1 < argc)
            runs = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-m") && a + 1 < argc)
            model_name = argv[++a];
        else if (!strcmp(argv[a], "--cpu"))
            clock_used = CLOCK_THREAD_CPUTIME_ID;
        else if (!strcmp(argv[a], "--by-length"))
            by_length = 1;
        else {
            fprintf(stderr, "unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (argc - a < 2 || runs < 1) {
        fprintf(stderr, "usage: bench_bpe [-r RUNS] [-m MODEL] [--cpu] [--by-length] NAME FILE...\n");
        return 2;
    }
    const char *name = argv[a++];
    simdbpe_model *m;
    simdbpe_error err;
    if (simdbpe_model_open(model_name, &m, &err) != SIMDBPE_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
    if (!k) {
        fprintf(stderr, "SIMDBPE_KERNEL names no kernel set this CPU runs\n");
        return 1;
    }
    piece_set ps = {0};
    size_t bytes = 0, skipped = 0, n_kept = 0;
    char **kept = xrealloc(NULL, (size_t)(argc - a) * sizeof *kept); /* documents with pieces */
    for (; a < argc; a++) {
        doc d; /* kept until pack() if pieces point into it */
        if (read_doc(argv[a], &d))
            return 1;
        const uint8_t *s = (const uint8_t *)d.data;
        size_t had = ps.n;
        if (k->validate_utf8(s, d.len) != d.len)
            skipped++; /* the pre-tokenizer takes valid UTF-8 only */
        else
            collect(m, k, s, d.len, &ps);
        if (ps.n == had)
            free(d.data); /* no piece of it was kept */
        else
            kept[n_kept++] = d.data;
    }
    uint8_t *arena = pack(&ps);
    for (size_t i = 0; i < n_kept; i++)
        free(kept[i]);
    free(kept);
    size_t max_len = 1;
    for (size_t i = 0; i < ps.n; i++) {
        bytes += ps.v[i].len;
        max_len = ps.v[i].len > max_len ? ps.v[i].len : max_len;
    }
    uint32_t *out = xrealloc(NULL, max_len * sizeof *out); /* BPE gives at most one id a byte */
    /* The scratch as an encoder sets it up: with the byte pairs. */
    simdbpe__byte_pair *byte_pairs = calloc(65536, sizeof *byte_pairs);
    if (!byte_pairs) {
        fprintf(stderr, "bench_bpe: out of memory\n");
        return 1;
    }
    simdbpe__byte_pairs_fill(m, byte_pairs);
    simdbpe__bpe_scratch scratch = {.k = k, .byte_pairs = byte_pairs};
#if defined(SIMDBPE_HAVE_X86_KERNELS)
    if (k == &simdbpe__kernels_avx2)
        scratch.small = simdbpe__bpe_small_avx2;
#endif
    double *t = xrealloc(NULL, (size_t)runs * sizeof *t);
    uint64_t sum = 0, ids = 0;
    for (int r = 0; r < runs; r++) {
        size_t count = 0;
        sum = ids = 0;
        t[r] = run_pieces(m, &scratch, &ps, 0, SIZE_MAX, clock_used, out, &count, &ids, &sum);
    }
    double med = median(t, runs);
    printf("%-14s bpe alone  %8.1f ns/piece  (%zu distinct pieces that are not whole tokens, "
           "%.1f bytes and %.1f ids each; median of %d; checksum %016llx)\n",
           name, ps.n ? med * 1e9 / (double)ps.n : 0.0, ps.n, ps.n ? (double)bytes / ps.n : 0.0,
           ps.n ? (double)ids / ps.n : 0.0, runs, (unsigned long long)sum);
    if (skipped)
        printf("%-14s skipped %zu files that are not valid UTF-8\n", name, skipped);
    if (by_length) {
        static const size_t upto[] = {4, 8, 12, 16, 24, 32, 48, 64, SIZE_MAX};
        size_t lo = 0;
        for (size_t b = 0; b < sizeof upto / sizeof upto[0]; lo = upto[b++]) {
            size_t count = 0;
            uint64_t n_ids = 0, unused = 0;
            double dt = run_pieces(m, &scratch, &ps, lo, upto[b], clock_used, out, &count,
                                   &n_ids, &unused);
            char range[32];
            if (upto[b] == SIZE_MAX)
                snprintf(range, sizeof range, "%zu+", lo + 1);
            else
                snprintf(range, sizeof range, "%zu-%zu", lo + 1, upto[b]);
            printf("  %-7s bytes %8zu pieces %5.1f ids each %8.1f ns/piece\n", range, count,
                   count ? (double)n_ids / count : 0.0, count ? dt * 1e9 / count : 0.0);
        }
    }
    free(arena);
    simdbpe__bpe_scratch_free(&scratch);
    free(byte_pairs);
    simdbpe_model_free(m);
    return 0;
}
