/*
 * files.h - the input files of a run: checked before any work, by
 * identity (device and inode) for outputs that would overwrite one, and
 * split round robin between ranks.
 */
#ifndef SIMDBPE_DATASET_FILES_H
#define SIMDBPE_DATASET_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "simdbpe.h"

typedef struct file_list {
    char **paths;
    uint64_t *sizes;     /* set by simdbpe__files_check: each file's size, UINT64_MAX if
                          * it is not a regular file (or is standard input) */
    uint64_t *dev, *ino; /* set by simdbpe__files_check: each file's identity (0, 0
                          * for standard input) */
    size_t n;
} file_list;

/* Copies paths[0 .. n). Returns 0 or -1 (out of memory). */
int simdbpe__files_init(file_list *l, const char *const *paths, size_t n);

/* Checks that every file (not stdin) can be opened now, so that a typo
 * fails at once rather than hours later, and records the sizes. Returns
 * SIMDBPE_OK, or a status with the reason in msg and the file's index in
 * *index (SIMDBPE_NO_POSITION when no one file is at fault). */
simdbpe_status simdbpe__files_check(file_list *l, char *msg, size_t cap, uint64_t *index);

/* The index of the input that is the same file as `path` (by device and
 * inode, so links and other spellings count), or -1 when none is or
 * `path` does not exist. Uses the identities simdbpe__files_check recorded. */
long simdbpe__files_find_same(const file_list *l, const char *path);

/* Sum of the sizes simdbpe__files_check recorded; 0 if any input is not a regular
 * file (or if they were not recorded). No file is looked at again: a job
 * may have millions of files, and a stat costs microseconds. */
uint64_t simdbpe__files_total_size(const file_list *l);

/* The files i with i % world == rank, into *out (the paths are shared with
 * `l`, which must outlive it: free `out` with simdbpe__files_free_view); index[k]
 * is the original position of the k-th file kept. Returns 0 or -1 (out of
 * memory). */
int simdbpe__files_select_rank(const file_list *l, long rank, long world, file_list *out,
                               uint64_t **index);

void simdbpe__files_free(file_list *l);
void simdbpe__files_free_view(file_list *l);

#endif
