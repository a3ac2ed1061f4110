/*
 * cli_io.h - file input and safe output for the simdbpe CLI.
 *
 * Output files are written under a temporary name in the same directory
 * and renamed over the final name only when complete, so an interrupted or
 * failed run never leaves a partial file under the final name.
 */
#ifndef SIMDBPE_CLI_IO_H
#define SIMDBPE_CLI_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads a whole file ("-" = stdin). Returns 0 or an errno value. */
int cli_read_all(const char *path, char **data, size_t *len);

typedef struct cli_out {
    FILE *f;
    const char *final_path; /* NULL for stdout */
    char *tmp_path;
    int failed;             /* errno of the first failed write, or 0 */
} cli_out;

/* Opens stdout (path NULL or "-") or a temporary file next to `path`. */
int cli_out_open(cli_out *o, const char *path);
void cli_out_write(cli_out *o, const void *data, size_t len);
/* Flushes and, for a file, renames it into place. Returns 0 or errno. */
int cli_out_commit(cli_out *o);
/* Closes and removes the temporary file, if any. */
void cli_out_abort(cli_out *o);

#endif
