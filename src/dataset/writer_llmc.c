/*
 * writer_llmc.c - llm.c token shards.
 *
 * Layout (llm.c dev/data/data_common.py write_datafile), little-endian:
 *
 *   int32 header[256]: [0] magic, [1] version, [2] token count, rest 0
 *   ids[count]:        uint16 (magic 20240520, version 1: GPT-2)
 *                      or uint32 (magic 20240801, version 7: the Llama-3
 *                      variant, chosen by --dtype u32)
 *
 * Shards hold exactly --shard-tokens ids except the last; a document that
 * does not fit continues in the next shard, as in llm.c's fineweb.py.
 * Names are PREFIX_val_000000.bin for shard 0 and PREFIX_train_%06d.bin
 * after it. No shard is created for nothing: an empty input gives no file.
 * Every shard keeps its temporary name until commit, so a failed run
 * leaves none of them behind.
 *
 * A run owns every shard name under its prefix: llm.c reads all the files
 * PREFIX_train_*.bin matches, so a shard an earlier, longer run left would
 * be trained on with this run's. The run takes the lock of each shard
 * that is there when it starts (dataset_run.c) and of each it opens, and
 * commit removes the locked ones it did not write, saying which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/common.h"
#include "writer.h"

#define HEADER_INTS 256

typedef struct llmc_writer {
    writer base;
    outfile *shards; /* shards[n - 1] is open while `open` */
    size_t n, cap;
    int open;
    uint64_t in_shard;
} llmc_writer;

static void header_bytes(const llmc_writer *l, uint64_t count, unsigned char out[HEADER_INTS * 4])
{
    int32_t h[3] = {20240520, 1, (int32_t)count};
    if (l->base.cfg.width == 4) {
        h[0] = 20240801;
        h[1] = 7;
    }
    memset(out, 0, HEADER_INTS * 4);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = (unsigned char)((uint32_t)h[i] >> (8 * k));
}

/* PREFIX_val_000000.bin for shard 0, PREFIX_train_%06zu.bin after it. */
static char *shard_name(const char *prefix, size_t i)
{
    char suffix[64];
    snprintf(suffix, sizeof suffix, "_%s_%06zu.bin", i == 0 ? "val" : "train", i);
    return simdbpe__writer_path(prefix, suffix);
}

static int open_shard(llmc_writer *l)
{
    if (simdbpe__grow((void **)&l->shards, &l->cap, l->n + 1, sizeof *l->shards))
        return simdbpe__writer_fail(&l->base, l->base.cfg.output, ENOMEM);
    char *path = shard_name(l->base.cfg.output, l->n);
    if (!path)
        return simdbpe__writer_fail(&l->base, l->base.cfg.output, ENOMEM);
    int e = l->base.cfg.lock ? simdbpe__outlock_take(l->base.cfg.lock, path) : 0;
    e = e ? simdbpe__writer_fail(&l->base, path, e)
          : simdbpe__writer_open_file(&l->base, &l->shards[l->n], path);
    free(path);
    if (e)
        return e;
    l->n++;
    l->open = 1;
    l->in_shard = 0;
    unsigned char h[HEADER_INTS * 4];
    header_bytes(l, 0, h); /* the count is filled in when the shard closes */
    simdbpe__outfile_write(&l->shards[l->n - 1], h, sizeof h);
    return 0;
}

static int close_shard(llmc_writer *l)
{
    outfile *o = &l->shards[l->n - 1];
    unsigned char h[HEADER_INTS * 4];
    header_bytes(l, l->in_shard, h);
    simdbpe__outfile_pwrite(o, 0, h, sizeof h);
    l->open = 0;
    int e = simdbpe__outfile_close(o);
    return e ? simdbpe__writer_fail(&l->base, o->final_path, e) : 0;
}

static int lw_begin(writer *w)
{
    (void)w;
    return 0;
}

static int lw_ids(writer *w, const uint32_t *ids, size_t n)
{
    llmc_writer *l = (llmc_writer *)w;
    while (n) {
        if (!l->open) {
            int e = open_shard(l);
            if (e)
                return e;
        }
        uint64_t room = w->cfg.shard_tokens - l->in_shard;
        size_t k = n < room ? n : (size_t)room;
        simdbpe__writer_put_ids(&l->shards[l->n - 1], w->cfg.width, ids, k);
        l->in_shard += k;
        ids += k;
        n -= k;
        if (l->in_shard == w->cfg.shard_tokens) {
            int e = close_shard(l);
            if (e)
                return e;
        }
    }
    /* A write that failed names its shard, not the prefix. */
    const outfile *o = l->open ? &l->shards[l->n - 1] : NULL;
    return o && o->err ? simdbpe__writer_fail(w, o->final_path, o->err) : 0;
}

static int lw_end(writer *w, uint64_t doc_tokens, uint32_t file, uint64_t line)
{
    (void)w;
    (void)doc_tokens;
    (void)file;
    (void)line;
    return 0;
}

static int lw_finish(writer *w)
{
    llmc_writer *l = (llmc_writer *)w;
    return l->open ? close_shard(l) : 0;
}

/* Whether `name` is shard i < n of this run's. */
static int written(const llmc_writer *l, const char *name)
{
    size_t p = strlen(l->base.cfg.output);
    int val = name[p + 1] == 'v';
    size_t i = (size_t)strtoul(name + p + (val ? 5 : 7), NULL, 10);
    return i < l->n && val == (i == 0);
}

static int lw_commit(writer *w)
{
    llmc_writer *l = (llmc_writer *)w;
    for (size_t i = 0; i < l->n; i++) {
        int e = simdbpe__outfile_commit(&l->shards[i]);
        if (e)
            return simdbpe__writer_fail(w, l->shards[i].final_path, e);
    }
    /* The shards an earlier run left under this prefix (their locks are
     * this run's): gone, and said. */
    const outlock *lock = w->cfg.lock;
    size_t removed = 0;
    const char *first = NULL;
    for (size_t i = 0; lock && i < lock->n; i++) {
        const char *name = lock->held[i].final;
        if (!simdbpe__writer_llmc_is_shard(w->cfg.output, name) || written(l, name))
            continue;
        if (unlink(name) == 0) {
            if (!removed++)
                first = name;
        } else if (errno != ENOENT) {
            return simdbpe__writer_fail(w, name, errno);
        }
    }
    if (removed)
        snprintf(w->notice, sizeof w->notice,
                 "removed %zu llm.c shard%s an earlier run left under %s, which llm.c would "
                 "have read with this run's (%s%s)",
                 removed, removed == 1 ? "" : "s", w->cfg.output, first, removed > 1 ? ", ..." : "");
    return 0;
}

static void lw_discard(writer *w)
{
    llmc_writer *l = (llmc_writer *)w;
    for (size_t i = 0; i < l->n; i++)
        simdbpe__outfile_discard(&l->shards[i]);
    l->open = 0;
}

static void lw_destroy(writer *w)
{
    llmc_writer *l = (llmc_writer *)w;
    for (size_t i = 0; i < l->n; i++)
        simdbpe__outfile_free(&l->shards[i]);
    free(l->shards);
    free(l);
}

static const writer_ops llmc_ops = {lw_begin, lw_ids, lw_end, lw_finish,
                                    lw_commit, lw_discard, lw_destroy};

writer *simdbpe__writer_llmc_new(const writer_config *cfg)
{
    llmc_writer *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->base.ops = &llmc_ops;
    l->base.cfg = *cfg;
    return &l->base;
}
