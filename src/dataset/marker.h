/*
 * marker.h - what a sharded run writes besides its outputs (see the
 * sharding notes of simdbpe_dataset.h): its output base name
 *   OUTPUT.RRRRR-of-WWWWW        (e.g. data.00001-of-00004.bin/.idx)
 * and, once its outputs are all in place, the completion marker
 *   OUTPUT.RRRRR-of-WWWWW.done
 * a JSON file naming the run (format, dtype, EOT, rank, world size, file
 * count, a hash of the whole input list) and listing each of the shard's
 * input files with its global index and its documents and tokens. A rerun of a rank whose marker
 * exists and matches does nothing; merge uses the markers to put documents
 * back in the global file order.
 */
#ifndef SIMDBPE_DATASET_MARKER_H
#define SIMDBPE_DATASET_MARKER_H

#include <stddef.h>
#include <stdint.h>

/* "OUTPUT.RRRRR-of-WWWWW" (malloc'ed), or a copy of OUTPUT when world is 0. */
char *simdbpe__marker_base(long rank, long world, const char *output);

typedef struct marker_file {
    uint64_t index;           /* position in the full input list */
    char *path;
    uint64_t docs, tokens, skipped;
} marker_file;

typedef struct marker {
    char *format, *dtype, *eot;
    char *input_list; /* hex XXH3-64 of every input path, each with its NUL
                       * (simdbpe__marker_input_list); NULL in markers older than it */
    long rank, world;
    uint64_t total_files;
    marker_file *files;
    size_t n_files;
    uint64_t docs, tokens, skipped;
} marker;

/* The input list's hash as markers hold it (17 bytes with the NUL). */
void simdbpe__marker_input_list(char *const *paths, size_t n, char out[17]);

/* Writes `m` as JSON to `path` (atomically). Returns 0 or an errno. */
int simdbpe__marker_write(const char *path, const marker *m);

/* Reads a marker. Returns 0; 1 if the file does not exist; -1 if it is
 * not a valid marker (reason in msg). */
int simdbpe__marker_read(const char *path, marker *m, char *msg, size_t cap);
void simdbpe__marker_free(marker *m);

#endif
