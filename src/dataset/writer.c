/*
 * writer.c - the format-independent part of writing: end-of-text ids,
 * per-document token counts, and little-endian id packing.
 *
 * EOT rule: with --eot prepend every document starts with the EOT id, with
 * --eot append every document ends with it (an empty document then becomes
 * the EOT alone), as nanoGPT, llm.c and datatrove do. The Megatron writer
 * asks for Megatron's own rule instead: no EOT after an empty document
 * (tools/preprocess_data.py appends EOD only to non-empty ones).
 */
#include "writer.h"

#include "../common/common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int simdbpe__writer_open(writer **out, const writer_config *cfg, char *err_path, size_t cap)
{
    writer *w;
    switch (cfg->format) {
    case SIMDBPE_OUTPUT_LLMC: w = simdbpe__writer_llmc_new(cfg); break;
    case SIMDBPE_OUTPUT_MEGATRON: w = simdbpe__writer_megatron_new(cfg); break;
    case SIMDBPE_OUTPUT_DATATROVE: w = simdbpe__writer_datatrove_new(cfg); break;
    default: w = simdbpe__writer_text_new(cfg); break;
    }
    *out = NULL;
    if (!w) {
        snprintf(err_path, cap, "%s", cfg->output ? cfg->output : "<stdout>");
        return errno ? errno : ENOMEM;
    }
    if (w->open_err) {
        int e = w->open_err;
        snprintf(err_path, cap, "%s", w->err_path);
        simdbpe__writer_discard(w);
        simdbpe__writer_free(w);
        return e;
    }
    *out = w;
    return 0;
}

/* A failure a format reported without naming its file (text, u16, u32:
 * one file) names the output, so that the message is never "cannot write :". */
static int named(writer *w, int e)
{
    if (e && !w->err_path[0])
        snprintf(w->err_path, sizeof w->err_path, "%s",
                 w->cfg.output && strcmp(w->cfg.output, "-") ? w->cfg.output : "<stdout>");
    return e;
}

int simdbpe__writer_begin_doc(writer *w)
{
    w->doc_tokens = 0;
    int e = w->ops->begin_doc(w);
    if (!e && w->cfg.eot == SIMDBPE_EOT_PREPEND)
        e = simdbpe__writer_ids(w, &w->cfg.eot_id, 1);
    return named(w, e);
}

int simdbpe__writer_ids(writer *w, const uint32_t *ids, size_t n)
{
    w->doc_tokens += n;
    return named(w, n ? w->ops->ids(w, ids, n) : 0);
}

int simdbpe__writer_end_doc(writer *w, uint32_t file, uint64_t line, uint64_t *tokens)
{
    int e = 0;
    int megatron_empty = w->cfg.format == SIMDBPE_OUTPUT_MEGATRON && w->doc_tokens == 0;
    if (w->cfg.eot == SIMDBPE_EOT_APPEND && !megatron_empty)
        e = simdbpe__writer_ids(w, &w->cfg.eot_id, 1);
    if (!e)
        e = w->ops->end_doc(w, w->doc_tokens, file, line);
    *tokens = w->doc_tokens;
    return named(w, e);
}

int simdbpe__writer_finish(writer *w)
{
    return named(w, w->ops->finish(w));
}

int simdbpe__writer_commit(writer *w)
{
    sigset_t saved;
    simdbpe__outfile_commit_begin(&saved);
    int e = w->ops->commit(w);
    simdbpe__outfile_commit_end(&saved);
    return e;
}

void simdbpe__writer_discard(writer *w)
{
    if (w)
        w->ops->discard(w);
}

void simdbpe__writer_free(writer *w)
{
    if (w)
        w->ops->destroy(w);
}

void simdbpe__writer_put_ids(outfile *o, unsigned width, const uint32_t *ids, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* On a little-endian machine u32 ids go out as they are and u16 ones
     * by a loop gcc makes a vector pack: this runs on the one thread that
     * writes (bench/README.md). */
    if (width == 4) {
        simdbpe__outfile_write(o, ids, n * sizeof *ids);
        return;
    }
    uint16_t narrow[4096];
    while (n) {
        size_t k = n < 4096 ? n : 4096;
        for (size_t i = 0; i < k; i++)
            narrow[i] = (uint16_t)ids[i];
        simdbpe__outfile_write(o, narrow, k * sizeof *narrow);
        ids += k;
        n -= k;
    }
#else
    unsigned char buf[8192];
    size_t per = sizeof buf / width;
    while (n) {
        size_t k = n < per ? n : per;
        unsigned char *p = buf;
        if (width == 2) {
            for (size_t i = 0; i < k; i++, p += 2) {
                p[0] = (unsigned char)ids[i];
                p[1] = (unsigned char)(ids[i] >> 8);
            }
        } else {
            for (size_t i = 0; i < k; i++, p += 4) {
                p[0] = (unsigned char)ids[i];
                p[1] = (unsigned char)(ids[i] >> 8);
                p[2] = (unsigned char)(ids[i] >> 16);
                p[3] = (unsigned char)(ids[i] >> 24);
            }
        }
        simdbpe__outfile_write(o, buf, k * width);
        ids += k;
        n -= k;
    }
#endif
}

