/*
 * ranks.h - running one encode over several processes or machines.
 *
 * A run with world size W > 1 (or an explicit --rank/--world-size) is one
 * shard of a larger job: rank R encodes the input files i with
 * i % W == R (round robin over the full, expanded list, which every rank
 * must be given identically) and writes its outputs under the base name
 *   OUTPUT.RRRRR-of-WWWWW        (e.g. data.00001-of-00004.bin/.idx)
 * followed, once they are all in place, by the completion marker
 *   OUTPUT.RRRRR-of-WWWWW.done
 * A JSON file naming the run (format, dtype, EOT, rank, world size, file
 * count) and listing each of the shard's input files with its global
 * index and its documents and tokens. A rerun of a rank whose marker
 * exists and matches does nothing; `simdbpe merge` uses the markers to put
 * documents back in the global file order.
 *
 * Rank and world size come from --rank/--world-size, else the first pair
 * found in the environment:
 *   SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (minus SLURM_ARRAY_TASK_MIN),
 *   SLURM_PROCID/SLURM_NTASKS, OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE,
 *   RANK/WORLD_SIZE.
 */
#ifndef SIMDBPE_RANKS_H
#define SIMDBPE_RANKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct rank_info {
    long rank, world;
    int active;         /* sharded run: rank names and marker */
    const char *source; /* "--rank/--world-size", "SLURM_PROCID/SLURM_NTASKS", ... */
} rank_info;

/* opt_rank/opt_world: the options, or -1. Returns 0, or EXIT_USAGE after
 * printing why. */
int rank_detect(long opt_rank, long opt_world, rank_info *out);

/* "OUTPUT.RRRRR-of-WWWWW" (malloc'ed), or a copy of OUTPUT if not active. */
char *rank_base(const rank_info *r, const char *output);

typedef struct marker_file {
    uint64_t index;           /* position in the full input list */
    char *path;
    uint64_t docs, tokens, skipped;
} marker_file;

typedef struct marker {
    char *format, *dtype, *eot;
    long rank, world;
    uint64_t total_files;
    marker_file *files;
    size_t n_files;
    uint64_t docs, tokens, skipped;
} marker;

/* Writes `m` as JSON to `path` (atomically). Returns 0 or an errno. */
int marker_write(const char *path, const marker *m);

/* Reads a marker. Returns 0; 1 if the file does not exist; -1 if it is
 * not a valid marker (reason in msg). */
int marker_read(const char *path, marker *m, char *msg, size_t cap);
void marker_free(marker *m);

#endif
