/*
 * model_open.c - how the commands open -m MODEL (see model_open.h).
 */
#include "model_open.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "simdbpe_dataset.h"

#include "cli.h"

/* A whole file through the library's reader (decompressed); NULL with the
 * reason in err. */
static char *read_all(const char *path, size_t *len, simdbpe_error *err)
{
    simdbpe_dataset_input *in;
    if (simdbpe_dataset_input_open(path, &in, err) != SIMDBPE_OK)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && n == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
        if (!buf) {
            snprintf(err->message, sizeof err->message, "out of memory");
            break;
        }
        long got = simdbpe_dataset_input_read(in, buf + n, cap - n, err);
        if (got <= 0) {
            if (got < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)got;
    }
    simdbpe_dataset_input_close(in);
    *len = n;
    return buf;
}

static int compressed(const char *path)
{
    unsigned char head[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, 4, f);
    fclose(f);
    return (n >= 2 && head[0] == 0x1F && head[1] == 0x8B) ||
           (n == 4 && !memcmp(head, "\x28\xB5\x2F\xFD", 4));
}

/* The edit distance of a and b (short names). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (lb >= 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The library's name closest to `name`, if close enough to be a typo. */
static const char *did_you_mean(const char *name)
{
    const char *best = NULL;
    size_t best_d = 99, len = strlen(name);
    for (size_t i = 0; simdbpe_model_name_at(i); i++) {
        const char *cand = simdbpe_model_name_at(i);
        size_t d = distance(name, cand);
        /* a prefix counts as near: "cl100k" for cl100k_base */
        if (len >= 3 && !strncmp(cand, name, len))
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = cand;
        }
    }
    return best_d <= (len > 6 ? 3 : 2) ? best : NULL;
}

/* Opens the model at `name` (a built-in name or a path that exists), a
 * compressed file by its contents. */
static simdbpe_status open_located(const char *name, simdbpe_model **out, simdbpe_error *err)
{
    struct stat sb;
    if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode) && compressed(name)) {
        size_t len = 0;
        char *data = read_all(name, &len, err);
        /* a tokenizer.json is told by its contents, whatever the name */
        simdbpe_status st =
            data ? simdbpe_model_load_buffer(data, len, name, out, err) : SIMDBPE_ERR_IO;
        free(data);
        return st;
    }
    return simdbpe_model_open(name, out, err);
}

int cli_model_open(const char *name, simdbpe_model **out)
{
    simdbpe_error err;
    char *found = NULL;
    /* What the library reads for -m: the name itself if it is a path or a
     * built-in model, else ORG/NAME's tokenizer.json in the Hugging Face
     * cache (or the error that says where it looked). */
    simdbpe_status st = simdbpe_model_locate(name, &found, &err);
    if (st == SIMDBPE_OK)
        st = open_located(found ? found : name, out, &err);
    simdbpe_free(found);
    if (st == SIMDBPE_OK)
        return 0;
    struct stat sb;
    const char *near = stat(name, &sb) != 0 && !strchr(name, '/') ? did_you_mean(name) : NULL;
    if (near)
        cli_error("cannot load model: %s; did you mean '%s'?", err.message, near);
    else
        cli_error("cannot load model: %s", err.message);
    return EXIT_FAIL;
}
