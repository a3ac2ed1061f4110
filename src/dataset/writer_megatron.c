/*
 * writer_megatron.c - Megatron-LM indexed dataset: PREFIX.bin + PREFIX.idx.
 *
 * PREFIX.bin is the ids of all documents, concatenated, as u16 (dtype code
 * 8) or int32 (code 4). PREFIX.idx (megatron/core/datasets/
 * indexed_dataset.py, _IndexWriter), little-endian, no padding:
 *
 *   offset 0   "MMIDIDX\0\0"               9 bytes
 *          9   version = 1                 u64
 *         17   dtype code                  u8
 *         18   S = sequence count          u64
 *         26   D = document count + 1      u64
 *         34   sequence lengths            int32[S]
 *              sequence byte offsets       int64[S]  (in .bin; start at 0)
 *              document indices            int64[D]  (0, then the sequence
 *                                                     count after each doc)
 *
 * As in Megatron's tools/preprocess_data.py, a document is one sequence,
 * except an empty document, which has none (and gets no EOD).
 * The lengths of all documents stay in memory (4 bytes each) until the
 * index is written at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"
#include "megatron_idx.h"
#include "writer.h"

typedef struct megatron_writer {
    writer base;
    outfile bin, idx;
    char *bin_path, *idx_path;
    uint32_t *lens; /* per document; 0 = no sequence */
    size_t n, cap;
} megatron_writer;

static int mw_begin(writer *w)
{
    (void)w;
    return 0;
}

static int mw_ids(writer *w, const uint32_t *ids, size_t n)
{
    megatron_writer *m = (megatron_writer *)w;
    simdbpe__writer_put_ids(&m->bin, w->cfg.width, ids, n);
    return m->bin.err ? simdbpe__writer_fail(w, m->bin_path, m->bin.err) : 0;
}

static int mw_end(writer *w, uint64_t doc_tokens, uint32_t file, uint64_t line)
{
    megatron_writer *m = (megatron_writer *)w;
    (void)file;
    (void)line;
    if (doc_tokens > INT32_MAX)
        return simdbpe__writer_fail(w, m->idx_path, EOVERFLOW); /* lengths are int32 */
    if (simdbpe__grow((void **)&m->lens, &m->cap, m->n + 1, sizeof *m->lens))
        return simdbpe__writer_fail(w, m->idx_path, ENOMEM);
    m->lens[m->n++] = (uint32_t)doc_tokens;
    return 0;
}

static int mw_finish(writer *w)
{
    megatron_writer *m = (megatron_writer *)w;
    int e = simdbpe__outfile_close(&m->bin);
    if (e)
        return simdbpe__writer_fail(w, m->bin_path, e);
    e = simdbpe__megatron_idx_write(&m->idx,
                                    w->cfg.width == 2 ? MEGATRON_DTYPE_U16 : MEGATRON_DTYPE_I32,
                                    w->cfg.width, m->lens, m->n);
    int e2 = simdbpe__outfile_close(&m->idx);
    e = e ? e : e2;
    return e ? simdbpe__writer_fail(w, m->idx_path, e) : 0;
}

static int mw_commit(writer *w)
{
    megatron_writer *m = (megatron_writer *)w;
    int e = simdbpe__outfile_commit(&m->bin);
    if (e)
        return simdbpe__writer_fail(w, m->bin_path, e);
    e = simdbpe__outfile_commit(&m->idx);
    return e ? simdbpe__writer_fail(w, m->idx_path, e) : 0;
}

static void mw_discard(writer *w)
{
    megatron_writer *m = (megatron_writer *)w;
    simdbpe__outfile_discard(&m->bin);
    simdbpe__outfile_discard(&m->idx);
}

static void mw_destroy(writer *w)
{
    megatron_writer *m = (megatron_writer *)w;
    simdbpe__outfile_free(&m->bin);
    simdbpe__outfile_free(&m->idx);
    free(m->bin_path);
    free(m->idx_path);
    free(m->lens);
    free(m);
}

static const writer_ops megatron_ops = {mw_begin, mw_ids, mw_end, mw_finish,
                                        mw_commit, mw_discard, mw_destroy};

writer *simdbpe__writer_megatron_new(const writer_config *cfg)
{
    megatron_writer *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.ops = &megatron_ops;
    m->base.cfg = *cfg;
    m->bin.fd = m->idx.fd = -1;
    m->bin.slot = m->idx.slot = -1;
    m->bin_path = simdbpe__writer_path(cfg->output, ".bin");
    m->idx_path = simdbpe__writer_path(cfg->output, ".idx");
    if (!m->bin_path || !m->idx_path)
        m->base.open_err = simdbpe__writer_fail(&m->base, cfg->output, ENOMEM);
    else
        m->base.open_err = simdbpe__writer_open_file(&m->base, &m->bin, m->bin_path);
    /* The index is opened now too, so that a path that cannot be written
     * fails before the encode rather than after it. */
    if (!m->base.open_err)
        m->base.open_err = simdbpe__writer_open_file(&m->base, &m->idx, m->idx_path);
    return &m->base;
}
