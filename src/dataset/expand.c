/*
 * expand.c - input arguments into files (simdbpe_dataset_expand_inputs):
 * "-", @LIST files and glob patterns, as `simdbpe encode` and
 * simdbpe.encode_files take them.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/common.h"
#include "dataset.h"

typedef struct list {
    char **paths;
    size_t n, cap;
} list;

#define FAIL(st, ...) simdbpe__ds_fail(NULL, err, st, SIMDBPE_NO_POSITION, 0, \
                                       SIMDBPE_NO_POSITION, __VA_ARGS__)

static int add(list *l, const char *path)
{
    if (simdbpe__grow((void **)&l->paths, &l->cap, l->n + 1, sizeof *l->paths))
        return -1;
    if (!(l->paths[l->n] = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

static simdbpe_status add_list_file(list *l, const char *name, simdbpe_error *err)
{
    FILE *f = fopen(name, "r");
    if (!f)
        return FAIL(SIMDBPE_ERR_IO, "@%s: %s", name, strerror(errno));
    char *line = NULL;
    size_t cap = 0, before = l->n;
    ssize_t n;
    simdbpe_status st = SIMDBPE_OK;
    while (st == SIMDBPE_OK && (n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        /* A blank line (spaces or tabs only) is ignored like an empty one. */
        if (strspn(line, " \t") == (size_t)n)
            continue;
        if (add(l, line))
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    }
    if (st == SIMDBPE_OK && ferror(f))
        st = FAIL(SIMDBPE_ERR_IO, "@%s: read error", name);
    /* Like a pattern that matches nothing: a typo never means "no input". */
    if (st == SIMDBPE_OK && l->n == before)
        st = FAIL(SIMDBPE_ERR_INVALID_ARG, "@%s: the list names no file", name);
    free(line);
    fclose(f);
    return st;
}

static simdbpe_status add_pattern(list *l, const char *pattern, simdbpe_error *err)
{
    glob_t g;
    int r = glob(pattern, 0, NULL, &g);
    if (r == GLOB_NOMATCH)
        return FAIL(SIMDBPE_ERR_IO, "%s: no file matches this pattern", pattern);
    if (r != 0)
        return FAIL(SIMDBPE_ERR_IO, "%s: cannot expand the pattern", pattern);
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; st == SIMDBPE_OK && i < g.gl_pathc; i++)
        if (add(l, g.gl_pathv[i]))
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    globfree(&g);
    return st;
}

simdbpe_status simdbpe_dataset_expand_inputs(const char *const *args, size_t n_args,
                                             char ***paths, size_t *n_paths, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    list l = {NULL, 0, 0};
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; st == SIMDBPE_OK && i < n_args; i++) {
        const char *a = args[i];
        struct stat sb;
        if (a[0] == '@' && a[1])
            st = add_list_file(&l, a + 1, err);
        else if (strpbrk(a, "*?[") && stat(a, &sb) != 0)
            st = add_pattern(&l, a, err);
        else if (add(&l, a))
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    }
    if (st == SIMDBPE_OK && n_args == 0 && add(&l, "-"))
        st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    if (st != SIMDBPE_OK) {
        simdbpe_dataset_inputs_free(l.paths, l.n);
        l.paths = NULL;
        l.n = 0;
    }
    *paths = l.paths;
    *n_paths = l.n;
    return st;
}

void simdbpe_dataset_inputs_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}
