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
    return 0;
}

#endif
