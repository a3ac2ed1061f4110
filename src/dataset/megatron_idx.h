/*
 * megatron_idx.h - reading and writing Megatron-LM .idx files (layout in
 * writer_megatron.c), shared by the writer and `simdbpe merge`.
 */
#ifndef SIMDBPE_MEGATRON_IDX_H
#define SIMDBPE_MEGATRON_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "outfile.h"

#define MEGATRON_DTYPE_I32 4
#define MEGATRON_DTYPE_U16 8
#define MEGATRON_HEADER_SIZE 34

/* Writes a whole index for documents of the given lengths (0 = a document
 * without a sequence). Returns 0 or ENOMEM. */
int simdbpe__megatron_idx_write(outfile *o, int dtype, unsigned width, const uint32_t *doc_lens,
                                size_t n_docs);

typedef struct megatron_idx {
    int dtype;
    unsigned width; /* bytes per id */
    uint64_t S, D;  /* sequences; documents + 1 */
    uint32_t *lens; /* S sequence lengths */
    uint64_t *docs; /* D document indices */
} megatron_idx;

/*
 * Reads and checks an index: header, sizes against the file size, offsets
 * against the lengths, document indices (0 first, S last, never
 * decreasing). Returns 0, or -1 with a reason in `msg`.
 */
int simdbpe__megatron_idx_read(const char *path, megatron_idx *out, char *msg, size_t cap);
void simdbpe__megatron_idx_free(megatron_idx *x);

/* Bytes per id for a dtype code; 0 for codes that are not integer ids. */
unsigned simdbpe__megatron_dtype_width(int dtype);

/* Writes an index from sequence lengths and document indices. */
void simdbpe__megatron_idx_write_parts(outfile *o, int dtype, unsigned width, const uint32_t *lens,
                                       uint64_t S, const uint64_t *docs, uint64_t D);

#endif
