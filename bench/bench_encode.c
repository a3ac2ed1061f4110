/*
 * bench_encode.c - throughput of simdbpe: end to end, by stage, by kernel.
 *
 *   bench_encode [-r RUNS] [-m MODEL] [--cache-mb MB] [--warm] [--stages] [--kernels] [--tsv]
 *                [--cpu] [--best] NAME FILE...
 *
 * Reads every FILE into memory (each one document), then times
 * simdbpe_encode over all of them RUNS times (default 5) with one encoder
 * on one thread and prints the median: MB/s and tokens/s. The model is
 * opened and the encoder made before the timing starts.
 *
 * -r 1 in a fresh process is what a user who encodes a corpus once gets:
 * one pass of a fresh encoder over text it has not seen (bench/run.sh's
 * headline). With more runs the encoder's caches remember the pieces of
 * the earlier runs, and the median is the speed of encoding the same text
 * again.
 * --cache-mb  the encoder's table budget (simdbpe_encoder_options.cache_mb;
 *           default the library's).
 * --warm    encode every document once, untimed, before the RUNS timed
 *           passes: every timed pass is then a re-encode.
 * --stages  also times each stage alone over the same documents: UTF-8
 *           validation, pre-tokenization (the block scanner, pieces
 *           counted), and everything (merge = everything - the other two).
 * --kernels times each kernel of every kernel set this CPU supports over
 *           the concatenated documents (GB/s).
 * --cpu     time with this thread's CPU time instead of the wall clock.
 * --best    print the fastest of runs 2..RUNS instead of the median of all
 *           (for comparing two builds run one after the other on a noisy
 *           machine: a run that was disturbed is only ever slower).
 * --tsv     the encode result as one line
 *           "NAME\tsimdbpe\tbytes\ttokens\twall_seconds\tcpu_seconds"
 *           (stages and kernels then print TSV lines too).
 *
 * Timings are medians because these machines are shared and noisy;
 * compare ratios within one run, not absolute numbers across runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbpe.h"

#include "../kernels/kernels.h"
#include "../src/pretok/pretok.h"
#include "docs.h"
#include "timing.h"

/* Wall-clock time, or with --cpu this thread's CPU time: on a shared,
 * loaded machine the CPU time is what the code costs, the wall time what a
 * user waits. */
static clockid_t clock_used = CLOCK_MONOTONIC;

static double now(void)
{
    return clock_s(clock_used);
}

static double cpu_now(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* Encodes every document once; returns the number of tokens (0 on error). */
static size_t encode_all(simdbpe_encoder *enc, const doc *docs, int n_docs)
{
    size_t tokens = 0;
    for (int i = 0; i < n_docs; i++) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        if (simdbpe_encode(enc, docs[i].data, docs[i].len, NULL, &ids, &n, &err) != SIMDBPE_OK) {
            fprintf(stderr, "document %d: %s\n", i, err.message);
            exit(1);
        }
        tokens += n;
    }
    return tokens;
}

static size_t validate_all(const simdbpe__kernels *k, const doc *docs, int n_docs)
{
    size_t bad = 0;
    for (int i = 0; i < n_docs; i++)
        bad += k->validate_utf8((const uint8_t *)docs[i].data, docs[i].len) != docs[i].len;
    return bad;
}

static size_t pretok_all(const simdbpe__kernels *k, const doc *docs, int n_docs)
{
    size_t pieces = 0;
    for (int i = 0; i < n_docs; i++) {
        simdbpe__pretok_state ps;
        uint64_t starts[SIMDBPE__PRETOK_CHUNK];
        size_t base, count;
        simdbpe__pretok_begin(&ps, k, (const uint8_t *)docs[i].data, docs[i].len);
        while ((count = simdbpe__pretok_next(&ps, starts, &base)) != 0)
            for (size_t j = 0; j < count; j++)
                pieces += (size_t)__builtin_popcountll(starts[j]);
    }
    return pieces;
}

