/*
 * writer_text.c - single-stream outputs: text (one line of decimal ids per
 * document), u16/u32 (little-endian ids, no header) and count ("N\tFILE" or
 * "N\tFILE:LINE" per document, then "N\ttotal").
 *
 * They write to one outfile: standard output, or -o FILE (temporary name
 * until commit). These are the issue-2 CLI formats; their bytes must not
 * change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "writer.h"

typedef struct text_writer {
    writer base;
    outfile out;
    uint64_t total;    /* count: all tokens */
    int first_in_line; /* text: no space before the next id */
} text_writer;

static int tw_begin(writer *w)
{
    ((text_writer *)w)->first_in_line = 1;
    return 0;
}

static int put_decimal(text_writer *t, const uint32_t *ids, size_t n)
{
    char buf[1 << 14];
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        if (b + 12 > sizeof buf) {
            simdbpe__outfile_write(&t->out, buf, b);
            b = 0;
        }
        char digits[10];
        int d = 0;
        uint32_t id = ids[i];
        do
            digits[d++] = (char)('0' + id % 10);
        while ((id /= 10) != 0);
        if (!t->first_in_line)
            buf[b++] = ' ';
        t->first_in_line = 0;
        while (d)
            buf[b++] = digits[--d];
    }
    simdbpe__outfile_write(&t->out, buf, b);
    return t->out.err;
}

static int tw_ids(writer *w, const uint32_t *ids, size_t n)
{
    text_writer *t = (text_writer *)w;
    switch (w->cfg.format) {
    case SIMDBPE_OUTPUT_TEXT:
        return put_decimal(t, ids, n);
    case SIMDBPE_OUTPUT_U16:
    case SIMDBPE_OUTPUT_U32:
        simdbpe__writer_put_ids(&t->out, w->cfg.format == SIMDBPE_OUTPUT_U16 ? 2 : 4, ids, n);
        return t->out.err;
    default:
        return 0; /* count: only the totals matter */
    }
}

static int tw_end(writer *w, uint64_t doc_tokens, uint32_t file, uint64_t line)
{
    text_writer *t = (text_writer *)w;
    if (w->cfg.format == SIMDBPE_OUTPUT_TEXT) {
        simdbpe__outfile_write(&t->out, "\n", 1);
    } else if (w->cfg.format == SIMDBPE_OUTPUT_COUNT) {
        char buf[64];
        const char *name = simdbpe__display_name(w->cfg.files[file]);
        int k = snprintf(buf, sizeof buf, "%llu\t", (unsigned long long)doc_tokens);
        simdbpe__outfile_write(&t->out, buf, (size_t)k);
        simdbpe__outfile_write(&t->out, name, strlen(name));
        k = w->cfg.count_lines ? snprintf(buf, sizeof buf, ":%llu\n", (unsigned long long)line)
                               : snprintf(buf, sizeof buf, "\n");
        simdbpe__outfile_write(&t->out, buf, (size_t)k);
        t->total += doc_tokens;
    }
    return t->out.err;
}

static int tw_finish(writer *w)
{
    text_writer *t = (text_writer *)w;
    if (w->cfg.format == SIMDBPE_OUTPUT_COUNT) {
        char buf[64];
        int k = snprintf(buf, sizeof buf, "%llu\ttotal\n", (unsigned long long)t->total);
        simdbpe__outfile_write(&t->out, buf, (size_t)k);
    }
    int e = simdbpe__outfile_close(&t->out);
    return e ? simdbpe__writer_fail(w, w->cfg.output, e) : 0;
}

static int tw_commit(writer *w)
{
    text_writer *t = (text_writer *)w;
    int e = simdbpe__outfile_commit(&t->out);
    return e ? simdbpe__writer_fail(w, w->cfg.output, e) : 0;
}

static void tw_discard(writer *w)
{
    simdbpe__outfile_discard(&((text_writer *)w)->out);
}

static void tw_destroy(writer *w)
{
    simdbpe__outfile_free(&((text_writer *)w)->out);
    free(w);
}

static const writer_ops text_ops = {tw_begin, tw_ids, tw_end, tw_finish,
                                    tw_commit, tw_discard, tw_destroy};

writer *simdbpe__writer_text_new(const writer_config *cfg)
{
    text_writer *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->base.ops = &text_ops;
    t->base.cfg = *cfg;
    t->out.fd = -1;
    t->out.slot = -1;
    t->base.open_err = simdbpe__writer_open_file(&t->base, &t->out, cfg->output);
    return &t->base;
}
