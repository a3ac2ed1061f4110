/*
 * inputs.h - the list of input files of an encode run.
 *
 * Each argument is one of:
 *   "-"        standard input;
 *   "@LIST"    the paths listed in LIST, one per line (empty or blank
 *              lines are ignored; relative paths are relative to the
 *              current directory, as for arguments); a list naming no
 *              file is an error, as a pattern matching none is;
 *   a pattern  with *, ? or [ (unless a file has that very name): the
 *              matching paths in sorted order (glob(3)); no match is an
 *              error, so a typo never means "no input";
 *   a path.
 * No argument at all means standard input. The order is the order given,
 * which fixes the order of documents in the output and the round-robin
 * assignment of files to ranks.
 */
#ifndef SIMDBPE_INPUTS_H
#define SIMDBPE_INPUTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct file_list {
    char **paths;
    size_t n, cap;
} file_list;

/* simdbpe_dataset_expand_inputs; returns 0, or an exit code after printing
 * why. */
int inputs_expand(char **args, int n_args, file_list *out);

void inputs_free(file_list *l);

#endif
