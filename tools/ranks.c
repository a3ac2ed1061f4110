/*
 * ranks.c - rank and world size from the options or the environment (see
 * ranks.h).
 */
#include "ranks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_long(const char *s, long *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* The first environment pair that is set. */
static int from_env(rank_info *r)
{
    static const char *const pairs[][2] = {
        {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"},
        {"SLURM_PROCID", "SLURM_NTASKS"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"RANK", "WORLD_SIZE"},
    };
    static const char *const names[] = {
        "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", "SLURM_PROCID/SLURM_NTASKS",
        "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE", "RANK/WORLD_SIZE"};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *rs = getenv(pairs[i][0]), *ws = getenv(pairs[i][1]);
        if (!rs || !ws)
            continue;
        if (parse_long(rs, &r->rank) || parse_long(ws, &r->world)) {
            cli_error("%s=%s, %s=%s: not a rank and a world size", pairs[i][0], rs, pairs[i][1], ws);
            return EXIT_USAGE;
        }
        long min = 0;
        const char *ms = i == 0 ? getenv("SLURM_ARRAY_TASK_MIN") : NULL;
        if (ms && parse_long(ms, &min) == 0)
            r->rank -= min; /* array indices need not start at 0 */
        r->source = names[i];
        r->active = r->world > 1;
        return 0;
    }
    r->rank = 0;
    r->world = 1;
    r->source = "default";
    return 0;
}

int rank_detect(long opt_rank, long opt_world, rank_info *r)
{
    memset(r, 0, sizeof *r);
    if ((opt_rank < 0) != (opt_world < 0))
        return cli_usage_error("--rank and --world-size go together");
    int rc = 0;
    if (opt_world >= 0) {
        r->rank = opt_rank;
        r->world = opt_world;
        r->source = "--rank/--world-size";
        r->active = 1;
    } else {
        rc = from_env(r);
    }
    if (rc == 0 && (r->world < 1 || r->rank < 0 || r->rank >= r->world)) {
        cli_error("rank %ld of world size %ld (from %s): need 0 <= rank < world size", r->rank,
                  r->world, r->source);
        rc = EXIT_USAGE;
    }
    return rc;
}
