/*
 * bench_pretok.c - throughput of the pre-tokenizers alone, per family.
 *
 *   bench_pretok [-r RUNS] [-s SCANNER,...] FILE...
 *
 * Reads each FILE whole (one text; e.g. a corpus decompressed with
 * `zstd -dc english.txt.zst > english.txt`) and times, RUNS times (default
 * 5), splitting it into pieces with
 *   FAMILY-block each family's chunk scanner (simdbpe__pretok_next with
 *                the best kernel set of this CPU), what the encoders run:
 *                GPT-2's block scanner, the others' blocks of ASCII text
 *                with pieces one at a time elsewhere;
 *   FAMILY       simdbpe__pretok_family_piece_end, one piece per call (for
 *                GPT-2 its reference scanner).
 * -s keeps the scanners named (e.g. -s o200k-block,o200k; all by default).
 * Prints per file and scanner the median MB/s (10^6 bytes per second of
 * this thread's CPU time, which a loaded shared machine disturbs least) and
 * the number of pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernels/kernels.h"
#include "../src/pretok/pretok.h"
#include "docs.h"
#include "timing.h"

static size_t pieces_block(simdbpe__pretok_kind kind, const simdbpe__kernels *k,
                           const uint8_t *s, size_t n)
{
    simdbpe__pretok_state ps;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, pieces = 0;
    simdbpe__pretok_begin_kind(&ps, kind, k, s, n);
    while ((count = simdbpe__pretok_next(&ps, starts, &base)) != 0)
        for (size_t j = 0; j < count; j++)
            pieces += (size_t)__builtin_popcountll(starts[j]);
    return pieces;
}

static size_t pieces_scalar(simdbpe__pretok_kind kind, const uint8_t *s, size_t n)
{
    size_t pieces = 0;
    for (size_t i = 0; i < n; pieces++)
        i = simdbpe__pretok_family_piece_end(kind, s, n, i);
    return pieces;
}

static const struct {
    const char *name;
    simdbpe__pretok_kind kind;
    int block; /* the chunk scanner, else one piece per call */
} scanners[] = {
    {"gpt2-block", SIMDBPE__PRETOK_GPT2, 1},
    {"gpt2", SIMDBPE__PRETOK_GPT2, 0},
    {"cl100k-block", SIMDBPE__PRETOK_CL100K, 1},
    {"cl100k", SIMDBPE__PRETOK_CL100K, 0},
    {"qwen2-block", SIMDBPE__PRETOK_QWEN2, 1},
    {"qwen2", SIMDBPE__PRETOK_QWEN2, 0},
    {"o200k-block", SIMDBPE__PRETOK_O200K, 1},
    {"o200k", SIMDBPE__PRETOK_O200K, 0},
    {"deepseek_v3-block", SIMDBPE__PRETOK_DEEPSEEK_V3, 1},
    {"deepseek_v3", SIMDBPE__PRETOK_DEEPSEEK_V3, 0},
};

int main(int argc, char **argv)
{
    unsigned long long runs = 5;
    const char *only = NULL;
    int a = 1;
    for (; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "-r") == 0) {
            if (!parse_count(argv[a + 1], 1000, &runs)) {
                fprintf(stderr, "bench_pretok: bad number of runs '%s'\n", argv[a + 1]);
                return 2;
            }
        } else if (strcmp(argv[a], "-s") == 0) {
            only = argv[a + 1];
        } else {
            break;
        }
    }
    int want[sizeof scanners / sizeof scanners[0]];
    for (size_t c = 0; c < sizeof scanners / sizeof scanners[0]; c++) {
        size_t len = strlen(scanners[c].name);
        const char *p = only;
        want[c] = !only;
        while (p && !want[c]) {
            want[c] = strncmp(p, scanners[c].name, len) == 0 && (p[len] == ',' || !p[len]);
            p = strchr(p, ',');
            p = p ? p + 1 : NULL;
        }
    }
    if (a >= argc) {
        fprintf(stderr, "usage: bench_pretok [-r RUNS] [-s SCANNER,...] FILE...\n");
        return 2;
    }
    const simdbpe__kernels *k = simdbpe__kernels_select(NULL);
    printf("file\tscanner\tMB/s\tpieces\t(kernels %s, median of %llu runs, CPU time)\n", k->name,
           runs);
    for (; a < argc; a++) {
        doc d;
        if (read_doc(argv[a], &d) != 0)
            return 1;
        const uint8_t *s = (const uint8_t *)d.data;
        for (size_t c = 0; c < sizeof scanners / sizeof scanners[0]; c++) {
            if (!want[c])
                continue;
            double *t = malloc(runs * sizeof *t);
            size_t pieces = 0;
            for (unsigned long long r = 0; r < runs; r++) {
                double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
                pieces = scanners[c].block ? pieces_block(scanners[c].kind, k, s, d.len)
                                           : pieces_scalar(scanners[c].kind, s, d.len);
                t[r] = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
            }
            printf("%s\t%s\t%.0f\t%zu\n", argv[a], scanners[c].name,
                   (double)d.len / median(t, (int)runs) / 1e6, pieces);
            fflush(stdout);
            free(t);
        }
        free(d.data);
    }
    return 0;
}
