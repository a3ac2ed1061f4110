/*
 * machine_probe.c - what this machine's memory costs, to read benchmark
 * runs by.
 *
 *   machine_probe latency [KB...]     load-to-load latency of a random
 *                                     pointer chase over each working set
 *                                     (2 MB pages; default 32 KB .. 64 MB)
 *   machine_probe touch [MB [PASSES]] ns per first touch of a 4 KB page:
 *                                     each pass reads one byte of every page
 *                                     of an MB-sized buffer (default 100, as
 *                                     the English corpus), a dependent chain,
 *                                     with 100 random reads of a 32 MB table
 *                                     between two pages (as the encoder's
 *                                     tables are read between two pages of
 *                                     text); once on 4 KB pages, once on 2 MB
 *                                     pages (default 20 passes each)
 *
 * Neither is timed by the benchmark command; they explain its noise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "timing.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* n zeroed bytes on 2 MB pages (or 4 KB ones), aligned to 2 MB; *mapped
 * is what to munmap. */
static uint8_t *map_bytes(size_t n, int huge, void **base, size_t *mapped)
{
    *mapped = n + HUGE_PAGE;
    *base = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (*base == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    uint8_t *p = (uint8_t *)(((uintptr_t)*base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    madvise(p, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

static uint64_t next_random(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 17;
}

static void latency(size_t kb)
{
    size_t lines = kb * 1024 / 64;
    void *base;
    size_t mapped;
    uint64_t *p = (uint64_t *)(void *)map_bytes(lines * 64, 1, &base, &mapped);
    size_t *order = malloc(lines * sizeof *order);
    if (!order)
        exit(1);
    uint64_t x = 42;
    for (size_t i = 0; i < lines; i++)
        order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) { /* a random cycle through every line */
        size_t j = next_random(&x) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        p[order[i] * 8] = order[(i + 1) % lines] * 8;
    size_t at = order[0] * 8;
    const long steps = 10000000;
    for (long i = 0; i < steps / 10; i++)
        at = p[at];
    double t = clock_s(CLOCK_MONOTONIC);
    for (long i = 0; i < steps; i++)
        at = p[at];
    t = clock_s(CLOCK_MONOTONIC) - t;
    /* `at` printed (as nothing) so that the chase is not optimised away */
    printf("latency %8zu KB  %6.1f ns a load%s\n", kb, t / steps * 1e9, at == 1 ? " " : "");
    free(order);
    munmap(base, mapped);
}

static void touch(size_t mb, int passes, int huge)
{
    size_t n = mb << 20, table_n = (size_t)32 << 20;
    void *base, *table_base;
    size_t mapped, table_mapped;
    volatile uint8_t *p = map_bytes(n, huge, &base, &mapped);
    volatile uint8_t *table = map_bytes(table_n, 1, &table_base, &table_mapped);
    memset((void *)p, 1, n);
    memset((void *)table, 1, table_n);
    uint64_t x = 7, sum = 0;
    printf("touch %zu MB on %s pages, ns a page, pass by pass:", mb, huge ? "2 MB" : "4 KB");
    for (int r = 0; r < passes; r++) {
        double t = 0;
        for (size_t i = 0; i < n; i += 4096) {
            double s = clock_s(CLOCK_MONOTONIC);
            sum += p[i + (sum & 1)]; /* the next page waits for this one */
            t += clock_s(CLOCK_MONOTONIC) - s;
            for (int k = 0; k < 100; k++)
                sum += table[next_random(&x) % table_n];
        }
        printf(" %.0f", t / (double)(n / 4096) * 1e9);
        fflush(stdout);
    }
    printf("%s\n", sum == 1 ? " " : ""); /* `sum` used, as `at` in latency() */
    munmap(base, mapped);
    munmap(table_base, table_mapped);
}

/* The whole number in arg, 1..max; else says so and exits with 2. */
static size_t count_arg(const char *arg, const char *what, size_t max)
{
    unsigned long long v;
    if (!parse_count(arg, max, &v)) {
        fprintf(stderr, "machine_probe: bad %s '%s' (a whole number from 1 to %zu)\n", what, arg,
                max);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "latency") == 0) {
        static const size_t sizes[] = {32, 512, 1024, 2048, 4096, 8192, 16384, 65536};
        for (int a = 2; a < argc; a++) /* all checked before any is timed */
            count_arg(argv[a], "size in KB", (size_t)1 << 24);
        if (argc == 2)
            for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
                latency(sizes[i]);
        for (int a = 2; a < argc; a++)
            latency(count_arg(argv[a], "size in KB", (size_t)1 << 24));
        return 0;
    }
    if (argc >= 2 && argc <= 4 && strcmp(argv[1], "touch") == 0) {
        size_t mb = argc > 2 ? count_arg(argv[2], "size in MB", (size_t)1 << 16) : 100;
        int passes = argc > 3 ? (int)count_arg(argv[3], "number of passes", 1000000) : 20;
        touch(mb, passes, 0);
        touch(mb, passes, 1);
        return 0;
    }
    fprintf(stderr, "usage: machine_probe latency [KB...] | touch [MB [PASSES]]\n");
    return 2;
}
