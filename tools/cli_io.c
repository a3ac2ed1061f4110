/*
 * cli_io.c - reading a whole input file (decode).
 */
#include "cli_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
