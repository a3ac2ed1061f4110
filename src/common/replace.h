/*
 * replace.h - files that appear under their name only when complete
 * (internal): written under PATH.tmp.XXXXXX beside PATH, then renamed over
 * it, so a reader sees the old file or the whole new one, never a part.
 *
 * The temporary file is created with mode 0666 and O_EXCL, so the kernel
 * applies the process's umask as for any new file: nothing reads or sets
 * the umask (umask(0); umask(mask) would leave every file another thread
 * creates in between world-writable).
 */
#ifndef SIMDBPE_REPLACE_H
#define SIMDBPE_REPLACE_H

#include <stddef.h>

/* Creates PATH.tmp.XXXXXX (six letters or digits, new) for writing. Returns
 * its descriptor and sets *tmp_path (malloc'ed), or returns -1 with errno
 * set. */
int simdbpe__tmp_open(const char *path, char **tmp_path);

/* Writes all of data[0..len) to fd (retrying short writes and EINTR).
 * Returns 0 or an errno value. */
int simdbpe__write_all(int fd, const void *data, size_t len);

/* PATH's new content, whole: written under a temporary name, then renamed
 * over PATH; nothing is left behind on failure. Returns 0 or an errno
 * value. */
int simdbpe__replace_file(const char *path, const void *data, size_t len);

#endif
