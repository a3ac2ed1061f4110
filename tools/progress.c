/*
 * progress.c - the progress line (see progress.h).
 */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

struct progress {
    uint64_t total;
    double start, last;
    int drawn;
};

progress *progress_new(int enabled, uint64_t total_raw_bytes)
{
    if (!enabled || !isatty(STDERR_FILENO))
        return NULL;
    progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->total = total_raw_bytes;
    p->start = p->last = cli_now();
    return p;
}

static void hms(double s, char *out, size_t cap)
{
    long t = (long)(s + 0.5);
    snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void progress_update(progress *p, uint64_t raw_pos, uint64_t in_bytes, uint64_t docs)
{
    if (!p)
        return;
    double now = cli_now();
    if (now - p->last < 0.2 && p->drawn)
        return;
    p->last = now;
    double secs = now - p->start;
    double mbs = secs > 0 ? (double)in_bytes / secs / 1e6 : 0;
    char bar[24], eta[32] = "--:--:--";
    double frac = p->total ? (double)raw_pos / (double)p->total : 0;
    if (frac > 1)
        frac = 1;
    int fill = (int)(frac * 20);
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    if (p->total && frac > 0.001)
        hms(secs / frac - secs, eta, sizeof eta);
    if (p->total)
        fprintf(stderr, "\r[%s] %5.1f%% %.1f/%.1f MB  %llu docs  %.1f MB/s  ETA %s \033[K", bar,
                100 * frac, (double)raw_pos / 1e6, (double)p->total / 1e6,
                (unsigned long long)docs, mbs, eta);
    else
        fprintf(stderr, "\r%.1f MB read  %llu docs  %.1f MB/s \033[K", (double)raw_pos / 1e6,
                (unsigned long long)docs, mbs);
    fflush(stderr);
    p->drawn = 1;
}

void progress_end(progress *p)
{
    if (!p)
        return;
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    free(p);
}
