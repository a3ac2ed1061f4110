/*
 * replace.c - files written under a temporary name and renamed when
 * complete (replace.h).
 */
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* Six characters for a new name: a counter shared by the threads, mixed
 * with the process id and the clock, so that processes and threads
 * writing beside one another rarely collide (O_EXCL settles it when they
 * do). */
static void fill_suffix(char out[7])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    x = simdbpe__hash_u64(x ^ (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec ^
                          (uint64_t)ts.tv_sec << 30);
    for (int i = 0; i < 6; i++, x /= 62)
        out[i] = alphabet[x % 62];
    out[6] = '\0';
}

int simdbpe__tmp_open(const char *path, char **tmp_path)
{
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    char *tmp = malloc(n);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    for (int attempt = 0; attempt < 1000; attempt++) {
        char suffix[7];
        fill_suffix(suffix);
        snprintf(tmp, n, "%s.tmp.%s", path, suffix);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *tmp_path = tmp;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    free(tmp);
    errno = e;
    return -1;
}

int simdbpe__write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int simdbpe__replace_file(const char *path, const void *data, size_t len)
{
    char *tmp;
    int fd = simdbpe__tmp_open(path, &tmp);
    if (fd < 0)
        return errno;
    int e = simdbpe__write_all(fd, data, len);
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    free(tmp);
    return e;
}
