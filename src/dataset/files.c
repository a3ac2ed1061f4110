/*
 * files.c - the input files of a run (see files.h).
 */
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int simdbpe__files_init(file_list *l, const char *const *paths, size_t n)
{
    memset(l, 0, sizeof *l);
    l->paths = calloc(n ? n : 1, sizeof *l->paths);
    if (!l->paths)
        return -1;
    for (; l->n < n; l->n++)
        if (!(l->paths[l->n] = strdup(paths[l->n])))
            return -1;
    return 0;
}

simdbpe_status simdbpe__files_check(file_list *l, char *msg, size_t cap, uint64_t *index)
{
    int stdin_uses = 0;
    *index = SIMDBPE_NO_POSITION;
    l->sizes = malloc((l->n ? l->n : 1) * sizeof *l->sizes);
    l->dev = calloc(l->n ? l->n : 1, sizeof *l->dev);
    l->ino = calloc(l->n ? l->n : 1, sizeof *l->ino);
    if (!l->sizes || !l->dev || !l->ino) {
        snprintf(msg, cap, "out of memory");
        return SIMDBPE_ERR_NOMEM;
    }
    for (size_t i = 0; i < l->n; i++) {
        const char *p = l->paths[i];
        l->sizes[i] = UINT64_MAX;
        if (strcmp(p, "-") == 0) {
            stdin_uses++;
            continue;
        }
        /* stat + access, not open: opening a FIFO would consume its writer. */
        struct stat st;
        int bad = stat(p, &st) != 0 || access(p, R_OK) != 0;
        if (bad || S_ISDIR(st.st_mode)) {
            snprintf(msg, cap, "%s: %s", p, bad ? strerror(errno) : "is a directory");
            *index = i;
            return SIMDBPE_ERR_IO;
        }
        if (S_ISREG(st.st_mode))
            l->sizes[i] = (uint64_t)st.st_size;
        l->dev[i] = (uint64_t)st.st_dev;
        l->ino[i] = (uint64_t)st.st_ino;
    }
    if (stdin_uses > 1) {
        snprintf(msg, cap, "standard input ('-') can be read only once");
        return SIMDBPE_ERR_INVALID_ARG;
    }
    return SIMDBPE_OK;
}

long simdbpe__files_find_same(const file_list *l, const char *path)
{
    struct stat st;
    if (!l->dev || stat(path, &st) != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++)
        if (l->dev[i] == (uint64_t)st.st_dev && l->ino[i] == (uint64_t)st.st_ino &&
            strcmp(l->paths[i], "-") != 0)
            return (long)i;
    return -1;
}

uint64_t simdbpe__files_total_size(const file_list *l)
{
    uint64_t total = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->sizes || l->sizes[i] == UINT64_MAX)
            return 0;
        total += l->sizes[i];
    }
    return total;
}

int simdbpe__files_select_rank(const file_list *l, long rank, long world, file_list *out,
                               uint64_t **index)
{
    size_t cap = l->n ? l->n : 1;
    memset(out, 0, sizeof *out);
    *index = malloc(cap * sizeof **index);
    out->paths = malloc(cap * sizeof *out->paths);
    out->sizes = malloc(cap * sizeof *out->sizes);
    out->dev = malloc(cap * sizeof *out->dev);
    out->ino = malloc(cap * sizeof *out->ino);
    if (!*index || !out->paths || !out->sizes || !out->dev || !out->ino)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        if (world > 1 && i % (size_t)world != (size_t)rank)
            continue;
        size_t k = out->n++;
        (*index)[k] = i;
        out->paths[k] = l->paths[i];
        out->sizes[k] = l->sizes ? l->sizes[i] : UINT64_MAX;
        out->dev[k] = l->dev ? l->dev[i] : 0;
        out->ino[k] = l->ino ? l->ino[i] : 0;
    }
    return 0;
}

void simdbpe__files_free_view(file_list *l)
{
    free(l->paths);
    free(l->sizes);
    free(l->dev);
    free(l->ino);
    memset(l, 0, sizeof *l);
}

void simdbpe__files_free(file_list *l)
{
    for (size_t i = 0; l->paths && i < l->n; i++)
        free(l->paths[i]);
    simdbpe__files_free_view(l);
}
