/*
 * ranks.h - which shard of a job this process is.
 *
 * A run with world size W > 1 (or an explicit --rank/--world-size) is one
 * shard of a larger job (simdbpe_dataset.h says what a rank encodes and
 * writes; src/dataset/marker.h has the marker).
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

#endif
