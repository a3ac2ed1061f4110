/*
 * cli_io.c - file input and safe (temporary name, then rename) output.
 */
#include "cli_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_read_all(const char *path, char **data, size_t *len)
{
    int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        if (fd != STDIN_FILENO)
            close(fd);
        return ENOMEM;
    }
    for (;;) {
        if (n == cap) {
            char *p = cap < ((size_t)-1) / 2 ? realloc(buf, cap * 2 + 1) : NULL;
            if (!p) {
                free(buf);
                if (fd != STDIN_FILENO)
                    close(fd);
                return ENOMEM;
            }
            buf = p;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            if (fd != STDIN_FILENO)
                close(fd);
            return e;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (fd != STDIN_FILENO)
        close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    /* Something that exists and is not a regular file (/dev/null, a FIFO, a
     * terminal) cannot be replaced atomically and must not be replaced at
     * all: renaming over it would turn /dev/null into a regular file. Write
     * straight into it. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "wb");
        return o->f ? 0 : errno;
    }
    size_t n = strlen(path);
    o->tmp_path = malloc(n + 32);
    if (!o->tmp_path)
        return ENOMEM;
    snprintf(o->tmp_path, n + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return e;
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
        return e;
    }
    o->final_path = path;
    return 0;
}

void cli_out_write(cli_out *o, const void *data, size_t len)
{
    if (o->failed || len == 0)
        return;
    if (fwrite(data, 1, len, o->f) != len)
        o->failed = errno ? errno : EIO;
}

int cli_out_commit(cli_out *o)
{
    int e = o->failed;
    if (fflush(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    if (!o->final_path)
        return e;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && rename(o->tmp_path, o->final_path) != 0)
        e = errno;
    if (e)
        unlink(o->tmp_path);
    free(o->tmp_path);
    o->tmp_path = NULL;
    return e;
}

void cli_out_abort(cli_out *o)
{
    if (!o->final_path)
        return;
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    unlink(o->tmp_path);
    free(o->tmp_path);
    o->tmp_path = NULL;
}
