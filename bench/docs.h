/*
 * docs.h - the documents a benchmark program reads: one file each, whole,
 * in memory.
 */
#ifndef SIMDBPE_BENCH_DOCS_H
#define SIMDBPE_BENCH_DOCS_H

#include <stdio.h>
#include <stdlib.h>

typedef struct doc {
    char *data;
    size_t len;
} doc;

/* Reads one byte of every 4 KB page of p[0..n). The kernel fills a
 * buffer that fread() is given, but on a virtual machine with shadow
 * page tables (this project's) the program's own first read of each page
 * still costs 6-8 us: 40% of a one-pass time over 100 MB. The peers
 * (peers.mjs) decode their files into strings before their timing starts,
 * which pays it there; this does the same for the programs here, so
 * the timed pass starts with the documents in memory as a caller has
 * them. */
static inline void touch_pages(const char *p, size_t n)
{
    volatile char sink = 0;
    for (size_t i = 0; i < n; i += 4096)
        sink ^= p[i];
    (void)sink;
}

/* Reads the file at path into d; returns 0, or -1 after saying why. */
static inline int read_doc(const char *path, doc *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    d->data = n >= 0 ? malloc((size_t)n + 1) : NULL;
    d->len = n >= 0 ? (size_t)n : 0;
    if (!d->data || fread(d->data, 1, d->len, f) != d->len) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    touch_pages(d->data, d->len);
    return 0;
}

#endif
