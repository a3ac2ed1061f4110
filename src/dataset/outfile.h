/*
 * outfile.h - output files that appear under their final name only when
 * complete.
 *
 * A file is written under a temporary name next to its final one
 * ("PATH.tmp.XXXXXX"); simdbpe__outfile_commit() renames it into place. Until then
 * the temporary name is in a process-wide registry, and
 * simdbpe__outfile_remove_all() (simdbpe_dataset_remove_temporaries(), which a
 * program calls from its handler of SIGINT, SIGTERM, ...) unlinks every
 * registered file. So a failed or interrupted run never leaves a file under
 * a final name: it either calls simdbpe__outfile_discard() or dies with the
 * temporaries removed.
 *
 * Writes are buffered; the first error is remembered (o->err, an errno)
 * and reported by simdbpe__outfile_close(). Standard output is an outfile too
 * (path NULL or "-"), written in place, and so is a path that exists and
 * is not a regular file (/dev/null, a FIFO): those cannot be replaced.
 *
 * Committing several files (e.g. Megatron's .bin and .idx) should happen
 * between simdbpe__outfile_commit_begin() and simdbpe__outfile_commit_end(), which hold back
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE in the committing thread so that a
 * handler cannot leave half of a set renamed.
 */
#ifndef SIMDBPE_OUTFILE_H
#define SIMDBPE_OUTFILE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "simdbpe_dataset.h"

typedef struct outfile {
    int fd;             /* -1 once closed */
    int is_stdout;
    int err;            /* errno of the first failure, or 0 */
    int slot;           /* index in the signal registry, or -1 */
    char *final_path;   /* NULL for stdout */
    char *tmp_path;
    unsigned char *buf; /* write buffer */
    size_t len, cap;
    uint64_t pos;       /* bytes written so far, buffered ones included */
} outfile;

/* Opens `path` (NULL or "-": standard output) for writing. Returns 0 or an
 * errno value. */
int simdbpe__outfile_open(outfile *o, const char *path);

void simdbpe__outfile_write(outfile *o, const void *data, size_t len);

/* Overwrites bytes at `offset` (< o->pos), e.g. a header whose counts are
 * known only at the end. Not for standard output. */
void simdbpe__outfile_pwrite(outfile *o, uint64_t offset, const void *data, size_t len);

/* Flushes and closes; the file keeps its temporary name. Returns 0 or the
 * errno of the first failure. */
int simdbpe__outfile_close(outfile *o);

/* Renames a closed file to its final name. Returns 0 or an errno. */
int simdbpe__outfile_commit(outfile *o);

/* Closes (if open) and removes the temporary file; frees everything. Safe
 * on a committed, discarded or zeroed outfile. */
void simdbpe__outfile_discard(outfile *o);

/* Frees the names of a committed outfile (simdbpe__outfile_discard does this too). */
void simdbpe__outfile_free(outfile *o);

/* Holds back the signals above in this thread, saving its mask in *saved;
 * then puts the mask back. */
void simdbpe__outfile_commit_begin(sigset_t *saved);
void simdbpe__outfile_commit_end(const sigset_t *saved);

/* Unlinks every registered temporary file and lock; async-signal-safe. */
void simdbpe__outfile_remove_all(void);

/* `path` made canonical, malloc'd: a symbolic link's target, else the real
 * path of its directory and its name (the file need not exist). NULL when
 * its directory does not exist (or out of memory). Two names of one file
 * (./x and x, a link and its target) have one canonical name. */
char *simdbpe__outfile_canonical(const char *path);

/* Writes `len` bytes to `path` atomically (temporary name, then rename).
 * Returns 0 or an errno. */
int simdbpe__outfile_write_whole(const char *path, const void *data, size_t len);

/*
 * A run's claim on its output files. Outputs made of several files
 * (Megatron's .bin + .idx, datatrove's three, llm.c's shards) must never
 * mix two runs, and two runs may name one file differently (-o X.bin with
 * --output-format u16 and -o X with megatron), so a run takes an
 * exclusive flock on FILE.lock for every final FILE it writes or removes,
 * FILE made canonical (its directory's real path; a symbolic link's
 * target), before it writes anything. Lock files are created, and removed
 * when released or on a fatal signal; a lock's inode is checked after
 * locking, so a lock file removed meanwhile by its previous holder is not
 * trusted. Another run's lock is EBUSY.
 *
 * A killed run (SIGKILL, power loss) leaves its temporaries,
 * NAME.tmp.XXXXXX for an output name NAME of any format under the same
 * base (NAME = BASE[SUFFIX]). simdbpe__outlock_remove_stale removes those
 * whose NAME no live run holds (it takes NAME's lock for the moment it
 * takes to remove them, unless it holds it already) and says which; and
 * the lock files of those names that no live run holds (a run killed
 * between locking an llm.c shard and creating it left only the lock).
 */
typedef struct outlock_file {
    int fd, slot;
    char *path;  /* CANONICAL.lock */
    char *final; /* the file as the run names it */
} outlock_file;

typedef struct outlock {
    outlock_file *held;
    size_t n, cap;
} outlock;

#define OUTLOCK_INIT {NULL, 0, 0}

/* Takes the lock of the final file `final` (nothing to take for standard
 * output or an existing path that is not a regular file; a lock held
 * already is held). Returns 0, EBUSY (another run holds it) or an errno. */
int simdbpe__outlock_take(outlock *l, const char *final);

/* Whether `l` holds the lock of `final` (as it was given to
 * simdbpe__outlock_take). */
int simdbpe__outlock_holds(const outlock *l, const char *final);

/* Removes the temporaries a killed run left for the output names of
 * `base` (see above); tells `notice` (SIMDBPE_DATASET_NOTICE), unless
 * NULL. */
void simdbpe__outlock_remove_stale(outlock *l, const char *base,
                                   simdbpe_dataset_message_fn notice, void *user);

/* Removes the lock files and releases the locks; safe on an unheld set. */
void simdbpe__outlock_release(outlock *l);

#endif