int main(int argc, char **argv)
{
    int runs = 5, stages = 0, kernels = 0, tsv = 0, best = 0, warm = 0, a = 1;
    const char *model_name = "gpt2";
    simdbpe_encoder_options eopts = SIMDBPE_ENCODER_OPTIONS_INIT;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-r") == 0 && a + 1 < argc)
            runs = atoi(argv[++a]);
        else if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            model_name = argv[++a];
        else if (strcmp(argv[a], "--cache-mb") == 0 && a + 1 < argc)
            eopts.cache_mb = (unsigned)atoi(argv[++a]);
        else if (strcmp(argv[a], "--warm") == 0)
            warm = 1;
        else if (strcmp(argv[a], "--stages") == 0)
            stages = 1;
        else if (strcmp(argv[a], "--kernels") == 0)
            kernels = 1;
        else if (strcmp(argv[a], "--tsv") == 0)
            tsv = 1;
        else if (strcmp(argv[a], "--cpu") == 0)
            clock_used = CLOCK_THREAD_CPUTIME_ID;
        else if (strcmp(argv[a], "--best") == 0)
            best = 1;
        else {
            fprintf(stderr, "unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (argc - a < 2 || runs < 1) {
        fprintf(stderr, "usage: bench_encode [-r RUNS] [-m MODEL] [--warm] [--stages] [--kernels] [--tsv] "
                        "[--cpu] [--best] NAME FILE...\n");
        return 2;
    }
    const char *name = argv[a++];
    int n_docs = argc - a;
    doc *docs = calloc((size_t)n_docs, sizeof *docs);
    size_t bytes = 0;
    for (int i = 0; i < n_docs; i++) {
        if (read_doc(argv[a + i], &docs[i]))
            return 1;
        bytes += docs[i].len;
    }
    simdbpe_model *model;
    simdbpe_error err;
    double t0 = now();
    if (simdbpe_model_open(model_name, &model, &err) != SIMDBPE_OK) {
        fprintf(stderr, "model: %s\n", err.message);
        return 1;
    }
    double load_ms = (now() - t0) * 1e3;
    simdbpe_encoder *enc;
    if (simdbpe_encoder_new_with(model, &eopts, &enc, NULL) != SIMDBPE_OK) {
        fprintf(stderr, "cannot create an encoder\n");
        return 1;
    }
    const char *kname = simdbpe_encoder_kernel_name(enc);
    double *t = calloc((size_t)runs, sizeof *t), *tc = calloc((size_t)runs, sizeof *tc);
    size_t tokens = warm ? encode_all(enc, docs, n_docs) : 0;
    for (int r = 0; r < runs; r++) {
        double s = now(), c = cpu_now();
        tokens = encode_all(enc, docs, n_docs);
        t[r] = now() - s;
        tc[r] = cpu_now() - c;
    }
    double best_sec = t[runs > 1], best_cpu = tc[runs > 1]; /* before median sorts them */
    for (int r = 2; r < runs; r++) {
        best_sec = t[r] < best_sec ? t[r] : best_sec;
        best_cpu = tc[r] < best_cpu ? tc[r] : best_cpu;
    }
    double sec = median(t, runs), cpu_sec = median(tc, runs);
    if (best && runs > 1) {
        sec = best_sec;
        cpu_sec = best_cpu;
    }
    if (tsv)
        printf("%s\tsimdbpe\t%zu\t%zu\t%.6f\t%.6f\n", name, bytes, tokens, sec, cpu_sec);
    else
        printf("%-14s simdbpe (%s)  %8.1f MB/s  %6.2f Mtokens/s  (%zu bytes, %zu tokens, "
               "%s of %d; model load %.1f ms)\n",
               name, kname, bytes / sec / 1e6, tokens / sec / 1e6, bytes, tokens,
               best && runs > 1 ? "best of runs 2.." : "median", runs, load_ms);
    if (stages) {
        const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
        double tv[64], tp[64];
        size_t pieces = 0;
        int rr = runs < 64 ? runs : 64;
        for (int r = 0; r < rr; r++) {
            double s = now();
            if (validate_all(k, docs, n_docs)) {
                fprintf(stderr, "invalid UTF-8 in input\n");
                return 1;
            }
            tv[r] = now() - s;
            s = now();
            pieces = pretok_all(k, docs, n_docs);
            tp[r] = now() - s;
        }
        double v = median(tv, rr), p = median(tp, rr);
        double merge = sec - v - p;
        if (tsv) {
            printf("%s\tvalidate\t%.2f\n%s\tpretok\t%.2f\t\t%zu\n", name, bytes / v / 1e6, name,
                   bytes / p / 1e6, pieces);
        } else {
            printf("  stages: validate %.1f ms (%.2f GB/s), pre-tokenize %.1f ms (%.2f GB/s, %zu "
                   "pieces), merge+cache+output %.1f ms (%.0f ns/piece); total %.1f ms\n",
                   v * 1e3, bytes / v / 1e9, p * 1e3, bytes / p / 1e9, pieces, merge * 1e3,
                   merge / (double)pieces * 1e9, sec * 1e3);
        }
    }
    if (kernels) {
        char *all = malloc(bytes + 1);
        size_t off = 0;
        for (int i = 0; i < n_docs; i++) {
            memcpy(all + off, docs[i].data, docs[i].len);
            off += docs[i].len;
        }
        simdbpe__block_masks *masks = malloc(((bytes + 63) / 64 + 1) * sizeof *masks);
        uint32_t *ids = malloc((1 << 20) * sizeof *ids);
        /* Touch the outputs first, so no kernel pays their page faults. */
        memset(masks, 0, ((bytes + 63) / 64 + 1) * sizeof *masks);
        memset(ids, 0, (1 << 20) * sizeof *ids);
        uint32_t table[256];
        for (int b = 0; b < 256; b++)
            table[b] = (uint32_t)b;
        for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++) {
            double tv[64], tk[64], tm[64];
            int rr = runs < 64 ? runs : 64;
            for (int r = 0; r < rr; r++) {
                double s = now();
                size_t ok = (*k)->validate_utf8((const uint8_t *)all, bytes);
                tv[r] = now() - s;
                if (ok != bytes)
                    fprintf(stderr, "invalid UTF-8 at %zu\n", ok);
                s = now();
                (*k)->classify((const uint8_t *)all, bytes, masks);
                tk[r] = now() - s;
                size_t m = bytes < (1 << 20) ? bytes : (1 << 20);
                s = now();
                for (int rep = 0; rep < 16; rep++)
                    (*k)->map_bytes((const uint8_t *)all, m, table, ids);
                tm[r] = (now() - s) / 16 * ((double)bytes / (double)m);
            }
            double v = median(tv, rr), c = median(tk, rr), mb = median(tm, rr);
            if (tsv)
                printf("%s\tkernel-%s\t%.2f\t%.2f\t%.2f\n", name, (*k)->name, bytes / v / 1e9,
                       bytes / c / 1e9, bytes / mb / 1e9);
            else
                printf("  kernels %-6s  validate_utf8 %6.2f GB/s  classify %6.2f GB/s  "
                       "map_bytes %6.2f GB/s\n",
                       (*k)->name, bytes / v / 1e9, bytes / c / 1e9, bytes / mb / 1e9);
        }
        free(all);
        free(masks);
        free(ids);
    }
    simdbpe_encoder_free(enc);
    simdbpe_model_free(model);
    for (int i = 0; i < n_docs; i++)
        free(docs[i].data);
    free(docs);
    free(t);
    free(tc);
    return 0;
}
