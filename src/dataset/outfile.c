/*
 * outfile.c - temporary-name output files with a signal-safe cleanup
 * registry (see outfile.h).
 *
 * The registry is a fixed array of temporary paths. Slots are taken and
 * released under a mutex by ordinary code; simdbpe__outfile_remove_all, which a
 * program's signal handler calls, only reads them (each slot is a single
 * pointer store, so it sees either a complete path or NULL) and calls
 * unlink(), which is async-signal-safe.
 */
#include "outfile.h"

#include "../common/common.h"
#include "../common/replace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define REGISTRY_SLOTS 65536
#define BUF_SIZE (1u << 20)

static char *volatile registry[REGISTRY_SLOTS];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static int registry_add(char *path)
{
    int slot = -1;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        if (!registry[i]) {
            registry[i] = path;
            slot = i;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return slot;
}

static void registry_remove(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&registry_lock);
    registry[slot] = NULL;
    pthread_mutex_unlock(&registry_lock);
}

void simdbpe__outfile_remove_all(void)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        char *p = registry[i];
        if (p)
            unlink(p);
    }
}

void simdbpe__outfile_commit_begin(sigset_t *saved)
{
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    sigaddset(&held, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &held, saved);
}

void simdbpe__outfile_commit_end(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

int simdbpe__outfile_open(outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->slot = -1;
    o->buf = malloc(BUF_SIZE);
    if (!o->buf)
        return ENOMEM;
    o->cap = BUF_SIZE;
    if (!path || strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        o->is_stdout = 1;
        return 0;
    }
    /* Something that exists and is not a regular file (/dev/null, a FIFO, a
     * terminal) cannot be replaced atomically and must not be replaced at
     * all: renaming over it would turn /dev/null into a regular file. Write
     * straight into it. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            int e = errno;
            simdbpe__outfile_discard(o);
            return e;
        }
        return 0;
    }
    /* A symbolic link is written through, as a shell's '>' does: its
     * target gets the output, the link stays. */
    char *target = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        target = realpath(path, NULL);
    if (target)
        path = target;
    o->final_path = strdup(path);
    free(target);
    if (!o->final_path) {
        simdbpe__outfile_discard(o);
        return ENOMEM;
    }
    /* PATH.tmp.XXXXXX, with the mode a new file gets (replace.h). */
    o->fd = simdbpe__tmp_open(o->final_path, &o->tmp_path);
    if (o->fd < 0) {
        int e = errno;
        simdbpe__outfile_discard(o);
        return e;
    }
    o->slot = registry_add(o->tmp_path);
    if (o->slot < 0) {
        simdbpe__outfile_discard(o);
        return EMFILE;
    }
    return 0;
}

static void write_fully(outfile *o, const unsigned char *p, size_t n)
{
    if (!o->err)
        o->err = simdbpe__write_all(o->fd, p, n);
}

static void flush_buffer(outfile *o)
{
    write_fully(o, o->buf, o->len);
    o->len = 0;
}

void simdbpe__outfile_write(outfile *o, const void *data, size_t len)
{
    if (o->err || o->fd < 0 || len == 0)
        return;
    o->pos += len;
    if (o->len + len > o->cap) {
        flush_buffer(o);
        if (len >= o->cap) {
            write_fully(o, data, len);
            return;
        }
    }
    memcpy(o->buf + o->len, data, len);
    o->len += len;
}

void simdbpe__outfile_pwrite(outfile *o, uint64_t offset, const void *data, size_t len)
{
    if (o->err || o->fd < 0)
        return;
    flush_buffer(o);
    const unsigned char *p = data;
    while (len && !o->err) {
        ssize_t w = pwrite(o->fd, p, len, (off_t)offset);
        if (w < 0) {
            if (errno != EINTR)
                o->err = errno;
            continue;
        }
        p += w;
        len -= (size_t)w;
        offset += (uint64_t)w;
    }
}

int simdbpe__outfile_close(outfile *o)
{
    if (o->fd >= 0) {
        flush_buffer(o);
        if (!o->is_stdout && close(o->fd) != 0 && !o->err)
            o->err = errno;
        o->fd = -1;
    }
    free(o->buf);
    o->buf = NULL;
    return o->err;
}

int simdbpe__outfile_commit(outfile *o)
{
    if (o->is_stdout || !o->tmp_path)
        return o->err;
    if (o->err)
        return o->err;
    if (rename(o->tmp_path, o->final_path) != 0)
        return errno;
    registry_remove(o->slot);
    o->slot = -1;
    free(o->tmp_path);
    o->tmp_path = NULL;
    return 0;
}

void simdbpe__outfile_free(outfile *o)
{
    registry_remove(o->slot);
    o->slot = -1;
    free(o->buf);
    free(o->tmp_path);
    free(o->final_path);
    o->buf = NULL;
    o->tmp_path = o->final_path = NULL;
}

void simdbpe__outfile_discard(outfile *o)
{
    if (o->fd >= 0 && !o->is_stdout)
        close(o->fd);
    else if (o->fd >= 0)
        flush_buffer(o);
    o->fd = -1;
    if (o->tmp_path)
        unlink(o->tmp_path);
    simdbpe__outfile_free(o);
}

int simdbpe__outfile_write_whole(const char *path, const void *data, size_t len)
{
    outfile o;
    int e = simdbpe__outfile_open(&o, path);
    if (e)
        return e;
    simdbpe__outfile_write(&o, data, len);
    e = simdbpe__outfile_close(&o);
    if (!e)
        e = simdbpe__outfile_commit(&o);
    if (e)
        simdbpe__outfile_discard(&o);
    else
        simdbpe__outfile_free(&o);
    return e;
}

/* ----------------------------------------------------------------- locks */

/* Whether `rest` (an output name with the base cut off) is a suffix one of
 * the writers or merge gives an output: "", .bin, .idx, .ds, .ds.index,
 * .ds.metadata, .index, .metadata, .done, _val_NNNNNN.bin,
 * _train_NNNNNN.bin. */
static int output_suffix(const char *rest, size_t n)
{
    static const char *const fixed[] = {"", ".bin", ".idx", ".ds", ".ds.index", ".ds.metadata",
                                        ".index", ".metadata", ".done", NULL};
    for (int i = 0; fixed[i]; i++)
        if (strlen(fixed[i]) == n && !memcmp(rest, fixed[i], n))
            return 1;
    size_t k = n >= 15 && !memcmp(rest, "_val_", 5) ? 5 : n >= 17 && !memcmp(rest, "_train_", 7) ? 7 : 0;
    if (!k || n != k + 10 || memcmp(rest + k + 6, ".bin", 4))
        return 0;
    for (size_t i = k; i < k + 6; i++)
        if (!isdigit((unsigned char)rest[i]))
            return 0;
    return 1;
}

/* Whether `name` is NAME.tmp.XXXXXX (mkstemp's six characters) for one of
 * `file`'s output names. */
static int stale_temporary(const char *name, const char *file)
{
    size_t n = strlen(name), f = strlen(file);
    if (n < f + 11 || memcmp(name, file, f) || memcmp(name + n - 11, ".tmp.", 5))
        return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!isalnum((unsigned char)name[i]))
            return 0;
    return output_suffix(name + f, n - 11 - f);
}

