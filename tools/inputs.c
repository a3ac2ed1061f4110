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

void inputs_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    memset(l, 0, sizeof *l);
}