int simdbpe__writer_fail(writer *w, const char *path, int e)
{
    snprintf(w->err_path, sizeof w->err_path, "%s", path ? path : "<stdout>");
    return e;
}

int simdbpe__writer_open_file(writer *w, outfile *o, const char *path)
{
    int e = simdbpe__outfile_open(o, path);
    return e ? simdbpe__writer_fail(w, path, e) : 0;
}

char *simdbpe__writer_path(const char *prefix, const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(suffix);
    char *p = malloc(a + b + 1);
    if (p) {
        memcpy(p, prefix, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}

int simdbpe__writer_llmc_is_shard(const char *prefix, const char *name)
{
    size_t p = strlen(prefix), n = strlen(name);
    if (n < p || memcmp(name, prefix, p))
        return 0;
    const char *rest = name + p;
    size_t k = !strncmp(rest, "_val_", 5) ? 5 : !strncmp(rest, "_train_", 7) ? 7 : 0;
    if (!k || n - p != k + 10 || strcmp(rest + k + 6, ".bin"))
        return 0;
    for (size_t i = k; i < k + 6; i++)
        if (!isdigit((unsigned char)rest[i]))
            return 0;
    return 1;
}

static int add_name(char ***names, size_t *n, size_t *cap, char *name)
{
    if (!name || simdbpe__grow((void **)names, cap, *n + 1, sizeof **names)) {
        free(name);
        return ENOMEM;
    }
    (*names)[(*n)++] = name;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int simdbpe__writer_final_names(const writer_config *cfg, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    size_t cap = 0;
    const char *out = cfg->output;
    if (!out || !strcmp(out, "-"))
        return 0;
    size_t len = strlen(out);
    int e = 0;
    switch (cfg->format) {
    case SIMDBPE_OUTPUT_MEGATRON:
        e = add_name(names, n, &cap, simdbpe__writer_path(out, ".bin"));
        if (!e)
            e = add_name(names, n, &cap, simdbpe__writer_path(out, ".idx"));
        break;
    case SIMDBPE_OUTPUT_DATATROVE: {
        int ext = len > 3 && !strcmp(out + len - 3, ".ds");
        static const char *const sfx[3] = {".ds", ".ds.index", ".ds.metadata"};
        for (int i = 0; i < 3 && !e; i++)
            e = add_name(names, n, &cap, simdbpe__writer_path(out, sfx[i] + (ext ? 3 : 0)));
        break;
    }
    case SIMDBPE_OUTPUT_LLMC: {
        e = add_name(names, n, &cap, simdbpe__writer_path(out, "_val_000000.bin"));
        const char *slash = strrchr(out, '/');
        char *dir = slash ? strndup(out, (size_t)(slash - out) + 1) : strdup(".");
        DIR *d = dir ? opendir(dir) : NULL;
        struct dirent *ent;
        while (!e && d && (ent = readdir(d)) != NULL) {
            char *full = simdbpe__writer_path(slash ? dir : "", ent->d_name);
            if (full && simdbpe__writer_llmc_is_shard(out, full) && strcmp(full, (*names)[0]))
                e = add_name(names, n, &cap, full);
            else
                free(full);
        }
        if (d)
            closedir(d);
        if (*n > 2) /* in name order, for messages that do not depend on the directory's */
            qsort(*names + 1, *n - 1, sizeof **names, by_name);
        e = e ? e : dir ? 0 : ENOMEM;
        free(dir);
        break;
    }
    default:
        e = add_name(names, n, &cap, strdup(out));
        break;
    }
    if (e) {
        for (size_t i = 0; i < *n; i++)
            free((*names)[i]);
        free(*names);
        *names = NULL;
        *n = 0;
    }
    return e;
}
