/*
 * megatron_idx.c - Megatron-LM .idx files (see writer_megatron.c for the
 * layout). All integers are little-endian; the arrays follow the 34-byte
 * header without padding.
 */
#include "megatron_idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char magic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

unsigned simdbpe__megatron_dtype_width(int dtype)
{
    switch (dtype) {
    case 1: case 2: return 1; /* u8, i8 */
    case 3: case 8: return 2; /* i16, u16 */
    case 4: return 4;         /* i32 */
    case 5: return 8;         /* i64 */
    default: return 0;        /* floats are not ids */
    }
}

static void write_header(outfile *o, int dtype, uint64_t S, uint64_t D)
{
    unsigned char h[MEGATRON_HEADER_SIZE];
    memcpy(h, magic, 9);
    put_le(h + 9, 1, 8);
    h[17] = (unsigned char)dtype;
    put_le(h + 18, S, 8);
    put_le(h + 26, D, 8);
    simdbpe__outfile_write(o, h, sizeof h);
}

/* Writes `count` little-endian integers of `size` bytes; `expr` gives the
 * i_-th one. */
#define WRITE_ARRAY(o, size, count, expr)                                                          \
    do {                                                                                           \
        unsigned char buf_[8192];                                                                  \
        size_t b_ = 0;                                                                             \
        for (uint64_t i_ = 0; i_ < (count); i_++) {                                                \
            if (b_ + (size) > sizeof buf_) {                                                       \
                simdbpe__outfile_write((o), buf_, b_);                                             \
                b_ = 0;                                                                            \
            }                                                                                      \
            put_le(buf_ + b_, (uint64_t)(expr), (size));                                           \
            b_ += (size);                                                                          \
        }                                                                                          \
        simdbpe__outfile_write((o), buf_, b_);                                                     \
    } while (0)

int simdbpe__megatron_idx_write(outfile *o, int dtype, unsigned width, const uint32_t *doc_lens,
                                size_t n_docs)
{
    /* Sequences are the non-empty documents; docs[k] counts those before k. */
    uint32_t *lens = malloc((n_docs ? n_docs : 1) * sizeof *lens);
    uint64_t *docs = malloc((n_docs + 1) * sizeof *docs);
    if (!lens || !docs) {
        free(lens);
        free(docs);
        return ENOMEM;
    }
    uint64_t S = 0;
    docs[0] = 0;
    for (size_t i = 0; i < n_docs; i++) {
        if (doc_lens[i])
            lens[S++] = doc_lens[i];
        docs[i + 1] = S;
    }
    simdbpe__megatron_idx_write_parts(o, dtype, width, lens, S, docs, (uint64_t)n_docs + 1);
    free(lens);
    free(docs);
    return 0;
}

void simdbpe__megatron_idx_write_parts(outfile *o, int dtype, unsigned width, const uint32_t *lens,
                                       uint64_t S, const uint64_t *docs, uint64_t D)
{
    write_header(o, dtype, S, D);
    WRITE_ARRAY(o, 4, S, lens[i_]);
    uint64_t ptr = 0, next = 0;
    WRITE_ARRAY(o, 8, S, (ptr = next, next += (uint64_t)lens[i_] * width, ptr));
    WRITE_ARRAY(o, 8, D, docs[i_]);
}

static int bad(char *msg, size_t cap, const char *path, const char *why)
{
    snprintf(msg, cap, "%s: %s", path, why);
    return -1;
}

static int read_exact(FILE *f, void *p, size_t n)
{
    return fread(p, 1, n, f) == n ? 0 : -1;
}

int simdbpe__megatron_idx_read(const char *path, megatron_idx *x, char *msg, size_t cap)
{
    memset(x, 0, sizeof *x);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    unsigned char h[MEGATRON_HEADER_SIZE];
    unsigned char *raw = NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < MEGATRON_HEADER_SIZE || read_exact(f, h, sizeof h)) {
        bad(msg, cap, path, "too short for a Megatron index header");
        goto out;
    }
    if (memcmp(h, magic, 9) != 0 || get_le(h + 9, 8) != 1) {
        bad(msg, cap, path, "not a Megatron index (MMIDIDX, version 1)");
        goto out;
    }
    x->dtype = h[17];
    x->width = simdbpe__megatron_dtype_width(x->dtype);
    x->S = get_le(h + 18, 8);
    x->D = get_le(h + 26, 8);
    if (!x->width) {
        bad(msg, cap, path, "unsupported dtype code (not an integer type)");
        goto out;
    }
    if (x->S > ((uint64_t)1 << 40) || x->D == 0 || x->D > ((uint64_t)1 << 40) ||
        (uint64_t)size != MEGATRON_HEADER_SIZE + x->S * 12 + x->D * 8) {
        bad(msg, cap, path, "file size does not match its sequence and document counts");
        goto out;
    }
    size_t body = (size_t)(x->S * 12 + x->D * 8);
    raw = malloc(body ? body : 1);
    x->lens = malloc((size_t)(x->S ? x->S : 1) * sizeof *x->lens);
    x->docs = malloc((size_t)x->D * sizeof *x->docs);
    if (!raw || !x->lens || !x->docs) {
        bad(msg, cap, path, "out of memory");
        goto out;
    }
    if (read_exact(f, raw, body)) {
        bad(msg, cap, path, "read error");
        goto out;
    }
    uint64_t ptr = 0;
    for (uint64_t i = 0; i < x->S; i++) {
        x->lens[i] = (uint32_t)get_le(raw + 4 * i, 4);
        if (x->lens[i] > INT32_MAX || get_le(raw + 4 * x->S + 8 * i, 8) != ptr) {
            bad(msg, cap, path, "sequence offsets do not match the sequence lengths");
            goto out;
        }
        ptr += (uint64_t)x->lens[i] * x->width;
    }
    for (uint64_t i = 0; i < x->D; i++) {
        x->docs[i] = get_le(raw + 12 * x->S + 8 * i, 8);
        if ((i == 0 && x->docs[0] != 0) || (i > 0 && x->docs[i] < x->docs[i - 1]) ||
            x->docs[i] > x->S) {
            bad(msg, cap, path, "document indices are not 0, ..., S in order");
            goto out;
        }
    }
    if (x->docs[x->D - 1] != x->S) {
        bad(msg, cap, path, "the last document index is not the sequence count");
        goto out;
    }
    rc = 0;
out:
    free(raw);
    fclose(f);
    if (rc)
        simdbpe__megatron_idx_free(x);
    return rc;
}

void simdbpe__megatron_idx_free(megatron_idx *x)
{
    free(x->lens);
    free(x->docs);
    x->lens = NULL;
    x->docs = NULL;
}