/* Whether `name` is NAME.lock for one of `file`'s output names. */
static int stale_lock(const char *name, const char *file)
{
    size_t n = strlen(name), f = strlen(file);
    return n >= f + 5 && !memcmp(name, file, f) && !strcmp(name + n - 5, ".lock") &&
           output_suffix(name + f, n - 5 - f);
}

char *simdbpe__outfile_canonical(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *t = realpath(path, NULL);
        if (t)
            return t;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    const char *name = slash ? slash + 1 : path;
    char *out = NULL;
    if (real && asprintf(&out, "%s/%s", strcmp(real, "/") ? real : "", name) < 0)
        out = NULL;
    free(dir);
    free(real);
    return out;
}

/* Takes the flock of `path` (created if need be), checking that the file
 * locked is still the one under that name. Returns the descriptor, or -1
 * with errno (EBUSY: another holder). */
static int lock_file(const char *path)
{
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            errno = e == EWOULDBLOCK ? EBUSY : e;
            return -1;
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino)
            return fd;
        close(fd); /* its previous holder removed it: take the new one */
    }
}

static long held_index(const outlock *l, const char *lock_path)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->held[i].path, lock_path))
            return (long)i;
    return -1;
}

int simdbpe__outlock_take(outlock *l, const char *final)
{
    struct stat st;
    if (!final || !strcmp(final, "-") || (stat(final, &st) == 0 && !S_ISREG(st.st_mode)))
        return 0;
    char *canon = simdbpe__outfile_canonical(final);
    char *path = NULL;
    if (!canon)
        return errno ? errno : ENOMEM;
    int e = asprintf(&path, "%s.lock", canon) < 0 ? ENOMEM : 0;
    free(canon);
    if (e)
        return e;
    if (held_index(l, path) >= 0) {
        free(path);
        return 0;
    }
    char *name = strdup(final);
    if (!name || simdbpe__grow((void **)&l->held, &l->cap, l->n + 1, sizeof *l->held)) {
        free(path);
        free(name);
        return ENOMEM;
    }
    int fd = lock_file(path);
    if (fd < 0) {
        e = errno;
        free(path);
        free(name);
        return e;
    }
    l->held[l->n++] = (outlock_file){fd, registry_add(path), path, name};
    return 0;
}

