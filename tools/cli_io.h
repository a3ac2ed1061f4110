/*
 * cli_io.h - reading a whole input file for the simdbpe CLI (decode).
 *
 * Output files are written through simdbpe_dataset_file_out (temporary
 * name, then rename); encode reads its inputs as streams
 * (simdbpe_dataset.h).
 */
#ifndef SIMDBPE_CLI_IO_H
#define SIMDBPE_CLI_IO_H

#include <stddef.h>

/* Reads a whole file ("-" = stdin). Returns 0 or an errno value. */
int cli_read_all(const char *path, char **data, size_t *len);

#endif
