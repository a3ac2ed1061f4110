/*
 * bench_load.c - how long opening a model takes.
 *
 *   bench_load [-r RUNS] MODEL...
 *
 * Opens each MODEL (as simdbpe_model_open takes it: "gpt2", a .sbpe file,
 * a directory with vocab.json + merges.txt) RUNS times (default 11) in this
 * process and prints the median wall-clock and CPU time of one open, then
 * of opening plus encoding one short sentence (which touches the tables a
 * first encode needs, so lazily mapped pages are counted too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbpe.h"

#include "timing.h"

int main(int argc, char **argv)
{
    int runs = 11, a = 1;
    if (a + 1 < argc && strcmp(argv[a], "-r") == 0) {
        runs = atoi(argv[a + 1]);
        a += 2;
    }
    if (a >= argc || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bench_load [-r RUNS] MODEL...\n");
        return 2;
    }
    static const char sentence[] = "Hello world, it's a model load benchmark.";
    for (; a < argc; a++) {
        double wall[1000], cpu[1000], wall2[1000], cpu2[1000];
        for (int r = 0; r < runs; r++) {
            simdbpe_model *m;
            simdbpe_error err;
            double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            if (simdbpe_model_open(argv[a], &m, &err) != SIMDBPE_OK) {
                fprintf(stderr, "%s: %s\n", argv[a], err.message);
                return 1;
            }
            wall[r] = clock_s(CLOCK_MONOTONIC) - w0;
            cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            simdbpe_encoder *e;
            const uint32_t *ids;
            size_t n;
            if (simdbpe_encoder_new(m, &e, NULL) != SIMDBPE_OK ||
                simdbpe_encode(e, sentence, sizeof sentence - 1, NULL, &ids, &n, NULL) !=
                    SIMDBPE_OK) {
                fprintf(stderr, "%s: cannot encode\n", argv[a]);
                return 1;
            }
            wall2[r] = clock_s(CLOCK_MONOTONIC) - w0;
            cpu2[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            simdbpe_encoder_free(e);
            simdbpe_model_free(m);
        }
        printf("load %-40s %7.3f ms (CPU %7.3f ms); with encoder + first encode %7.3f ms "
               "(CPU %7.3f ms); median of %d\n",
               argv[a], median(wall, runs) * 1e3, median(cpu, runs) * 1e3,
               median(wall2, runs) * 1e3, median(cpu2, runs) * 1e3, runs);
    }
    return 0;
}
