/*
 * bench_adversarial.c - time and peak memory of encoding adversarial
 * inputs (tests/adversarial/adv_gen.h), to show the encoder stays
 * O(n log n) in time and linear in memory on pathological pieces.
 *
 *   bench_adversarial [SIZES_MB (default "1,10")] [RUNS (default 5)]
 *
 * Each (kind, size) runs in a forked child, so its peak RSS (from wait4)
 * is its own: the child generates the input, encodes it RUNS times with
 * one encoder (replace mode, so the invalid kinds encode too) and reports
 * the median. Output: one TSV row per (kind, size): MB, median seconds,
 * MB/s, tokens, peak RSS in MB, and for sizes after the first the time
 * ratio to the first size divided by the size ratio (about 1 for linear,
 * grows with n for quadratic).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simdbpe.h"

#include "adv_gen.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct result {
    double median;
    size_t len, tokens;
    int ok;
} result;

static result run_child(const simdbpe_model *m, size_t k, size_t bytes, int runs)
{
    result r = {0};
    uint8_t *text = adv_generate(k, bytes, &r.len);
    simdbpe_encoder *enc;
    if (!text || simdbpe_encoder_new(m, &enc, NULL) != SIMDBPE_OK)
        return r;
    simdbpe_encode_options opts = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_REPLACE};
    double t[64];
    for (int i = 0; i < runs; i++) {
        const uint32_t *ids;
        simdbpe_error err;
        double t0 = now();
        if (simdbpe_encode(enc, (const char *)text, r.len, &opts, &ids, &r.tokens, &err) !=
            SIMDBPE_OK) {
            fprintf(stderr, "%s: %s\n", adv_kinds[k].name, err.message);
            return r;
        }
        t[i] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp_double);
    r.median = t[runs / 2];
    r.ok = 1;
    simdbpe_encoder_free(enc);
    free(text);
    return r;
}

int main(int argc, char **argv)
{
    const char *sizes = argc > 1 ? argv[1] : "1,10";
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 64)
        runs = 5;
    simdbpe_model *m;
    simdbpe_error err;
    if (simdbpe_model_load_gpt2(&m, &err) != SIMDBPE_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    printf("kind\tMB\tmedian_s\tMB_per_s\ttokens\tpeak_rss_MB\tnorm_time_ratio\n");
    for (size_t k = 0; k < ADV_N_KINDS; k++) {
        double first_t = 0, first_mb = 0;
        char list[256];
        snprintf(list, sizeof list, "%s", sizes);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            double mb = atof(tok);
            size_t bytes = (size_t)(mb * 1e6);
            int fd[2];
            if (pipe(fd) != 0)
                return 1;
            pid_t pid = fork();
            if (pid == 0) {
                close(fd[0]);
                result r = run_child(m, k, bytes, runs);
                _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
            }
            close(fd[1]);
            result r = {0};
            ssize_t got = read(fd[0], &r, sizeof r);
            close(fd[0]);
            int status;
            struct rusage ru;
            wait4(pid, &status, 0, &ru);
            if (got != (ssize_t)sizeof r || !r.ok) {
                printf("%s\t%g\tFAILED\n", adv_kinds[k].name, mb);
                continue;
            }
            double real_mb = (double)r.len / 1e6;
            printf("%s\t%.2f\t%.3f\t%.2f\t%zu\t%.0f\t", adv_kinds[k].name, real_mb, r.median,
                   real_mb / r.median, r.tokens, (double)ru.ru_maxrss / 1024.0);
            if (first_t > 0)
                printf("%.2f\n", (r.median / first_t) / (real_mb / first_mb));
            else {
                printf("-\n");
                first_t = r.median;
                first_mb = real_mb;
            }
            fflush(stdout);
        }
    }
    simdbpe_model_free(m);
    return 0;
}
