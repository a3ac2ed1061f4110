/*
 * replay_main.c - runs a fuzz target over committed inputs, without
 * libFuzzer, so the corpora are regression tests under any compiler.
 *
 *   fuzz_replay_<target> PATH...
 *
 * Each PATH is a file or a directory (its regular files, in name order, so
 * runs are repeatable). Every file is read into a buffer of exactly its
 * size (over-reads are caught by AddressSanitizer in sanitizer builds) and
 * passed to LLVMFuzzerTestOneInput once. A failing property aborts inside
 * the target after printing what failed; this driver prints each file's
 * name on stderr before running it, so the last name printed is the
 * culprit (ctest shows the output only when a test fails). Exit 0 after
 * the last input;
 * 1 if a path cannot be read or no input was found (an empty corpus would
 * otherwise make a test that cannot fail).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                free(buf);
            buf = bigger;
        }
    }
    int failed = ferror(f) || !buf;
    fclose(f);
    uint8_t *exact = failed ? NULL : malloc(n ? n : 1);
    if (!exact) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    fflush(stderr); /* on screen even if the target aborts */
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file in dir; returns the count, or -1 on error. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **bigger = realloc(names, cap * sizeof *names);
            if (!bigger)
                break;
            names = bigger;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (count >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            count = run_file(path) == 0 ? count + 1 : -1;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        long n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : (run_file(argv[i]) == 0 ? 1 : -1);
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    printf("replay: %ld inputs passed\n", total);
    return 0;
}
