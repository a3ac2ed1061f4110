/*
 * marker.c - output names of a sharded run and its completion marker (see
 * marker.h). Markers are JSON, written and read with jansson.
 */
#include "marker.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "simdbpe.h"

#include "outfile.h"

char *simdbpe__marker_base(long rank, long world, const char *output)
{
    size_t n = strlen(output) + 64;
    char *p = malloc(n);
    if (!p)
        return NULL;
    if (world > 0)
        snprintf(p, n, "%s.%05ld-of-%05ld", output, rank, world);
    else
        snprintf(p, n, "%s", output);
    return p;
}

/* Lower-case hex of a string's bytes, malloc'ed; NULL when out of memory. */
static char *hex_of(const char *s)
{
    size_t n = strlen(s);
    char *h = malloc(2 * n + 1);
    for (size_t i = 0; h && i < n; i++)
        sprintf(h + 2 * i, "%02x", (unsigned char)s[i]);
    if (h)
        h[2 * n] = '\0';
    return h;
}

/* The bytes `hex` stands for, malloc'ed; NULL if it is not even-length
 * hex of non-NUL bytes (or when out of memory). */
static char *bytes_of_hex(const char *hex)
{
    size_t n = strlen(hex);
    char *s = n % 2 ? NULL : malloc(n / 2 + 1);
    for (size_t i = 0; s && i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !v || !strchr("0123456789abcdef", hex[2 * i]) ||
            !strchr("0123456789abcdef", hex[2 * i + 1])) {
            free(s);
            return NULL;
        }
        s[i] = (char)v;
    }
    if (s)
        s[n / 2] = '\0';
    return s;
}

void simdbpe__marker_input_list(char *const *paths, size_t n, char out[17])
{
    XXH3_state_t *st = XXH3_createState();
    uint64_t h = 0;
    if (st && XXH3_64bits_reset(st) == XXH_OK) {
        for (size_t i = 0; i < n; i++)
            XXH3_64bits_update(st, paths[i], strlen(paths[i]) + 1);
        h = XXH3_64bits_digest(st);
    }
    XXH3_freeState(st);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int simdbpe__marker_write(const char *path, const marker *m)
{
    json_t *files = json_array();
    for (size_t i = 0; files && i < m->n_files; i++) {
        const marker_file *f = &m->files[i];
        /* File names are bytes: one that is not UTF-8 (which a JSON string
         * must be) is recorded losslessly as "path_hex". */
        json_t *name = json_string(f->path);
        char *hex = name ? NULL : hex_of(f->path);
        json_t *o = json_pack("{sIsosIsIsI}", "index", (json_int_t)f->index,
                              name ? "path" : "path_hex", name ? name : json_string(hex),
                              "documents", (json_int_t)f->docs, "tokens", (json_int_t)f->tokens,
                              "skipped", (json_int_t)f->skipped);
        free(hex);
        if (json_array_append_new(files, o) != 0) {
            json_decref(files);
            return ENOMEM;
        }
    }
    json_t *root = json_pack("{sisssssssssIsIsIsosIsIsI}", "simdbpe_marker", 1, "version",
                             SIMDBPE_VERSION_STRING, "format", m->format, "dtype", m->dtype,
                             "eot", m->eot, "rank", (json_int_t)m->rank, "world_size",
                             (json_int_t)m->world, "total_files", (json_int_t)m->total_files,
                             "files", files, "documents", (json_int_t)m->docs, "tokens",
                             (json_int_t)m->tokens, "skipped", (json_int_t)m->skipped);
    if (root && m->input_list)
        json_object_set_new(root, "input_list_xxh3", json_string(m->input_list));
    char *text = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
    json_decref(root);
    if (!text)
        return ENOMEM;
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps leaves room only for the NUL: write it as a newline */
    int e = simdbpe__outfile_write_whole(path, text, len + 1);
    free(text);
    return e;
}

void simdbpe__marker_free(marker *m)
{
    for (size_t i = 0; m->files && i < m->n_files; i++)
        free(m->files[i].path);
    free(m->files);
    free(m->format);
    free(m->dtype);
    free(m->eot);
    free(m->input_list);
    memset(m, 0, sizeof *m);
}

static int read_files(json_t *arr, marker *m)
{
    m->n_files = json_array_size(arr);
    m->files = calloc(m->n_files ? m->n_files : 1, sizeof *m->files);
    if (!m->files)
        return -1;
    for (size_t i = 0; i < m->n_files; i++) {
        json_int_t idx, docs, tokens, skipped;
        const char *path = NULL, *hex = NULL;
        if (json_unpack(json_array_get(arr, i), "{sIs?ss?ssIsIsI}", "index", &idx, "path", &path,
                        "path_hex", &hex, "documents", &docs, "tokens", &tokens, "skipped",
                        &skipped) ||
            idx < 0 || docs < 0 || tokens < 0 || skipped < 0 || !path == !hex)
            return -1;
        m->files[i].index = (uint64_t)idx;
        m->files[i].path = path ? strdup(path) : bytes_of_hex(hex);
        m->files[i].docs = (uint64_t)docs;
        m->files[i].tokens = (uint64_t)tokens;
        m->files[i].skipped = (uint64_t)skipped;
        if (!m->files[i].path)
            return -1;
    }
    return 0;
}

int simdbpe__marker_read(const char *path, marker *m, char *msg, size_t cap)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        FILE *f = fopen(path, "r");
        if (!f && errno == ENOENT)
            return 1;
        if (f)
            fclose(f);
        snprintf(msg, cap, "%s: not a valid marker: %s (line %d)", path, je.text, je.line);
        return -1;
    }
    const char *format, *dtype, *eot;
    json_int_t rank, world, total, docs, tokens, skipped;
    json_t *files;
    int bad = json_unpack(root, "{sssssssIsIsIsosIsIsI}", "format", &format, "dtype", &dtype,
                          "eot", &eot, "rank", &rank, "world_size", &world, "total_files", &total,
                          "files", &files, "documents", &docs, "tokens", &tokens, "skipped",
                          &skipped);
    if (!bad && json_is_array(files)) {
        m->format = strdup(format);
        m->dtype = strdup(dtype);
        m->eot = strdup(eot);
        m->rank = (long)rank;
        m->world = (long)world;
        m->total_files = (uint64_t)total;
        m->docs = (uint64_t)docs;
        m->tokens = (uint64_t)tokens;
        m->skipped = (uint64_t)skipped;
        bad = !m->format || !m->dtype || !m->eot || read_files(files, m);
        const json_t *list = json_object_get(root, "input_list_xxh3");
        if (!bad && list && !(json_is_string(list) && (m->input_list = strdup(json_string_value(list)))))
            bad = 1;
    } else {
        bad = 1;
    }
    json_decref(root);
    if (bad) {
        snprintf(msg, cap, "%s: not a valid simdbpe completion marker", path);
        simdbpe__marker_free(m);
        return -1;
    }
    return 0;
}
