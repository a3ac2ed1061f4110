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

/* The models embedded in the library, by name. Their images were written
 * by this library at build time: each is opened in place, trusted (no
 * checksum, no per-entry checks) and with the joins written beside it, so
 * loading is a few header reads. */
static const struct embedded {
    const char *name;
    const unsigned char *image;
    const size_t *len;
    const uint64_t *joins;
} EMBEDDED[] = {
    {"gpt2", simdbpe__gpt2_image, &simdbpe__gpt2_image_len, simdbpe__gpt2_joins},
    {"r50k_base", simdbpe__gpt2_image, &simdbpe__gpt2_image_len, simdbpe__gpt2_joins},
    {"p50k_base", simdbpe__p50k_base_image, &simdbpe__p50k_base_image_len,
     simdbpe__p50k_base_joins},
    {"cl100k_base", simdbpe__cl100k_base_image, &simdbpe__cl100k_base_image_len,
     simdbpe__cl100k_base_joins},
    {"o200k_base", simdbpe__o200k_base_image, &simdbpe__o200k_base_image_len,
     simdbpe__o200k_base_joins},
};

static const struct embedded *embedded_named(const char *name)
{
    for (size_t i = 0; i < sizeof EMBEDDED / sizeof *EMBEDDED; i++)
        if (strcmp(EMBEDDED[i].name, name) == 0)
            return &EMBEDDED[i];
    return NULL;
}

static simdbpe_status open_embedded(const struct embedded *e, simdbpe_model **out,
                                    simdbpe_error *err)
{
    return simdbpe__image_open(e->image, *e->len, SIMDBPE__IMAGE_STATIC, 1, e->joins, out, err);
}

simdbpe_status simdbpe_model_load_gpt2(simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_gpt2: NULL argument");
    return open_embedded(&EMBEDDED[0], out, err);
}

const char *simdbpe_model_name_at(size_t i)
{
    return i < sizeof EMBEDDED / sizeof *EMBEDDED ? EMBEDDED[i].name : NULL;
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

/* A file that holds a tokenizer.json: named *.json, or starting (after
 * blanks or a BOM) with '{'. */
static int is_json(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, ".json") == 0)
        return 1;
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
        i++;
    return i < len && data[i] == '{';
}

simdbpe_status simdbpe_model_load_buffer(const char *data, size_t len, const char *name,
                                         simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || (!data && len))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_buffer: NULL argument");
    const char *path = name ? name : "";
    size_t n = strlen(path);
    simdbpe_status st;
    if (len >= 8 && memcmp(data, "SIMDBPE\x1a", 8) == 0)
        return simdbpe_model_load_compiled(data, len, out, err);
    if (is_json(path, data, len))
        st = simdbpe_model_load_hf_json(data, len, out, err);
    else if ((n >= 9 && strcmp(path + n - 9, ".tiktoken") == 0) ||
             simdbpe__tiktoken_name_of(data, len))
        st = simdbpe_model_load_tiktoken(data, len, NULL, out, err);
    else
        st = simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                           "not a tokenizer.json, .tiktoken or compiled (.sbpe) model");
    /* The notice names the file as the errors do. */
    char *note = st == SIMDBPE_OK && name ? (*out)->notice : NULL, *named;
    if (note && strncmp(note, "tokenizer.json", 14) == 0 &&
        asprintf(&named, "%s%s", name, note + 14) >= 0) {
        free(note);
        (*out)->notice = named;
    }
    if (st != SIMDBPE_OK && err && name) {
        /* "tokenizer.json line 3: x" -> "NAME line 3: x"; else "NAME: message". */
        char msg[sizeof err->message + 4200];
        const char *m = err->message;
        if (strncmp(m, "tokenizer.json", 14) == 0)
            snprintf(msg, sizeof msg, "%s%s", name, m + 14);
        else if (strncmp(m, ".tiktoken", 9) == 0)
            snprintf(msg, sizeof msg, "%s%s", name, m + 9);
        else
            snprintf(msg, sizeof msg, "%s: %s", name, m);
        size_t k = strlen(msg);
        if (k >= sizeof err->message)
            k = sizeof err->message - 1;
        memcpy(err->message, msg, k);
        err->message[k] = '\0';
    }
    return st;
}

/* A model file other than a compiled one: tokenizer.json or .tiktoken. */
static simdbpe_status open_text_file(const char *path, simdbpe_model **out, simdbpe_error *err)
{
    char *data;
    size_t len;
    int mapped;
    int e = map_file(path, &data, &len, &mapped);
    if (e)
        return simdbpe__fail(err, e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO,
                             SIMDBPE_NO_POSITION, 0, "%s: %s", path, strerror(e));
    simdbpe_status st = simdbpe_model_load_buffer(data, len, path, out, err);
    release_file(data, len, mapped);
    return st;
}

