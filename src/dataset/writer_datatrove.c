/*
 * writer_datatrove.c - datatrove's tokenized files (datatrove
 * pipeline/tokens/tokenizer.py, TokenizedFile):
 *
 *   PREFIX.ds           the ids, little-endian u16 (u32 when token_size 4)
 *   PREFIX.ds.index     uint64 per document: where it ends, in tokens,
 *                       counted from the start of the file
 *   PREFIX.ds.metadata  text "NAME|TOKEN_SIZE\nCOUNT\nHUMAN" (no final
 *                       newline), HUMAN being COUNT with an SI prefix and
 *                       3 significant digits, as humanize.metric(COUNT, "T")
 *
 * datatrove names per-rank files "{rank:05d}_NAME.ds" in one folder; with
 * --rank/--world-size we write PREFIX.RRRRR-of-WWWWW.ds (cmd_encode.c).
 * An -o ending in ".ds" is taken as the .ds file itself.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"

typedef struct datatrove_writer {
    writer base;
    outfile ds, index, meta;
    char *ds_path, *index_path, *meta_path;
    uint64_t tokens;
} datatrove_writer;

/* COUNT with an SI prefix and 3 significant digits: "0.00 T" for 0,
 * "15.0 T", "1.50 kT", "200 MT". */
static void human_count(uint64_t count, char *out, size_t cap)
{
    static const char prefixes[] = "kMGTPEZY";
    double v = (double)count;
    int exp = count ? (int)floor(log10(v)) : 0;
    int bucket = exp / 3;
    double scaled = v / pow(10, 3 * bucket);
    int digits = 2 - exp % 3;
    /* Rounding may carry into the next power of 1000 (999.6 -> 1.00 k). */
    double p = pow(10, digits);
    if (round(scaled * p) / p >= 1000) {
        bucket++;
        exp = 3 * bucket;
        scaled = v / pow(10, 3 * bucket);
        digits = 2;
    }
    if (bucket == 0)
        snprintf(out, cap, "%.*f T", digits, scaled);
    else
        snprintf(out, cap, "%.*f %cT", digits, scaled, prefixes[bucket - 1]);
}

static int dw_begin(writer *w)
{
    (void)w;
    return 0;
}

static int dw_ids(writer *w, const uint32_t *ids, size_t n)
{
    datatrove_writer *d = (datatrove_writer *)w;
    simdbpe__writer_put_ids(&d->ds, w->cfg.width, ids, n);
    d->tokens += n;
    return d->ds.err ? simdbpe__writer_fail(w, d->ds_path, d->ds.err) : 0;
}

static int dw_end(writer *w, uint64_t doc_tokens, uint32_t file, uint64_t line)
{
    datatrove_writer *d = (datatrove_writer *)w;
    (void)doc_tokens;
    (void)file;
    (void)line;
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(d->tokens >> (8 * i));
    simdbpe__outfile_write(&d->index, b, 8);
    return d->index.err ? simdbpe__writer_fail(w, d->index_path, d->index.err) : 0;
}

static int dw_finish(writer *w)
{
    datatrove_writer *d = (datatrove_writer *)w;
    int e = simdbpe__outfile_close(&d->ds);
    if (e)
        return simdbpe__writer_fail(w, d->ds_path, e);
    e = simdbpe__outfile_close(&d->index);
    if (e)
        return simdbpe__writer_fail(w, d->index_path, e);
    char human[64], text[600];
    human_count(d->tokens, human, sizeof human);
    int k = snprintf(text, sizeof text, "%s|%u\n%llu\n%s", w->cfg.model_name, w->cfg.width,
                     (unsigned long long)d->tokens, human);
    simdbpe__outfile_write(&d->meta, text, (size_t)k < sizeof text ? (size_t)k : sizeof text - 1);
    e = simdbpe__outfile_close(&d->meta);
    return e ? simdbpe__writer_fail(w, d->meta_path, e) : 0;
}

static int dw_commit(writer *w)
{
    datatrove_writer *d = (datatrove_writer *)w;
    outfile *files[3] = {&d->ds, &d->index, &d->meta};
    for (int i = 0; i < 3; i++) {
        int e = simdbpe__outfile_commit(files[i]);
        if (e)
            return simdbpe__writer_fail(w, files[i]->final_path, e);
    }
    return 0;
}

static void dw_discard(writer *w)
{
    datatrove_writer *d = (datatrove_writer *)w;
    simdbpe__outfile_discard(&d->ds);
    simdbpe__outfile_discard(&d->index);
    simdbpe__outfile_discard(&d->meta);
}

static void dw_destroy(writer *w)
{
    datatrove_writer *d = (datatrove_writer *)w;
    simdbpe__outfile_free(&d->ds);
    simdbpe__outfile_free(&d->index);
    simdbpe__outfile_free(&d->meta);
    free(d->ds_path);
    free(d->index_path);
    free(d->meta_path);
    free(d);
}

static const writer_ops datatrove_ops = {dw_begin, dw_ids, dw_end, dw_finish,
                                         dw_commit, dw_discard, dw_destroy};

writer *simdbpe__writer_datatrove_new(const writer_config *cfg)
{
    datatrove_writer *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->base.ops = &datatrove_ops;
    d->base.cfg = *cfg;
    d->ds.fd = d->index.fd = d->meta.fd = -1;
    d->ds.slot = d->index.slot = d->meta.slot = -1;
    size_t n = strlen(cfg->output);
    int has_ext = n > 3 && strcmp(cfg->output + n - 3, ".ds") == 0;
    d->ds_path = simdbpe__writer_path(cfg->output, has_ext ? "" : ".ds");
    d->index_path = d->ds_path ? simdbpe__writer_path(d->ds_path, ".index") : NULL;
    d->meta_path = d->ds_path ? simdbpe__writer_path(d->ds_path, ".metadata") : NULL;
    if (!d->ds_path || !d->index_path || !d->meta_path) {
        d->base.open_err = simdbpe__writer_fail(&d->base, cfg->output, ENOMEM);
        return &d->base;
    }
    d->base.open_err = simdbpe__writer_open_file(&d->base, &d->ds, d->ds_path);
    if (!d->base.open_err)
        d->base.open_err = simdbpe__writer_open_file(&d->base, &d->index, d->index_path);
    /* The metadata is opened now too, so that a path that cannot be
     * written fails before the encode rather than after it. */
    if (!d->base.open_err)
        d->base.open_err = simdbpe__writer_open_file(&d->base, &d->meta, d->meta_path);
    return &d->base;
}
