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
    uint64_t *sizes; /* set by inputs_check: each file's size, UINT64_MAX if
                      * it is not a regular file (or is standard input) */
    uint64_t *dev, *ino; /* set by inputs_check: each file's identity (0, 0
                          * for standard input) */
    size_t n, cap;
} file_list;

/* Returns 0, or an exit code after printing why. */
int inputs_expand(char **args, int n_args, file_list *out);

/* Checks that every file (not stdin) can be opened now, so that a typo
 * fails at once rather than hours later, and records the sizes. Returns 0
 * or an exit code after printing why. */
int inputs_check(file_list *l);

/* The index of the input that is the same file as `path` (by device and
 * inode, so links and other spellings count), or -1 when none is or
 * `path` does not exist. Uses the identities inputs_check recorded. */
long inputs_find_same(const file_list *l, const char *path);

/* Sum of the sizes inputs_check recorded; 0 if any input is not a regular
 * file (or if they were not recorded). No file is looked at again: on a
 * VM a stat costs about 2 us, and a job may have millions of files. */
uint64_t inputs_total_size(const file_list *l);

/* Keeps only files i with i % world == rank; index[k] is the original
 * position of the k-th file kept. Returns 0 or -1 (out of memory). */
int inputs_select_rank(file_list *l, int rank, int world, uint64_t **index);

void inputs_free(file_list *l);

#endif