/* A name that is no model: neither built in, nor an existing path, nor
 * ORG/NAME in the Hugging Face cache (which says where it looked). */
static simdbpe_status not_found(const char *name, simdbpe_error *err)
{
    return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                         "model %s: not a name (gpt2, r50k_base, p50k_base, cl100k_base, "
                         "o200k_base), a model file (tokenizer.json, .tiktoken, .sbpe), a "
                         "directory or ORG/NAME in the Hugging Face cache",
                         name);
}

simdbpe_status simdbpe_model_locate(const char *name, char **path, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!name || !path)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_locate: NULL argument");
    *path = NULL;
    if (embedded_named(name))
        return SIMDBPE_OK;
    struct stat st;
    if (stat(name, &st) == 0) {
        if (!(*path = strdup(name)))
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                 "out of memory");
        return SIMDBPE_OK;
    }
    if (simdbpe__hub_name(name))
        return simdbpe__hub_find(name, NULL, 1, path, err);
    return not_found(name, err);
}

/* A model file or directory that exists (simdbpe_model_locate's path). */
static simdbpe_status open_path(const char *name, simdbpe_model **out, simdbpe_error *err)
{
    struct stat st;
    if (stat(name, &st) == 0 && S_ISREG(st.st_mode))
        return is_compiled_file(name) ? simdbpe_model_load_file(name, out, err)
                                      : open_text_file(name, out, err);
    if (stat(name, &st) != 0 || !S_ISDIR(st.st_mode))
        return not_found(name, err);
    /* A directory: its tokenizer.json, which says everything about the
     * model (pre-tokenizer, normalizer, added tokens), wins over
     * vocab.json + merges.txt, which say nothing of the pre-tokenizer. */
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", name);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        return open_text_file(path, out, err);
    static const char *const files[3] = {"vocab.json", "merges.txt", "special_tokens"};
    char *data[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    int mapped[3] = {0, 0, 0};
    simdbpe_status status = SIMDBPE_OK;
    for (int i = 0; i < 3 && status == SIMDBPE_OK; i++) {
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

simdbpe_status simdbpe_model_open(const char *name, simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!name || !out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_open: NULL argument");
    *out = NULL;
    const struct embedded *emb = embedded_named(name);
    if (emb)
        return open_embedded(emb, out, err);
    char *path;
    simdbpe_status status = simdbpe_model_locate(name, &path, err);
    if (status != SIMDBPE_OK)
        return status;
    status = open_path(path, out, err);
    free(path);
    return status;
}

const char *simdbpe_model_pretokenizer(const simdbpe_model *m)
{
    return simdbpe__pretok_kind_name(m->pretok);
}

const char *simdbpe_model_pattern(const simdbpe_model *m)
{
    const simdbpe__pretok_family *f = simdbpe__pretok_family_of(m->pretok);
    if (m->regex)
        return simdbpe__regex_splits(m->regex) == 1 ? simdbpe__regex_pattern(m->regex, 0) : NULL;
    return f->n_patterns == 1 ? f->patterns[0] : NULL;
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

const char *simdbpe_model_notice(const simdbpe_model *m)
{
    return m && m->notice ? m->notice : "";
}

simdbpe_status simdbpe_model_eot(const simdbpe_model *m, uint32_t *id)
{
    static const char *const names[] = {"<|end_of_text|>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of"
                                        "\xE2\x96\x81sentence\xEF\xBD\x9C>", "</s>", "<eos>"};
    if (simdbpe_model_special_id(m, "<|endoftext|>", 13, id) == SIMDBPE_OK)
        return SIMDBPE_OK;
    if (m->n_suffix) {
        *id = m->suffix[m->n_suffix - 1];
        return SIMDBPE_OK;
    }
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        for (size_t i = 0; i < m->n_specials; i++) {
            const simdbpe__special *s = &m->specials[i];
            if ((s->flags & SIMDBPE__ADDED_SPECIAL) && s->len == strlen(names[k]) &&
                memcmp(s->text, names[k], s->len) == 0) {
                *id = s->id;
                return SIMDBPE_OK;
            }
        }
    return SIMDBPE_ERR_UNSUPPORTED;
}

_Static_assert(SIMDBPE_ADDED_SPECIAL == SIMDBPE__ADDED_SPECIAL &&
                   SIMDBPE_ADDED_NORMALIZED == SIMDBPE__ADDED_NORMALIZED &&
                   SIMDBPE_ADDED_IN_VOCAB == SIMDBPE__ADDED_IN_VOCAB,
               "the public added-token flags are the model's");

unsigned simdbpe_model_special_flags(const simdbpe_model *m, size_t i)
{
    return i < m->n_specials ? m->specials[i].flags : 0;
}

int simdbpe_model_whole_token_exact(const simdbpe_model *m)
{
    return m->whole_exact;
}
