/*
 * inputs.c - expanding input arguments into files (see inputs.h).
 */
#include "inputs.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int add(file_list *l, const char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p)
            return -1;
        l->paths = p;
        l->cap = cap;
    }
    l->paths[l->n] = strdup(path);
    if (!l->paths[l->n])
        return -1;
    l->n++;
    return 0;
}

static int add_list_file(file_list *l, const char *list)
{
    FILE *f = fopen(list, "r");
    if (!f) {
        cli_error("@%s: %s", list, strerror(errno));
        return EXIT_FAIL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    size_t before = l->n;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        /* A blank line (spaces or tabs only) is ignored like an empty one:
         * it was reported as the file "   " not existing. */
        if (strspn(line, " \t") == (size_t)n)
            continue;
        if (add(l, line)) {
            cli_error("out of memory");
            rc = EXIT_FAIL;
        }
    }
    if (rc == 0 && ferror(f)) {
        cli_error("@%s: read error", list);
        rc = EXIT_FAIL;
    }
    /* Like a pattern that matches nothing: a typo never means "no input". */
    if (rc == 0 && l->n == before) {
        cli_error("@%s: the list names no file", list);
        rc = EXIT_FAIL;
    }
    free(line);
    fclose(f);
    return rc;
}

static int add_pattern(file_list *l, const char *pattern)
{
    glob_t g;
    int r = glob(pattern, 0, NULL, &g);
    if (r == GLOB_NOMATCH) {
        cli_error("%s: no file matches this pattern", pattern);
        return EXIT_FAIL;
    }
    if (r != 0) {
        cli_error("%s: cannot expand the pattern", pattern);
        return EXIT_FAIL;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
        if (add(l, g.gl_pathv[i])) {
            cli_error("out of memory");
            rc = EXIT_FAIL;
        }
    globfree(&g);
    return rc;
}

int inputs_expand(char **args, int n_args, file_list *out)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n_args; i++) {
        const char *a = args[i];
        struct stat st;
        if (a[0] == '@' && a[1])
            rc = add_list_file(out, a + 1);
        else if (strpbrk(a, "*?[") && stat(a, &st) != 0)
            rc = add_pattern(out, a);
        else if (add(out, a)) {
            cli_error("out of memory");
            rc = EXIT_FAIL;
        }
    }
    if (rc == 0 && n_args == 0 && add(out, "-")) {
        cli_error("out of memory");
        rc = EXIT_FAIL;
    }
    if (rc)
        inputs_free(out);
    return rc;
}

int inputs_check(file_list *l)
{
    int stdin_uses = 0;
    free(l->sizes);
    free(l->dev);
    free(l->ino);
    l->sizes = malloc((l->n ? l->n : 1) * sizeof *l->sizes);
    l->dev = calloc(l->n ? l->n : 1, sizeof *l->dev);
    l->ino = calloc(l->n ? l->n : 1, sizeof *l->ino);
    if (!l->sizes || !l->dev || !l->ino) {
        cli_error("out of memory");
        return EXIT_FAIL;
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
        if (stat(p, &st) != 0 || access(p, R_OK) != 0) {
            cli_error("%s: %s", p, strerror(errno));
            return EXIT_FAIL;
        }
        if (S_ISDIR(st.st_mode)) {
            cli_error("%s: is a directory", p);
            return EXIT_FAIL;
        }
        if (S_ISREG(st.st_mode))
            l->sizes[i] = (uint64_t)st.st_size;
        l->dev[i] = (uint64_t)st.st_dev;
        l->ino[i] = (uint64_t)st.st_ino;
    }
    if (stdin_uses > 1) {
        cli_error("standard input ('-') can be read only once");
        return EXIT_USAGE;
    }
    return 0;
}

long inputs_find_same(const file_list *l, const char *path)
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

uint64_t inputs_total_size(const file_list *l)
{
    uint64_t total = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->sizes || l->sizes[i] == UINT64_MAX)
            return 0;
        total += l->sizes[i];
    }
    return total;
}

int inputs_select_rank(file_list *l, int rank, int world, uint64_t **index)
{
    *index = malloc((l->n ? l->n : 1) * sizeof **index);
    if (!*index)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (i % (size_t)world == (size_t)rank) {
            (*index)[k] = i;
            if (l->sizes)
                l->sizes[k] = l->sizes[i];
            if (l->dev) {
                l->dev[k] = l->dev[i];
                l->ino[k] = l->ino[i];
            }
            l->paths[k++] = l->paths[i];
        } else {
            free(l->paths[i]);
        }
    }
    l->n = k;
    return 0;
}

void inputs_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->sizes);
    free(l->dev);
    free(l->ino);
    memset(l, 0, sizeof *l);
}
