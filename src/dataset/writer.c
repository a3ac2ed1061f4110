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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int writer_open(writer **out, const writer_config *cfg, char *err_path, size_t cap)
{
    writer *w;
    switch (cfg->format) {
    case FMT_LLMC:
        w = writer_llmc_new(cfg);
        break;
    case FMT_MEGATRON:
        w = writer_megatron_new(cfg);
        break;
    case FMT_DATATROVE:
        w = writer_datatrove_new(cfg);
        break;
    default:
        w = writer_text_new(cfg);
        break;
    }
    *out = NULL;
    if (!w) {
        snprintf(err_path, cap, "%s", cfg->output ? cfg->output : "<stdout>");
        return errno ? errno : ENOMEM;
    }
    if (w->open_err) {
        int e = w->open_err;
        snprintf(err_path, cap, "%s", w->err_path);
        writer_discard(w);
        writer_free(w);
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

int writer_begin_doc(writer *w)
{
    w->doc_tokens = 0;
    int e = w->ops->begin_doc(w);
    if (!e && w->cfg.eot == EOT_PREPEND)
        e = writer_ids(w, &w->cfg.eot_id, 1);
    return named(w, e);
}

int writer_ids(writer *w, const uint32_t *ids, size_t n)
{
    w->doc_tokens += n;
    return named(w, n ? w->ops->ids(w, ids, n) : 0);
}

int writer_end_doc(writer *w, uint32_t file, uint64_t line, uint64_t *tokens)
{
    int e = 0;
    int megatron_empty = w->cfg.format == FMT_MEGATRON && w->doc_tokens == 0;
    if (w->cfg.eot == EOT_APPEND && !megatron_empty)
        e = writer_ids(w, &w->cfg.eot_id, 1);
    if (!e)
        e = w->ops->end_doc(w, w->doc_tokens, file, line);
    *tokens = w->doc_tokens;
    return named(w, e);
}

int writer_finish(writer *w)
{
    return named(w, w->ops->finish(w));
}

int writer_commit(writer *w)
{
    outfile_commit_begin();
    int e = w->ops->commit(w);
    outfile_commit_end();
    return e;
}

void writer_discard(writer *w)
{
    if (w)
        w->ops->discard(w);
}

void writer_free(writer *w)
{
    if (w)
        w->ops->destroy(w);
}

void writer_put_ids(outfile *o, unsigned width, const uint32_t *ids, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* On a little-endian machine u32 ids go out as they are and u16 ones
     * by a loop gcc makes a vector pack: a byte at a time they were 8% of
     * a two-thread run's instructions, all on the one thread that writes. */
    if (width == 4) {
        outfile_write(o, ids, n * sizeof *ids);
        return;
    }
    uint16_t narrow[4096];
    while (n) {
        size_t k = n < 4096 ? n : 4096;
        for (size_t i = 0; i < k; i++)
            narrow[i] = (uint16_t)ids[i];
        outfile_write(o, narrow, k * sizeof *narrow);
        ids += k;
        n -= k;
    }
#else
    unsigned char buf[8192];
    size_t per = sizeof buf / width;
    while (n) {
        size_t k = n < per ? n : per;
        unsigned char *p = buf;
        for (size_t i = 0; i < k; i++)
            for (unsigned b = 0; b < width; b++)
                *p++ = (unsigned char)(ids[i] >> (8 * b));
        outfile_write(o, buf, k * width);
        ids += k;
        n -= k;
    }
#endif
}

int writer_fail(writer *w, const char *path, int e)
{
    snprintf(w->err_path, sizeof w->err_path, "%s", path ? path : "<stdout>");
    return e;
}

int writer_open_file(writer *w, outfile *o, const char *path)
{
    int e = outfile_open(o, path);
    return e ? writer_fail(w, path, e) : 0;
}

char *writer_path(const char *prefix, const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(suffix);
    char *p = malloc(a + b + 1);
    if (p) {
        memcpy(p, prefix, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}