int simdbpe__outlock_holds(const outlock *l, const char *final)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->held[i].final, final))
            return 1;
    return 0;
}

void simdbpe__outlock_remove_stale(outlock *l, const char *base, simdbpe_dataset_message_fn notice,
                          void *user)
{
    struct stat st;
    if (!base || !strcmp(base, "-") || (stat(base, &st) == 0 && !S_ISREG(st.st_mode)))
        return;
    const char *slash = strrchr(base, '/');
    char *dir = slash ? strndup(base, (size_t)(slash - base) + 1) : strdup(".");
    const char *file = slash ? slash + 1 : base;
    DIR *d = dir ? opendir(dir) : NULL;
    size_t removed = 0;
    char first[512] = "";
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        /* NAME.tmp.XXXXXX, or NAME.lock itself: a run killed between taking
         * the lock of an llm.c shard and creating the shard left only that. */
        int is_lock = !stale_temporary(e->d_name, file);
        if (is_lock && !stale_lock(e->d_name, file))
            continue;
        /* NAME's lock: ours, or taken for the moment of the removal; held
         * by a live run, NAME.tmp.XXXXXX is that run's. */
        char name[NAME_MAX + 1], *final = NULL, *canon = NULL, *lock = NULL;
        snprintf(name, sizeof name, "%.*s", (int)(strlen(e->d_name) - (is_lock ? 5 : 11)),
                 e->d_name);
        if (asprintf(&final, "%s%s", slash ? dir : "", name) < 0)
            final = NULL;
        canon = final ? simdbpe__outfile_canonical(final) : NULL;
        if (!canon || asprintf(&lock, "%s.lock", canon) < 0)
            lock = NULL;
        int fd = -1, ours = lock && held_index(l, lock) >= 0;
        if (lock && !ours)
            fd = lock_file(lock);
        if (!is_lock && (ours || fd >= 0) && unlinkat(dirfd(d), e->d_name, 0) == 0 &&
            !removed++)
            snprintf(first, sizeof first, "%s%s", slash ? dir : "", e->d_name);
        if (fd >= 0) {
            unlink(lock);
            close(fd);
        }
        free(final);
        free(canon);
        free(lock);
    }
    if (d)
        closedir(d);
    free(dir);
    if (removed && notice) {
        char msg[700];
        snprintf(msg, sizeof msg, "removed %zu temporary file%s left by an interrupted run (%s%s)",
                 removed, removed == 1 ? "" : "s", first, removed > 1 ? ", ..." : "");
        notice(user, SIMDBPE_DATASET_NOTICE, msg);
    }
}

void simdbpe__outlock_release(outlock *l)
{
    for (size_t i = 0; i < l->n; i++) {
        registry_remove(l->held[i].slot);
        unlink(l->held[i].path);
        close(l->held[i].fd);
        free(l->held[i].path);
        free(l->held[i].final);
    }
    free(l->held);
    l->held = NULL;
    l->n = l->cap = 0;
}
