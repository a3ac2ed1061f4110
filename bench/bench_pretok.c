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
 *                GPT-2 its reference scanner);
 *   FAMILY-regex the generic path (src/pretok/regex.h: Oniguruma) on the
 *                family's own Split patterns, and on the Split patterns of
 *                the synthetic model qwen35
 *                (shared/models/synthetic/README.md), which has no scanner
 *                (nemotron's is tekken's, kimi's kimi's).
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

static size_t pieces_regex(const simdbpe__regex *rx, const uint8_t *s, size_t n)
{
    simdbpe__regex_iter it;
    size_t a, b, pieces = 0;
    simdbpe__regex_begin(&it, rx, s, n);
    while (simdbpe__regex_next(&it, &a, &b))
        pieces++;
    return pieces;
}

/* The synthetic model's pattern, as its tokenizer.json file spells it. */
static const struct {
    const char *name, *pattern;
} synthetic[] = {
    {"qwen35-regex", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
                     "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
};

/* One generic-path row: its regex and name. */
typedef struct regex_row {
    char name[64];
    simdbpe__regex *rx;
} regex_row;

static size_t regex_rows(regex_row *rows)
{
    size_t n = 0;
    uint8_t flags[SIMDBPE__REGEX_MAX_SPLITS] = {0};
    const simdbpe__pretok_family *f;
    simdbpe_error err;
    for (unsigned k = 0; (f = simdbpe__pretok_family_of(k)); k++) {
        if (f->generic)
            continue;
        snprintf(rows[n].name, sizeof rows[n].name, "%s-regex", f->name);
        if (simdbpe__regex_new(f->patterns, flags, f->n_patterns, f->name, &rows[n].rx, &err) !=
            SIMDBPE_OK) {
            fprintf(stderr, "bench_pretok: %s\n", err.message);
            exit(1);
        }
        n++;
    }
    for (size_t i = 0; i < sizeof synthetic / sizeof synthetic[0]; i++, n++) {
        snprintf(rows[n].name, sizeof rows[n].name, "%s", synthetic[i].name);
        if (simdbpe__regex_new(&synthetic[i].pattern, flags, 1, synthetic[i].name, &rows[n].rx,
                               &err) != SIMDBPE_OK) {
            fprintf(stderr, "bench_pretok: %s\n", err.message);
            exit(1);
        }
    }
    return n;
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
    {"tekken-block", SIMDBPE__PRETOK_TEKKEN, 1},
    {"tekken", SIMDBPE__PRETOK_TEKKEN, 0},
    {"kimi-block", SIMDBPE__PRETOK_KIMI, 1},
    {"kimi", SIMDBPE__PRETOK_KIMI, 0},
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
    regex_row rows[16];
    size_t n_rows = regex_rows(rows);
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
        for (size_t c = 0; c < n_rows; c++) {
            double *t = malloc(runs * sizeof *t);
            size_t pieces = 0;
            for (unsigned long long r = 0; r < runs; r++) {
                double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
                pieces = pieces_regex(rows[c].rx, s, d.len);
                t[r] = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
            }
            printf("%s\t%s\t%.0f\t%zu\n", argv[a], rows[c].name,
                   (double)d.len / median(t, (int)runs) / 1e6, pieces);
            fflush(stdout);
            free(t);
        }
        free(d.data);
    }
    for (size_t c = 0; c < n_rows; c++)
        simdbpe__regex_free(rows[c].rx);
    return 0;
}
