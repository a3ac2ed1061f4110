/*
 * timing.h - clocks and medians shared by the benchmark programs.
 */
#ifndef SIMDBPE_BENCH_TIMING_H
#define SIMDBPE_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Seconds on clock c (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...). */
static inline double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Whether s is a whole number from 1 to max; if so, it goes to *v. */
static inline int parse_count(const char *s, unsigned long long max, unsigned long long *v)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || s[0] == '-' || x < 1 || x > max)
        return 0;
    *v = x;
    return 1;
}

/* The median of v[0..n) (n > 0); sorts v. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
