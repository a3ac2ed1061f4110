/*
 * model.c - opening models by name, directory or compiled file, and
 * read-only accessors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

/* The embedded image was written by this library at build time: it is
 * opened in place, trusted (no checksum, no per-entry checks) and with
 * the joins written beside it, so loading is a few header reads. */
simdbpe_status simdbpe_model_load_gpt2(simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_gpt2: NULL argument");
    return simdbpe__image_open(simdbpe__gpt2_image, simdbpe__gpt2_image_len,
                               SIMDBPE__IMAGE_STATIC, 1, simdbpe__gpt2_joins, out, err);
}

/* A compiled model: a regular file named *.sbpe or starting with the
 * magic. */
static int is_compiled_file(const char *path)
{
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, ".sbpe") == 0)
        return 1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char magic[8];
    int yes = fread(magic, 1, 8, f) == 8 && memcmp(magic, "SIMDBPE\x1a", 8) == 0;
    fclose(f);
    return yes;
}

/* Reads a whole file; *data is NUL-terminated. Returns 0, or errno. */
static int read_file(const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno ? errno : EIO;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (simdbpe__grow((void **)&buf, &cap, n + 65536 + 1, 1)) {
            free(buf);
            fclose(f);
            return ENOMEM;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return EIO;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* A model file's bytes: mapped (no copy, and the kernel fills the pages in
 * one go) or, when it cannot be mapped (a pipe, an empty file), read.
 * *mapped says which, for release_file. Returns 0, or errno. */
static int map_file(const char *path, char **data, size_t *len, int *mapped)
{
    *mapped = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno ? errno : EIO;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        int flags = MAP_PRIVATE;
#if defined(MAP_POPULATE)
        flags |= MAP_POPULATE;
#endif
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, flags, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            *data = p;
            *len = (size_t)st.st_size;
            *mapped = 1;
            return 0;
        }
    }
    close(fd);
    return read_file(path, data, len);
}

static void release_file(char *data, size_t len, int mapped)
{
    if (mapped)
        munmap(data, len);
    else
        free(data);
}

/* Makes err->message name the file's path: "vocab.json line 3: x" becomes
 * "DIR/vocab.json line 3: x", any other message "DIR/FILE: message". */
static void name_file(simdbpe_error *err, const char *dir, const char *file)
{
    if (!err)
        return;
    char msg[sizeof err->message + 4200];
    if (strncmp(err->message, file, strlen(file)) == 0)
        snprintf(msg, sizeof msg, "%s/%s", dir, err->message);
    else
        snprintf(msg, sizeof msg, "%s/%s: %s", dir, file, err->message);
    size_t n = strlen(msg);
    if (n >= sizeof err->message)
        n = sizeof err->message - 1;
    memcpy(err->message, msg, n);
    err->message[n] = '\0';
}

simdbpe_status simdbpe_model_open(const char *name, simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!name || !out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_open: NULL argument");
    *out = NULL;
    if (strcmp(name, "gpt2") == 0)
        return simdbpe_model_load_gpt2(out, err);
    struct stat st;
    if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && is_compiled_file(name))
        return simdbpe_model_load_file(name, out, err);
    if (stat(name, &st) != 0 || !S_ISDIR(st.st_mode))
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "model %s: not \"gpt2\", a compiled model (.sbpe) or a directory "
                             "with vocab.json and merges.txt",
                             name);
    static const char *const files[3] = {"vocab.json", "merges.txt", "special_tokens"};
    char *data[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    int mapped[3] = {0, 0, 0};
    simdbpe_status status = SIMDBPE_OK;
    for (int i = 0; i < 3 && status == SIMDBPE_OK; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", name, files[i]);
        int e = map_file(path, &data[i], &len[i], &mapped[i]);
        if (e == ENOENT && i == 2)
            break; /* the specials list is optional */
        if (e)
            status = simdbpe__fail(err, e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO,
                                   SIMDBPE_NO_POSITION, 0, "%s: %s", path, strerror(e));
    }
    if (status == SIMDBPE_OK) {
        status = simdbpe_model_load_memory(data[0], len[0], data[1], len[1], data[2], len[2], out,
                                           err);
        if (status != SIMDBPE_OK) {
            const char *file = status == SIMDBPE_ERR_VOCAB    ? files[0]
                               : status == SIMDBPE_ERR_MERGES ? files[1]
                               : status == SIMDBPE_ERR_SPECIALS ? files[2]
                                                                : NULL;
            if (file)
                name_file(err, name, file);
        }
    }
    for (int i = 0; i < 3; i++)
        release_file(data[i], len[i], mapped[i]);
    return status;
}

uint32_t simdbpe_model_vocab_size(const simdbpe_model *m)
{
    return m->vocab_size;
}

simdbpe_status simdbpe_model_token_bytes(const simdbpe_model *m, uint32_t id,
                                         const uint8_t **bytes, size_t *len)
{
    if (id >= m->vocab_size || !m->tok_has[id])
        return SIMDBPE_ERR_TOKEN_ID;
    *bytes = m->blob + m->tok_off[id];
    *len = m->tok_off[id + 1] - m->tok_off[id];
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_model_special_id(const simdbpe_model *m, const char *text, size_t len,
                                        uint32_t *id)
{
    for (size_t i = 0; i < m->n_specials; i++) {
        if (m->specials[i].len == len && memcmp(m->specials[i].text, text, len) == 0) {
            *id = m->specials[i].id;
            return SIMDBPE_OK;
        }
    }
    return SIMDBPE_ERR_INVALID_ARG;
}

size_t simdbpe_model_special_count(const simdbpe_model *m)
{
    return m->n_specials;
}

simdbpe_status simdbpe_model_special_at(const simdbpe_model *m, size_t i, uint32_t *id,
                                        const char **text, size_t *len)
{
    if (i >= m->n_specials)
        return SIMDBPE_ERR_INVALID_ARG;
    *id = m->specials[i].id;
    *text = (const char *)m->specials[i].text;
    *len = m->specials[i].len;
    return SIMDBPE_OK;
}

int simdbpe_model_whole_token_exact(const simdbpe_model *m)
{
    return m->whole_exact;
}
